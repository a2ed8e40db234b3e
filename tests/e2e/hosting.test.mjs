// Hosting: the release dist/ served from a sub-path by a server that knows nothing else, and the
// single-file build (scripts/single_file.mjs) opened from file:// with no server at all. In both,
// the demo opens, the reader worker runs (a picked file loads), and no request leaves the build.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import fs from 'node:fs';
import path from 'node:path';
import os from 'node:os';
import crypto from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { pathToFileURL } from 'node:url';
import { browser, cli, shot, DIST, ROOT } from './harness.mjs';

const PREFIX = '/tools/tracelight/';
const DEMO = path.join(ROOT, 'web/demo/demo.pt.trace.json.gz');
const TYPES = { '.html': 'text/html', '.js': 'text/javascript', '.wasm': 'application/wasm', '.css': 'text/css', '.gz': 'application/gzip' };

let b;
before(async () => { b = await browser(); });
after(async () => { await b?.close(); });

/** Serves dist/ under PREFIX only; anything else is a 404 the test counts. */
async function subPathServer(stray) {
  const server = http.createServer((req, res) => {
    const url = new URL(req.url, 'http://x');
    if (!url.pathname.startsWith(PREFIX)) {
      stray.push(url.pathname);
      res.writeHead(404).end('outside the prefix');
      return;
    }
    const rel = decodeURIComponent(url.pathname.slice(PREFIX.length)) || 'index.html';
    const file = path.join(DIST, rel);
    if (!file.startsWith(DIST) || !fs.existsSync(file) || !fs.statSync(file).isFile()) {
      stray.push(url.pathname);
      res.writeHead(404).end('not found');
      return;
    }
    res.writeHead(200, { 'content-type': TYPES[path.extname(file)] || 'application/octet-stream' });
    fs.createReadStream(file).pipe(res);
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  return { server, base: `http://127.0.0.1:${server.address().port}` };
}

/** A page that records console errors, uncaught exceptions and every request. */
async function watched(errors, requests) {
  const p = await b.newPage({ viewport: { width: 1400, height: 900 } });
  p.on('pageerror', (e) => errors.push(String(e)));
  p.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  p.on('request', (r) => requests.push(r.url()));
  return p;
}

test('dist/ works from a sub-path: the app, its worker and the demo load from under the prefix only', async () => {
  const stray = [];
  const srv = await subPathServer(stray);
  const errors = [];
  const requests = [];
  const p = await watched(errors, requests);
  await p.goto(srv.base + PREFIX);
  await p.getByTestId('empty').waitFor();
  await p.getByTestId('demo').click();
  await p.getByTestId('event-count').waitFor({ timeout: 60_000 });
  assert.equal(Number(await p.getByTestId('event-count').textContent()), cli(DEMO).files[0].events);
  // ?url= relative to the sub-path, read by the worker.
  await p.goto(srv.base + PREFIX + '?url=' + encodeURIComponent('demo/demo.pt.trace.json.gz'));
  await p.getByTestId('event-count').waitFor({ timeout: 60_000 });
  assert.equal(Number(await p.getByTestId('event-count').textContent()), cli(DEMO).files[0].events);
  await p.screenshot({ path: shot('hosting-subpath.png') });
  assert.deepEqual(stray, [], 'requests outside the prefix or for missing files');
  const outside = requests.filter((u) => !u.startsWith(srv.base + PREFIX) && !u.startsWith('blob:'));
  assert.deepEqual(outside, []);
  assert.deepEqual(errors, []);
  await p.close();
  srv.server.close();
});

test('the single-file build opens from file://, loads a picked file and its inlined demo, and makes no request', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tl-single-'));
  const out = path.join(dir, 'tracelight.html');
  execFileSync('node', [path.join(ROOT, 'scripts/single_file.mjs'), DIST, out]);
  const html = fs.readFileSync(out, 'utf8');
  assert.doesNotMatch(html, /<script[^>]*\bsrc=/, 'no external script');
  assert.doesNotMatch(html, /<link\b[^>]*rel="(stylesheet|modulepreload|preload)"/, 'no external style or preload');
  // The policy is kept: script-src is exactly the hashes of the inline scripts (no 'self', which
  // means nothing on file://), no unsafe-eval; a violation would be a console error below.
  const csp = html.match(/<meta http-equiv="Content-Security-Policy" content="([^"]+)"/)?.[1];
  assert.ok(csp, 'the single file keeps a Content-Security-Policy');
  const inline = [...html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)]
    .filter((m) => !/type="application\/octet-stream"/.test(m[1]))
    .map((m) => `'sha256-${crypto.createHash('sha256').update(m[2]).digest('base64')}'`);
  const scriptSrc = csp.split(';').map((d) => d.trim().split(/\s+/)).find((d) => d[0] === 'script-src').slice(1);
  assert.deepEqual(scriptSrc.sort(), ["'wasm-unsafe-eval'", ...inline].sort());
  const errors = [];
  const requests = [];
  const p = await watched(errors, requests);
  const url = pathToFileURL(out).href;
  await p.goto(url);
  await p.getByTestId('empty').waitFor({ timeout: 60_000 });
  // A picked file goes through the reader worker (a blob: worker of a file:// page).
  await p.getByTestId('file-input').setInputFiles(DEMO);
  await p.getByTestId('event-count').waitFor({ timeout: 60_000 });
  const expected = cli(DEMO).files[0].events;
  assert.equal(Number(await p.getByTestId('event-count').textContent()), expected);
  // The demo button reads the demo inlined in the file (from file:// nothing can be fetched).
  await p.goto(url);
  await p.getByTestId('demo').click();
  await p.getByTestId('event-count').waitFor({ timeout: 60_000 });
  assert.equal(Number(await p.getByTestId('event-count').textContent()), expected);
  await p.getByTestId('tab-timeline').click();
  await p.waitForFunction(() => Number(document.querySelector('[data-testid=timeline]')?.getAttribute('data-rects')) > 0);
  await p.screenshot({ path: shot('hosting-single-file.png') });
  const others = requests.filter((u) => u !== url && !u.startsWith('blob:') && !u.startsWith('data:'));
  assert.deepEqual(others, [], 'requests other than the file itself');
  assert.deepEqual(errors, []);
  await p.close();
});
