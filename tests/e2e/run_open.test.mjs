// Opening a run folder (issue 23, point 8): a run lands on its Ranks tab, not on rank 0's Overview;
// a file in the folder that is no profiler output (HTA's generated `reference.json`) is listed in
// grey as skipped with the reason `tracelight analyze DIR --json` gives, never as a red error; and
// the file chips come in rank order, each rank's execution trace right after its trace.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { serve, browser, cli, page, shot, inViewport, CORPUS, corpusSkip } from './harness.mjs';

let srv, b;
before(async () => { srv = await serve(); b = await browser(); });
after(async () => { await b?.close(); srv?.server.close(); });

const DLRM = path.join(CORPUS, 'real/param/dlrm_8rank');
const GLOO = path.join(CORPUS, 'generated/ddp_gloo_2rank');

test('the DLRM run opens on its Ranks tab, chips in rank order with each ET under its trace', { skip: corpusSkip(DLRM) }, async () => {
  const traces = fs.readdirSync(path.join(DLRM, 'kineto')).map((f) => path.join(DLRM, 'kineto', f));
  const ets = fs.readdirSync(path.join(DLRM, 'et')).map((f) => path.join(DLRM, 'et', f));
  assert.equal(traces.length + ets.length, 16);
  // The ranks as the files say them: distributedInfo.rank of each trace, the number in each ET's
  // name (dlrm_eg_N, the corpus README's rank N).
  const rankOf = new Map(traces.map((f) => [path.basename(f), JSON.parse(fs.readFileSync(f, 'utf8')).distributedInfo.rank]));
  for (const f of ets) rankOf.set(path.basename(f), Number(path.basename(f).match(/dlrm_eg_(\d+)/)[1]));
  // Scrambled: ETs first, newest rank first, traces after in name order.
  const files = [...ets.reverse(), ...traces];
  const errors = [];
  const p = await page(b, errors);
  await p.goto(srv.base + '/');
  await p.getByTestId('empty').waitFor();
  await p.getByTestId('file-input').setInputFiles(files);
  await p.getByTestId('ranks-view').waitFor({ timeout: 120_000 });
  assert.equal(await p.getByTestId('tab-ranks').getAttribute('aria-selected'), 'true');
  assert.ok(await inViewport(p.getByTestId('run-bar').locator('h2')), 'the run bar heads the page');
  const chips = await p.getByTestId('file-chip').evaluateAll((els) => els.map((e) => [e.title.replace(/^[^:]*: /, ''), e.dataset.kind, e.textContent]));
  assert.equal(chips.length, 16);
  const want = [...rankOf.entries()]
    .sort((x, y) => x[1] - y[1] || (x[0].includes('_eg_') ? 1 : 0) - (y[0].includes('_eg_') ? 1 : 0))
    .map(([name]) => name);
  assert.deepEqual(chips.map((c) => c[0]), want, 'rank order, each trace then its ET');
  assert.deepEqual(chips.map((c) => c[1]), want.map((n) => (n.includes('_eg_') ? 'execution trace' : 'trace')));
  chips.filter((c) => c[1] === 'trace').forEach((c, k) => assert.ok(c[2].startsWith(`rank ${k} · `), c[2]));
  await p.screenshot({ path: shot('run-open-dlrm.png') });
  assert.deepEqual(errors, []);
  await p.close();
});

test('a stray reference.json in a run folder is skipped in grey with the CLI\'s reason, not a red error', { skip: corpusSkip(GLOO) }, async () => {
  const c = cli(GLOO);
  const refs = c.run.skipped.filter((s) => s.path.endsWith('.reference.json'));
  assert.equal(refs.length, 2);
  const errors = [];
  const p = await page(b, errors);
  await p.goto(srv.base + '/');
  await p.getByTestId('empty').waitFor();
  await p.getByTestId('folder-input').setInputFiles(GLOO);
  await p.getByTestId('ranks-view').waitFor({ timeout: 120_000 });
  assert.equal(await p.getByTestId('error').count(), 0, 'no red banner');
  const grey = p.getByTestId('load-skipped');
  assert.ok(await inViewport(grey), 'the skipped line is on screen');
  assert.match(await grey.locator('summary').textContent(), /^2 files skipped: not profiler output$/);
  const color = await grey.evaluate((e) => getComputedStyle(e).color);
  const errColor = await p.evaluate(() => getComputedStyle(document.documentElement).getPropertyValue('--err'));
  assert.notEqual(color, errColor);
  await grey.locator('summary').click();
  const text = await grey.locator('pre').textContent();
  for (const r of refs) assert.ok(text.includes(`${path.basename(r.path)}: ${r.reason}`), `${r.path}: ${text}`);
  // The Ranks tab lists them with the same reason.
  const listed = await p.getByTestId('run-skipped').evaluateAll((els) => els.map((e) => [e.dataset.path, e.textContent]));
  for (const r of refs) {
    const hit = listed.find(([p]) => p === path.basename(r.path));
    assert.ok(hit && hit[1].endsWith(r.reason), `${r.path} listed: ${JSON.stringify(listed)}`);
  }
  await p.screenshot({ path: shot('run-open-skipped.png') });
  assert.deepEqual(errors, []);
  await p.close();
});
