// The foundation, end to end: open a real corpus trace through the file input, by ?url= and from the
// demo button; the page's event count must equal the CLI's for the same file; a bad file shows an
// error naming it and keeps the previous trace on screen.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import os from 'node:os';
import { spawnSync } from 'node:child_process';
import { serve, browser, cli, page, shot, CORPUS, ROOT, corpusSkip } from './harness.mjs';

let srv, b;
before(async () => { srv = await serve(); b = await browser(); });
after(async () => { await b?.close(); srv?.server.close(); });

const TRACE = path.join(CORPUS, 'real/hta/nccl_data_a100_rank0of2.json.gz');

test('a corpus trace uploaded through the file input shows the CLI event count, tracks and a painted timeline', { skip: corpusSkip(TRACE) }, async () => {
  const errors = [];
  const p = await page(b, errors);
  await p.goto(srv.base + '/');
  await p.getByTestId('empty').waitFor();
  await p.getByTestId('file-input').setInputFiles(TRACE);
  await p.getByTestId('event-count').waitFor({ timeout: 60_000 });
  const shown = Number(await p.getByTestId('event-count').textContent());
  const expected = cli(TRACE).files[0].events;
  assert.equal(shown, expected);
  assert.equal(await p.getByTestId('file-name').textContent(), path.basename(TRACE));
  const trackRows = await p.locator('[data-testid=track-list] tbody tr').count();
  assert.ok(trackRows >= 2, `tracks listed: ${trackRows}`);
  const gpuRows = await p.locator('[data-testid=track-list] tbody tr', { hasText: 'GPU stream' }).count();
  assert.ok(gpuRows >= 1, 'at least one GPU stream');
  await p.screenshot({ path: shot('upload-overview.png') });
  await p.getByTestId('tab-timeline').click();
  await p.getByTestId('timeline').waitFor();
  await p.waitForFunction(() => Number(document.querySelector('[data-testid=timeline]')?.getAttribute('data-rects')) > 0);
  const rects = Number(await p.getByTestId('timeline').getAttribute('data-rects'));
  assert.ok(rects > 100, `timeline painted ${rects} rects`);
  await p.screenshot({ path: shot('upload.png') });
  assert.deepEqual(errors, []);
  await p.close();
});

test('?url= loads a trace fetched by the page itself, and the demo button opens the bundled demo', async () => {
  const errors = [];
  const p = await page(b, errors);
  await p.goto(srv.base + '/?url=' + encodeURIComponent('demo/demo.pt.trace.json.gz'));
  await p.getByTestId('event-count').waitFor({ timeout: 60_000 });
  const demo = path.join(ROOT, 'web/demo/demo.pt.trace.json.gz');
  assert.equal(Number(await p.getByTestId('event-count').textContent()), cli(demo).files[0].events);
  await p.goto(srv.base + '/');
  await p.getByTestId('demo').click();
  await p.getByTestId('event-count').waitFor({ timeout: 60_000 });
  assert.equal(Number(await p.getByTestId('event-count').textContent()), cli(demo).files[0].events);
  await p.screenshot({ path: shot('demo.png') });
  assert.deepEqual(errors, []);
  await p.close();
});

test('an unreadable file shows an error naming it, and the trace already open stays usable', async () => {
  const errors = [];
  const p = await page(b, errors);
  await p.goto(srv.base + '/');
  await p.getByTestId('demo').click();
  await p.getByTestId('event-count').waitFor({ timeout: 60_000 });
  const before = await p.getByTestId('event-count').textContent();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tl-e2e-'));
  const bad = path.join(dir, 'not-a-trace.json');
  fs.writeFileSync(bad, 'hello, this is not JSON');
  await p.getByTestId('file-input').setInputFiles(bad);
  await p.getByTestId('error').waitFor();
  const msg = await p.getByTestId('error').textContent();
  assert.match(msg, /not-a-trace\.json/);
  assert.match(msg, /not JSON/);
  assert.equal(await p.getByTestId('event-count').textContent(), before);
  // Truncated: keeps what parsed and says so.
  const full = fs.readFileSync(path.join(CORPUS, 'real/param/dlrm_8rank/kineto/worker0_step_12.1694128201545.pt.trace.json'));
  const cut = path.join(dir, 'cut.pt.trace.json');
  fs.writeFileSync(cut, full.subarray(0, Math.floor(full.length / 2)));
  await p.getByTestId('file-input').setInputFiles(cut);
  await p.getByTestId('warnings').waitFor({ timeout: 60_000 });
  assert.match(await p.getByTestId('warnings').innerText(), /truncated/);
  assert.equal(await p.getByTestId('file-name').textContent(), 'cut.pt.trace.json');
  await p.screenshot({ path: shot('error.png') });
  assert.deepEqual(errors, []);
  await p.close();
});

