// Browser load benchmark (not a test: run by hand, numbers go to BENCHMARKS.md).
//   node tests/e2e/bench_load.mjs bench-data/synth-100mb.pt.trace.json [more files…]
// Opens each file with ?url= (or, with VIA=file, through the file picker) in headless Chromium and
// prints the page's own figures: load time (read request → timeline indexed), model_ms (→ model ready),
// first_bytes_ms (→ first bytes parsed), the part of the load
// the reader itself ran (parse_ms), decoded MB/s, and the wasm linear memory after the load.
// INFLATE=browser|wasm picks who inflates .gz (DecompressionStream in the worker, or flate2).
// WORKERS=N reads a plain trace on N workers (0: on the page's thread; unset: the page decides).
// HALVES=1|0: worker 1 computes half of the analyses beside worker 0, or not (unset: by size).
// Long tasks on the page's thread (a PerformanceObserver for 'longtask', installed before the page's
// own scripts) are counted from the pick to the Overview shown: longest, count, and their sum.
// First paint: pick (or navigation) → the first Overview on screen, a preview of the head's or the
// whole trace's (PREVIEW=MB sets the head read for it, 0 none; unset, the page decides).
// PROFILE=FILE.cpuprofile records the page thread's CPU profile over the same span (tests/e2e/profile.mjs).
// With a build whose workers log their steps (bench/worker_phases.sh makes a copy of dist/ that does),
// `phases` gives each worker step's end in ms from the pick ("0 merged": worker 0 merged a shard), and
// `phase_mb` that worker's wasm memory then (MB).
import path from 'node:path';
import fs from 'node:fs';
import { serve, browser, ROOT } from './harness.mjs';
import { profiler } from './profile.mjs';

