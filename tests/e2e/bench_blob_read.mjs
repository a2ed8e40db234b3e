// What reading a picked file costs in the browser, without any parse (not a test: run by hand,
// numbers go to BENCHMARKS.md):
//   node tests/e2e/bench_blob_read.mjs bench-data/synth-1gb.pt.trace.json
// K workers each read their share of the File as the reader workers do (Blob.slice(a, b)
// .arrayBuffer(), the next read in flight while one is taken; or FileReaderSync, or the share's
// stream()), and do nothing with the bytes. Prints MB/s per way, two rounds.
import { serve, browser } from './harness.mjs';

const f = process.argv[2];
const srv = await serve();
const b = await browser();
const p = await b.newPage();
await p.goto(`${srv.base}/`);
await p.evaluate(() => {
  const i = document.createElement('input');
  i.type = 'file';
  i.id = 'probe';
  document.body.appendChild(i);
});
await p.locator('#probe').setInputFiles(f);
const mb = (await p.evaluate(() => document.getElementById('probe').files[0].size)) / 1e6;
const ways = [[1, 4, 'slice'], [1, 16, 'slice'], [1, 64, 'slice'], [1, 4, 'sync'], [1, 16, 'sync'], [1, 0, 'stream'],
  [2, 4, 'slice'], [2, 64, 'slice'], [2, 0, 'stream']];
for (let round = 0; round < 2; round++) {
  for (const [k, piece, how] of ways) {
    const ms = await p.evaluate(async ([k, piece, how]) => {
      const file = document.getElementById('probe').files[0];
      const src = `onmessage = async (e) => {
        const { file, a, b, piece, how } = e.data;
        let sum = 0;
        if (how === 'stream') {
          const r = file.slice(a, b).stream().getReader();
          for (;;) { const { done, value } = await r.read(); if (done) break; sum += value[0]; }
          postMessage(sum);
          return;
        }
        const frs = how === 'sync' ? new FileReaderSync() : null;
        const rd = (x, y) => (frs ? frs.readAsArrayBuffer(file.slice(x, y)) : file.slice(x, y).arrayBuffer());
        const P = piece << 20;
        let next = rd(a, Math.min(b, a + P));
        for (let at = a; at < b; ) {
          const buf = await next;
          const to = at + buf.byteLength;
          next = to < b ? rd(to, Math.min(b, to + P)) : null;
          sum += new Uint8Array(buf)[0];
          at = to;
        }
        postMessage(sum);
      }`;
      const url = URL.createObjectURL(new Blob([src], { type: 'text/javascript' }));
      const t = performance.now();
      await Promise.all([...Array(k)].map((_, i) => new Promise((r) => {
        const w = new Worker(url);
        w.onmessage = () => { w.terminate(); r(); };
        w.postMessage({ file, a: Math.floor((file.size * i) / k), b: Math.floor((file.size * (i + 1)) / k), piece, how });
      })));
      return performance.now() - t;
    }, [k, piece, how]);
    const what = how === 'stream' ? 'stream()' : how === 'sync' ? `FileReaderSync, ${piece} MiB reads` : `slice().arrayBuffer(), ${piece} MiB reads`;
    console.log(JSON.stringify({ round, workers: k, how: what, ms: Math.round(ms), mb_s: Math.round((mb / ms) * 1000) }));
  }
}
await b.close();
srv.server.close();
