// The Memory tab end to end: real CUDA snapshots, a memory timeline and a trace with [memory]
// events are uploaded through the file input; the numbers the page shows (exact bytes in data-bytes)
// must equal `tracelight analyze FILE --json`; device switching, hover, pin and brush-zoom work.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { serve, browser, cli, page, shot, CORPUS, corpusSkip } from './harness.mjs';

let srv, b;
before(async () => { srv = await serve(); b = await browser(); });
after(async () => { await b?.close(); srv?.server.close(); });

const SNAP = (n) => path.join(CORPUS, 'real/snapshots', n);
const bytes = async (p, id) => Number(await p.getByTestId(id).getAttribute('data-bytes'));
const drawn = (p) => p.waitForFunction(() => document.querySelector('[data-testid=mem-chart]')?.getAttribute('data-drawn') === '1', null, { timeout: 60_000 });

/** The device the page opens first: most trace entries, then most segments, then lowest id. */
function defaultDevice(devices) {
  const live = devices.filter((d) => d.trace_entries > 0 || d.segments > 0);
  const pool = live.length ? live : devices;
  return pool.reduce((best, d) => (d.trace_entries > best.trace_entries || (d.trace_entries === best.trace_entries && d.segments > best.segments) ? d : best), pool[0]);
}

async function open(file, errors) {
  const p = await page(b, errors);
  await p.goto(srv.base + '/');
  await p.getByTestId('file-input').setInputFiles(file);
  await p.getByTestId('memory-view').waitFor({ timeout: 60_000 });
  await drawn(p);
  return p;
}

async function checkDevice(p, d, label) {
  await p.waitForFunction((want) => document.querySelector('[data-testid=mem-peak-active]')?.getAttribute('data-bytes') === String(want), d.peak_active_bytes, { timeout: 10_000 })
    .catch(() => {});
  assert.equal(await bytes(p, 'mem-peak-active'), d.peak_active_bytes, `${label}: peak active`);
  assert.equal(await bytes(p, 'mem-peak-reserved'), d.peak_reserved_bytes, `${label}: peak reserved`);
  assert.equal(Number(await p.getByTestId('mem-segments').textContent()), d.segments, `${label}: segments`);
  assert.equal(await bytes(p, 'mem-reserved'), d.reserved_bytes, `${label}: reserved at dump`);
  assert.equal(await bytes(p, 'mem-fragmentation'), d.fragmentation_bytes, `${label}: fragmentation`);
  if (d.peak_blocks.length) {
    assert.equal(await bytes(p, 'peak-size-0'), d.peak_blocks[0].size, `${label}: largest at peak`);
  }
}

for (const name of ['cs336_silmont_tiny_mem_snapshot.pickle', 'cs336_nothanmin_memory_snapshot.pickle', 'ftcourse_2024-06_memory_snapshot.pickle']) {
  const file = SNAP(name);
  test(`snapshot ${name}: peak active, peak reserved, segments and largest-at-peak equal the CLI`, { skip: corpusSkip(file) }, async () => {
    const errors = [];
    const p = await open(file, errors);
    const d = defaultDevice(cli(file).snapshot.devices);
    await checkDevice(p, d, name);
    const polys = Number(await p.getByTestId('mem-chart').getAttribute('data-polygons'));
    assert.ok(polys > 1, `chart drew ${polys} polygons`);
    assert.ok(Number(await p.getByTestId('mem-segment-view').getAttribute('data-segments')) === d.segments);
    await p.screenshot({ path: shot(`memory-${name.replace(/\.pickle$/, '')}.png`), fullPage: true });
    assert.deepEqual(errors, []);
    await p.close();
  });
}

// The real "4-device" dumps have 4 device_traces but data on one device only: the page opens that
// one. The synthetic snapshot has data on two devices (device 1 with expandable segments).
const FOURDEV = SNAP('sqattn_2025-05_cuda_memory_snapshot.pickle');
test('a snapshot with 4 device slots opens the device that has data, with its CLI numbers', { skip: corpusSkip(FOURDEV) }, async () => {
  const errors = [];
  const p = await open(FOURDEV, errors);
  const all = cli(FOURDEV).snapshot.devices;
  assert.equal(all.length, 4);
  await checkDevice(p, defaultDevice(all), 'sqattn');
  assert.deepEqual(errors, []);
  await p.close();
});

