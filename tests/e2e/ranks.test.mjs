// The Ranks tab end to end on the 8-rank DLRM run (8 Kineto traces + 8 Chakra ETs, plus a file the
// page does not open): the run bar, the per-rank table, the straggler and the rank waited for, the
// collectives and the wait heatmap must show what `tracelight analyze DIR --json` computes for the
// same folder; a rank row opens that rank's trace, a collective row shows its kernel on the rank
// that arrived last, a heatmap cell shows that collective in the aligned timelines of all ranks
// (each rank's kernel on the aligned clock where the CLI puts it), and the step × rank table names
// each step's slowest rank as the CLI's per-rank step times do.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { serve, browser, cli, page, shot, assertDur, cellText, CORPUS, ROOT, corpusSkip } from './harness.mjs';

let srv, b;
before(async () => { srv = await serve(); b = await browser(); });
after(async () => { await b?.close(); srv?.server.close(); });

const RUN = path.join(CORPUS, 'real/param/dlrm_8rank');
const EXTRA = path.join(CORPUS, 'real/README.md');

/** "115.9MiB" (binary units, as the page prints bytes) → bytes, checked against `bytes` to the
 *  shown rounding (half a unit in the last digit). */
function assertBytes(text, bytes, what) {
  const m = text.trim().match(/^([\d.]+) ?(B|KiB|MiB|GiB|TiB)$/);
  assert.ok(m, `${what}: a size, got ${JSON.stringify(text)}`);
  const unit = { B: 1, KiB: 1024, MiB: 1024 ** 2, GiB: 1024 ** 3, TiB: 1024 ** 4 }[m[2]];
  const tol = 0.5 * unit * 10 ** -((m[1].split('.')[1] || '').length) + 1;
  assert.ok(Math.abs(Number(m[1]) * unit - bytes) <= tol, `${what}: page ${text} vs CLI ${bytes} B`);
}
const hashFile = (p) => p.evaluate(() => Number((location.hash.match(/file=(\d+)/) || [])[1]));
// The hash is written after a short debounce: wait until it names `n` (or time out), then read it.
const settledHashFile = async (p, n) => {
  await p.waitForFunction((n) => Number((location.hash.match(/file=(\d+)/) || [])[1]) === n, n, { timeout: 3000 }).catch(() => {});
  return hashFile(p);
};

/** The straggler card lists the CLI's reasons, same kinds in the same order; the figures each
 *  sentence quotes are the CLI's (durations through the page's formatter). */
async function checkReasons(p, s) {
  const got = await p.getByTestId('straggler-reason').evaluateAll((els) => els.map((e) => [e.dataset.kind, e.textContent]));
  assert.deepEqual(got.map((g) => g[0]), s.reasons.map((r) => r.kind), 'reasons, in the CLI\'s order');
  for (let k = 0; k < got.length; k++) {
    const [kind, text] = got[k];
    const r = s.reasons[k];
    if (kind === 'arrived_last') {
      assert.match(text, new RegExp(`^Arrived last at ${r.arrived_last} of its ${r.collectives} matched collectives`));
      const m = text.match(/the other ranks waited (-?[\d.]+ (?:ns|µs|ms|s)) in all/);
      assertDur(m[1], r.others_wait_us, 'others waited');
    } else if (kind === 'late_start') {
      const m = text.match(/entered its first step (-?[\d.]+ (?:ns|µs|ms|s)) after the earliest rank/);
      assert.ok(m, text);
      assertDur(m[1], r.after_us, 'late start');
    } else if (kind === 'slower_ops') {
      assert.ok(text.includes(r.top.slice(0, 40)), `${text} names ${r.top}`);
    }
  }
}

