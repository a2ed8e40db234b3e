// First-paint benchmark (not a test: run by hand, numbers go to BENCHMARKS.md).
//   node tests/e2e/bench_paint.mjs [RUNS]
// Opens the empty page of dist/ in a fresh headless Chromium context each run and prints, from the
// page's own clock (ms since navigation start): the browser's first-contentful-paint (the page's
// own first frame with content, i.e. the app rendered by the wasm: index.html's body is empty),
// when the empty-state section exists, and the wasm's gzipped size as served.
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { serve, browser, DIST } from './harness.mjs';

const runs = Number(process.argv[2] || 5);
const wasm = fs.readdirSync(DIST).find((f) => f.endsWith('_bg.wasm'));
const raw = fs.readFileSync(path.join(DIST, wasm));
console.log(JSON.stringify({ wasm, raw_bytes: raw.length, gzip9_bytes: zlib.gzipSync(raw, { level: 9 }).length }));
const srv = await serve();
const b = await browser();
for (let run = 0; run < runs; run++) {
  const ctx = await b.newContext();
  const p = await ctx.newPage();
  await p.goto(srv.base + '/');
  await p.getByTestId('empty').waitFor();
  // FCP is reported a frame after the paint: wait for the entry.
  await p.waitForFunction(() => performance.getEntriesByName('first-contentful-paint').length > 0);
  const t = await p.evaluate(() => ({
    fcp_ms: Math.round(performance.getEntriesByName('first-contentful-paint')[0].startTime),
    dom_ready_ms: Math.round(performance.getEntriesByType('navigation')[0].domContentLoadedEventEnd),
  }));
  console.log(JSON.stringify({ run, ...t }));
  await ctx.close();
}
await b.close();
srv.server.close();
