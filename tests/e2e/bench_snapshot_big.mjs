// Gigabyte snapshot benchmark (not a test): a big memory snapshot picked in headless Chromium and
// read by the page's snapshot worker. Prints, per run: file picked → first chart drawn, the page's
// and the worker's wasm memory (WebAssembly memory only grows, so these are their peaks) against
// the file's size, every long task (PerformanceObserver `longtask`, > 50 ms) on the page's thread
// from navigation to the end of the interactions (`long_tasks_list`, ms since navigation, beside
// `picked_at`) and those from the pick on (`long_tasks_after_pick`), and the time for the chart's hover tooltip, the
// segment map and the flame graph to answer, once the whole model is in (`whole_model_ms`: the
// first chart comes earlier, from the worker's views). Then memory_viz's own offline conversion of the same
// file, in the same run: torch's `_memory_viz.py trace_plot FILE -o OUT.html` (pickle.load of the
// whole file into Python objects, then the HTML that embeds it for MemoryViz.js), under a memory
// cap so it fails cleanly instead of swapping the machine (its time, or how it failed).
//
//   python3 scripts/gen_big_snapshot.py --shape synthetic --mb 1000 --out /dev/shm/big_synthetic.pickle
//   python3 scripts/gen_big_snapshot.py --shape real --mb 1000 --out /dev/shm/big_real.pickle
//   trunk build --release
//   node tests/e2e/bench_snapshot_big.mjs FILE [RUNS] [MEMORY_VIZ_CAP_GB]
import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { serve, browser } from './harness.mjs';
import { profiler } from './profile.mjs';

const FILE = process.argv[2];
const RUNS = Number(process.argv[3] || 1);
const CAP_GB = Number(process.argv[4] || 8);
const VENV = process.env.TORCH_VENV || '/work/torchvenv';

async function once(b, srv) {
  const p = await b.newPage({ viewport: { width: 1440, height: 900 } });
  await p.addInitScript(() => {
    window.__long = [];
    new PerformanceObserver((l) => {
      for (const e of l.getEntries()) window.__long.push([Math.round(e.startTime), Math.round(e.duration)]);
    }).observe({ type: 'longtask', buffered: true });
    // What ran in each long frame (long-animation-frame: the scripts' invokers), when asked.
    window.__loaf = [];
    try {
      new PerformanceObserver((l) => {
        for (const e of l.getEntries()) {
          window.__loaf.push([Math.round(e.startTime), Math.round(e.duration), Math.round(e.renderStart ? e.startTime + e.duration - e.renderStart : 0),
            (e.scripts || []).map((s) => `${s.invoker}:${Math.round(s.duration)}`).join(' ')]);
        }
      }).observe({ type: 'long-animation-frame', buffered: true });
    } catch (e) { /* not in this browser */ }
    document.addEventListener('change', () => { window.__t0 = performance.now(); }, true);
  });
  // PROFILE=FILE.cpuprofile: the page thread's CPU profile from the pick to the end (profile.mjs).
  const prof = process.env.PROFILE ? await profiler(p, process.env.PROFILE) : null;
  await p.goto(srv.base + '/');
  await p.getByTestId('empty').waitFor();
  // SETTLE_MS: the time a user takes to pick the file once the page is up (default 0: at once).
  await p.waitForTimeout(Number(process.env.SETTLE_MS || 0));
  if (prof) await prof.start();
  await p.getByTestId('file-input').setInputFiles(FILE);
  const drawn = await p.evaluate(() => new Promise((resolve) => {
    const tick = () => {
      if (document.querySelector('[data-testid=mem-chart]')?.getAttribute('data-drawn') === '1') resolve(performance.now());
      else if (document.querySelector('[data-testid=error]')) resolve(-1);
      else requestAnimationFrame(tick);
    };
    tick();
  }));
  if (drawn < 0) throw new Error(await p.getByTestId('error').textContent());
  const t0 = await p.evaluate(() => window.__t0);
  const r = { first_chart_ms: Math.round(drawn - t0) };
  // The first chart is drawn from the worker's views; the whole file (the model) replaces that
  // view when its sections are in: the page's memory is read then.
  await p.waitForFunction(() => document.querySelector('[data-testid=memory-view]')?.getAttribute('data-model') === 'whole', null, { timeout: 600_000 });
  r.whole_model_ms = Math.round(await p.evaluate(() => performance.now()) - t0);
  const view = p.getByTestId('memory-view');
  r.workers = Number(await view.getAttribute('data-workers'));
  r.page_wasm_bytes = Number(await view.getAttribute('data-wasm-bytes'));
  r.worker_wasm_bytes = Number(await p.evaluate(() => document.documentElement.dataset.workerWasmBytes || 0));
  // Interactions: hover the chart until its tooltip shows, the segment map and the flame graph.
  const chart = p.getByTestId('mem-chart');
  const box = await chart.boundingBox();
  let t = Date.now();
  let hovered = false;
  for (let fx = 0.1; fx < 0.95 && !hovered; fx += 0.05) {
    await p.mouse.move(box.x + box.width * fx, box.y + box.height - 40);
    hovered = await p.getByTestId('mem-tooltip').isVisible().catch(() => false);
  }
  r.hover_ms = hovered ? Date.now() - t : null;
  t = Date.now();
  await p.getByTestId('mem-segment-view').scrollIntoViewIfNeeded();
  r.segment_map_segments = Number(await p.getByTestId('mem-segment-view').getAttribute('data-segments'));
  const scrub = p.getByTestId('mem-scrubber');
  if (await scrub.count()) {
    await scrub.focus();
    await p.keyboard.press('End');
    await p.keyboard.press('Home');
  }
  r.segment_map_ms = Date.now() - t;
  t = Date.now();
  const flame = p.getByTestId('mem-flame');
  if (await flame.count()) {
    await flame.scrollIntoViewIfNeeded();
    const fb = await flame.boundingBox();
    await p.mouse.click(fb.x + fb.width * 0.3, fb.y + 8);
    r.flame_ms = Date.now() - t;
  }
  if (prof) await prof.stop();
  const long = await p.evaluate(() => window.__long);
  r.long_tasks = long.length;
  r.longest_task_ms = long.reduce((m, x) => Math.max(m, x[1]), 0);
  r.long_tasks_list = long.slice(0, 20);
  // The first chart and the pick on the same clock as the lists (ms since navigation).
  r.picked_at = Math.round(t0);
  r.drawn_at = Math.round(drawn);
  // The same from the pick on (those before it are the app's start-up).
  const after = long.filter(([at, d]) => at + d > t0);
  r.long_tasks_after_pick = after.length;
  r.longest_task_after_pick_ms = after.reduce((m, x) => Math.max(m, x[1]), 0);
  if (process.env.LOAF) r.long_frames = (await p.evaluate(() => window.__loaf)).filter(([, d]) => d > 50);
  await p.screenshot({ path: path.join('target', 'e2e', `bench-big-${path.basename(FILE)}.png`) });
  await p.close();
  return r;
}