test('the Ranks tab shows the DLRM run as analyze DIR --json does', { skip: corpusSkip(RUN) }, async () => {
  const errors = [];
  const p = await page(b, errors);
  const c = cli(RUN);
  assert.equal(c.ranks.length, 8);
  // Traces first, in rank order (their session index is their position here), then the ETs, then
  // a Markdown file the page must list as skipped.
  const traces = c.run.units.map((u) => path.join(RUN, u.files.trace));
  const ets = c.run.units.map((u) => path.join(RUN, u.files.execution_trace));
  await p.goto(srv.base + '/');
  await p.getByTestId('empty').waitFor();
  await p.getByTestId('file-input').setInputFiles([...traces, ...ets, EXTRA]);
  await p.getByTestId('ranks-view').waitFor({ timeout: 120_000 });
  await p.getByTestId('tab-ranks').click();
  await p.getByTestId('ranks-view').waitFor();

  // Run bar: layout, ranks, nothing missing, the README skipped with its reason.
  const bar = p.getByTestId('run-bar');
  assert.equal(await bar.getAttribute('data-layout'), c.run.layout);
  assert.equal(Number(await bar.getAttribute('data-ranks')), c.run.ranks.length);
  assert.equal(Number(await bar.getAttribute('data-cycles')), c.run.cycles);
  const units = await p.getByTestId('run-unit').evaluateAll((els) => els.map((e) => [Number(e.dataset.rank), Number(e.dataset.missing)]));
  assert.deepEqual(units, c.run.units.map((u) => [u.rank, u.missing.length]));
  const skipped = await p.getByTestId('run-skipped').evaluateAll((els) => els.map((e) => [e.dataset.path, e.textContent]));
  assert.equal(skipped.length, 1);
  assert.equal(skipped[0][0], 'README.md');
  assert.match(skipped[0][1], /Markdown, not a profiler artifact/);
  await bar.screenshot({ path: shot('ranks-run-bar.png') });

  // Per-rank table, in rank order.
  const table = p.getByTestId('ranks-table');
  assert.equal(Number(await table.getAttribute('data-rows')), c.ranks.length);
  for (let r = 0; r < c.ranks.length; r++) {
    const x = c.ranks[r];
    assert.equal(Number(await cellText(p, 'ranks-table', r, 'rank')), x.rank);
    for (const [col, key] of [['step', 'step_time_us'], ['compute', 'compute_us'], ['comm', 'comm_us'], ['exposed', 'exposed_comm_us'], ['idle', 'idle_us'], ['wait', 'wait_us']]) {
      assertDur(await cellText(p, 'ranks-table', r, col), x[key], `rank ${x.rank} ${col}`);
    }
    assert.equal(await cellText(p, 'ranks-table', r, 'last'), `${x.arrived_last}/${x.collectives} (${x.arrived_last_pct.toFixed(1)}%)`);
    assert.equal(await cellText(p, 'ranks-table', r, 'file'), path.basename(x.file));
  }
  // These traces record no memory (the CLI's peaks are 0 or absent): no memory columns of '–'.
  assert.ok(c.ranks.every((x) => !x.peak_allocated_bytes && !x.peak_reserved_bytes && x.snapshot_peak_active_bytes == null && x.memory_timeline_peak_bytes == null));
  for (const col of ['alloc', 'reserved', 'file_peak', 'file_reserved']) {
    assert.equal(await table.locator(`.vt-th[data-col=${col}]`).count(), 0, `${col}: an empty column is hidden`);
  }
  // Every cell reads whole: no figure or file name cut by its column ("112.740…").
  const cut = await table.locator('.vt-td, .vt-th').evaluateAll((els) => els.filter((e) => e.scrollWidth > e.clientWidth + 1).map((e) => `${e.dataset.col}: ${e.textContent}`));
  assert.deepEqual(cut, [], 'cells wider than their column');
  await table.screenshot({ path: shot('ranks-table.png') });
  // Sorted by collective wait: the CLI's waits, longest first; then back to rank order.
  await p.locator('[data-testid=ranks-table] [data-col=wait] button').click();
  const waits = c.ranks.map((x) => x.wait_us).sort((x, y) => y - x);
  for (let r = 0; r < waits.length; r++) assertDur(await cellText(p, 'ranks-table', r, 'wait'), waits[r], `wait-sorted row ${r}`);
  await p.locator('[data-testid=ranks-table] [data-col=rank] button').click();
  assert.equal(Number(await cellText(p, 'ranks-table', 7, 'rank')), c.ranks[0].rank, 'rank descending after one click');
  await p.locator('[data-testid=ranks-table] [data-col=rank] button').click();
  assert.equal(Number(await cellText(p, 'ranks-table', 0, 'rank')), c.ranks[0].rank);

  // The straggler: one verdict, the rank the others wait for (rank 7, late at the SendRecvs),
  // with every reason the CLI gives, in the CLI's order, and the first pieces of evidence.
  const st = p.getByTestId('run-straggler');
  assert.equal(c.straggler.method, 'collective_arrival');
  assert.equal(Number(await st.getAttribute('data-rank')), c.straggler.rank);
  assert.equal(await st.getAttribute('data-method'), 'collective arrival');
  assert.ok(Math.abs(Number(await st.getAttribute('data-vs-median')) - c.straggler.vs_median) < 1e-9);
  assert.equal(Number(await st.getAttribute('data-arrived-last')), c.straggler.arrived_last);
  assert.ok(Math.abs(Number(await st.getAttribute('data-others-wait-ns')) - c.straggler.others_wait_us * 1e3) <= 1);
  await checkReasons(p, c.straggler);
  assert.equal(Number(await p.getByTestId('straggler-ops').getAttribute('data-rows')), c.straggler.ops.length);
  assert.equal(await cellText(p, 'straggler-ops', 0, 'name'), c.straggler.ops[0].name);
  assertDur(await cellText(p, 'straggler-ops', 0, 'rank'), c.straggler.ops[0].rank_us_per_step, 'straggler op 0');
  assert.equal(await p.getByTestId('run-waited-for').count(), 0, 'one verdict, not two');
  await st.scrollIntoViewIfNeeded();
  await st.screenshot({ path: shot('ranks-straggler.png') });

  // Collectives, in core's order.
  const coll = p.getByTestId('collectives');
  assert.equal(Number(await coll.getAttribute('data-count')), c.collectives.length);
  assert.equal(Number(await coll.getAttribute('data-unmatched')), c.unmatched_collective_calls);
  for (let k = 0; k < Math.min(3, c.collectives.length); k++) {
    const x = c.collectives[k];
    assert.equal(await cellText(p, 'collective-table', k, 'name'), x.name);
    assert.equal(Number(await cellText(p, 'collective-table', k, 'seq')), x.seq);
    assertDur(await cellText(p, 'collective-table', k, 'skew'), x.skew_us, `collective ${k} skew`);
    assertDur(await cellText(p, 'collective-table', k, 'latency'), x.latency_us, `collective ${k} latency`);
    assert.equal(Number(await cellText(p, 'collective-table', k, 'earliest')), x.earliest_rank);
    assert.equal(Number(await cellText(p, 'collective-table', k, 'latest')), x.latest_rank);
  }
  // Sorting by skew: the CLI's skews, largest first.
  await p.locator('[data-testid=collective-table] [data-col=skew] button').click();
  const skews = c.collectives.map((x) => x.skew_us).sort((x, y) => y - x);
  for (let k = 0; k < skews.length; k++) assertDur(await cellText(p, 'collective-table', k, 'skew'), skews[k], `skew-sorted row ${k}`);
  await coll.screenshot({ path: shot('ranks-collectives.png') });

  // Heatmap: one column per collective; each rank's cells sum to its total wait.
  const hm = p.getByTestId('wait-heatmap');
  assert.equal(Number(await hm.getAttribute('data-cols')), c.collectives.length);
  for (const x of c.ranks) {
    const sum = await p.locator(`[data-testid=wait-heatmap] .hm-row[data-rank="${x.rank}"] [data-wait-ns]`)
      .evaluateAll((els) => els.reduce((s, e) => s + Number(e.dataset.waitNs), 0));
    assert.ok(Math.abs(sum - x.wait_us * 1e3) <= 1, `rank ${x.rank} heatmap sum ${sum} vs ${x.wait_us} µs`);
  }
  await hm.screenshot({ path: shot('ranks-heatmap.png') });
  await p.screenshot({ path: shot('ranks-view.png'), fullPage: true });

  // A collective row: its kernel on the latest rank, in that rank's timeline. (Sorted by skew,
  // row 0 is the collective with the largest skew.)
  const worst = c.collectives.reduce((a, x) => (x.skew_us > a.skew_us ? x : a));
  await p.locator('[data-testid=collective-table] .vt-row[data-row="0"]').click();
  await p.getByTestId('reveal').waitFor();
  assert.equal(Number(await p.getByTestId('reveal').getAttribute('data-count')), 1);
  assert.match(await p.getByTestId('reveal-label').textContent(), new RegExp(`^${worst.name} #${worst.seq} on rank ${worst.latest_rank} `));
  const wantWorst = c.ranks.findIndex((r) => r.rank === worst.latest_rank);
  assert.equal(await settledHashFile(p, wantWorst), wantWorst);
  await p.screenshot({ path: shot('ranks-collective-reveal.png') });

  await p.getByTestId('tab-ranks').click();
  // Steps per rank: each step's slowest rank, from the CLI's per-rank step times (by position:
  // these ranks recorded the same steps), the lowest rank on a tie.
  const nSteps = c.ranks[0].steps_us.length;
  assert.equal(Number(await p.getByTestId('rank-steps').getAttribute('data-steps')), nSteps);
  const slowestRanks = await p.locator('[data-testid=rank-steps] [data-slowest]').evaluateAll((els) => els.map((e) => Number(e.dataset.slowest)));
  const want = [...Array(nSteps).keys()].map((k) => c.ranks.reduce((a, x) => (x.steps_us[k] > a.steps_us[k] ? x : a)).rank);
  assert.deepEqual(slowestRanks, want);
  await p.getByTestId('rank-steps').screenshot({ path: shot('ranks-steps.png') });

  // Aligned timelines: one collapsed group per rank; the flow joins the largest-skew collective's
  // kernels, each at the start the CLI gives that rank on the aligned clock.
  const canvas = p.getByTestId('aligned-canvas');
  await p.waitForFunction(() => Number(document.querySelector('[data-testid=aligned-canvas]')?.dataset.rects) > 0);
  const arows = JSON.parse(await canvas.getAttribute('data-rows'));
  assert.equal(arows.filter((r) => r.kind === 'group').length, c.ranks.length);
  // No memory anywhere in this run (the CLI's peaks are 0 or absent): no lanes, and the view says so.
  assert.ok(c.ranks.every((x) => x.peak_allocated_bytes === 0 && x.snapshot_peak_active_bytes == null && x.memory_timeline_peak_bytes == null));
  assert.equal(await canvas.getAttribute('data-mem-lanes'), '[]');
  assert.match(await p.getByTestId('aligned-memory').textContent(), /no rank recorded any/);
  const flowOf = async () => JSON.parse(await canvas.getAttribute('data-flow'));
  const assertFlow = (flow, x, what) => {
    assert.equal(flow.length, x.ranks.length, `${what}: one kernel per rank`);
    for (const [k, ns] of flow) {
      const part = x.ranks.find((r) => r.rank === c.ranks[k].rank);
      assert.ok(Math.abs(ns - part.start_us * 1e3) <= 1, `${what} rank ${part.rank}: ${ns} ns vs CLI ${part.start_us} µs`);
    }
  };
  assertFlow(await flowOf(), worst, 'largest skew');
  // Closed, a rank shows only its streams that carry collectives, its header saying how many
  // others are folded (as many as opening it adds); so all 8 ranks fit without scrolling.
  const groups = arows.filter((r) => r.kind === 'group');
  for (const g of groups) assert.match(g.label, /^rank \d+ · \d+ streams? folded$/, 'a short, readable header');
  const last = arows.at(-1);
  const ruler = Number(await canvas.getAttribute('data-ruler-px'));
  const canvasH = (await canvas.boundingBox()).height;
  assert.ok(last.y + last.h + ruler <= canvasH + 0.5, `all ranks on screen: rows end at ${last.y + last.h} + ${ruler} px ruler, canvas ${canvasH} px`);
  await p.getByTestId('aligned').screenshot({ path: shot('ranks-aligned.png') });
  await p.getByTestId('aligned-expand').click();
  await p.waitForFunction((n) => JSON.parse(document.querySelector('[data-testid=aligned-canvas]').dataset.rows).length > n, arows.length);
  const open = JSON.parse(await canvas.getAttribute('data-rows'));
  for (const [k, g] of groups.entries()) {
    const folded = Number(g.label.match(/· (\d+) streams? folded/)[1]);
    const streams = (rows) => rows.filter((r) => r.rank === k && r.kind === 'slices' && /^stream /.test(r.label)).length;
    assert.equal(streams(arows) + folded, streams(open), `rank ${k}: shown + folded streams = all its streams`);
    assert.ok(streams(arows) >= 1);
  }
  // Opened, the ranks no longer fit: "Largest skew" scrolls the rank that arrived last into view.
  await p.locator('.al-wrap').evaluate((w) => { w.scrollTop = 0; });
  await p.getByTestId('flow-worst').click();
  const kLast = c.ranks.findIndex((r) => r.rank === worst.latest_rank);
  const head = open.find((r) => r.kind === 'group' && r.rank === kLast);
  await p.waitForFunction(() => Number(document.querySelector('.al-wrap').scrollTop) > 0, null, { timeout: 5000 }).catch(() => {});
  const top = await p.locator('.al-wrap').evaluate((w) => w.scrollTop);
  const seen = (await canvas.boundingBox()).height - ruler;
  assert.ok(head.y >= top && head.y + head.h <= top + seen, `rank ${worst.latest_rank}'s header (y ${head.y}) in view: scrolled to ${top}, ${seen} px shown`);
  await p.getByTestId('aligned').screenshot({ path: shot('ranks-aligned-latest.png') });
  await p.getByTestId('aligned-collapse').click();
  await p.locator('.al-wrap').evaluate((w) => { w.scrollTop = 0; });
  // A rank's header opens it: its CPU threads join.
  const before = arows.length;
  await canvas.click({ position: { x: 100, y: 24 + arows[0].y + 8 } });
  await p.waitForFunction((n) => JSON.parse(document.querySelector('[data-testid=aligned-canvas]').dataset.rows).length > n, before);
  await p.getByTestId('aligned-collapse').click();
  // Dragging pans every rank together: 100 px left moves the one window 100 px' worth later.
  const win = async () => (await canvas.getAttribute('data-window')).split(',').map(Number);
  const [a0, a1] = await win();
  const box = await canvas.boundingBox();
  const nsPerPx = (a1 - a0) / (box.width - 210);
  await p.mouse.move(box.x + 700, box.y + 100);
  await p.mouse.down();
  await p.mouse.move(box.x + 650, box.y + 100, { steps: 3 });
  await p.mouse.move(box.x + 600, box.y + 100, { steps: 3 });
  await p.mouse.up();
  await p.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
  const [b0, b1] = await win();
  assert.ok(Math.abs(b0 - a0 - 100 * nsPerPx) <= 2 * nsPerPx && b1 - b0 === a1 - a0, `drag: ${a0},${a1} -> ${b0},${b1}`);
  await p.getByTestId('aligned-reset').click();

  // A heatmap cell: that collective (the first in time: the heatmap's first column) in the
  // aligned timelines, zoomed to it.
  const first = c.collectives.map((x) => [Math.min(...x.ranks.map((r) => r.start_us)), x]).sort((a, b) => a[0] - b[0])[0][1];
  const win0 = await canvas.getAttribute('data-window');
  await p.locator('[data-testid=wait-heatmap] .hm-row[data-rank="1"] [data-wait-ns]').first().click();
  await p.waitForFunction((s) => document.querySelector('[data-testid=flow-label]').textContent.includes(s), `${first.name} #${first.seq} `);
  await p.waitForFunction((w) => document.querySelector('[data-testid=aligned-canvas]').dataset.window !== w, win0);
  assertFlow(await flowOf(), first, 'first collective');
  const [w0, w1] = (await canvas.getAttribute('data-window')).split(',').map(Number);
  for (const r of first.ranks) assert.ok(w0 <= r.start_us * 1e3 && r.end_us * 1e3 <= w1, `window ${w0}..${w1} holds rank ${r.rank}'s kernel`);
  await p.getByTestId('aligned').screenshot({ path: shot('ranks-aligned-first.png') });
  // A click on a collective's kernel picks that collective without moving the window: note where
  // the first collective's kernel of the view's rank 1 is drawn at the full window, pick the next
  // collective (which zooms to it), go back to the full window and click there.
  const settle = () => p.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
  await p.getByTestId('aligned-reset').click();
  await settle();
  const xy = JSON.parse(await canvas.getAttribute('data-flow-xy')).find((q) => q[0] === 1);
  assert.ok(xy, 'rank 1 kernel drawn');
  await p.getByTestId('flow-next').click();
  await p.waitForFunction((s) => !document.querySelector('[data-testid=flow-label]').textContent.includes(s), `${first.name} #${first.seq} `);
  await p.getByTestId('aligned-reset').click();
  await settle();
  const full = await canvas.getAttribute('data-window');
  await canvas.click({ position: { x: xy[1], y: xy[2] } });
  await p.waitForFunction((s) => document.querySelector('[data-testid=flow-label]').textContent.includes(s), `${first.name} #${first.seq} `);
  await settle();
  assert.equal(await canvas.getAttribute('data-window'), full, 'a click pick keeps the window');
  assertFlow(await flowOf(), first, 'clicked collective');
  await p.screenshot({ path: shot('ranks-aligned-view.png') });

  // A rank row opens that rank's trace on the Overview.
  await p.getByTestId('tab-ranks').click();
  await p.locator('[data-testid=ranks-table] .vt-row[data-row="5"]').click();
  await p.getByTestId('overview').waitFor();
  assert.equal(await settledHashFile(p, 5), 5);
  assert.deepEqual(errors, []);
  await p.close();
});

