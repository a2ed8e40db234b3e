// "Why did my job hang?" end to end: a folder of torch 2.15 gloo Flight Recorder dumps (two
// process groups: rank 3 never issued its data-parallel all_reduce, rank 2 waits for it, ranks 0
// and 1 wait at the world all_reduce) is opened in the page; the Ranks tab must give the verdict,
// the ranks × sequence grid of every group, the picked collective on every rank, the stacks and
// pg_status exactly as `tracelight analyze DIR --json` does for the same folder. Then a run
// folder holding traces and dumps: the dumps join the run's Ranks tab.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { serve, browser, cli, page, shot, assertDur, corpusSkip, CORPUS, ROOT } from './harness.mjs';

let srv, b;
before(async () => { srv = await serve(); b = await browser(); });
after(async () => { await b?.close(); srv?.server.close(); });

const FIXTURES = path.join(ROOT, 'crates/core/tests/fixtures/fr-torch-2.15-gloo');
const dumps = (dir) => fs.readdirSync(dir).filter((f) => /^[a-z_]+\d+(\.json)?$/.test(f)).sort().map((f) => path.join(dir, f));
// Durations differ only in format between the CLI's text and the page's: compare the words.
// The page shows the CLI's `code` spans as <code>: compare without the backticks.
const words = (s) => s.replace(/`/g, '').replace(/\+?-?[\d.]+ (ns|µs|ms|s)\b/g, 'D');
const ranksOf = (v) => (v || []).join(',');

/** Checks the Flight Recorder card against the CLI's `flight_recorder` block. */
async function checkCard(p, fr) {
  const v = p.getByTestId('fr-verdict');
  await v.waitFor();
  const h = fr.hang;
  assert.equal(await v.getAttribute('data-kind'), h ? h.kind : 'none');
  if (h) {
    assert.equal(await v.getAttribute('data-pg'), h.pg);
    assert.equal(Number(await v.getAttribute('data-seq')), h.seq);
    assert.equal(await v.getAttribute('data-op'), h.op);
    assert.equal(await v.getAttribute('data-culprits'), ranksOf(h.culprits));
    assert.equal(await v.getAttribute('data-missing'), ranksOf(h.missing));
    assert.equal(await v.getAttribute('data-waiting'), ranksOf(h.waiting));
  }
  assert.equal(words(await p.getByTestId('fr-headline').textContent()), words(fr.verdict), 'the CLI\'s verdict, word for word');
  const also = await p.locator('[data-testid=fr-also] li').evaluateAll((els) => els.map((e) => [e.dataset.pg, Number(e.dataset.seq), e.textContent]));
  assert.deepEqual(also.map((a) => [a[0], a[1]]), fr.also.map((a) => [a.pg, a.seq]));
  also.forEach((a, k) => assert.equal(words(a[2]), words(fr.also[k].text)));

  // One grid per group, with the CLI's members, collectives, divergence and every cell's state.
  const grids = p.getByTestId('fr-grid');
  const shown = fr.groups.filter((g) => g.collectives.length || g.p2p.length);
  assert.equal(await grids.count(), shown.length);
  // The hang's group first, then the other groups that diverge, the rest folded away.
  const order = await grids.evaluateAll((els) => els.map((e) => e.dataset.pg));
  if (h) assert.equal(order[0], h.pg);
  for (const g of shown) {
    const el = p.locator(`[data-testid=fr-grid][data-pg="${g.pg}"]`);
    assert.equal(await el.getAttribute('data-members'), ranksOf(g.members));
    assert.equal(Number(await el.getAttribute('data-columns')), g.collectives.length);
    assert.equal(await el.getAttribute('data-divergence'), g.first_divergence_seq == null ? '' : String(g.first_divergence_seq));
    const t = el.getByTestId('fr-table');
    const lo = Number(await t.getAttribute('data-lo')), hi = Number(await t.getAttribute('data-hi'));
    const cells = await el.getByTestId('fr-cell').evaluateAll((els) => els.map((e) => [Number(e.dataset.rank), Number(e.dataset.seq), e.dataset.state, e.dataset.inferred === 'true']));
    const want = [];
    g.members.forEach((rank, m) => {
      for (let c = lo; c < hi; c++) want.push([rank, g.collectives[c].seq, g.collectives[c].states[m], g.collectives[c].inferred[m]]);
    });
    assert.deepEqual(cells, want, `group ${g.pg}: every cell's state`);
  }
  // The stacks: the culprits' last collectives beside the waiting ranks'.
  const stacks = await p.getByTestId('fr-stack').evaluateAll((els) => els.map((e) => [e.dataset.role, e.dataset.ranks, e.querySelector('pre')?.textContent.split('\n').length ?? 0]));
  assert.deepEqual(stacks, fr.stacks.map((s) => [s.role, ranksOf(s.ranks), s.frames.length]));
  // pg_status, rank by rank.
  const status = await p.getByTestId('fr-status').evaluateAll((els) => els.map((e) => [Number(e.dataset.rank), e.dataset.pg, e.querySelector('[data-col=enqueued]').textContent, e.querySelector('[data-col=completed]').textContent]));
  const o = (x) => (x == null ? '—' : String(x));
  assert.deepEqual(status, fr.ranks.flatMap((r) => r.status.map((s) => [r.rank, s.pg, o(s.last_enqueued), o(s.last_completed)])));
}

