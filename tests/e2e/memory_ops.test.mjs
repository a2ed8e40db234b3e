// The Memory tab of a trace with [memory] events (issue 18): the per-operator allocation table
// equals `tracelight analyze FILE --json`'s memory.ops (exact bytes in data-bytes), reserved is
// shown only where the trace recorded it, every size is in binary units, and the peak leads to
// the op in the timeline.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { serve, browser, cli, page, shot, CORPUS, corpusSkip } from './harness.mjs';

let srv, b;
before(async () => { srv = await serve(); b = await browser(); });
after(async () => { await b?.close(); srv?.server.close(); });

const cell = (p, row, col) => p.locator(`[data-testid=mem-ops-table] .vt-row[data-row="${row}"] [data-col=${col}]`);

async function openMemory(file, errors) {
  const p = await page(b, errors);
  await p.setViewportSize({ width: 1440, height: 900 });
  await p.goto(srv.base + '/');
  await p.getByTestId('file-input').setInputFiles(file);
  await p.getByTestId('tab-memory').waitFor({ timeout: 60_000 });
  await p.getByTestId('tab-memory').click();
  await p.getByTestId('mem-ops-table').waitFor({ timeout: 60_000 });
  return p;
}

// A CPU-only trace: [memory] events without Total Reserved.
const CPU = path.join(CORPUS, 'generated/lstm_mem.1795343595561069429.pt.trace.json');
test('CPU [memory] trace: the op table equals the CLI, no reserved figure, no MB, the peak op opens in the timeline', { skip: corpusSkip(CPU) }, async () => {
  const errors = [];
  const p = await openMemory(CPU, errors);
  const m = cli(CPU).memory;
  assert.equal(m.reserved_recorded, false);
  const ops = m.ops.filter((o) => o.device_type === 0);
  assert.ok(ops.length > 3, `${ops.length} CPU rows`);
  assert.equal(Number(await p.getByTestId('mem-ops-table').getAttribute('data-rows')), ops.length);
  // Default order is the CLI's: peak contribution, then bytes allocated, descending.
  for (let r = 0; r < Math.min(8, ops.length); r++) {
    const o = ops[r];
    assert.equal((await cell(p, r, 'name').textContent()).trim(), o.name, `row ${r}`);
    assert.equal(Number(await cell(p, r, 'calls').textContent()), o.calls, `${o.name} calls`);
    assert.equal(Number(await cell(p, r, 'allocs').textContent()), o.allocations, `${o.name} allocs`);
    assert.equal(Number(await cell(p, r, 'frees').textContent()), o.frees, `${o.name} frees`);
    assert.equal(Number(await cell(p, r, 'allocated').getAttribute('data-bytes')), o.allocated_bytes, `${o.name} allocated`);
    assert.equal(Number(await cell(p, r, 'self_allocated').getAttribute('data-bytes')), o.self_allocated_bytes, `${o.name} self`);
    assert.equal(Number(await cell(p, r, 'net').getAttribute('data-bytes')), o.net_bytes, `${o.name} net`);
    assert.equal(Number(await cell(p, r, 'peak').getAttribute('data-bytes')), o.peak_bytes, `${o.name} peak`);
  }
  // The peak contributions add up to at most the peak allocated (they are live at it).
  const peakSum = ops.reduce((s, o) => s + o.peak_bytes, 0);
  assert.ok(peakSum > 0 && peakSum <= m.peak_allocated_bytes, `${peakSum} <= ${m.peak_allocated_bytes}`);
  // Sorting by a header: "Allocated" descending puts the largest first.
  await p.locator('[data-testid=mem-ops-table] .vt-th[data-col=allocated] button').click();
  const maxAlloc = Math.max(...ops.map((o) => o.allocated_bytes));
  assert.equal(Number(await cell(p, 0, 'allocated').getAttribute('data-bytes')), maxAlloc);
  // Reserved was never recorded: no "Peak reserved 0.0B".
  assert.equal(await p.getByTestId('mem-peak-reserved').count(), 0);
  const text = await p.getByTestId('memory-view').innerText();
  assert.doesNotMatch(text, /\d\s?[KMG]B\b/, 'decimal units on the Memory tab');
  assert.match(text, /[KMG]iB/);
  await p.screenshot({ path: shot('memory-ops-cpu.png'), fullPage: true });
  // The op at the peak opens its call in the timeline.
  const op = (await p.getByTestId('mem-peak-op').textContent()).trim();
  await p.getByTestId('mem-peak-op').click();
  assert.equal(await p.getByTestId('tab-timeline').getAttribute('aria-selected'), 'true');
  await p.getByTestId('reveal').waitFor();
  assert.equal(Number(await p.getByTestId('reveal').getAttribute('data-count')), 1);
  assert.match(await p.getByTestId('reveal-label').textContent(), new RegExp(`^${op.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} — 1 occurrences`));
  // A table row (the largest peak contribution) opens all calls of its op.
  await p.getByTestId('tab-memory').click();
  await p.getByTestId('mem-ops-table').waitFor();
  const top = ops[0];
  await p.locator('[data-testid=mem-ops-table] .vt-row[data-row="0"]').click();
  await p.getByTestId('reveal').waitFor();
  assert.match(await p.getByTestId('reveal-label').textContent(), new RegExp(`^${top.name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} — `));
  assert.deepEqual(errors, []);
  await p.close();
});

// A GPU trace with profile_memory: reserved recorded, shown, and equal to the CLI.
const GPU = path.join(CORPUS, 'real/hta/v100_rank1of2_profile_memory.json.gz');
test('GPU [memory] trace: reserved is shown (recorded) and the CUDA op table equals the CLI', { skip: corpusSkip(GPU) }, async () => {
  const errors = [];
  const p = await openMemory(GPU, errors);
  const m = cli(GPU).memory;
  assert.equal(m.reserved_recorded, true);
  assert.equal(Number(await p.getByTestId('mem-peak-reserved').getAttribute('data-bytes')), m.peak_reserved_bytes);
  const shownRows = Number(await p.getByTestId('mem-ops-table').getAttribute('data-rows'));
  const first = (await cell(p, 0, 'name').textContent()).trim();
  const dev = m.ops.find((o) => o.name === first && o.device_type !== 0) ?? m.ops.find((o) => o.name === first);
  assert.ok(dev, `${first} in the CLI rows`);
  const rows = m.ops.filter((o) => o.device_type === dev.device_type && o.device_id === dev.device_id);
  assert.equal(shownRows, rows.length);
  assert.equal(rows[0].name, first);
  assert.equal(Number(await cell(p, 0, 'peak').getAttribute('data-bytes')), rows[0].peak_bytes);
  await p.screenshot({ path: shot('memory-ops-gpu.png'), fullPage: true });
  assert.deepEqual(errors, []);
  await p.close();
});