test('a NeMo-style folder picked whole: layout, missing artifacts, the skipped log and per-rank memory as the CLI', async () => {
  // Assembled from the committed torch 2.11 H100 recordings: two rank traces, rank 0's allocator
  // snapshot named as NeMo names it, and a training log the run must list as skipped.
  const GPU = path.join(ROOT, 'crates/core/tests/fixtures/torch-2.11-cuda13-h100');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tl-ranks-'));
  fs.copyFileSync(path.join(GPU, 'gpu_mlp.pt.trace.json.gz'), path.join(dir, 'rank-0.pt.trace.json.gz'));
  fs.copyFileSync(path.join(GPU, 'gpu_mlp_plain.pt.trace.json.gz'), path.join(dir, 'rank-1.pt.trace.json.gz'));
  fs.copyFileSync(path.join(GPU, 'gpu_lm_bf16.snapshot.pickle'), path.join(dir, 'memory_rank0.pkl'));
  fs.writeFileSync(path.join(dir, 'train.log'), 'step 1 loss 2.31\n');
  const c = cli(dir);
  assert.equal(c.run.layout, 'nemo');
  const errors = [];
  const p = await page(b, errors);
  await p.goto(srv.base + '/');
  await p.getByTestId('empty').waitFor();
  await p.getByTestId('folder-input').setInputFiles(dir);
  await p.getByTestId('ranks-view').waitFor({ timeout: 120_000 });
  await p.getByTestId('tab-ranks').click();
  const bar = p.getByTestId('run-bar');
  assert.equal(await bar.getAttribute('data-layout'), 'nemo');
  const units = await p.getByTestId('run-unit').evaluateAll((els) => els.map((e) => [Number(e.dataset.rank), Number(e.dataset.missing)]));
  assert.deepEqual(units, c.run.units.map((u) => [u.rank, u.missing.length]));
  assert.equal(await p.locator('[data-testid=run-unit] td.missing').count(), c.run.units.reduce((s, u) => s + u.missing.length, 0));
  const skipped = await p.getByTestId('run-skipped').evaluateAll((els) => els.map((e) => e.textContent));
  assert.deepEqual(skipped, c.run.skipped.map((k) => `${k.path}: ${k.reason}`));
  for (let r = 0; r < c.ranks.length; r++) {
    const x = c.ranks[r];
    assert.equal(Number(await cellText(p, 'ranks-table', r, 'rank')), x.rank);
    assertDur(await cellText(p, 'ranks-table', r, 'step'), x.step_time_us, `rank ${x.rank} step`);
    assertBytes(await cellText(p, 'ranks-table', r, 'alloc'), x.peak_allocated_bytes, `rank ${x.rank} peak alloc`);
    assertBytes(await cellText(p, 'ranks-table', r, 'reserved'), x.peak_reserved_bytes, `rank ${x.rank} peak reserved`);
    const snap = await cellText(p, 'ranks-table', r, 'file_peak');
    if (x.snapshot_peak_active_bytes == null) assert.equal(snap, '–');
    else assertBytes(snap, x.snapshot_peak_active_bytes, `rank ${x.rank} snapshot peak`);
  }
  if (c.straggler) assert.equal(Number(await p.getByTestId('run-straggler').getAttribute('data-rank')), c.straggler.rank);
  else assert.equal(await p.getByTestId('no-straggler-reason').getAttribute('data-kind'), c.no_straggler.kind);
  assert.equal(Number(await p.getByTestId('collectives').getAttribute('data-count')), c.collectives.length);
  // The aligned timelines: under each rank with [memory] events, its memory-allocated curve.
  await p.waitForFunction(() => document.querySelector('[data-testid=aligned-canvas]')?.dataset.rows);
  const arows = JSON.parse(await p.getByTestId('aligned-canvas').getAttribute('data-rows'));
  c.ranks.forEach((x, k) => {
    const mem = arows.some((r) => r.rank === k && r.kind === 'counter' && /^Memory allocated/.test(r.label));
    assert.equal(mem, x.peak_allocated_bytes > 0, `rank ${x.rank}: memory lane iff the trace records memory`);
  });
  // Rank 0's snapshot is its lane (recorded apart from its trace: kept with its peak, not placed);
  // rank 1 has no memory file, and never gets rank 0's.
  const lanes = JSON.parse(await p.getByTestId('aligned-canvas').getAttribute('data-mem-lanes'));
  assert.deepEqual(lanes.map((l) => [c.ranks[l.rank].rank, l.label.split(' · ')[0], l.placed, l.peak]), [[0, 'memory_rank0.pkl', false, c.ranks[0].snapshot_peak_active_bytes]]);
  await p.getByTestId('aligned').screenshot({ path: shot('ranks-nemo-aligned.png') });
  // No collective matched: no heatmap of zeros, over collectives or steps.
  assert.equal(c.collectives.length, 0);
  assert.equal(await p.locator('[data-testid^=wait-heatmap]').count(), 0);
  await p.evaluate(() => document.querySelector('.run-skipped')?.setAttribute('open', ''));
  await p.screenshot({ path: shot('ranks-nemo.png'), fullPage: true });
  assert.deepEqual(errors, []);
  await p.close();
});

