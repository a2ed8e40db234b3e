// Privacy, proven: every request of a full session is recorded — open by ?url= from another origin,
// a picked file, every tab, a timeline search, a Compare against a picked B, the Markdown and CSV
// exports, a deep link reopened — and none leaves the page's origin except the one explicit ?url=.
// (The reader worker is a blob: URL of the page's own text and downloads are blob: URLs: in memory,
// not requests to anywhere.)
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import fs from 'node:fs';
import path from 'node:path';
import { serve, browser, ROOT, CORPUS, corpusSkip } from './harness.mjs';

const DEMO = path.join(ROOT, 'web/demo/demo.pt.trace.json.gz');
const B = path.join(CORPUS, 'real/hta/simple_add_a100_kineto.json.gz');

/** Another origin serving the demo with CORS, as a team's artifact store would. */
async function otherOrigin(hits) {
  const server = http.createServer((req, res) => {
    hits.push(req.url);
    res.writeHead(200, { 'content-type': 'application/gzip', 'access-control-allow-origin': '*' });
    fs.createReadStream(DEMO).pipe(res);
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  return { server, base: `http://127.0.0.1:${server.address().port}` };
}

let app, other, b;
const hits = [];
before(async () => { app = await serve(); other = await otherOrigin(hits); b = await browser(); });
after(async () => { await b?.close(); app?.server.close(); other?.server.close(); });

test('a full session makes no request outside the page origin but the explicit ?url=', { skip: corpusSkip(B) }, async () => {
  const errors = [];
  const requests = [];
  const sockets = [];
  const ctx = await b.newContext({ viewport: { width: 1400, height: 900 }, acceptDownloads: true });
  const p = await ctx.newPage();
  p.on('pageerror', (e) => errors.push(String(e)));
  p.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  // Requests of the page, its frames and its workers (the context sees them all).
  ctx.on('request', (r) => requests.push(r.url()));
  p.on('websocket', (w) => sockets.push(w.url()));
  const traceUrl = `${other.base}/runs/7/rank0.pt.trace.json.gz`;

  await p.goto(`${app.base}/?url=${encodeURIComponent(traceUrl)}`);
  await p.getByTestId('event-count').waitFor({ timeout: 60_000 });
  // Every tab, with what each does on show.
  for (const tab of ['timeline', 'operators', 'kernels', 'gpu', 'memory', 'overview']) {
    const t = p.getByTestId(`tab-${tab}`);
    if (await t.count()) await t.click();
  }
  await p.getByTestId('tab-timeline').click();
  await p.getByTestId('search').fill('aten::mm');
  await p.getByTestId('search').press('Enter');
  await p.getByTestId('details').waitFor();
  // Exports: the Markdown summary (a download) and the operator table as CSV.
  await p.getByTestId('tab-overview').click();
  const [md] = await Promise.all([p.waitForEvent('download'), p.getByTestId('download-summary').click()]);
  assert.match(md.suggestedFilename(), /summary\.md$/);
  await p.getByTestId('tab-operators').click();
  const [csv] = await Promise.all([p.waitForEvent('download'), p.getByTestId('op-csv').click()]);
  assert.match(csv.suggestedFilename(), /\.csv$/);
  // Compare against a picked B.
  await p.getByTestId('tab-compare').click();
  await p.getByTestId('compare-input').setInputFiles(B);
  await p.getByTestId('compare-verdict').waitFor({ timeout: 60_000 });
  // A picked file replaces the session; the copied link reopens a view.
  await p.getByTestId('file-input').setInputFiles(DEMO);
  await p.getByTestId('tab-timeline').click();
  await p.getByTestId('timeline').waitFor();
  await p.getByTestId('copy-link').click();
  const link = await p.getByTestId('copy-link').getAttribute('data-link');
  // Opened by a colleague: a new page of the same browser.
  const q = await ctx.newPage();
  q.on('pageerror', (e) => errors.push(String(e)));
  q.on('websocket', (w) => sockets.push(w.url()));
  await q.goto(link);
  await q.getByTestId('timeline').waitFor({ timeout: 60_000 });
  await q.waitForTimeout(1000); // anything sent late would show up here

  const origin = new URL(app.base).origin;
  const outside = requests.filter((u) => !u.startsWith('blob:') && !u.startsWith('data:') && new URL(u).origin !== origin);
  // The ?url= twice: the first visit and the reopened link (which carries the same ?url=).
  assert.deepEqual(outside, [traceUrl, traceUrl]);
  assert.deepEqual(hits, ['/runs/7/rank0.pt.trace.json.gz', '/runs/7/rank0.pt.trace.json.gz']);
  assert.deepEqual(sockets, []);
  assert.ok(requests.length > 3, `requests seen: ${requests.length}`);
  assert.deepEqual(errors, []);
  await ctx.close();
});