const MULTI = path.join(CORPUS, 'generated/snapshots/synthetic_snapshot_seed23.pickle');
test('a snapshot with two devices switches devices and each shows its own CLI numbers', { skip: corpusSkip(MULTI) }, async () => {
  const errors = [];
  const p = await open(MULTI, errors);
  const devices = cli(MULTI).snapshot.devices.filter((d) => d.trace_entries > 0 || d.segments > 0);
  assert.ok(devices.length >= 2, `devices with data: ${devices.length}`);
  await checkDevice(p, defaultDevice(devices), 'default');
  for (const d of devices) {
    await p.getByTestId(`mem-device-${d.device}`).click();
    await drawn(p);
    await checkDevice(p, d, `cuda:${d.device}`);
  }
  await p.screenshot({ path: shot('memory-devices.png'), fullPage: true });
  assert.deepEqual(errors, []);
  await p.close();
});

test('hover shows an allocation with its size and stack, click pins it, a drag zooms and Reset restores', { skip: corpusSkip(SNAP('cs336_silmont_tiny_mem_snapshot.pickle')) }, async () => {
  const errors = [];
  const p = await open(SNAP('cs336_silmont_tiny_mem_snapshot.pickle'), errors);
  const c = p.getByTestId('mem-chart');
  const box = await c.boundingBox();
  // Scan a row of points near the bottom of the plot (the largest allocations sit low).
  let found = false;
  for (let fx = 0.15; fx < 0.95 && !found; fx += 0.05) {
    await p.mouse.move(box.x + box.width * fx, box.y + box.height - 40);
    found = await p.getByTestId('mem-tooltip').isVisible().catch(() => false);
  }
  assert.ok(found, 'a tooltip appears over the chart');
  assert.match(await p.getByTestId('mem-tooltip').innerText(), /B/);
  await p.screenshot({ path: shot('memory-hover.png') });
  await p.mouse.down();
  await p.mouse.up();
  await p.getByTestId('mem-pinned').waitFor();
  assert.ok(await p.getByTestId('mem-reset').isDisabled());
  await p.mouse.move(box.x + box.width * 0.3, box.y + box.height / 2);
  await p.mouse.down();
  await p.mouse.move(box.x + box.width * 0.5, box.y + box.height / 2, { steps: 5 });
  await p.mouse.up();
  assert.ok(await p.getByTestId('mem-reset').isEnabled(), 'brushing zoomed in');
  await p.screenshot({ path: shot('memory-zoomed.png') });
  await p.getByTestId('mem-reset').click();
  assert.ok(await p.getByTestId('mem-reset').isDisabled());
  assert.deepEqual(errors, []);
  await p.close();
});

const TIMELINE = path.join(CORPUS, 'generated/resnet_all.1795343593430138415.memory_timeline.json');
test('a memory timeline shows stacked categories and the CLI peak total', { skip: corpusSkip(TIMELINE) }, async () => {
  const errors = [];
  const p = await open(TIMELINE, errors);
  const want = cli(TIMELINE).memory_timeline[0].peak.peak_total_bytes;
  assert.equal(await bytes(p, 'mem-peak-total'), want);
  assert.match(await p.locator('.mem-legend').innerText(), /activation/);
  await p.screenshot({ path: shot('memory-timeline.png'), fullPage: true });
  assert.deepEqual(errors, []);
  await p.close();
});

const MEMTRACE = path.join(CORPUS, 'real/hta/v100_rank1of2_profile_memory.json.gz');
test('a trace with [memory] events shows the peak allocated the CLI reports', { skip: corpusSkip(MEMTRACE) }, async () => {
  const errors = [];
  const p = await page(b, errors);
  await p.goto(srv.base + '/');
  await p.getByTestId('file-input').setInputFiles(MEMTRACE);
  await p.getByTestId('tab-memory').waitFor({ timeout: 60_000 });
  await p.getByTestId('tab-memory').click();
  await drawn(p);
  const want = cli(MEMTRACE).memory;
  assert.equal(await bytes(p, 'mem-peak-allocated'), want.peak_allocated_bytes);
  assert.equal(await bytes(p, 'mem-peak-reserved'), want.peak_reserved_bytes);
  assert.notEqual((await p.getByTestId('mem-peak-op').textContent()).trim(), '');
  await p.screenshot({ path: shot('memory-trace.png'), fullPage: true });
  assert.deepEqual(errors, []);
  await p.close();
});