test('a tensorboard_trace_handler folder with two cycles per worker: cycles kept apart, each as the CLI', async () => {
  // Two workers (host_pid names, no rank in them), two scheduled cycles each (the timestamps),
  // from the committed H100 recordings.
  const GPU = path.join(ROOT, 'crates/core/tests/fixtures/torch-2.11-cuda13-h100');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tl-cycles-'));
  const put = [['gpu_mlp', 'nodeA_11.1000'], ['gpu_matmul', 'nodeA_11.2000'], ['gpu_mlp_plain', 'nodeB_22.1000'], ['gpu_matmul_plain', 'nodeB_22.2000']];
  for (const [from, to] of put) fs.copyFileSync(path.join(GPU, `${from}.pt.trace.json.gz`), path.join(dir, `${to}.pt.trace.json.gz`));
  const c = cli(dir);
  assert.equal(c.run.layout, 'trace_handler');
  assert.equal(c.cycles.length, 2);
  const errors = [];
  const p = await page(b, errors);
  await p.goto(srv.base + '/');
  await p.getByTestId('empty').waitFor();
  await p.getByTestId('folder-input').setInputFiles(dir);
  await p.getByTestId('ranks-view').waitFor({ timeout: 120_000 });
  await p.getByTestId('tab-ranks').click();
  const bar = p.getByTestId('run-bar');
  assert.equal(await bar.getAttribute('data-layout'), 'trace_handler');
  assert.equal(Number(await bar.getAttribute('data-ranks')), c.run.ranks.length);
  assert.equal(Number(await bar.getAttribute('data-cycles')), 2);
  const units = await p.getByTestId('run-unit').evaluateAll((els) => els.map((e) => [Number(e.dataset.rank), Number(e.dataset.cycle)]));
  assert.deepEqual(units, c.run.units.map((u) => [u.rank, u.cycle]));
  // The file chips: each file labelled with the CLI's rank and cycle, never one rank per file.
  const chips = (await p.getByTestId('file-chip').allTextContents()).sort();
  const want = c.run.units.map((u) => `rank ${u.rank} · cycle ${u.cycle} · ${u.files.trace}`).sort();
  assert.deepEqual(chips, want);
  for (const k of [0, 1]) {
    if (k > 0) {
      await p.getByTestId('cycle-select').selectOption(String(k));
      await p.waitForFunction((k) => document.querySelector('[data-testid=run-bar]')?.dataset.cycle === String(k), k);
    }
    const cy = c.cycles[k];
    assert.equal(Number(await p.getByTestId('ranks-table').getAttribute('data-rows')), cy.ranks.length, `cycle ${k}: one row per worker, cycles not mixed`);
    for (let r = 0; r < cy.ranks.length; r++) {
      assert.equal(Number(await cellText(p, 'ranks-table', r, 'rank')), cy.ranks[r].rank);
      assert.equal(await cellText(p, 'ranks-table', r, 'file'), path.basename(cy.ranks[r].file));
      assertDur(await cellText(p, 'ranks-table', r, 'step'), cy.ranks[r].step_time_us, `cycle ${k} rank ${r} step`);
    }
    const st = p.getByTestId('run-straggler');
    assert.equal(Number(await st.getAttribute('data-rank')), cy.straggler.rank);
    assert.ok(Math.abs(Number(await st.getAttribute('data-vs-median')) - cy.straggler.vs_median) < 1e-9);
    await checkReasons(p, cy.straggler);
    await p.screenshot({ path: shot(`ranks-cycle${k}.png`), fullPage: true });
  }
  assert.deepEqual(errors, []);
  await p.close();
});

