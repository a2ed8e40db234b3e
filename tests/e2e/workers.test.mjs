// A big plain trace is read on several cores by workers, each with its own instance of the page's
// wasm module (load/pool.rs, js/shards.js): the page must show what its own one-thread reader shows
// for the same file (and the CLI's event count), the same error for a broken file, Cancel must stop
// the workers, and it must work from the single-file build opened at file:// (the module travels to
// the workers compiled, nothing is fetched). `?workers=N` sets the number of workers (0: the page's
// own reader), so small corpus files take the worker path here.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { execFileSync } from 'node:child_process';
import { pathToFileURL } from 'node:url';
import { serve, browser, cli, page, shot, assertSig3, corpusSkip, CORPUS, DIST, ROOT } from './harness.mjs';

let srv, b;
const TMP = fs.mkdtempSync(path.join(os.tmpdir(), 'tl-workers-'));
before(async () => { srv = await serve(); b = await browser(); });
after(async () => { await b?.close(); srv?.server.close(); fs.rmSync(TMP, { recursive: true, force: true }); });

const GZ = path.join(CORPUS, 'real/hta/a100_80gb_rank0of16.json.gz');
const NCCL = path.join(CORPUS, 'real/hta/nccl_data_a100_rank0of2.json.gz');
/** A corpus trace as plain JSON (the worker path reads plain files). */
const unzipped = (gz, name) => {
  const f = path.join(TMP, name);
  if (!fs.existsSync(f)) fs.writeFileSync(f, zlib.gunzipSync(fs.readFileSync(gz)));
  return f;
};
const plain = () => unzipped(GZ, 'a100_rank0.json');

/** What the overview shows of a loaded trace, and how many workers read it. */
async function shown(p) {
  const stats = p.getByTestId('load-stats');
  return {
    events: await p.getByTestId('event-count').textContent(),
    slices: await p.getByTestId('slice-count').textContent(),
    span: await p.getByTestId('time-span').textContent(),
    tracks: await p.locator('[data-testid=track-list] tbody tr').allTextContents(),
    warnings: await p.locator('[data-testid=warnings] li').allTextContents(),
    decoded: await stats.getAttribute('data-decoded-bytes'),
    workers: Number(await stats.getAttribute('data-workers')),
  };
}

async function open(query, file) {
  const errors = [];
  const p = await page(b, errors);
  await p.goto(`${srv.base}/?${query}`);
  await p.getByTestId('empty').waitFor();
  await p.getByTestId('file-input').setInputFiles(file);
  return { p, errors };
}

test('while the page waits for a file, its spare worker runs a reader worker\'s whole path over the demo (shard, merge, finish, sections, analyses) and every pass runs through', async () => {
  const errors = [];
  const p = await page(b, errors);
  await p.goto(`${srv.base}/`);
  await p.getByTestId('empty').waitFor();
  // `passes/through`, set once the spare's warm-up ends (shards.js, tl_warm_up).
  await p.waitForFunction(() => document.documentElement.dataset.workerWarmUp, null, { timeout: 60_000 });
  const [passes, through] = (await p.evaluate(() => document.documentElement.dataset.workerWarmUp)).split('/').map(Number);
  assert.equal(passes, 10, 'every warm-up pass ran before any load');
  assert.equal(through, passes, 'a pass failed: a merge, finish, section or analysis of the demo went wrong in a worker');
  assert.deepEqual(errors, []);
  await p.close();
});