const files = process.argv.slice(2);
const srv = await serve();
const b = await browser();
for (const f of files) {
  const rel = path.relative(path.join(ROOT, 'bench-data'), path.resolve(f));
  const size = fs.statSync(f).size;
  for (let run = 0; run < Number(process.env.RUNS || 3); run++) {
    const p = await b.newPage();
    // Worker steps as `PH <worker> <step> <Date.now()>`, and the pick as `PH pick <Date.now()>`.
    const steps = [];
    p.on('console', (m) => { if (m.text().startsWith('PH ')) steps.push(m.text().split(' ')); if (process.env.ECHO_SEC && m.text().startsWith('SEC ')) console.error(m.text()); });
    await p.addInitScript(() => {
      window.__longtasks = [];
      // First paint: when a preview of the trace's head (or else the whole trace's Overview) is
      // first on screen, at the next frame after it appears.
      new MutationObserver(() => {
        // Not the app's offscreen rehearsal of an Overview before the pick (`rehearse.rs`).
        const shown = [...document.querySelectorAll('[data-testid=overview]')].some((e) => !e.closest('[data-rehearsal]'));
        if (window.__firstPaint || !shown) return;
        const preview = !!document.querySelector('[data-testid=preview-banner]');
        requestAnimationFrame(() => { window.__firstPaint = [performance.now(), preview]; });
      }).observe(document, { childList: true, subtree: true });
      new PerformanceObserver((l) => { for (const e of l.getEntries()) window.__longtasks.push([e.startTime, e.duration]); })
        .observe({ type: 'longtask', buffered: true });
    });
    const prof = process.env.PROFILE ? await profiler(p, process.env.PROFILE) : null;
    const t0 = Date.now();
    let q = process.env.INFLATE ? `inflate=${process.env.INFLATE}` : '';
    if (process.env.WORKERS !== undefined) q += `&workers=${process.env.WORKERS}`;
    if (process.env.PREVIEW !== undefined) q += `&preview=${process.env.PREVIEW}`;
    if (process.env.MERGER !== undefined) q += `&merger=${process.env.MERGER}`;
    if (process.env.HALVES !== undefined) q += `&halves=${process.env.HALVES}`;
    if (process.env.VIA === 'file') {
      await p.goto(`${srv.base}/?${q}`);
      // As a user would: the app is up (and its reader warmed, see load::warm_up) before a file
      // is picked. IDLE_MS=0 picks at once, making the start-up part of the load.
      await p.getByTestId('empty').waitFor();
      await p.waitForTimeout(Number(process.env.IDLE_MS ?? 500));
      if (prof) await prof.start();
      await p.evaluate(() => { window.__picked = performance.now(); console.log('PH pick ' + Date.now()); });
      await p.getByTestId('file-input').setInputFiles(f);
    } else {
      await p.goto(`${srv.base}/?${q}&url=${encodeURIComponent('bench-data/' + rel)}`);
    }
    // The whole trace's figures (a preview of its head has its own, under the preview's banner).
    await p.waitForFunction(() => document.querySelector('[data-testid=load-stats]') && !document.querySelector('[data-testid=preview-banner]'), null, { timeout: 600_000, polling: 100 });
    const wall = Date.now() - t0;
    const s = p.getByTestId('load-stats');
    const ms = Number(await s.getAttribute('data-load-ms'));
    const parseMs = Number(await s.getAttribute('data-parse-ms'));
    const modelMs = Number(await s.getAttribute('data-model-ms'));
    const firstMs = Number(await s.getAttribute('data-first-bytes-ms'));
    const decoded = Number(await s.getAttribute('data-decoded-bytes'));
    const wasm = Number(await s.getAttribute('data-wasm-bytes'));
    const workers = Number(await s.getAttribute('data-workers'));
    const analysedIn = await s.getAttribute('data-analysed-in');
    const timelineIn = await s.getAttribute('data-timeline-in');
    // Long tasks from the pick (or the navigation, with ?url=) until the Overview is on screen and
    // its analyses are drawn (a task still running is reported when it ends: wait a second).
    await p.waitForTimeout(1000);
    if (prof) await prof.stop();
    // The merging worker's wasm memory after its analyses (it only grows: its peak).
    const workerWasm = Number(await p.evaluate(() => document.documentElement.dataset.workerWasmBytes || 0));
    const shardWasm = Number(await p.evaluate(() => document.documentElement.dataset.shardWorkerWasmBytes || 0));
    const tasks = await p.evaluate(() => (window.__longtasks || []).filter(([t]) => t >= (window.__picked || 0)));
    const long = tasks.map(([, d]) => d);
    // Those that ended while the file loaded (pick → model and timeline index ready), apart from
    // the rest: the Overview's analyses and first paint (a task that runs on from the load's last
    // step into them counts there).
    const window_picked = await p.evaluate(() => window.__picked || 0);
    const loadEnd = window_picked + ms;
    const during = tasks.filter(([t, d]) => t + d <= loadEnd + 1).map(([, d]) => d);
    const [paintAt, previewed] = await p.evaluate(() => window.__firstPaint || [0, false]);
    const first_paint_ms = Math.round(paintAt - window_picked);
    const pick = steps.find((x) => x[1] === 'pick');
    const phases = pick ? Object.fromEntries(steps.filter((x) => x !== pick).map((x) => [`${x[1]} ${x[2]}`, Number(x[3]) - Number(pick[2])])) : undefined;
    const mergedBy = await p.evaluate(() => document.documentElement.dataset.mergedBy ?? null);
    // The worker's wasm memory (MB) after each step, where the build logs it.
    const phaseMb = pick ? Object.fromEntries(steps.filter((x) => x !== pick && x[4] !== undefined).map((x) => [`${x[1]} ${x[2]}`, Number(x[4])])) : undefined;
    console.log(JSON.stringify({ file: rel, first_paint_ms, first_paint_of: previewed ? 'preview' : 'whole', size_mb: +(size / 1e6).toFixed(1), run, load_ms: Math.round(ms), model_ms: Math.round(modelMs), first_bytes_ms: Math.round(firstMs), parse_ms: Math.round(parseMs), model_mb_s: Math.round(decoded / 1e6 / (modelMs / 1000)), decoded_mb_s: Math.round(decoded / 1e6 / (ms / 1000)), wasm_mb: +(wasm / 1e6).toFixed(1), wasm_vs_file: +(wasm / decoded).toFixed(2), worker_wasm_vs_file: +(workerWasm / decoded).toFixed(2), shard_worker_wasm_vs_file: +(shardWasm / decoded).toFixed(2), page_wall_ms: wall, workers, analysed_in: analysedIn, timeline_in: timelineIn, longest_task_ms: Math.round(Math.max(0, ...long)), long_tasks: long.length, long_task_sum_ms: Math.round(long.reduce((a, x) => a + x, 0)), longest_task_while_loading_ms: Math.round(Math.max(0, ...during)), long_tasks_while_loading: during.length, long_task_list: tasks.map(([t, d]) => [Math.round(t - (window_picked ?? 0)), Math.round(d)]), merged_by: mergedBy, phases, phase_mb: phaseMb }));
    await p.close();
  }
}
await b.close();
srv.server.close();