/** Each rank's memory file read by Python alone (pickle and json, no code of ours): a snapshot's
 *  peak active bytes as memory_viz replays them (blocks live before the trace began, then each
 *  alloc and free_completed in order), a memory timeline's peak as the largest sum of its
 *  categories at one time, and each trace's baseTimeNanoseconds (its clock's epoch offset). */
function pyMemory(files) {
  const code = `
import gzip, json, pickle, sys
out = {}
for f in json.loads(sys.argv[1]):
    if f.endswith('.pkl') or f.endswith('.pickle'):
        s = pickle.load(open(f, 'rb'))
        best = 0
        for dev, tr in enumerate(s['device_traces']):
            live, init, deltas = {}, 0, []
            for e in tr:
                if e['action'] == 'alloc':
                    live[e['addr']] = e['size']; deltas.append(e['size'])
                elif e['action'] in ('free', 'free_completed'):
                    if e['addr'] in live: del live[e['addr']]
                    else: init += e['size']
                    deltas.append(-e['size'])
            for seg in s['segments']:
                if seg['device'] == dev:
                    init += sum(b['requested_size'] for b in seg['blocks'] if b['state'] == 'active_allocated' and b['address'] not in live)
            cur = peak = init
            for d in deltas:
                cur += d; peak = max(peak, cur)
            best = max(best, peak)
        out[f] = best
    elif f.endswith('memory_timeline.json') or 'memory_timeline_rank' in f:
        t, rows = json.load(open(f))
        out[f] = max(sum(r) for r in rows)
    else:
        out[f] = json.load(gzip.open(f)).get('baseTimeNanoseconds')
print(json.dumps(out))
`;
  return JSON.parse(execFileSync('python3', ['-c', code, JSON.stringify(files)]).toString());
}

