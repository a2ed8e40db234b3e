// node bench/wasm_snapshot.mjs MODULE.wasm FILE [RUNS]: the snapshot worker's two steps as bare
// wasm in Node's V8, RUNS times in one instance: the streamed decode alone, then decode + views
// (summary, charts, flame graphs and their sections). Each run's times; the first includes V8's
// tier-up and the memory the first decode grows the instance by (written the first time: slow).
// Built by `bash bench/wasm_parse.sh` (its simd module).
import fs from 'fs';
const [wasmPath, filePath, runs = '5'] = process.argv.slice(2);
const file = fs.readFileSync(filePath);
const { instance } = await WebAssembly.instantiate(fs.readFileSync(wasmPath), {});
const x = instance.exports;
const p = x.buffer(file.length);
new Uint8Array(x.memory.buffer, p, file.length).set(file);
const decode = [];
const views = [];
let grew = 0;
for (let r = 0; r < +runs; r++) {
  const before = x.memory.buffer.byteLength;
  let t = performance.now();
  if (!x.snapshot(p, file.length, 0)) throw new Error(`${filePath}: the reader failed`);
  if (r === 0) grew = x.memory.buffer.byteLength - before;
  const d = performance.now() - t;
  t = performance.now();
  if (!x.snapshot(p, file.length, 1)) throw new Error(`${filePath}: the views failed`);
  decode.push(Math.round(d));
  views.push(Math.round(performance.now() - t - d));
}
console.log(JSON.stringify({ file: filePath, mb: +(file.length / 1e6).toFixed(1), decode_ms: decode, views_ms_beyond_decode: views, first_decode_grew_mb: +(grew / 2 ** 20).toFixed(1) }));
