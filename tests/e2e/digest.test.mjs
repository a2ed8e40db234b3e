// Digests opened as a run: `tracelight digest` writes the 8 DLRM ranks' digests into a temporary
// folder, the folder is picked, and the Ranks tab (run bar, per-rank table, straggler, waited-for,
// collectives, heatmap, aligned timelines from the digests' level-of-detail timelines) must show
// what `tracelight analyze --json` computes on the original traces.
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

const KINETO = path.join(CORPUS, 'real/param/dlrm_8rank/kineto');


test('a folder of digests opens as the run the traces make', { skip: corpusSkip(KINETO) }, async () => {
  const traces = fs.readdirSync(KINETO).filter((f) => f.endsWith('.json')).sort().map((f) => path.join(KINETO, f));
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tl-digests-'));
  execFileSync(path.join(ROOT, 'target', 'release', 'tracelight'), ['digest', ...traces, '-o', dir]);
  assert.equal(fs.readdirSync(dir).filter((f) => f.endsWith('.digest.json')).length, 8);
  const c = cli(KINETO);
  assert.equal(c.ranks.length, 8);

  const errors = [];
  const p = await page(b, errors);
  await p.goto(srv.base + '/');
  await p.getByTestId('empty').waitFor();
  await p.getByTestId('folder-input').setInputFiles(dir);
  await p.getByTestId('ranks-view').waitFor({ timeout: 60_000 });
  await p.getByTestId('tab-ranks').click();
  await p.getByTestId('ranks-view').waitFor();

  const bar = p.getByTestId('run-bar');
  assert.equal(Number(await bar.getAttribute('data-ranks')), 8);
  assert.equal(await p.getByTestId('run-skipped').count(), 0, 'every Parquet file belongs to a digest');

  const table = p.getByTestId('ranks-table');
  assert.equal(Number(await table.getAttribute('data-rows')), 8);
  for (let r = 0; r < 8; r++) {
    const x = c.ranks[r];
    assert.equal(Number(await cellText(p, 'ranks-table', r, 'rank')), x.rank);
    for (const [col, key] of [['step', 'step_time_us'], ['compute', 'compute_us'], ['comm', 'comm_us'], ['exposed', 'exposed_comm_us'], ['idle', 'idle_us'], ['wait', 'wait_us']]) {
      assertDur(await cellText(p, 'ranks-table', r, col), x[key], `rank ${x.rank} ${col}`);
    }
    assert.equal(await cellText(p, 'ranks-table', r, 'last'), `${x.arrived_last}/${x.collectives} (${x.arrived_last_pct.toFixed(1)}%)`);
  }

  const st = p.getByTestId('run-straggler');
  assert.equal(Number(await st.getAttribute('data-rank')), c.straggler.rank);
  assert.ok(Math.abs(Number(await st.getAttribute('data-vs-median')) - c.straggler.vs_median) < 1e-9);
  assert.equal(await cellText(p, 'straggler-ops', 0, 'name'), c.straggler.ops[0].name);
  assert.ok(Math.abs(Number(await st.getAttribute('data-others-wait-ns')) - c.straggler.others_wait_us * 1e3) <= 1);
  const kinds = await p.getByTestId('straggler-reason').evaluateAll((els) => els.map((e) => e.dataset.kind));
  assert.deepEqual(kinds, c.straggler.reasons.map((r) => r.kind));

  const coll = p.getByTestId('collectives');
  assert.equal(Number(await coll.getAttribute('data-count')), c.collectives.length);
  assert.equal(Number(await coll.getAttribute('data-unmatched')), c.unmatched_collective_calls);
  for (let k = 0; k < c.collectives.length; k++) {
    const x = c.collectives[k];
    assert.equal(await cellText(p, 'collective-table', k, 'name'), x.name);
    assert.equal(Number(await cellText(p, 'collective-table', k, 'seq')), x.seq);
    assertDur(await cellText(p, 'collective-table', k, 'skew'), x.skew_us, `collective ${k} skew`);
    assertDur(await cellText(p, 'collective-table', k, 'latency'), x.latency_us, `collective ${k} latency`);
    assert.equal(Number(await cellText(p, 'collective-table', k, 'latest')), x.latest_rank);
  }
  for (const x of c.ranks) {
    const sum = await p.locator(`[data-testid=wait-heatmap] .hm-row[data-rank="${x.rank}"] [data-wait-ns]`)
      .evaluateAll((els) => els.reduce((s, e) => s + Number(e.dataset.waitNs), 0));
    assert.ok(Math.abs(sum - x.wait_us * 1e3) <= 1, `rank ${x.rank} heatmap sum ${sum} vs ${x.wait_us} µs`);
  }
  await p.screenshot({ path: shot('digest-ranks-view.png'), fullPage: true });

  // A collective row shows its kernel on the latest rank in that rank's (skeleton) timeline.
  await p.locator('[data-testid=collective-table] [data-col=skew] button').click();
  const worst = c.collectives.reduce((a, x) => (x.skew_us > a.skew_us ? x : a));
  await p.locator('[data-testid=collective-table] .vt-row[data-row="0"]').click();
  await p.getByTestId('reveal').waitFor();
  assert.equal(Number(await p.getByTestId('reveal').getAttribute('data-count')), 1);
  assert.match(await p.getByTestId('reveal-label').textContent(), new RegExp(`^${worst.name} #${worst.seq} on rank ${worst.latest_rank} `));
  await p.screenshot({ path: shot('digest-collective-reveal.png') });

  // Aligned timelines from the digests: one group per rank, the flow of the picked collective at
  // each rank's start on the aligned clock as the CLI gives it.
  await p.getByTestId('tab-ranks').click();
  const canvas = p.getByTestId('aligned-canvas');
  await p.waitForFunction(() => Number(document.querySelector('[data-testid=aligned-canvas]')?.dataset.rects) > 0);
  const arows = JSON.parse(await canvas.getAttribute('data-rows'));
  assert.equal(arows.filter((r) => r.kind === 'group').length, 8);
  assert.ok(arows.filter((r) => r.kind === 'slices').length >= 8, 'each rank shows its GPU streams');
  const flow = JSON.parse(await canvas.getAttribute('data-flow'));
  assert.equal(flow.length, worst.ranks.length);
  for (const [k, ns] of flow) {
    const part = worst.ranks.find((r) => r.rank === c.ranks[k].rank);
    assert.ok(Math.abs(ns - part.start_us * 1e3) <= 1, `rank ${part.rank}: ${ns} ns vs CLI ${part.start_us} µs`);
  }
  await p.getByTestId('aligned').screenshot({ path: shot('digest-aligned.png') });
  assert.deepEqual(errors, []);
  await p.close();
  fs.rmSync(dir, { recursive: true, force: true });
});
