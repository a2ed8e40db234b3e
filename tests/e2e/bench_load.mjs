// Browser load benchmark (not a test: run by hand, numbers go to BENCHMARKS.md).
//   node tests/e2e/bench_load.mjs bench-data/synth-100mb.pt.trace.json [more files…]
// Opens each file with ?url= (or, with VIA=file, through the file picker) in headless Chromium and
// prints the page's own figures: load time (read request → timeline indexed), model_ms (→ model ready),
// first_bytes_ms (→ first bytes parsed), the part of the load
// the reader itself ran (parse_ms), decoded MB/s, and the wasm linear memory after the load.
// INFLATE=browser|wasm picks who inflates .gz (DecompressionStream in the worker, or flate2).
// WORKERS=N reads a plain trace on N workers (0: on the page's thread; unset: the page decides).
// Long tasks on the page's thread (a PerformanceObserver for 'longtask', installed before the page's
// own scripts) are counted from the pick to the Overview shown: longest, count, and their sum.
// PROFILE=FILE.cpuprofile records the page thread's CPU profile (DevTools' sampler, 250 µs) over
// the same span, writes it (open it in Chrome's DevTools) and prints the 25 functions with the
// most self time and the 40 with the most inclusive time; with a wasm bound by `wasm-bindgen --keep-debug` they carry Rust's names.
import path from 'node:path';
import fs from 'node:fs';
import { serve, browser, ROOT } from './harness.mjs';

