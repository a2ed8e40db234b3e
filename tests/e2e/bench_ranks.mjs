// Ranks benchmark (not a *.test.mjs: the test runner skips it; figures go to BENCHMARKS.md, "Runs
// and ranks"). Picks N synthetic rank traces together, as a user picks a run's files, then reads
// the wasm linear memory once all are open, opens the Ranks tab and runs a scripted zoom/pan on the
// aligned timelines of all ranks — one wheel event per animation frame — recording
// requestAnimationFrame intervals and the painter's own time (`data-paint-ms`).
//
//   cargo build --release -p tracelight-synth
//   for r in 0 1 2 3 4 5 6 7; do
//     target/release/tracelight-synth bench-data/ranks/rank-$r.pt.trace.json --target-mb 100 --seed $r
//   done
//   node tests/e2e/bench_ranks.mjs bench-data/ranks/rank-*.pt.trace.json
import fs from 'node:fs';
import path from 'node:path';
import { serve, browser, shot } from './harness.mjs';

const files = process.argv.slice(2).map((f) => path.resolve(f));
if (!files.length || !files.every((f) => fs.existsSync(f))) {
  console.error('usage: node tests/e2e/bench_ranks.mjs RANK_TRACE… (generate them as the header says)');
  process.exit(2);
}
const srv = await serve();
const b = await browser();
const p = await b.newPage({ viewport: { width: 1440, height: 900 } });
p.on('pageerror', (e) => console.error('pageerror', String(e)));
await p.goto(`${srv.base}/`);
await p.getByTestId('empty').waitFor();
const t0 = Date.now();
await p.getByTestId('file-input').setInputFiles(files);
await p.getByTestId('ranks-view').waitFor({ timeout: 1_800_000 });
// Every file listed as loaded (the overview appears with the first).
await p.waitForFunction((n) => document.querySelectorAll('.file-chip').length >= n, files.length, { timeout: 1_800_000 }).catch(() => {});
const loadS = (Date.now() - t0) / 1000;
const t1 = Date.now();
await p.getByTestId('tab-ranks').click();
await p.waitForFunction(() => Number(document.querySelector('[data-testid=aligned-canvas]')?.dataset.rects) > 0, null, { timeout: 600_000 });
const ranksS = (Date.now() - t1) / 1000;
// Linear memory only grows: read once everything (analyses, timeline indexes) is built.
const wasm = Number(await p.getByTestId('aligned-canvas').getAttribute('data-wasm-bytes'));
await p.getByTestId('aligned').scrollIntoViewIfNeeded();
await p.screenshot({ path: shot('bench-ranks.png') });

const run = () => p.evaluate(async () => {
  const c = document.querySelector('[data-testid=aligned-canvas]');
  const r = c.getBoundingClientRect();
  const gutter = 210;
  const frame = () => new Promise((res) => requestAnimationFrame(res));
  const wheel = (dy, fx) => c.dispatchEvent(new WheelEvent('wheel', {
    deltaY: dy, clientX: r.left + gutter + fx * (r.width - gutter), clientY: r.top + 100, bubbles: true, cancelable: true,
  }));
  const steps = [];
  for (const fx of [0.5, 0.2, 0.8]) {
    for (let i = 0; i < 50; i++) steps.push([-120, fx]);
    for (let i = 0; i < 50; i++) steps.push([120, fx]);
  }
  const stamps = [], paints = [];
  await frame();
  for (const [dy, fx] of steps) {
    wheel(dy, fx);
    stamps.push(await frame());
    paints.push(Number(c.getAttribute('data-paint-ms')));
  }
  stamps.push(await frame());
  return { intervals: stamps.slice(1).map((t, i) => t - stamps[i]), paints };
});
const q = (xs, f) => { const s = [...xs].sort((a, b) => a - b); return s[Math.min(s.length - 1, Math.floor(f * s.length))]; };
const fmt = (x) => x.toFixed(2);
const ranksShown = Number(await p.getByTestId('ranks-table').getAttribute('data-rows'));
const matched = Number(await p.getByTestId('collectives').getAttribute('data-count'));
const chips = await p.locator('.file-chip').count();
const mb = files.reduce((s, f) => s + fs.statSync(f).size, 0) / 1e6;
console.log(`${files.length} rank traces, ${mb.toFixed(0)} MB in all: open ${loadS.toFixed(1)} s, wasm memory ${(wasm / 1e6).toFixed(0)} MB, Ranks tab first paint ${ranksS.toFixed(1)} s (${chips} files open, ${ranksShown} ranks in the table, ${matched} collectives matched)`);
for (const open of [false, true]) {
  if (open) await p.getByTestId('aligned-expand').click();
  await p.getByTestId('aligned-reset').click();
  const res = await run();
  console.log(`aligned timelines, ranks ${open ? 'open' : 'collapsed'}: ${res.intervals.length} frames, rAF interval median ${fmt(q(res.intervals, 0.5))} ms, p95 ${fmt(q(res.intervals, 0.95))} ms; paint median ${fmt(q(res.paints, 0.5))} ms, p95 ${fmt(q(res.paints, 0.95))} ms, max ${fmt(Math.max(...res.paints))} ms`);
}
await p.screenshot({ path: shot('bench-ranks-end.png') });
await b.close();
srv.server.close();
