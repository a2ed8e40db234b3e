// A real CUDA snapshot's Memory tab (issue 18): the flame graph of live bytes by stack at the
// peak, the allocator-state scrubber and the segment map, checked against
// `tracelight analyze FILE --json` (exact bytes in data attributes).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { serve, browser, cli, page, shot, assertDur, CORPUS, corpusSkip } from './harness.mjs';

let srv, b;
before(async () => { srv = await serve(); b = await browser(); });
after(async () => { await b?.close(); srv?.server.close(); });

const SNAP = path.join(CORPUS, 'real/snapshots/cs336_nothanmin_memory_snapshot.pickle');
const num = async (l, a) => Number(await l.getAttribute(a));

test('snapshot: flame at the peak sums to the peak, a frame lists its blocks, the scrubber rebuilds the state at the peak and at the dump', { skip: corpusSkip(SNAP) }, async () => {
  const errors = [];
  const p = await page(b, errors);
  await p.setViewportSize({ width: 1440, height: 900 });
  await p.goto(srv.base + '/');
  await p.getByTestId('file-input').setInputFiles(SNAP);
  await p.getByTestId('memory-view').waitFor({ timeout: 60_000 });
  const d = cli(SNAP).snapshot.devices.find((x) => x.trace_entries > 0);
  const flame = p.getByTestId('mem-flame');
  await p.waitForFunction(() => document.querySelector('[data-testid=mem-flame]')?.hasAttribute('data-nodes'), null, { timeout: 30_000 });
  // Every byte live at the peak is under exactly one stack: the flame's width is the peak.
  assert.equal(await num(flame, 'data-bytes'), d.peak_active_bytes);
  assert.ok(await num(flame, 'data-nodes') > 10);
  // Click the left of the top row: the widest outermost frame; its blocks are listed.
  const box = await flame.boundingBox();
  await flame.click({ position: { x: 5, y: 8 } });
  const list = p.getByTestId('mem-flame-blocks');
  await list.waitFor();
  assert.ok(await num(list, 'data-count') > 0);
  const nodeBytes = await num(list, 'data-bytes');
  assert.ok(nodeBytes > 0 && nodeBytes <= d.peak_active_bytes);
  const sizes = await list.locator('td[data-bytes]').evaluateAll((tds) => tds.map((t) => Number(t.dataset.bytes)));
  assert.ok(sizes.length > 0 && sizes.every((s, i) => i === 0 || s <= sizes[i - 1]), 'largest first');
  assert.ok(box.width > 1000);

  // The segment map at the dump: the CLI's segments and reserved bytes.
  const seg = p.getByTestId('mem-segment-view');
  await p.waitForFunction(() => document.querySelector('[data-testid=mem-segment-view]')?.hasAttribute('data-reserved'));
  assert.equal(await num(seg, 'data-segments'), d.segments);
  assert.equal(await num(seg, 'data-reserved'), d.reserved_bytes);
  assert.match(await p.getByTestId('mem-scrub-at').textContent(), /at the dump/);
  await p.screenshot({ path: shot('memory-snapshot-views.png'), fullPage: true });
  // Scrub to the peak entry: the allocations live then add up to the peak active bytes.
  await p.getByTestId('mem-scrubber').fill(String(d.peak_active_index));
  await p.waitForFunction((i) => document.querySelector('[data-testid=mem-scrub-at]')?.textContent.includes(`#${i}`), d.peak_active_index);
  const live = (await num(seg, 'data-allocated')) + (await num(seg, 'data-unplaced'));
  assert.equal(live, d.peak_active_bytes);
  await p.screenshot({ path: shot('memory-snapshot-scrubbed.png'), fullPage: true });

  // The way to the peak (issue 23): "Go to peak", a "Largest at peak" row and a click on the
  // chart's peak marker each move the scrubber to the CLI's peak entry; the chart draws the
  // scrubber's entry on its own axis, and the label reads that axis (time since the first entry),
  // not a raw time_us.
  // Python's reading of the pickle: the peak entry's time_us after the first entry's (clock kept
  // non-decreasing, as the chart's axis is).
  const sinceUs = JSON.parse(execFileSync('python3', ['-c', `
import json, pickle, sys
tr = pickle.load(open(sys.argv[1], 'rb'))['device_traces'][int(sys.argv[2])]
t = [e['time_us'] for e in tr[:int(sys.argv[3]) + 1]]
print(json.dumps(max(t) - t[0]))`, SNAP, String(d.device), String(d.peak_active_index)]).toString());
  const scrubber = p.getByTestId('mem-scrubber');
  const chart = p.getByTestId('mem-chart');
  const atPeak = async (how) => {
    await p.waitForFunction((i) => document.querySelector('[data-testid=mem-scrubber]')?.value === String(i), d.peak_active_index, { timeout: 10_000 })
      .catch(() => {});
    assert.equal(Number(await scrubber.inputValue()), d.peak_active_index, `${how}: the scrubber at the CLI's peak entry`);
    await p.waitForFunction(() => document.querySelector('[data-testid=mem-chart]')?.dataset.scrubX);
    const live = (await num(seg, 'data-allocated')) + (await num(seg, 'data-unplaced'));
    assert.equal(live, d.peak_active_bytes, `${how}: live bytes`);
    assert.equal(await chart.getAttribute('data-scrub-x'), await chart.getAttribute('data-peak-x'), `${how}: the chart's line on its peak marker`);
    const label = await p.getByTestId('mem-scrub-at').textContent();
    assert.match(label, new RegExp(`^after entry #${d.peak_active_index} · [\\d.]+ (ns|µs|ms|s) since the first entry$`), label);
    assert.doesNotMatch(label, /time_us/);
    assertDur(label.match(/· (.+) since the first entry$/)[1], sinceUs, `${how}: time since the first entry`);
    assert.equal(await p.getByTestId('mem-at-peak').textContent(), 'the peak of active memory');
  };
  const toDump = async () => {
    await p.getByTestId('mem-go-dump').click();
    await p.waitForFunction(() => /at the dump/.test(document.querySelector('[data-testid=mem-scrub-at]')?.textContent));
    assert.equal(await chart.getAttribute('data-scrub-x'), '');
  };
  await toDump();
  await p.getByTestId('mem-go-peak').click();
  await atPeak('Go to peak');
  await p.screenshot({ path: shot('memory-snapshot-go-peak.png'), fullPage: true });
  await toDump();
  await p.getByTestId('peak-row-0').click();
  await atPeak('a Largest at peak row');
  await toDump();
  // The peak marker, at the chart's full view: plot from x 74 to width - 12.
  const [v0, v1] = (await chart.getAttribute('data-view')).split(',').map(Number);
  const cb = await chart.boundingBox();
  const px = 74 + ((Number(await chart.getAttribute('data-peak-x')) - v0) / (v1 - v0)) * (cb.width - 86);
  await chart.click({ position: { x: px, y: cb.height - 40 } });
  await atPeak('the chart\'s peak marker');
  await chart.screenshot({ path: shot('memory-snapshot-chart-peak.png') });
  assert.deepEqual(errors, []);
  await p.close();
});