test('a folder of gloo dumps gives the CLI\'s verdict, grid, stacks and pg_status', async () => {
  const dir = path.join(FIXTURES, 'two_pgs');
  const c = cli(dir);
  const fr = c.flight_recorder;
  assert.equal(fr.hang.pg, '2');
  const errors = [];
  const p = await page(b, errors);
  await p.setViewportSize({ width: 1440, height: 900 });
  await p.goto(srv.base + '/');
  await p.getByTestId('empty').waitFor();
  // A folder as a user keeps it, picked with "Open folder…": the dumps, torch's analyzer output,
  // the script that made them.
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'tl-fr-'));
  for (const f of [...dumps(dir), path.join(dir, 'fr_trace.txt'), path.join(FIXTURES, 'gen.py')]) fs.copyFileSync(f, path.join(tmp, path.basename(f)));
  await p.getByTestId('folder-input').setInputFiles(tmp);
  await p.getByTestId('fr-view').waitFor({ timeout: 60_000 });
  // Dumps alone: the Ranks tab is the only tab, and opens by itself.
  assert.deepEqual(await p.locator('[data-testid^=tab-]').evaluateAll((els) => els.map((e) => e.dataset.testid)), ['tab-ranks']);
  await checkCard(p, fr);
  const bar = p.getByTestId('run-bar');
  assert.equal(Number(await bar.getAttribute('data-ranks')), 4);
  assert.equal(Number(await bar.getAttribute('data-skipped')), 2);
  await p.screenshot({ path: shot('fr-two-pgs.png') });

  // The hang's collective is picked at first: every rank of group 2 with its state and times;
  // the earliest waiting rank issued it at the CLI's `since_us`.
  const detail = p.getByTestId('fr-detail');
  assert.equal(await detail.getAttribute('data-pg'), fr.hang.pg);
  assert.equal(Number(await detail.getAttribute('data-seq')), fr.hang.seq);
  const rows = await p.getByTestId('fr-detail-row').evaluateAll((els) => els.map((e) => [Number(e.dataset.rank), e.dataset.state, e.querySelector('[data-col=created]')?.textContent ?? null]));
  const g2 = fr.groups.find((g) => g.pg === fr.hang.pg);
  const col = g2.collectives.find((x) => x.seq === fr.hang.seq);
  assert.deepEqual(rows.map((r) => [r[0], r[1]]), g2.members.map((m, k) => [m, col.states[k]]));
  const waiting = rows.filter((r) => r[2] !== null);
  assert.equal(waiting.length, fr.hang.waiting.length);
  assertDur(waiting[0][2].replace('+', ''), fr.hang.since_us, 'issued at');

  // A click on the world group's divergence shows it on all four ranks.
  const g0 = fr.groups.find((g) => g.pg === '0');
  await p.locator(`[data-testid=fr-grid][data-pg="0"] th.fr-col[data-seq="${g0.first_divergence_seq}"]`).click();
  await p.waitForFunction((s) => document.querySelector('[data-testid=fr-detail]')?.dataset.seq === String(s) && document.querySelector('[data-testid=fr-detail]')?.dataset.pg === '0', g0.first_divergence_seq);
  const c0 = g0.collectives.find((x) => x.seq === g0.first_divergence_seq);
  const rows0 = await p.getByTestId('fr-detail-row').evaluateAll((els) => els.map((e) => [Number(e.dataset.rank), e.dataset.state]));
  assert.deepEqual(rows0, g0.members.map((m, k) => [m, c0.states[k]]));
  await p.getByTestId('fr-view').screenshot({ path: shot('fr-two-pgs-card.png') });
  fs.rmSync(tmp, { recursive: true, force: true });
  assert.deepEqual(errors, []);
  await p.close();
});