for (const inflate of ['browser', 'wasm']) test(`a cut .json.gz inflated by ${inflate === 'browser' ? 'DecompressionStream in the reader worker' : 'flate2 in wasm'} keeps exactly what the CLI keeps, with a warning`, { skip: corpusSkip(TRACE) }, async () => {
  const errors = [];
  const p = await page(b, errors);
  await p.goto(srv.base + '/?inflate=' + inflate);
  const full = fs.readFileSync(TRACE);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tl-e2e-'));
  const cut = path.join(dir, 'cut.json.gz');
  fs.writeFileSync(cut, full.subarray(0, Math.floor(full.length / 2)));
  await p.getByTestId('file-input').setInputFiles(cut);
  await p.getByTestId('warnings').waitFor({ timeout: 60_000 });
  assert.match(await p.getByTestId('warnings').innerText(), /truncated/);
  const shown = Number(await p.getByTestId('event-count').textContent());
  assert.equal(shown, cli(cut).files[0].events);
  assert.ok(shown > 1000, `kept ${shown} events`);
  // Corrupt deflate data: an error naming the file, and the cut file stays open.
  const bad = path.join(dir, 'corrupt.json.gz');
  const mangled = Buffer.from(full);
  mangled.fill(0xff, 5000, 9000);
  fs.writeFileSync(bad, mangled);
  await p.getByTestId('file-input').setInputFiles(bad);
  await p.getByTestId('error').waitFor({ timeout: 60_000 });
  // The page says what the CLI (flate2) says of the same bytes.
  const cliSays = spawnSync(path.join(ROOT, 'target/release/tracelight'), ['summary', bad]).stderr.toString();
  const why = cliSays.slice(cliSays.indexOf('corrupt.json.gz: ') + 'corrupt.json.gz: '.length).trim();
  assert.ok(why.length > 5, cliSays);
  assert.ok((await p.getByTestId('error').textContent()).includes(`corrupt.json.gz: ${why}`));
  assert.equal(Number(await p.getByTestId('event-count').textContent()), shown);
  assert.deepEqual(errors, []);
  await p.close();
});

test('a folder of rank files opens as one session, ranks from distributedInfo', async (t) => {
  const dir = path.join(CORPUS, 'real/param/dlrm_8rank/kineto');
  const why = corpusSkip(dir); if (why) { t.skip(why); return; }
  const errors = [];
  const p = await page(b, errors);
  await p.goto(srv.base + '/');
  await p.getByTestId('folder-input').setInputFiles(dir);
  // A run opens on its Ranks tab; a rank's chip opens that rank.
  await p.getByTestId('ranks-view').waitFor({ timeout: 120_000 });
  const chips = await p.locator('[data-testid=session-bar] .file-chip').allTextContents();
  assert.equal(chips.length, 8);
  // Each file's rank (distributedInfo.rank) matches the workerN in its name.
  for (const c of chips) {
    const m = c.match(/^rank (\d+) · worker(\d+)_/);
    assert.ok(m, c);
    assert.equal(m[1], m[2]);
  }
  // Switching rank shows that file's event count, equal to the CLI's.
  const worker5 = fs.readdirSync(dir).find((f) => f.startsWith('worker5_'));
  await p.locator('[data-testid=session-bar] .file-chip', { hasText: 'rank 5 ·' }).click();
  await p.waitForFunction((n) => document.querySelector('[data-testid=file-name]')?.textContent === n, worker5);
  assert.equal(Number(await p.getByTestId('event-count').textContent()), cli(path.join(dir, worker5)).files[0].events);
  await p.screenshot({ path: shot('ranks.png') });
  assert.deepEqual(errors, []);
  await p.close();
});
