// A memory snapshot of 4 MB or more is decoded in a worker (load/pool.rs `Plan::Snapshot`,
// js/shards.js `runSnapshot`): the pickle never runs on the page's thread and the model comes back
// in sections (core `ingest::snapshot::wire`), then the summary and charts the worker built from it
// (core `report::snapshot_wire`; the page's thread only decodes them). The page must show what its own reader shows for the
// same file and the CLI's numbers, report a broken pickle as its own reader does, and fall back to
// its own reader where the worker cannot run. `?workers=1` sends a snapshot of any size to the
// worker, `?workers=0` none.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { serve, browser, cli, page, shot, corpusSkip, CORPUS } from './harness.mjs';

let srv, b;
const TMP = fs.mkdtempSync(path.join(os.tmpdir(), 'tl-snapworker-'));
before(async () => { srv = await serve(); b = await browser(); });
after(async () => { await b?.close(); srv?.server.close(); fs.rmSync(TMP, { recursive: true, force: true }); });

const SNAP = path.join(CORPUS, 'real/snapshots/cs336_nothanmin_memory_snapshot.pickle');
const CPP = path.join(CORPUS, 'real/snapshots/select_n_2023-12_4gpu_cpp_frames_snapshot.pickle');
const attr = (p, id, a) => p.getByTestId(id).getAttribute(a);

async function open(query, file, errors = []) {
  const p = await page(b, errors);
  await p.goto(`${srv.base}/?${query}`);
  await p.getByTestId('empty').waitFor();
  await p.getByTestId('file-input').setInputFiles(file);
  return p;
}

/** The peak flame graph's node count and bytes, once drawn (none: no live blocks at the peak). */
async function flameOf(p) {
  const f = p.getByTestId('mem-flame');
  if (!(await f.count())) return null;
  await f.scrollIntoViewIfNeeded();
  await p.waitForFunction(() => document.querySelector('[data-testid=mem-flame]')?.getAttribute('data-nodes'), null, { timeout: 60_000 });
  return [Number(await f.getAttribute('data-nodes')), Number(await f.getAttribute('data-bytes')), await f.getAttribute('data-flame-in')];
}

/** What the Memory tab shows of the default device, once its chart is drawn. */
async function shown(p) {
  await p.getByTestId('memory-view').waitFor({ timeout: 120_000 });
  await p.waitForFunction(() => document.querySelector('[data-testid=mem-chart]')?.getAttribute('data-drawn') === '1', null, { timeout: 120_000 });
  return {
    workers: Number(await attr(p, 'memory-view', 'data-workers')),
    viewsIn: await attr(p, 'memory-view', 'data-views-in'),
    peakActive: Number(await attr(p, 'mem-peak-active', 'data-bytes')),
    peakReserved: Number(await attr(p, 'mem-peak-reserved', 'data-bytes')),
    reserved: Number(await attr(p, 'mem-reserved', 'data-bytes')),
    segments: Number(await p.getByTestId('mem-segments').textContent()),
    segmentMap: Number(await attr(p, 'mem-segment-view', 'data-segments')),
    polygons: Number(await attr(p, 'mem-chart', 'data-polygons')),
    flame: await flameOf(p),
    devices: await p.locator('[data-testid=mem-devices] button').allTextContents(),
  };
}

for (const file of [SNAP, CPP]) {
  const name = path.basename(file);
  test(`${name} decoded in a worker shows what the page's own reader shows, and the CLI's numbers`, { skip: corpusSkip(file) }, async () => {
    const errors = [];
    const one = await open('workers=0', file, errors);
    const a = await shown(one);
    const w = await open('workers=1', file, errors);
    const c = await shown(w);
    assert.equal(a.workers, 0);
    assert.equal(c.workers, 1);
    // The worker built the summary and chart (the page only decoded them), and they are the
    // ones the page computes itself from the same file.
    assert.equal(a.viewsIn, 'page');
    assert.equal(c.viewsIn, 'worker');
    assert.deepEqual({ ...c, workers: 0, viewsIn: 'page', flame: c.flame && [...c.flame.slice(0, 2), 'page'] }, a);
    const devs = cli(file).snapshot.devices;
    const d = devs.find((x) => x.peak_active_bytes === c.peakActive);
    assert.ok(d, `a CLI device with peak active ${c.peakActive}`);
    assert.equal(c.peakReserved, d.peak_reserved_bytes);
    assert.equal(c.segments, d.segments);
    assert.equal(c.segmentMap, d.segments);
    assert.ok(c.polygons > 1, `chart drew ${c.polygons} polygons`);
    // The peak flame graph (built by the worker) sums to the CLI's peak active bytes.
    assert.ok(c.flame && c.flame[0] > 0, `a flame graph: ${c.flame}`);
    assert.equal(c.flame[1], d.peak_active_bytes);
    // It came from the worker (after the model), the page's own from the page.
    assert.equal(c.flame[2], 'worker');
    assert.equal(a.flame[2], 'page');
    await w.screenshot({ path: shot(`snapshot-worker-${name.replace(/\.pickle$/, '')}.png`), fullPage: true });
    assert.deepEqual(errors, []);
    await one.close();
    await w.close();
  });
}