test('three workers show what the page\'s own reader shows for the same plain trace, and the CLI\'s event count', { skip: corpusSkip(GZ) }, async () => {
  const f = plain();
  const one = await open('workers=0', f);
  await one.p.getByTestId('event-count').waitFor({ timeout: 120_000 });
  const a = await shown(one.p);
  const three = await open('workers=3', f);
  await three.p.getByTestId('event-count').waitFor({ timeout: 120_000 });
  const c = await shown(three.p);
  assert.equal(a.workers, 0);
  assert.equal(c.workers, 3);
  assert.equal(await one.p.getByTestId('load-stats').getAttribute('data-analysed-in'), 'page');
  assert.deepEqual({ ...c, workers: 0 }, a);
  assert.equal(Number(c.events), cli(f).files[0].events);
  // The same with a fourth worker, which parses nothing, merging the three shards (a big file's
  // way: its staged columns one block each, the model read back before its analyses).
  const merged = await open('workers=3&merger=1', f);
  await merged.p.getByTestId('event-count').waitFor({ timeout: 120_000 });
  assert.deepEqual({ ...await shown(merged.p), workers: 0 }, a);
  assert.equal(await merged.p.evaluate(() => document.documentElement.dataset.mergedBy), 'merger');
  assert.equal(await three.p.evaluate(() => document.documentElement.dataset.mergedBy), 'worker 0');
  assert.equal(await merged.p.getByTestId('load-stats').getAttribute('data-analysed-in'), 'worker');
  assert.equal(await merged.p.getByTestId('load-stats').getAttribute('data-timeline-in'), 'worker');
  assert.deepEqual(merged.errors, []);
  await merged.p.close();
  // The views work on the model the workers built. The timeline's counter tracks (GPU
  // utilization, memory), groups and step marks came from the merging worker (`view::parts`):
  // the same rows and the same pixels as the page's own passes draw.
  assert.equal(await one.p.getByTestId('load-stats').getAttribute('data-timeline-in'), 'page');
  assert.equal(await three.p.getByTestId('load-stats').getAttribute('data-timeline-in'), 'worker');
  const drawn = async (p) => {
    await p.getByTestId('tab-timeline').click();
    await p.waitForFunction(() => Number(document.querySelector('[data-testid=timeline]')?.getAttribute('data-rects')) > 100);
    return p.evaluate(() => {
      const c = document.querySelector('[data-testid=timeline]');
      return { rows: JSON.parse(c.dataset.rows), window: c.dataset.window, pixels: c.toDataURL() };
    });
  };
  const [mine, theirs] = [await drawn(one.p), await drawn(three.p)];
  assert.ok(mine.rows.some((r) => /utilization/.test(r.label)), JSON.stringify(mine.rows.map((r) => r.label)));
  assert.deepEqual(theirs.rows, mine.rows);
  assert.equal(theirs.window, mine.window);
  assert.ok(theirs.pixels === mine.pixels, 'the timeline drawn from the worker\'s parts differs from the page\'s own');
  await three.p.screenshot({ path: shot('workers-timeline.png') });
  assert.deepEqual(one.errors, []);
  assert.deepEqual(three.errors, []);
  await one.p.close();
  await three.p.close();
});

test('the Overview\'s analyses of a model read by three workers equal the CLI\'s (NCCL A100 trace), merged by worker 0 or by a worker that parses nothing, and computed in two halves by workers 0 and 1', { skip: corpusSkip(NCCL) }, async () => {
  const f = unzipped(NCCL, 'nccl_rank0.json');
  const c = cli(f);
  for (const q of ['workers=3&halves=0', 'workers=3&merger=1', 'workers=3&halves=1']) await overviewEqualsCli(q, f, c);
});

async function overviewEqualsCli(query, f, c) {
  const { p, errors } = await open(query, f);
  const mergedBy = query.includes('merger=1') ? 'merger' : 'worker 0';
  await p.getByTestId('overview').waitFor({ timeout: 120_000 });
  await p.getByTestId('event-count').waitFor({ timeout: 120_000 });
  assert.equal(Number(await p.getByTestId('load-stats').getAttribute('data-workers')), 3);
  // Worker 0 computed these analyses (the page's thread did not): the figures below are its.
  assert.equal(await p.getByTestId('load-stats').getAttribute('data-analysed-in'), 'worker');
  assert.equal(Number(await p.getByTestId('event-count').textContent()), c.files[0].events);
  assertSig3(await p.getByTestId('gpu-util').textContent(), c.gpu.utilization, 'GPU utilization');
  const steps = await p.getByTestId('step-row').evaluateAll((els) => els.map((e) => [e.dataset.name, Number(e.dataset.ns)]));
  assert.ok(c.steps.length > 0);
  assert.deepEqual(steps.map((s) => s[0]), c.steps.map((s) => s.name));
  steps.forEach((s, k) => assert.ok(Math.abs(s[1] - c.steps[k].dur_us * 1e3) <= 1, `step ${s[0]}`));
  for (const key of ['kernel', 'memcpy', 'runtime', 'cpu_exec', 'other']) {
    const ns = Number(await p.locator(`[data-testid=step-breakdown] [data-key=${key}]`).getAttribute('data-ns'));
    const us = c.steps.reduce((a, x) => a + x[`${key}_us`], 0);
    assert.ok(Math.abs(ns - us * 1e3) <= c.steps.length, `step part ${key}: ${ns} vs ${us}`);
  }
  for (const [k, us] of Object.entries(c.categories)) {
    const ns = Number(await p.locator(`[data-testid=seed-categories] [data-key=${k}]`).getAttribute('data-ns'));
    assert.ok(Math.abs(ns - us * 1e3) <= 1, `category ${k}`);
  }
  assert.equal(await p.getByTestId('recommendation').count(), c.recommendations.length);
  assert.equal(await p.evaluate(() => document.documentElement.dataset.mergedBy), mergedBy);
  // The steps and their breakdown above are the helper's half where the analyses went in halves.
  const pacedBy = await p.evaluate(() => document.documentElement.dataset.pacedBy);
  assert.equal(pacedBy, query.includes('halves=1') ? 'helper' : undefined);
  await p.screenshot({ path: shot(query.includes('merger') ? 'workers-overview-merger.png' : query.includes('halves=1') ? 'workers-overview-halves.png' : 'workers-overview.png') });
  assert.deepEqual(errors, []);
  await p.close();
}

