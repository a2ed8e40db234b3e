// Memory benchmark (not a test): file drop → chart drawn, in headless Chromium, for Tracelight and,
// when bench-data/memory_viz/index.html exists, for torch's memory_viz on the same file: pytorch's
// torch/utils/viz/MemoryViz.js (the page pytorch.org/memory_viz and `_memory_viz.py` load it from a
// CDN; the wheel has no copy) with its d3 imports pointed at a local d3@5 (`npm pack d3@5.16.0`,
// dist/d3.min.js, loaded by a plain script tag); never committed.
//
//   python3 scripts/gen_bench_snapshot.py            # bench-data/bench_snapshot.pickle, ~50 MB
//   node tests/e2e/bench_memory.mjs [FILE] [RUNS]
//
// Both apps get the same start: the file is already in the page as a File backed by the file on
// disk, as a drop gives; the clock starts when a `drop` event carrying it is dispatched and stops
// at the first animation frame after the chart exists (Tracelight: the chart canvas says
// data-drawn; memory_viz: its plot polygons exist): `seen`, the frame whose paint shows it. The
// figure kept since the first runs, `next`, is the frame after that one: a frame later when the
// page is idle, later still while it goes on working (as Tracelight's does once its chart is
// drawn from the worker's views, decoding the model meanwhile).
import http from 'node:http';
import fs from 'node:fs';
import path from 'node:path';
import { serve, browser, ROOT } from './harness.mjs';

const FILE = process.argv[2] || path.join(ROOT, 'bench-data/bench_snapshot.pickle');
const RUNS = Number(process.argv[3] || 3);
const MV = path.join(ROOT, 'bench-data/memory_viz');
// Time a user takes to pick a file once the page is up (both apps): the page readies its reader
// meanwhile. SETTLE_MS=0 drops the file at once.
const SETTLE_MS = Number(process.env.SETTLE_MS ?? 2000);

function serveDir(dir) {
  const server = http.createServer((req, res) => {
    const p = path.join(dir, decodeURIComponent(new URL(req.url, 'http://x').pathname));
    if (!p.startsWith(dir) || !fs.existsSync(p) || !fs.statSync(p).isFile()) { res.writeHead(404).end(); return; }
    const type = p.endsWith('.js') ? 'text/javascript' : p.endsWith('.html') ? 'text/html' : 'application/octet-stream';
    res.writeHead(200, { 'content-type': type, 'access-control-allow-origin': '*' });
    fs.createReadStream(p).pipe(res);
  });
  return new Promise((r) => server.listen(0, '127.0.0.1', () => r({ server, base: `http://127.0.0.1:${server.address().port}` })));
}

/** Puts FILE into the page as `window.__file` (not timed): a File backed by the file on disk, as
 * a user's drop gives (through a hidden file input), in both apps. A File built in the page from
 * fetched bytes instead made the first read of either app wait ~40 ms while the browser took in
 * its 50 MB. */
async function stage(p, file) {
  await p.evaluate(() => {
    const i = document.createElement('input');
    i.type = 'file';
    i.id = '__stage';
    i.style.display = 'none';
    document.body.appendChild(i);
  });
  await p.setInputFiles('#__stage', file);
  await p.evaluate(() => {
    const i = document.getElementById('__stage');
    window.__file = i.files[0];
    i.remove();
  });
}

/** Dispatches the drop on `target` and resolves with ms until `ready()` holds at an animation
 * frame (`seen`), and until the frame after it (`next`). */
async function dropAndWait(p, target, readyExpr) {
  return p.evaluate(({ target, readyExpr }) => new Promise((resolve, reject) => {
    const ready = new Function(`return (${readyExpr});`);
    const dt = new DataTransfer();
    dt.items.add(window.__file);
    const t0 = performance.now();
    const ev = new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true });
    window.event = ev; // memory_viz reads the global `event`
    document.querySelector(target).dispatchEvent(ev);
    const limit = t0 + 300_000;
    const tick = () => {
      if (ready()) {
        const seen = performance.now() - t0;
        requestAnimationFrame(() => resolve({ seen, next: performance.now() - t0 }));
        return;
      }
      if (performance.now() > limit) { reject(new Error('timed out')); return; }
      requestAnimationFrame(tick);
    };
    requestAnimationFrame(tick);
  }), { target, readyExpr });
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function main() {
  if (!fs.existsSync(FILE)) throw new Error(`${FILE} missing: run python3 scripts/gen_bench_snapshot.py`);
  const mb = fs.statSync(FILE).size / 1e6;
  const b = await browser();
  const srv = await serve();
  const results = {};
  try {
    const tl = [];
    for (let i = 0; i < RUNS; i++) {
      const p = await b.newPage({ viewport: { width: 1400, height: 900 } });
      await p.goto(srv.base + '/');
      await p.getByTestId('empty').waitFor();
      await p.waitForTimeout(SETTLE_MS);
      await stage(p, FILE);
      tl.push(await dropAndWait(p, 'main.app', "document.querySelector('[data-testid=mem-chart]')?.getAttribute('data-drawn') === '1'"));
      if (i === 0) await p.screenshot({ path: path.join(ROOT, 'target/e2e/bench-tracelight.png') });
      await p.close();
    }
    results.tracelight_ms = tl;
    if (fs.existsSync(path.join(MV, 'index.html'))) {
      const mv = await serveDir(MV);
      const m = [];
      for (let i = 0; i < RUNS; i++) {
        const p = await b.newPage({ viewport: { width: 1400, height: 900 } });
        await p.goto(mv.base + '/index.html');
        await p.waitForFunction(() => document.querySelectorAll('select').length >= 3);
        await p.waitForTimeout(SETTLE_MS);
        await stage(p, FILE);
        m.push(await dropAndWait(p, 'body', "document.querySelectorAll('svg polygon').length > 1"));
        if (i === 0) await p.screenshot({ path: path.join(ROOT, 'target/e2e/bench-memory_viz.png') });
        await p.close();
      }
      mv.server.close();
      results.memory_viz_ms = m;
    }
  } finally {
    await b.close();
    srv.server.close();
  }
  const col = (xs, k) => xs.map((x) => Math.round(x[k]));
  const out = { file: path.basename(FILE), mb: Number(mb.toFixed(1)), runs: RUNS };
  for (const [app, xs] of Object.entries(results)) {
    out[app] = col(xs, 'next');
    out[app.replace(/_ms$/, '_seen_ms')] = col(xs, 'seen');
  }
  out.tracelight_median_ms = median(out.tracelight_ms);
  out.tracelight_seen_median_ms = median(out.tracelight_seen_ms);
  if (results.memory_viz_ms) {
    out.memory_viz_median_ms = median(out.memory_viz_ms);
    out.memory_viz_seen_median_ms = median(out.memory_viz_seen_ms);
    out.ratio_memory_viz_over_tracelight = Number((out.memory_viz_median_ms / out.tracelight_median_ms).toFixed(2));
    out.ratio_seen = Number((out.memory_viz_seen_median_ms / out.tracelight_seen_median_ms).toFixed(2));
  }
  console.log(JSON.stringify(out, null, 2));
}

main().catch((e) => { console.error(e); process.exit(1); });