test('a NeMo-style folder with a memory file per rank: a memory lane under each rank, its peak as Python reads the file', async () => {
  // Rank 0: the H100 MLP trace and the memory timeline recorded with it (same clock: placed).
  // Rank 1: the bf16 LM trace and its allocator snapshot, which torch dumped ~2 s after the trace
  // ended (a separate recording): the lane keeps its row and peak and says why it is not placed.
  const GPU = path.join(ROOT, 'crates/core/tests/fixtures/torch-2.11-cuda13-h100');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tl-ranks-mem-'));
  const put = [['gpu_mlp.pt.trace.json.gz', 'rank-0.pt.trace.json.gz'], ['gpu_mlp.memory_timeline.json', 'memory_timeline_rank0.json'],
    ['gpu_lm_bf16.pt.trace.json.gz', 'rank-1.pt.trace.json.gz'], ['gpu_lm_bf16.snapshot.pickle', 'memory_rank1.pkl']];
  // Copied: a folder input does not follow symlinks.
  for (const [from, to] of put) fs.copyFileSync(path.join(GPU, from), path.join(dir, to));
  const py = pyMemory(put.map(([, to]) => path.join(dir, to)));
  const c = cli(dir);
  assert.equal(c.run.layout, 'nemo');
  const errors = [];
  const p = await page(b, errors);
  await p.setViewportSize({ width: 1440, height: 900 });
  await p.goto(srv.base + '/');
  await p.getByTestId('empty').waitFor();
  await p.getByTestId('folder-input').setInputFiles(dir);
  await p.getByTestId('ranks-view').waitFor({ timeout: 120_000 });
  await p.getByTestId('tab-ranks').click();
  await p.waitForFunction(() => document.querySelector('[data-testid=aligned-canvas]')?.dataset.memLanes);
  const canvas = p.getByTestId('aligned-canvas');
  const lanes = JSON.parse(await canvas.getAttribute('data-mem-lanes'));
  const rows = JSON.parse(await canvas.getAttribute('data-rows'));
  const want = {
    0: { file: 'memory_timeline_rank0.json', trace: 'rank-0.pt.trace.json.gz', placed: true },
    1: { file: 'memory_rank1.pkl', trace: 'rank-1.pt.trace.json.gz', placed: false },
  };
  assert.deepEqual(c.ranks.map((x) => x.rank), [0, 1]);
  assert.equal(lanes.length, 2, JSON.stringify(lanes));
  for (const [k, x] of c.ranks.entries()) {
    const w = want[x.rank];
    const lane = lanes.find((l) => l.rank === k);
    assert.ok(lane, `rank ${x.rank} has a memory lane`);
    assert.ok(lane.label.startsWith(w.file), `rank ${x.rank}'s own file, not another rank's: ${lane.label}`);
    assert.equal(lane.peak, py[path.join(dir, w.file)], `rank ${x.rank} lane peak vs Python`);
    assert.equal(lane.placed, w.placed, `rank ${x.rank} placed`);
    // Its row is the last of the rank's rows.
    const mine = rows.filter((r) => r.rank === k);
    assert.equal(mine.at(-1).kind, 'memory', `rank ${x.rank}: the lane under its timeline`);
    // The CLI's per-rank file peaks are the same figures (its own load of the same files).
    const cliPeak = x.snapshot_peak_active_bytes ?? x.memory_timeline_peak_bytes;
    assert.equal(cliPeak, lane.peak, `rank ${x.rank}: the CLI's file peak`);
  }
  // Placed: chart x = trace ns + the trace's baseTimeNanoseconds, read by Python from the file.
  const placed = lanes.find((l) => l.placed);
  assert.equal(placed.epoch_ns, py[path.join(dir, want[0].trace)]);
  assert.match(lanes.find((l) => !l.placed).note, /memory_rank1\.pkl was recorded outside this trace's time range/);
  await p.waitForFunction(() => Number(document.querySelector('[data-testid=aligned-canvas]')?.dataset.memPolygons) > 0);
  // The table's snapshot columns: rank 1's active and reserved peaks as the CLI.
  for (let r = 0; r < c.ranks.length; r++) {
    const x = c.ranks[r];
    const res = await cellText(p, 'ranks-table', r, 'file_reserved');
    if (x.snapshot_peak_reserved_bytes == null) assert.equal(res, '–');
    else assertBytes(res, x.snapshot_peak_reserved_bytes, `rank ${x.rank} snapshot reserved`);
  }
  await p.getByTestId('aligned').scrollIntoViewIfNeeded();
  await p.getByTestId('aligned').screenshot({ path: shot('ranks-nemo-memory-lanes.png') });
  await p.screenshot({ path: shot('ranks-nemo-memory.png') });
  // The single-trace timeline of rank 1 follows the same pick: its own snapshot, not placed.
  await p.locator('[data-testid=ranks-table] .vt-row[data-row="1"]').click();
  await p.getByTestId('tab-timeline').click();
  await p.getByTestId('mem-lane-note').waitFor({ timeout: 30_000 });
  assert.match(await p.getByTestId('mem-lane-note').textContent(), /memory_rank1\.pkl was recorded outside/);
  assert.deepEqual(errors, []);
  await p.close();
});