test('a .json.gz is inflated by the platform and read by workers: what the page\'s own reader shows, the CLI\'s event count', { skip: corpusSkip(GZ) }, async () => {
  const one = await open('workers=0', GZ);
  await one.p.getByTestId('event-count').waitFor({ timeout: 120_000 });
  const a = await shown(one.p);
  const three = await open('workers=3', GZ);
  await three.p.getByTestId('event-count').waitFor({ timeout: 120_000 });
  const c = await shown(three.p);
  assert.equal(a.workers, 0);
  assert.equal(c.workers, 3);
  assert.deepEqual({ ...c, workers: 0 }, a);
  // Every inflated byte decoded (the plain file's size), the compressed size as the file's.
  assert.equal(Number(c.decoded), fs.statSync(plain()).size);
  assert.equal(await three.p.getByTestId('load-stats').getAttribute('data-analysed-in'), 'worker');
  assert.equal(Number(c.events), cli(GZ).files[0].events);
  assert.deepEqual(one.errors, []);
  assert.deepEqual(three.errors, []);
  await one.p.close();
  await three.p.close();
});

test('?url= of a big trace (plain or .gz) is fetched once and read by workers', { skip: corpusSkip(GZ) }, async () => {
  const rel = path.relative(CORPUS, GZ);
  for (const q of [`workers=2&url=${encodeURIComponent('corpus/' + rel)}`]) {
    const errors = [];
    const p = await page(b, errors);
    const requests = [];
    p.on('request', (r) => requests.push(r.url()));
    await p.goto(`${srv.base}/?${q}`);
    await p.getByTestId('event-count').waitFor({ timeout: 120_000 });
    assert.equal(Number(await p.getByTestId('load-stats').getAttribute('data-workers')), 2, q);
    assert.equal(await p.getByTestId('load-stats').getAttribute('data-analysed-in'), 'worker', q);
    assert.equal(Number(await p.getByTestId('event-count').textContent()), cli(GZ).files[0].events, q);
    assert.equal(requests.filter((u) => u.includes('/corpus/')).length, 1, requests.join('\n'));
    assert.deepEqual(errors, []);
    await p.close();
  }
});

test('a cut .json.gz read with workers asked for gives what the page\'s own reader gives', { skip: corpusSkip(GZ) }, async () => {
  const raw = fs.readFileSync(GZ);
  const cut = path.join(TMP, 'cut.json.gz');
  fs.writeFileSync(cut, raw.subarray(0, Math.floor(raw.length * 0.6)));
  const got = [];
  for (const q of ['workers=0', 'workers=3']) {
    const { p, errors } = await open(q, cut);
    await p.locator('[data-testid=event-count], [data-testid=error]').first().waitFor({ timeout: 120_000 });
    got.push({
      events: await p.getByTestId('event-count').count() ? await p.getByTestId('event-count').textContent() : null,
      error: await p.getByTestId('error').count() ? await p.getByTestId('error').textContent() : null,
      warnings: await p.locator('[data-testid=warnings] li').allTextContents(),
      workers: await p.getByTestId('load-stats').count() ? Number(await p.getByTestId('load-stats').getAttribute('data-workers')) : null,
    });
    await p.close();
  }
  assert.ok(got[0].events !== null || got[0].error !== null);
  assert.deepEqual(got[1], got[0]);
});

