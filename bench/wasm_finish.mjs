// node bench/wasm_finish.mjs MODULE.wasm FILE [RUNS]: the model's finish alone (sort, nesting,
// flows, links) after a read with the args left in the file, as the page's merging worker runs
// it, RUNS times in one instance; prints each finish's time (the first in fresh memory and
// partly V8's baseline code). Build MODULE as bench/wasm_parse.sh does.
import fs from 'fs';
const [wasmPath, filePath, runs = '4'] = process.argv.slice(2);
const file = fs.readFileSync(filePath);
const { instance } = await WebAssembly.instantiate(fs.readFileSync(wasmPath), {});
const x = instance.exports;
const p = x.buffer(file.length);
new Uint8Array(x.memory.buffer, p, file.length).set(file);
const times = [];
for (let r = 0; r < +runs; r++) {
  if (!x.read_only(p, file.length, 2)) throw new Error(`${filePath}: the reader failed`);
  const t = performance.now();
  if (!x.finish_only()) throw new Error(`${filePath}: the finish failed`);
  times.push(Math.round(performance.now() - t));
}
const later = times.slice(1).sort((a, b) => a - b);
console.log(JSON.stringify({ module: wasmPath, file: filePath, first_ms: times[0], best_ms: later[0], runs: times }));
