// The page's sharded reader, its own code, on K cores without a browser:
//
//   node bench/node_shards.mjs MODULE.wasm FILE "K1 K2 ..." [ROUNDS]
//
// Runs `crates/web/js/shards.js` as it is (the `ShardPool` class and the `WORKER` text the page
// starts its workers from) over Node's worker_threads, each worker with its own instance of the
// page's wasm module (`dist/*_bg.wasm`), so the figures can be read where no browser runs (the
// device machine's 16 cores). A thin shim stands in for what only a browser has: `Worker` (a
// worker thread that evaluates the same text), and the `File` the workers slice (a file handle
// read at offsets on libuv's pool, as a browser reads a Blob's slices off the worker's thread).
//
// What it leaves out, so that its figures are not the page's: the page's own thread, which decodes
// the model's sections as they come (here each section is taken and credited at once), the
// preview, and the browser's messaging costs. Each line is one load: file handed over -> worker 0's
// model finished (`model_s`), -> its last section out (`sections_s`, the page's "model ready"
// less the page's decode), and -> the analyses' sections out (`analysed_s`); `scan_s` is when the
// last worker finished its own shard, and MB/s is the file's MB over `sections_s`.
import fs from 'node:fs';
import { Worker as NodeWorker } from 'node:worker_threads';

const [wasmPath, filePath, ks = '1 2', rounds = '2'] = process.argv.slice(2);
if (!wasmPath || !filePath) {
  console.error('usage: node bench/node_shards.mjs MODULE.wasm FILE "K1 K2 ..." [ROUNDS]');
  process.exit(2);
}
// SHARDS=FILE reads another copy of shards.js (an older build's, to compare).
const src = fs.readFileSync(process.env.SHARDS || new URL('../crates/web/js/shards.js', import.meta.url), 'utf8');
const found = src.match(/const WORKER = `([\s\S]*?)`;/);
if (!found) throw new Error('shards.js: no WORKER text found');

// Run before the worker's own text: `self`, `postMessage` and `close` as a worker has them, and a
// file that reads its slices from the path the page side sent.
const PRELUDE = `
const { parentPort } = require('node:worker_threads');
const fsp = require('node:fs/promises');
globalThis.self = globalThis;
globalThis.postMessage = (m, t) => parentPort.postMessage(m, t);
globalThis.close = () => setTimeout(() => process.exit(0), 50);
class FileAt {
  constructor(d) { this.size = d.size; this.name = d.name; this.fh = fsp.open(d.path, 'r'); }
  slice(a, b) {
    const f = this;
    return { arrayBuffer: async () => {
      const fh = await f.fh;
      const buf = new Uint8Array(b - a);
      for (let off = 0; off < buf.length; ) {
        const { bytesRead } = await fh.read(buf, off, buf.length - off, a + off);
        if (!bytesRead) break;
        off += bytesRead;
      }
      return buf.buffer;
    } };
  }
}
// PROFILE=1: each worker sums the time spent in each wasm export and posts the sums with its
// 'model' or 'shard' message (as 'exports').
if (process.env.PROFILE === '1') {
  const instantiate = WebAssembly.instantiate;
  WebAssembly.instantiate = async (...args) => {
    const inst = await instantiate(...args);
    const spent = {};
    const exports = {};
    for (const [k, v] of Object.entries(inst.exports)) {
      exports[k] = typeof v !== 'function' ? v : (...a) => {
        const t = performance.now();
        try { return v(...a); } finally { spent[k] = (spent[k] || 0) + performance.now() - t; }
      };
    }
    Object.defineProperty(exports, 'memory', { get: () => inst.exports.memory });
    const post = globalThis.postMessage;
    globalThis.postMessage = (m, t) => {
      if (m && (m.kind === 'model' || m.kind === 'shard' || m.kind === 'done')) {
        const ms = {};
        for (const [k, v] of Object.entries(spent)) if (v >= 1) ms[k] = Math.round(v);
        m.exports = ms;
      }
      post(m, t);
    };
    return { exports };
  };
}
parentPort.on('message', (m) => {
  if (m && m.file && m.file.path) m.file = new FileAt(m.file);
  self.onmessage({ data: m });
});
`;

// When each worker's messages came, for the phases.
let marks = null;
class ShimWorker {
  constructor() {
    this.w = new NodeWorker(PRELUDE + found[1], { eval: true });
    this.w.on('message', (data) => {
      if (marks && data && (data.kind === 'parsed' || data.kind === 'model')) {
        marks[data.kind] = performance.now();
      }
      if (data && data.exports) console.error(JSON.stringify({ kind: data.kind, k: data.k, exports: data.exports }));
      if (this.onmessage) this.onmessage({ data });
    });
    this.w.on('error', (e) => {
      if (this.onerror) this.onerror({ message: String((e && e.message) || e), preventDefault() {} });
    });
  }
  postMessage(m, transfer) {
    this.w.postMessage(m, transfer);
  }
  terminate() {
    this.w.terminate();
  }
}
globalThis.Worker = ShimWorker;
// Imported from its text (as a data: URL), which Node would otherwise re-parse as CommonJS first.
const { ShardPool } = await import(`data:text/javascript,${encodeURIComponent(src)}`);

const module = await WebAssembly.compile(fs.readFileSync(wasmPath));
const size = fs.statSync(filePath).size;
const name = filePath.split('/').pop();
const mb = size / 1e6;

async function load(k) {
  marks = {};
  const t0 = performance.now();
  const pool = new ShardPool(module, { path: filePath, size, name }, k, name, 'trace', 0);
  const out = { k, mb: +mb.toFixed(1) };
  let sectionBytes = 0;
  for (;;) {
    const m = await pool.next();
    const t = (performance.now() - t0) / 1000;
    if (m.kind === 'model') {
      out.model_s = +t.toFixed(3);
      pool.credit();
    } else if (m.kind === 'section') {
      sectionBytes += m.bytes.length;
      pool.credit();
    } else if (m.kind === 'done') {
      out.sections_s = +t.toFixed(3);
      out.section_mb = +(sectionBytes / 1e6).toFixed(1);
      // MODEL_ONLY=1: stop at the model (the analyses are not waited for).
      if (process.env.MODEL_ONLY === '1') break;
    } else if (m.kind === 'analysis') {
      if (m.sections <= 0) break;
      out.analysis_sections = m.sections;
      pool.credit();
      m.left = m.sections;
    } else if (m.kind === 'asection') {
      pool.credit();
      if (++out.asections >= out.analysis_sections) {
        out.analysed_s = +t.toFixed(3);
        break;
      }
    } else if (m.kind === 'error' || m.kind === 'failed') {
      throw new Error(`${filePath}: ${m.message || 'the load failed'}`);
    }
    if (m.kind === 'analysis') out.asections = 0;
  }
  out.scan_s = +((marks.parsed - t0) / 1000).toFixed(3);
  out.mb_s = Math.round(mb / out.sections_s);
  pool.close();
  return out;
}

for (let r = 1; r <= +rounds; r++) {
  for (const k of ks.split(/\s+/).filter(Boolean).map(Number)) {
    console.log(JSON.stringify({ round: r, ...(await load(k)) }));
  }
}
process.exit(0);