test('where the workers cannot run (their wasm fails to start), the page\'s own reader reads the file', { skip: corpusSkip(GZ) }, async () => {
  const f = plain();
  const errors = [];
  const warnings = [];
  const p = await page(b, errors);
  p.on('console', (m) => { if (m.type() === 'warning') warnings.push(m.text()); });
  // Every shard worker gets no module (as where a policy blocks wasm in workers): it fails at start.
  await p.addInitScript(() => {
    const post = Worker.prototype.postMessage;
    Worker.prototype.postMessage = function (m, ...rest) {
      if (m && m.kind === 'start' && 'module' in m) m = { ...m, module: null };
      return post.call(this, m, ...rest);
    };
  });
  await p.goto(`${srv.base}/?workers=3`);
  await p.getByTestId('empty').waitFor();
  await p.getByTestId('file-input').setInputFiles(f);
  await p.getByTestId('event-count').waitFor({ timeout: 120_000 });
  assert.equal(Number(await p.getByTestId('event-count').textContent()), cli(f).files[0].events);
  assert.equal(Number(await p.getByTestId('load-stats').getAttribute('data-workers')), 0);
  assert.ok(warnings.some((w) => /reader workers unavailable/.test(w)), warnings.join('\n'));
  assert.deepEqual(errors, []);
  await p.close();
});

test('a syntax error in the middle of the file is reported as the page\'s own reader reports it', { skip: corpusSkip(GZ) }, async () => {
  const text = fs.readFileSync(plain(), 'utf8');
  // Break an event two thirds in: in the third worker's shard.
  const at = text.indexOf('"ph": "X"', Math.floor(text.length * 2 / 3));
  const bad = path.join(TMP, 'broken.json');
  fs.writeFileSync(bad, text.slice(0, at) + '"ph": ]' + text.slice(at + 9));
  const msgs = [];
  // halves=1: worker 1, which would have computed half of the analyses, is let go with the load.
  for (const q of ['workers=0', 'workers=3', 'workers=3&merger=1', 'workers=3&halves=1']) {
    const { p } = await open(q, bad);
    await p.getByTestId('error').waitFor({ timeout: 120_000 });
    msgs.push(await p.getByTestId('error').textContent());
    await p.close();
  }
  assert.match(msgs[0], /broken\.json: malformed input/);
  assert.equal(msgs[1], msgs[0]);
  assert.equal(msgs[2], msgs[0]);
  assert.equal(msgs[3], msgs[0]);
  // Broken in the first shard: the merging worker that parses nothing gets it as that shard's
  // status, and reports what the page's own reader reports.
  const early = text.indexOf('"ph": "X"', Math.floor(text.length / 6));
  const bad0 = path.join(TMP, 'broken0.json');
  fs.writeFileSync(bad0, text.slice(0, early) + '"ph": ]' + text.slice(early + 9));
  const first = [];
  for (const q of ['workers=0', 'workers=3&merger=1']) {
    const { p } = await open(q, bad0);
    await p.getByTestId('error').waitFor({ timeout: 120_000 });
    first.push(await p.getByTestId('error').textContent());
    await p.close();
  }
  assert.match(first[0], /broken0\.json: malformed input/);
  assert.equal(first[1], first[0]);
});

