// The reader workers leave a slice's display-only args in the file (core's
// `KinetoReader::leave_args_in_file`, issue 30): the page's model keeps only the args its
// analyses read, and the details panel reads the rest from the picked file again when a slice is
// selected. Checked against the trace's own JSON (parsed here) and the page's one-thread reader,
// which keeps every arg in memory: the same rows, and a model whose args text is a fraction.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { serve, browser, page, shot, corpusSkip, CORPUS } from './harness.mjs';

let srv, b;
const TMP = fs.mkdtempSync(path.join(os.tmpdir(), 'tl-args-'));
before(async () => { srv = await serve(); b = await browser(); });
after(async () => { await b?.close(); srv?.server.close(); fs.rmSync(TMP, { recursive: true, force: true }); });

// 2021 ResNet-50 on a V100: every op has its Python call stack in its args (12 MB of 35).
const GZ = path.join(CORPUS, 'real/kineto/resnet50_v100_2021-06_num_workers_0.worker0.1623143089861.pt.trace.json.gz');
const OP = 'aten::relu_';

/** Shows the first `OP` on the timeline (a deep link, applied as the timeline mounts). */
async function atFirstOp(p) {
  await p.evaluate((op) => { location.hash = `tab=timeline&op=${encodeURIComponent(op)}&n=1`; }, OP);
  await p.getByTestId('tab-timeline').click();
  await p.getByTestId('details').waitFor({ timeout: 60_000 });
}

/** Opens `file` with `query` at the first `OP` on the timeline; the page, its errors, its args rows. */
async function openAt(query, file, from) {
  const errors = [];
  const p = await page(b, errors);
  await p.goto(`${srv.base}/?${query}`);
  await p.getByTestId('empty').waitFor();
  await p.getByTestId('file-input').setInputFiles(file);
  const stats = p.getByTestId('load-stats');
  await stats.waitFor({ timeout: 120_000 });
  const argsBytes = Number(await stats.getAttribute('data-args-bytes'));
  const workers = Number(await stats.getAttribute('data-workers'));
  await atFirstOp(p);
  await p.locator(`[data-testid=details-args][data-from=${from}]`).waitFor({ timeout: 30_000 });
  const rows = await p.locator('[data-testid=details-args] tr').evaluateAll((trs) =>
    Object.fromEntries(trs.map((tr) => [tr.querySelector('th').textContent, tr.querySelector('td').textContent])));
  return { p, errors, rows, argsBytes, workers, name: await p.getByTestId('details-name').textContent() };
}

test('a slice\'s call stack, left in the file by the workers, is read from it into the details panel', { skip: corpusSkip(GZ) }, async () => {
  const f = path.join(TMP, 'resnet50.pt.trace.json');
  const bytes = zlib.gunzipSync(fs.readFileSync(GZ));
  fs.writeFileSync(f, bytes);
  // The trace's own first relu_, from its JSON.
  const first = JSON.parse(bytes.toString('utf8')).traceEvents
    .filter((e) => e.name === OP && e.ph === 'X')
    .sort((x, y) => x.ts - y.ts)[0];
  assert.ok(first.args['Call stack'].includes('functional.py'));

  const w = await openAt('workers=2', f, 'file');
  assert.equal(w.workers, 2);
  assert.equal(w.name, OP);
  assert.equal(w.rows['Call stack'], first.args['Call stack']);
  for (const [k, v] of Object.entries(first.args)) {
    assert.equal(w.rows[k], typeof v === 'string' ? v : JSON.stringify(v), k);
  }
  assert.equal(Object.keys(w.rows).length, Object.keys(first.args).length);
  await w.p.screenshot({ path: shot('args-in-file-details.png') });

  // The `.gz` itself: the workers read its bytes as the browser inflated them, and the panel
  // reads that inflated blob again.
  const gz = await openAt('workers=2', GZ, 'file');
  assert.equal(gz.workers, 2);
  assert.deepEqual(gz.rows, w.rows);
  assert.equal(gz.argsBytes, w.argsBytes);
  assert.deepEqual(gz.errors, []);
  await gz.p.close();

  // The page's own reader keeps them all in memory: the same rows, from its model.
  const one = await openAt('workers=0', f, 'memory');
  assert.equal(one.workers, 0);
  assert.deepEqual(w.rows, one.rows);
  // The call stacks stayed in the file: the workers' model holds a fraction of the args text.
  assert.ok(one.argsBytes > 10e6, `page reader args ${one.argsBytes}`);
  assert.ok(w.argsBytes * 5 < one.argsBytes, `args text ${one.argsBytes} -> ${w.argsBytes}`);
  assert.deepEqual(w.errors, []);
  assert.deepEqual(one.errors, []);
  await w.p.close();
  await one.p.close();
});

test('a trace fetched by ?url= keeps the fetched bytes, and the panel reads its args from them', { skip: corpusSkip(GZ) }, async () => {
  const errors = [];
  const p = await page(b, errors);
  const rel = path.relative(CORPUS, GZ).split(path.sep).map(encodeURIComponent).join('/');
  await p.goto(`${srv.base}/?workers=2&url=${encodeURIComponent('/corpus/' + rel)}#tab=timeline&op=${encodeURIComponent(OP)}&n=1`);
  await p.locator('[data-testid=details-args][data-from=file]').waitFor({ timeout: 120_000 });
  const rows = await p.locator('[data-testid=details-args] th').allTextContents();
  assert.ok(rows.includes('Call stack'), rows.join(', '));
  assert.equal(await p.getByTestId('details-name').textContent(), OP);
  assert.deepEqual(errors, []);
  await p.close();
});

test('a file changed after the load: the panel says so and shows the args kept in memory', { skip: corpusSkip(GZ) }, async () => {
  const f = path.join(TMP, 'changed.pt.trace.json');
  const bytes = zlib.gunzipSync(fs.readFileSync(GZ));
  fs.writeFileSync(f, bytes);
  const errors = [];
  const p = await page(b, errors);
  await p.goto(`${srv.base}/?workers=2`);
  await p.getByTestId('empty').waitFor();
  await p.getByTestId('file-input').setInputFiles(f);
  await p.getByTestId('load-stats').waitFor({ timeout: 120_000 });
  // The file shrinks to nothing behind the page's back.
  fs.writeFileSync(f, '');
  await atFirstOp(p);
  await p.getByTestId('details-args-note').filter({ hasText: 'Only the args kept in memory' }).waitFor({ timeout: 30_000 });
  const rows = await p.locator('[data-testid=details-args] th').allTextContents();
  assert.ok(rows.includes('External id') && !rows.includes('Call stack'), rows.join(', '));
  assert.equal(await p.getByTestId('details-name').textContent(), OP);
  await p.close();
});
