// The same file picked N times in one page (not a test: run by hand, numbers go to BENCHMARKS.md):
//   [N=3] [IDLE_MS=500] node tests/e2e/bench_repeat_load.mjs FILE
// A later load runs code V8 has already optimized; the first pays for the compiles. Prints each
// load's model ready (ms from the pick) and the tasks over 50 ms after the pick, and how far the
// spare worker's warm-up went before it (`passes/through`). first_overview_ms is only the first
// load's (later ones find the last Overview on screen).
import { serve, browser } from './harness.mjs';
const f = process.argv[2];
const srv = await serve();
const b = await browser();
const p = await b.newPage();
await p.addInitScript(() => {
  window.__longtasks = [];
  new PerformanceObserver((l) => { for (const e of l.getEntries()) window.__longtasks.push([e.startTime, e.duration]); }).observe({ type: 'longtask', buffered: true });
});
await p.goto(`${srv.base}/?${process.env.Q || ''}`);
await p.getByTestId('empty').waitFor();
const tw = Date.now();
await p.waitForTimeout(Number(process.env.IDLE_MS || 500));
console.log('warm-up before the pick:', await p.evaluate(() => document.documentElement.dataset.workerWarmUp), 'after', Date.now() - tw, 'ms idle');
for (let i = 0; i < Number(process.env.N || 3); i++) {
  const t = await p.evaluate(() => { window.__picked = performance.now(); return window.__picked; });
  await p.getByTestId('file-input').setInputFiles(f);
  const first = await p.waitForFunction(() => document.querySelector('[data-testid=overview]') && performance.now(), null, { timeout: 60000, polling: 20 });
  const fp = (await first.jsonValue()) - t;
  await p.waitForFunction((t0) => { const s = document.querySelector('[data-testid=load-stats]'); return s && !document.querySelector('[data-testid=preview-banner]') && performance.now() - t0 > 1500 && s.getAttribute('data-model-ms'); }, t, { timeout: 600000, polling: 100 });
  const model = await p.getByTestId('load-stats').getAttribute('data-model-ms');
  await p.waitForTimeout(1500);
  const lt = await p.evaluate((t0) => window.__longtasks.filter(([s]) => s >= t0).map(([s, d]) => [Math.round(s - t0), Math.round(d)]), t);
  console.log(JSON.stringify({ load: i, first_overview_ms: Math.round(fp), model_ms: Math.round(+model), long_tasks: lt }));
}
await b.close();
srv.server.close();