const files = process.argv.slice(2);
const srv = await serve();
const b = await browser();
for (const f of files) {
  const rel = path.relative(path.join(ROOT, 'bench-data'), path.resolve(f));
  const size = fs.statSync(f).size;
  for (let run = 0; run < Number(process.env.RUNS || 3); run++) {
    const p = await b.newPage();
    await p.addInitScript(() => {
      window.__longtasks = [];
      new PerformanceObserver((l) => { for (const e of l.getEntries()) window.__longtasks.push([e.startTime, e.duration]); })
        .observe({ type: 'longtask', buffered: true });
    });
    let cdp = null;
    if (process.env.PROFILE) {
      cdp = await p.context().newCDPSession(p);
      await cdp.send('Profiler.enable');
      await cdp.send('Profiler.setSamplingInterval', { interval: 250 });
    }
    const t0 = Date.now();
    let q = process.env.INFLATE ? `inflate=${process.env.INFLATE}` : '';
    if (process.env.WORKERS !== undefined) q += `&workers=${process.env.WORKERS}`;
    if (process.env.VIA === 'file') {
      await p.goto(`${srv.base}/?${q}`);
      // As a user would: the app is up (and its reader warmed, see load::warm_up) before a file
      // is picked. IDLE_MS=0 picks at once, making the start-up part of the load.
      await p.getByTestId('empty').waitFor();
      await p.waitForTimeout(Number(process.env.IDLE_MS ?? 500));
      if (cdp) await cdp.send('Profiler.start');
      await p.evaluate(() => { window.__picked = performance.now(); });
      await p.getByTestId('file-input').setInputFiles(f);
    } else {
      await p.goto(`${srv.base}/?${q}&url=${encodeURIComponent('bench-data/' + rel)}`);
    }
    await p.getByTestId('load-stats').waitFor({ timeout: 600_000 });
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
    // Long tasks from the pick (or the navigation, with ?url=) until the Overview is on screen and
    // its analyses are drawn (a task still running is reported when it ends: wait a second).
    await p.waitForTimeout(1000);
    if (cdp) {
      const { profile } = await cdp.send('Profiler.stop');
      fs.writeFileSync(process.env.PROFILE, JSON.stringify(profile));
      const self = new Map();
      const byId = new Map(profile.nodes.map((n) => [n.id, n]));
      const dt = profile.timeDeltas || [];
      profile.samples.forEach((id, k) => {
        const f = byId.get(id).callFrame;
        const key = `${f.functionName || '(anonymous)'} ${f.url ? path.basename(f.url) : ''}`;
        self.set(key, (self.get(key) || 0) + (dt[k + 1] ?? 0) / 1000);
      });
      const parent = new Map();
      for (const n of profile.nodes) for (const c of n.children || []) parent.set(c, n.id);
      const top = [...self].sort((a, b) => b[1] - a[1]).slice(0, 25);
      console.log('self time:');
      for (const [k, ms] of top) console.log(`${ms.toFixed(0).padStart(7)} ms  ${k}`);
      // Inclusive time: each function once per sample, however deep it recurses.
      const incl = new Map();
      profile.samples.forEach((id, k) => {
        const seen = new Set();
        for (let n = id; n !== undefined; n = parent.get(n)) {
          const name = byId.get(n).callFrame.functionName;
          if (!name || name.startsWith('(') || seen.has(name)) continue;
          seen.add(name);
          incl.set(name, (incl.get(name) || 0) + (dt[k + 1] ?? 0) / 1000);
        }
      });
      // Busy stretches (samples between idle ones) of 50 ms or more, each with the project's
      // functions that ran longest in it: which code a long task is.
      let run = [], t = 0;
      const stretches = [];
      profile.samples.forEach((id, k) => {
        const d = (dt[k + 1] ?? 0) / 1000;
        const name = byId.get(id).callFrame.functionName;
        if (name === '(idle)') { if (run.length) stretches.push([t, run]); run = []; }
        else { if (!run.length) t = 0; run.push([id, d]); t += d; }
      });
      if (run.length) stretches.push([t, run]);
      for (const [ms, samples] of stretches.filter(([ms]) => ms >= 50)) {
        const inc = new Map();
        for (const [id, d] of samples) {
          const seen = new Set();
          for (let n = id; n !== undefined; n = parent.get(n)) {
            const nm = byId.get(n).callFrame.functionName.replace(/::h[0-9a-f]{16}/, '');
            if (!nm || nm.startsWith('(') || /wasm_bindgen|js-to-wasm|wasm-to-js|^real$|Queue|Future|poll/.test(nm) || seen.has(nm)) continue;
            seen.add(nm);
            inc.set(nm, (inc.get(nm) || 0) + d);
          }
        }
        console.log(`busy ${ms.toFixed(0)} ms:`);
        for (const [k, v] of [...inc].sort((a, b) => b[1] - a[1]).slice(0, 12)) console.log(`  ${v.toFixed(0).padStart(6)} ms  ${k.slice(0, 160)}`);
      }
      console.log('inclusive time:');
      for (const [k, ms] of [...incl].sort((a, b) => b[1] - a[1]).slice(0, 40)) console.log(`${ms.toFixed(0).padStart(7)} ms  ${k}`);
    }
    const tasks = await p.evaluate(() => (window.__longtasks || []).filter(([t]) => t >= (window.__picked || 0)));
    const long = tasks.map(([, d]) => d);
    // Those that ended while the file loaded (pick → model and timeline index ready), apart from
    // the rest: the Overview's analyses and first paint (a task that runs on from the load's last
    // step into them counts there).
    const window_picked = await p.evaluate(() => window.__picked || 0);
    const loadEnd = window_picked + ms;
    const during = tasks.filter(([t, d]) => t + d <= loadEnd + 1).map(([, d]) => d);
    console.log(JSON.stringify({ file: rel, size_mb: +(size / 1e6).toFixed(1), run, load_ms: Math.round(ms), model_ms: Math.round(modelMs), first_bytes_ms: Math.round(firstMs), parse_ms: Math.round(parseMs), model_mb_s: Math.round(decoded / 1e6 / (modelMs / 1000)), decoded_mb_s: Math.round(decoded / 1e6 / (ms / 1000)), wasm_mb: +(wasm / 1e6).toFixed(1), wasm_vs_file: +(wasm / decoded).toFixed(2), page_wall_ms: wall, workers, analysed_in: analysedIn, longest_task_ms: Math.round(Math.max(0, ...long)), long_tasks: long.length, long_task_sum_ms: Math.round(long.reduce((a, x) => a + x, 0)), longest_task_while_loading_ms: Math.round(Math.max(0, ...during)), long_tasks_while_loading: during.length, long_task_list: process.env.PROFILE ? tasks.map(([t, d]) => [Math.round(t - (window_picked ?? 0)), Math.round(d)]) : undefined }));
    await p.close();
  }
}
await b.close();
srv.server.close();
