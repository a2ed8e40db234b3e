// Timeline frame-time harness (not a *.test.mjs: the test runner skips it; BENCHMARKS.md is the
// lead's). Loads a big trace, opens the timeline, runs a scripted zoom/pan sequence — one wheel
// event per animation frame — and records requestAnimationFrame timestamps and the painter's own
// time (`data-paint-ms`). Prints median and p95 of both.
//
//   cargo run --release -p tracelight-synth -- bench-data/synth-100mb.pt.trace.json --target-mb 100
//   node tests/e2e/bench_timeline.mjs [bench-data/synth-100mb.pt.trace.json]
//
// DIST=other/dist serves another build of the app (for before/after comparisons).
import http from 'node:http';
import fs from 'node:fs';
import path from 'node:path';
import { browser, DIST as BUILT, ROOT, shot } from './harness.mjs';

const DIST = process.env.DIST ? path.resolve(process.env.DIST) : BUILT;
const file = path.resolve(process.argv[2] || path.join(ROOT, 'bench-data/synth-100mb.pt.trace.json'));
if (!fs.existsSync(file)) {
  console.error(`missing ${file}; generate it with tracelight-synth (see the header)`);
  process.exit(2);
}
const TYPES = { '.html': 'text/html', '.js': 'text/javascript', '.wasm': 'application/wasm', '.css': 'text/css' };
const server = http.createServer((req, res) => {
  const url = new URL(req.url, 'http://x');
  const f = url.pathname === '/bench' ? file : path.join(DIST, decodeURIComponent(url.pathname === '/' ? '/index.html' : url.pathname));
  if (f !== file && !f.startsWith(DIST)) { res.writeHead(403).end(); return; }
  fs.stat(f, (err, st) => {
    if (err || !st.isFile()) { res.writeHead(404).end(); return; }
    res.writeHead(200, { 'content-type': TYPES[path.extname(f)] || 'application/octet-stream', 'content-length': st.size });
    fs.createReadStream(f).pipe(res);
  });
});
await new Promise((r) => server.listen(0, '127.0.0.1', r));
const base = `http://127.0.0.1:${server.address().port}`;
const b = await browser();
const p = await b.newPage({ viewport: { width: 1600, height: 1000 } });
p.on('pageerror', (e) => console.error('pageerror', String(e)));
const t0 = Date.now();
await p.goto(`${base}/?url=${encodeURIComponent('/bench')}`);
await p.getByTestId('event-count').waitFor({ timeout: 600_000 });
const loadS = (Date.now() - t0) / 1000;
const t1 = Date.now();
await p.getByTestId('tab-timeline').click();
await p.waitForFunction(() => Number(document.querySelector('[data-testid=timeline]')?.getAttribute('data-rects')) > 0, null, { timeout: 600_000 });
const firstPaintS = (Date.now() - t1) / 1000;
await p.screenshot({ path: shot('bench-zoomed-out.png') });

const result = await p.evaluate(async () => {
  const c = document.querySelector('[data-testid=timeline]');
  const r = c.getBoundingClientRect();
  const gutter = Number(c.getAttribute('data-gutter-px'));
  const frame = () => new Promise((res) => requestAnimationFrame(res));
  const wheel = (dx, dy, fx) => c.dispatchEvent(new WheelEvent('wheel', {
    deltaX: dx, deltaY: dy, clientX: r.left + gutter + fx * (r.width - gutter), clientY: r.top + 200, bubbles: true, cancelable: true,
  }));
  // Zoom in around three places, pan, zoom back out: 360 frames.
  const steps = [];
  for (const fx of [0.5, 0.2, 0.8]) {
    for (let i = 0; i < 50; i++) steps.push([0, -120, fx]);
    for (let i = 0; i < 20; i++) steps.push([60, 0, fx]);
    for (let i = 0; i < 50; i++) steps.push([0, 120, fx]);
  }
  const stamps = [], paints = [];
  await frame();
  for (const [dx, dy, fx] of steps) {
    wheel(dx, dy, fx);
    stamps.push(await frame());
    // The painter runs in the frame after the event; read its time once it has.
    paints.push(Number(c.getAttribute('data-paint-ms')));
  }
  stamps.push(await frame());
  const intervals = stamps.slice(1).map((t, i) => t - stamps[i]);
  return { intervals, paints, spans: Number(c.getAttribute('data-spans')) };
});
const q = (xs, f) => { const s = [...xs].sort((a, b) => a - b); return s[Math.min(s.length - 1, Math.floor(f * s.length))]; };
const fmt = (x) => x.toFixed(2);
console.log(`file ${path.basename(file)} (${(fs.statSync(file).size / 1e6).toFixed(0)} MB): load ${loadS.toFixed(1)} s, first timeline paint ${firstPaintS.toFixed(1)} s`);
console.log(`frames ${result.intervals.length}: rAF interval median ${fmt(q(result.intervals, 0.5))} ms, p95 ${fmt(q(result.intervals, 0.95))} ms, max ${fmt(Math.max(...result.intervals))} ms`);
console.log(`paint time median ${fmt(q(result.paints, 0.5))} ms, p95 ${fmt(q(result.paints, 0.95))} ms, max ${fmt(Math.max(...result.paints))} ms`);
await p.screenshot({ path: shot('bench-end.png') });
await b.close();
server.close();