// The worker sends the snapshot's views (summary, charts) before its model's sections: the page
// draws the chart from them at once, with the figures, and the whole file replaces that view when
// the model is in (load/snapshot_worker.rs `show_views`). A MutationObserver set before the pick
// records every chart drawn, with what surrounded it at that moment.
test('the chart is drawn from the worker\'s views before the model arrives, then the whole file replaces it', { skip: corpusSkip(SNAP) }, async () => {
  const errors = [];
  const p = await page(b, errors);
  await p.addInitScript(() => {
    window.__drawn = [];
    const seen = new WeakSet();
    new MutationObserver(() => {
      for (const c of document.querySelectorAll('[data-testid=mem-chart][data-drawn="1"]')) {
        if (seen.has(c)) continue;
        seen.add(c);
        const v = c.closest('[data-testid=memory-view]');
        window.__drawn.push({
          model: v?.getAttribute('data-model'),
          polygons: Number(c.getAttribute('data-polygons')),
          peak: Number(document.querySelector('[data-testid=mem-peak-active]')?.getAttribute('data-bytes')),
          compareTab: !!document.querySelector('[data-testid=tab-compare]'),
          waiting: !!document.querySelector('[data-testid=mem-model-pending]'),
          segmentMap: !!document.querySelector('[data-testid=mem-segment-view]'),
        });
      }
    }).observe(document, { subtree: true, childList: true, attributes: true, attributeFilter: ['data-drawn'] });
  });
  await p.goto(`${srv.base}/?workers=1`);
  await p.getByTestId('empty').waitFor();
  await p.getByTestId('file-input').setInputFiles(SNAP);
  await p.waitForFunction(() => document.querySelector('[data-testid=memory-view]')?.getAttribute('data-model') === 'whole'
    && document.querySelector('[data-testid=mem-segment-view]'), null, { timeout: 120_000 });
  await p.waitForFunction(() => window.__drawn.length >= 2);
  const drawn = await p.evaluate(() => window.__drawn);
  const [first, last] = [drawn[0], drawn[drawn.length - 1]];
  // First from the views alone: figures and chart, what needs the model not yet there.
  assert.equal(first.model, 'pending', JSON.stringify(drawn));
  assert.equal(first.compareTab, false);
  assert.equal(first.segmentMap, false);
  // Then the whole file: the same chart and figures (the views are shared, not rebuilt).
  assert.equal(last.model, 'whole');
  assert.equal(last.polygons, first.polygons);
  assert.equal(last.peak, first.peak);
  assert.ok(first.polygons > 1);
  const d = cli(SNAP).snapshot.devices.find((x) => x.peak_active_bytes === first.peak);
  assert.ok(d, `a CLI device with peak active ${first.peak}, drawn before the model`);
  assert.equal(await p.getByTestId('mem-model-pending').count(), 0);
  assert.equal(await p.getByTestId('tab-compare').count(), 1);
  assert.equal(Number(await attr(p, 'mem-segment-view', 'data-segments')), d.segments);
  assert.deepEqual(errors, []);
  await p.close();
});

test('a broken pickle is an error and a snapshot cut short a warning, from the worker as from the page\'s own reader', { skip: corpusSkip(SNAP) }, async () => {
  // An unknown opcode (0xff) right after the `segments` list opens: a syntax error at byte 18.
  const bad = path.join(TMP, 'bad.pickle');
  fs.writeFileSync(bad, Buffer.from('80047d94288c087365676d656e7473945d94ff', 'hex'));
  const bytes = fs.readFileSync(SNAP);
  const cut = path.join(TMP, 'cut.pickle');
  fs.writeFileSync(cut, bytes.subarray(0, Math.floor(bytes.length * 0.6)));
  for (const [file, id, re] of [[bad, 'error', /bad\.pickle: .*unknown pickle opcode 0xff/], [cut, 'load-warnings', /cut\.pickle/]]) {
    const msgs = [];
    for (const q of ['workers=0', 'workers=1']) {
      const p = await open(q, file);
      await p.getByTestId(id).waitFor({ timeout: 120_000 });
      msgs.push(await p.getByTestId(id).textContent());
      await p.close();
    }
    assert.match(msgs[0], re);
    assert.equal(msgs[1], msgs[0]);
  }
});