test('a wrong op, a wrapped buffer and a healthy job each read as the CLI reads them', async () => {
  for (const s of ['wrong_op', 'wrapped', 'healthy', 'missing_rank_json']) {
    const dir = path.join(FIXTURES, s);
    const fr = cli(dir).flight_recorder;
    const errors = [];
    const p = await page(b, errors);
    await p.goto(srv.base + '/');
    await p.getByTestId('file-input').setInputFiles(dumps(dir));
    await p.getByTestId('fr-view').waitFor({ timeout: 60_000 });
    await checkCard(p, fr);
    if (s === 'wrong_op') {
      const m = await p.getByTestId('fr-mismatch').evaluateAll((els) => els.map((e) => [Number(e.dataset.rank), e.dataset.field]));
      assert.deepEqual(m, fr.hang.mismatches.map((x) => [x.rank, x.field]));
      await p.getByTestId('fr-verdict').screenshot({ path: shot('fr-wrong-op-verdict.png') });
    }
    assert.deepEqual(errors, [], s);
    await p.close();
  }
});

const DLRM = path.join(CORPUS, 'real/param/dlrm_8rank/kineto');
test('dumps in a run folder join the run\'s Ranks tab', { skip: corpusSkip(DLRM) }, async () => {
  // A run folder of 8 traces and the 4 dumps of a hang, as `analyze DIR` reads it.
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'tl-fr-run-'));
  const traces = fs.readdirSync(DLRM).filter((f) => f.endsWith('.json')).sort();
  for (const f of traces) fs.symlinkSync(path.join(DLRM, f), path.join(tmp, f));
  const fdir = path.join(FIXTURES, 'missing_rank');
  for (const f of dumps(fdir)) fs.symlinkSync(f, path.join(tmp, path.basename(f)));
  const c = cli(tmp);
  assert.equal(c.ranks.length, 8);
  assert.equal(c.flight_recorder.hang.seq, 8);
  const errors = [];
  const p = await page(b, errors);
  await p.setViewportSize({ width: 1440, height: 900 });
  await p.goto(srv.base + '/');
  await p.getByTestId('file-input').setInputFiles([...traces.map((f) => path.join(DLRM, f)), ...dumps(fdir)]);
  await p.getByTestId('overview').or(p.getByTestId('ranks-view')).first().waitFor({ timeout: 120_000 });
  if (!(await p.getByTestId('ranks-view').count())) await p.getByTestId('tab-ranks').click();
  await p.getByTestId('fr-view').waitFor();
  await checkCard(p, c.flight_recorder);
  // The run's own figures are there too, and the run bar lists each rank's dump.
  assert.equal(Number(await p.getByTestId('ranks-table').getAttribute('data-rows')), 8);
  assert.equal(Number(await p.getByTestId('run-straggler').getAttribute('data-rank')), c.straggler.rank);
  const withDump = await p.locator('[data-testid=run-unit] td.found[data-artifact="FR dump"]').count();
  assert.equal(withDump, c.run.units.filter((u) => u.files.flight_recorder).length);
  await p.screenshot({ path: shot('fr-run-folder.png') });
  fs.rmSync(tmp, { recursive: true, force: true });
  assert.deepEqual(errors, []);
  await p.close();
});
