// `tracelight view PATH…` end to end: the release CLI (with the single-file app embedded, see
// crates/cli/build.rs) serves a run folder and a gzipped trace on 127.0.0.1; headless Chromium
// opens the URL it prints and gets what a drop of the same files gives (the run's Ranks tab with
// the stray reference.json files skipped in grey; the trace's event count = `analyze --json`'s).
// A request without the token, for another path, or of another method is refused; a Range request
// gets exactly those bytes of the file; SIGINT (Ctrl-C) stops the server.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { browser, cli, page, shot, CORPUS, ROOT, corpusSkip } from './harness.mjs';

const BIN = process.env.TRACELIGHT_BIN || path.join(ROOT, 'target', 'release', 'tracelight');
const GLOO = path.join(CORPUS, 'generated/ddp_gloo_2rank');
const TRACE = path.join(CORPUS, 'real/hta/nccl_data_a100_rank0of2.json.gz');

let b;
before(async () => { b = await browser(); });
after(async () => { await b?.close(); });

/** Starts `tracelight view ARGS…` as over SSH with no display; resolves with the child, its URL
 *  and everything it printed up to the URL's line. */
function view(...args) {
  const env = { ...process.env, SSH_CONNECTION: '10.1.2.3 50000 10.9.8.7 22', USER: 'alice' };
  delete env.DISPLAY;
  delete env.WAYLAND_DISPLAY;
  const child = spawn(BIN, ['view', ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    child.stderr.on('data', (d) => { err += d; });
    child.stdout.on('data', (d) => {
      out += d;
      if (out.includes('Ctrl-C stops')) {
        const url = out.match(/open (http:\/\/127\.0\.0\.1:\d+\/[0-9a-f]+\/\?files=files\.json)\n/);
        if (url) resolve({ child, url: url[1], out });
        else reject(new Error(`no URL in ${out}`));
      }
    });
    child.on('exit', (code) => reject(new Error(`view exited ${code}: ${out}${err}`)));
  });
}

function stopped(child) {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else child.on('exit', () => resolve());
  });
}

test('view DIR: the run opens as dropped, over SSH it prints the ssh -L line, and only its own URL is served', { skip: corpusSkip(GLOO) }, async () => {
  const { child, url, out } = await view(GLOO);
  try {
    const port = Number(url.match(/:(\d+)\//)[1]);
    const token = url.match(/\/([0-9a-f]+)\//)[1];
    assert.equal(token.length, 32, '128 random bits');
    assert.ok(out.includes(`ssh -N -L ${port}:127.0.0.1:${port} alice@10.9.8.7\n`), out);
    // The folder's .table.txt files are not profiler output by name: not served.
    assert.match(out, /not served \(2 files not profiler output by name\)/);
    const errors = [];
    const p = await page(b, errors);
    await p.goto(url);
    await p.getByTestId('ranks-view').waitFor({ timeout: 120_000 });
    assert.equal(await p.getByTestId('tab-ranks').getAttribute('aria-selected'), 'true');
    const c = cli(GLOO);
    const chips = await p.getByTestId('file-chip').evaluateAll((els) => els.map((e) => e.dataset.kind));
    assert.equal(chips.filter((k) => k === 'trace').length, c.run.ranks.length);
    assert.equal(await p.getByTestId('error').count(), 0, 'no red banner');
    assert.match(await p.getByTestId('load-skipped').locator('summary').textContent(), /^2 files skipped: not profiler output$/);
    await p.screenshot({ path: shot('view-run.png') });
    assert.deepEqual(errors, []);
    await p.close();

    // What else is asked of the server is refused.
    const base = `http://127.0.0.1:${port}`;
    const status = async (u, init) => (await fetch(base + u, init)).status;
    assert.equal(await status('/'), 403, 'no token');
    assert.equal(await status('/files.json'), 403, 'no token');
    assert.equal(await status(`/${'0'.repeat(32)}/files.json`), 403, 'another token');
    assert.equal(await status(`/${token.slice(0, 31)}/`), 403, 'a prefix of the token');
    assert.equal(await status(`/${token}/etc/passwd`), 404);
    assert.equal(await status(`/${token}/f/99/x.json`), 404);
    assert.equal(await status(`/${token}/f/0/..%2F..%2Fetc%2Fpasswd`), 404);
    assert.equal(await status(`/${token}/`, { method: 'POST', body: 'x' }), 405);
    // A Range request: exactly those bytes of the file on disk.
    const list = await (await fetch(`${base}/${token}/files.json`)).json();
    const first = list.files[0];
    const disk = fs.readFileSync(path.join(GLOO, first.name));
    assert.equal(first.size, disk.length);
    const r = await fetch(`${base}/${token}/${first.url}`, { headers: { Range: 'bytes=1000-1999' } });
    assert.equal(r.status, 206);
    assert.equal(r.headers.get('content-range'), `bytes 1000-1999/${disk.length}`);
    assert.ok(Buffer.from(await r.arrayBuffer()).equals(disk.subarray(1000, 2000)));
    assert.equal((await fetch(`${base}/${token}/${first.url}`, { headers: { Range: `bytes=${disk.length}-` } })).status, 416);
    assert.equal(r.headers.get('referrer-policy'), 'no-referrer');
  } finally {
    child.kill('SIGINT');
  }
  await stopped(child);
  assert.equal(child.signalCode ?? 'SIGINT', 'SIGINT');
});

test('view FILE.json.gz: the page shows the CLI\'s event count; Ctrl-C closes the port', { skip: corpusSkip(TRACE) }, async () => {
  const { child, url } = await view('--no-browser', TRACE);
  const port = Number(url.match(/:(\d+)\//)[1]);
  const errors = [];
  const p = await page(b, errors);
  await p.goto(url);
  await p.getByTestId('event-count').waitFor({ timeout: 120_000 });
  assert.equal(Number(await p.getByTestId('event-count').textContent()), cli(TRACE).files[0].events);
  assert.equal(await p.getByTestId('file-name').textContent(), path.basename(TRACE));
  await p.screenshot({ path: shot('view-trace.png') });
  assert.deepEqual(errors, []);
  await p.close();
  child.kill('SIGINT');
  await stopped(child);
  await assert.rejects(fetch(`http://127.0.0.1:${port}/`), 'the port is closed');
});
