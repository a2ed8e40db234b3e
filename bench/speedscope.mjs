// Peer measurement: speedscope (npm `speedscope`, its bundled web app) opening the same trace in the
// same headless Chromium, from navigation to its title naming the file (its import done), against
// Tracelight's page from navigation to the event count shown. Not a test; BENCHMARKS.md quotes it.
//   npm install --prefix /tmp/ss speedscope@1.25.0
//   node bench/speedscope.mjs /tmp/ss/node_modules/speedscope/dist/release bench-data/synth-20mb.pt.trace.json
import http from 'node:http';
import fs from 'node:fs';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { serve, browser } from '../tests/e2e/harness.mjs';

const [ssDir, ...files] = process.argv.slice(2);
const types = { '.html': 'text/html', '.js': 'text/javascript', '.css': 'text/css', '.wasm': 'application/wasm', '.json': 'application/json' };
const ss = http.createServer((req, res) => {
  const u = decodeURIComponent(new URL(req.url, 'http://x').pathname);
  const f = u.startsWith('/bench-data/') ? path.resolve(u.slice(1)) : path.join(ssDir, u === '/' ? 'index.html' : u);
  fs.stat(f, (e, st) => {
    if (e || !st.isFile()) { res.writeHead(404).end(); return; }
    res.writeHead(200, { 'content-type': types[path.extname(f)] || 'application/octet-stream', 'content-length': st.size });
    fs.createReadStream(f).pipe(res);
  });
});
await new Promise((r) => ss.listen(0, '127.0.0.1', r));
const ssBase = `http://127.0.0.1:${ss.address().port}`;
const tl = await serve();
const b = await browser();
for (const f of files) {
  const rel = path.relative('bench-data', f);
  const p1 = await b.newPage();
  let t0 = Date.now();
  await p1.goto(`${ssBase}/#profileURL=${encodeURIComponent('/bench-data/' + rel)}`);
  let speedscope_ms;
  try {
    await p1.waitForFunction((n) => document.title.includes(n), path.basename(f), { timeout: 300_000, polling: 100 });
    speedscope_ms = Date.now() - t0;
  } catch (e) { speedscope_ms = `failed: ${String(e).slice(0, 80)}`; }
  await p1.close();
  const p2 = await b.newPage();
  t0 = Date.now();
  await p2.goto(`${tl.base}/?url=${encodeURIComponent('bench-data/' + rel)}`);
  await p2.getByTestId('event-count').waitFor({ timeout: 300_000 });
  const tracelight_ms = Date.now() - t0;
  await p2.close();
  console.log(JSON.stringify({ file: rel, speedscope_ms, tracelight_ms }));
}
await b.close();
ss.close();
tl.server.close();