test('where the worker cannot run (its wasm fails to start), the page\'s own reader decodes the snapshot', { skip: corpusSkip(SNAP) }, async () => {
  const errors = [];
  const warnings = [];
  const p = await page(b, errors);
  p.on('console', (m) => { if (m.type() === 'warning') warnings.push(m.text()); });
  await p.addInitScript(() => {
    const post = Worker.prototype.postMessage;
    Worker.prototype.postMessage = function (m, ...rest) {
      // The spare worker started ahead gets the module first ('module'), a load's worker with 'start'.
      if (m && (m.kind === 'start' || m.kind === 'module') && 'module' in m) m = { ...m, module: null };
      return post.call(this, m, ...rest);
    };
  });
  await p.goto(`${srv.base}/?workers=1`);
  await p.getByTestId('empty').waitFor();
  await p.getByTestId('file-input').setInputFiles(SNAP);
  const s = await shown(p);
  assert.equal(s.workers, 0);
  const d = cli(SNAP).snapshot.devices.find((x) => x.peak_active_bytes === s.peakActive);
  assert.ok(d, 'the CLI\'s peak active');
  assert.ok(warnings.some((w) => /reader workers unavailable/.test(w)), warnings.join('\n'));
  assert.deepEqual(errors, []);
  await p.close();
});

// Stopping a worker unmaps its wasm memory, which stalled the page's first render of a 1 GB
// snapshot by ~40 ms: a finished load's worker is stopped once the page is idle
// (`requestIdleCallback`, at most 5 s), and at once when another load starts.
async function watchShardWorkers(p, { idleNever = false } = {}) {
  await p.addInitScript((never) => {
    window.__stopped = [];
    let n = 0;
    const post = Worker.prototype.postMessage;
    Worker.prototype.postMessage = function (m, ...rest) {
      // The reader pools' workers get the compiled module in their first message.
      if (m && m.kind === 'start' && 'module' in m && this.__shard === undefined) this.__shard = n++;
      return post.call(this, m, ...rest);
    };
    const stop = Worker.prototype.terminate;
    Worker.prototype.terminate = function () {
      if (this.__shard !== undefined) window.__stopped.push([this.__shard, performance.now()]);
      return stop.call(this);
    };
    if (never) window.requestIdleCallback = () => 0;
  }, idleNever);
}
const drawnAt = (p) => p.evaluate(() => new Promise((resolve) => {
  const tick = () => (document.querySelector('[data-testid=mem-chart]')?.getAttribute('data-drawn') === '1' ? resolve(performance.now()) : requestAnimationFrame(tick));
  tick();
}));

test('a finished snapshot worker stops after the first chart, once the page is idle, and at once when another load starts', { skip: corpusSkip(SNAP) }, async () => {
  const errors = [];
  const p = await page(b, errors);
  await watchShardWorkers(p);
  await p.goto(`${srv.base}/?workers=1`);
  await p.getByTestId('empty').waitFor();
  await p.getByTestId('file-input').setInputFiles(SNAP);
  const drawn = await drawnAt(p);
  await p.waitForFunction(() => window.__stopped.length > 0, null, { timeout: 15_000 });
  const [[worker, at]] = await p.evaluate(() => window.__stopped);
  assert.equal(worker, 0);
  assert.ok(at > drawn, `stopped at ${at} ms, after the chart drawn at ${drawn} ms`);
  await p.close();

  // The page never idle (requestIdleCallback never calls back): the worker waits until the next
  // pick, which stops it before its own worker starts.
  const q = await page(b, errors);
  await watchShardWorkers(q, { idleNever: true });
  await q.goto(`${srv.base}/?workers=1`);
  await q.getByTestId('empty').waitFor();
  await q.getByTestId('file-input').setInputFiles(SNAP);
  await drawnAt(q);
  await q.waitForTimeout(1500);
  assert.deepEqual(await q.evaluate(() => window.__stopped), [], 'no stop while the page was never idle');
  await q.getByTestId('file-input').setInputFiles(CPP);
  await q.waitForFunction(() => window.__stopped.length > 0, null, { timeout: 15_000 });
  assert.equal((await q.evaluate(() => window.__stopped))[0][0], 0, 'the first load\'s worker, stopped by the second pick');
  assert.deepEqual(errors, []);
  await q.close();
});