function memoryViz() {
  const py = path.join(VENV, 'bin/python');
  const mv = spawnSync(py, ['-c', 'import torch.cuda._memory_viz as m; print(m.__file__)'], { encoding: 'utf8' }).stdout?.trim();
  if (!mv) return { memory_viz: 'torch not found' };
  const out = `/dev/shm/memory_viz_${process.pid}.html`;
  const t = Date.now();
  // `ulimit -v` caps its address space: a MemoryError instead of the machine swapping.
  const r = spawnSync('bash', ['-c', `ulimit -v ${Math.round(CAP_GB * 1024 * 1024)}; exec ${py} ${mv} trace_plot "$0" -o ${out}`, FILE], { encoding: 'utf8', timeout: 1_200_000 });
  const ms = Date.now() - t;
  const size = fs.existsSync(out) ? fs.statSync(out).size : 0;
  fs.rmSync(out, { force: true });
  const err = (r.stderr || '').trim().split('\n').slice(-1)[0];
  return { memory_viz_trace_plot_ms: ms, memory_viz_exit: r.status, memory_viz_signal: r.signal, memory_viz_cap_gb: CAP_GB, memory_viz_html_bytes: size, memory_viz_error: r.status === 0 ? null : err };
}

async function main() {
  if (!FILE || !fs.existsSync(FILE)) throw new Error(`usage: node tests/e2e/bench_snapshot_big.mjs FILE [RUNS] [CAP_GB] (${FILE} missing)`);
  fs.mkdirSync(path.join('target', 'e2e'), { recursive: true });
  const bytes = fs.statSync(FILE).size;
  const b = await browser();
  const srv = await serve();
  const runs = [];
  try {
    for (let i = 0; i < RUNS; i++) runs.push(await once(b, srv));
  } finally {
    await b.close();
    srv.server.close();
  }
  const out = { file: path.basename(FILE), bytes, runs };
  for (const r of runs) {
    r.page_wasm_over_file = Number((r.page_wasm_bytes / bytes).toFixed(2));
    r.worker_wasm_over_file = Number((r.worker_wasm_bytes / bytes).toFixed(2));
  }
  Object.assign(out, memoryViz());
  console.log(JSON.stringify(out, null, 2));
}

main().catch((e) => { console.error(e); process.exit(1); });
