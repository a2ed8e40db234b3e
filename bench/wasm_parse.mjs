// node bench/wasm_parse.mjs MODULE.wasm FILE [RUNS] [finish]: parses FILE RUNS times in one
// instance and prints each run's time (the first includes V8's tier-up from its baseline code).
// ARGS_IN_FILE=1 leaves a slice's display-only args in the file, as the page's reader workers do.
// FINISH_ALONE=1 times the model's finish alone (sort, nesting, flows, links) after each read,
// the args left in the file, as the page's merging worker runs it (the first in fresh memory).
// MERGE_ALONE=1 times the merging worker's serial part the same way (see below).
import fs from 'fs';
const [wasmPath, filePath, runs = '6', finish = '0'] = process.argv.slice(2);
const file = fs.readFileSync(filePath);
const { instance } = await WebAssembly.instantiate(fs.readFileSync(wasmPath), {});
const x = instance.exports;
const p = x.buffer(file.length);
new Uint8Array(x.memory.buffer, p, file.length).set(file);
const times = [];
// MERGE_ALONE=1: the file read as MERGE_K shards (2 by default) with args left in the file, then
// the others' sections merged into the first in order, timed (what worker 0 does once the last
// shard is parsed); with MERGE_FINISH=1 the model's finish too.
if (process.env.MERGE_ALONE === '1') {
  const k = +(process.env.MERGE_K || 2);
  const fin = process.env.MERGE_FINISH === '1' ? 1 : 0;
  for (let r = 0; r < +runs; r++) {
    if (!x.split_only(p, file.length, k)) throw new Error(`${filePath}: the reader failed`);
    const t = performance.now();
    if (!x.merge_only(fin)) throw new Error(`${filePath}: the merge failed`);
    times.push(Math.round(performance.now() - t));
  }
  const later = times.slice(1).sort((a, b) => a - b);
  console.log(JSON.stringify({ module: wasmPath, file: filePath, k, finish: fin === 1, merge_first_ms: times[0], merge_best_ms: later[0], runs: times }));
  process.exit(0);
}
if (process.env.FINISH_ALONE === '1') {
  for (let r = 0; r < +runs; r++) {
    if (!x.read_only(p, file.length, 2)) throw new Error(`${filePath}: the reader failed`);
    const t = performance.now();
    if (!x.finish_only()) throw new Error(`${filePath}: the finish failed`);
    times.push(Math.round(performance.now() - t));
  }
  const later = times.slice(1).sort((a, b) => a - b);
  console.log(JSON.stringify({ module: wasmPath, file: filePath, finish_first_ms: times[0], finish_best_ms: later[0], runs: times }));
  process.exit(0);
}
for (let r = 0; r < +runs; r++) {
  const t = performance.now();
  const n = x.parse(p, file.length, +finish | (process.env.ARGS_IN_FILE === '1' ? 2 : 0));
  times.push((performance.now() - t) / 1000);
  if (n === 0n || n === 0) throw new Error(`${filePath}: the reader failed`);
}
const later = times.slice(1).sort((a, b) => a - b);
console.log(JSON.stringify({
  module: wasmPath, file: filePath, args_in_file: process.env.ARGS_IN_FILE === '1', mb: +(file.length / 1e6).toFixed(1),
  first_s: +times[0].toFixed(3), best_s: +later[0].toFixed(3),
  best_mb_s: Math.round(file.length / 1e6 / later[0]), runs: times.map((t) => +t.toFixed(3)),
}));