test('a cut that falls inside an event (a nested object on a line of its own) is read again by the merging worker: what the page\'s own reader shows, and the CLI\'s count', async () => {
  // Kineto-like, but each event's args hold a list of objects written one a line, each line
  // starting with blanks and "{" as an event's does: of every 31 such lines, one starts an event,
  // so a cut made where one of them starts is almost surely inside an event.
  const lines = ['{"schemaVersion": 1, "traceEvents": ['];
  for (let i = 0; i < 3000; i++) {
    const frames = Array.from({ length: 30 }, (_, j) => `    {"frame": "f${j}", "line": ${i * 31 + j}}`).join(',\n');
    lines.push(`  {"ph": "X", "cat": "cpu_op", "name": "op${i % 17}", "pid": 1, "tid": ${1 + (i % 3)}, "ts": ${1000 + i * 10}, "dur": ${3 + (i % 5)}, "args": {"External id": ${i}, "stack": [\n${frames}\n  ]}}${i < 2999 ? ',' : ''}`);
  }
  lines.push(']}');
  const f = path.join(TMP, 'nested_lines.json');
  fs.writeFileSync(f, lines.join('\n') + '\n');
  const one = await open('workers=0', f);
  await one.p.getByTestId('event-count').waitFor({ timeout: 120_000 });
  const a = await shown(one.p);
  assert.equal(Number(a.events), cli(f).files[0].events);
  assert.equal(Number(a.events), 3000);
  for (const q of ['workers=3', 'workers=3&merger=1', 'workers=3&halves=1']) {
    const { p, errors } = await open(q, f);
    await p.getByTestId('event-count').waitFor({ timeout: 120_000 });
    assert.deepEqual({ ...await shown(p), workers: 0 }, a, q);
    const again = Number(await p.evaluate(() => document.documentElement.dataset.shardsReadAgain));
    assert.ok(again >= 1 && again <= 2, `${q}: ${again} of the two later shards read again`);
    if (q.includes('halves=1')) {
      // Worker 1's shard was read again, not merged: it still computed its half from the model.
      await p.waitForFunction(() => document.documentElement.dataset.pacedBy, null, { timeout: 120_000 });
      assert.equal(await p.evaluate(() => document.documentElement.dataset.pacedBy), 'helper');
    }
    assert.deepEqual(errors, [], q);
    await p.close();
  }
  assert.deepEqual(one.errors, []);
  await one.p.close();
});

test('Cancel stops a load in workers: no trace, no error, and the page opens the next file', { skip: corpusSkip(GZ) }, async () => {
  // ~200 MB: the corpus trace's events eight times over, so the load lasts long enough to cancel.
  const text = fs.readFileSync(plain(), 'utf8');
  const first = text.indexOf('[', text.indexOf('"traceEvents"')) + 1;
  const last = text.lastIndexOf(']');
  const events = text.slice(first, last).trim().replace(/,\s*$/, '');
  const big = path.join(TMP, 'big.json');
  const fd = fs.openSync(big, 'w');
  fs.writeSync(fd, text.slice(0, first));
  for (let i = 0; i < 8; i++) fs.writeSync(fd, (i ? ',\n' : '\n') + events);
  fs.writeSync(fd, text.slice(last));
  fs.closeSync(fd);
  const { p, errors } = await open('workers=2', big);
  await p.getByTestId('progress').waitFor({ timeout: 60_000 });
  await p.getByTestId('cancel').click();
  await p.getByTestId('progress').waitFor({ state: 'detached', timeout: 60_000 });
  assert.equal(await p.getByTestId('error').count(), 0, 'a cancel is no error');
  assert.equal(await p.getByTestId('event-count').count(), 0, 'no trace opened');
  await p.getByTestId('file-input').setInputFiles(plain());
  await p.getByTestId('event-count').waitFor({ timeout: 120_000 });
  assert.equal(Number(await p.getByTestId('event-count').textContent()), cli(plain()).files[0].events);
  assert.deepEqual(errors, []);
  await p.close();
});

test('the single-file build at file:// reads a plain trace in workers (the module is posted, nothing fetched)', { skip: corpusSkip(GZ) }, async () => {
  const out = path.join(TMP, 'tracelight.html');
  execFileSync('node', [path.join(ROOT, 'scripts/single_file.mjs'), DIST, out]);
  const errors = [];
  const p = await b.newPage({ viewport: { width: 1400, height: 900 } });
  p.on('pageerror', (e) => errors.push(String(e)));
  p.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  const requests = [];
  p.on('request', (r) => requests.push(r.url()));
  const url = pathToFileURL(out).href;
  await p.goto(`${url}?workers=2`);
  await p.getByTestId('empty').waitFor({ timeout: 60_000 });
  await p.getByTestId('file-input').setInputFiles(plain());
  await p.getByTestId('event-count').waitFor({ timeout: 120_000 });
  assert.equal(Number(await p.getByTestId('event-count').textContent()), cli(plain()).files[0].events);
  assert.equal(Number(await p.getByTestId('load-stats').getAttribute('data-workers')), 2);
  const others = requests.filter((u) => !u.startsWith(url) && !u.startsWith('blob:') && !u.startsWith('data:'));
  assert.deepEqual(others, [], 'requests other than the page itself');
  assert.deepEqual(errors, []);
  await p.close();
});
