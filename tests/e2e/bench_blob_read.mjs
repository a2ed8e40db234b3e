// What reading a picked file costs in the browser, without any parse (not a test: run by hand,
// numbers go to BENCHMARKS.md):
//   node tests/e2e/bench_blob_read.mjs bench-data/synth-1gb.pt.trace.json
// K workers each read their share of the File as the reader workers do (Blob.slice(a, b)
// .arrayBuffer(), the next read in flight while one is taken; or FileReaderSync, or the share's
// stream(), or its stream() read into one reused buffer, BYOB), and do nothing with the bytes.
// Prints MB/s per way, two rounds, and `cpu_s`: the machine's busy CPU seconds meanwhile, every
// process counted (from /proc/stat; null where there is none): what the read takes from the
// cores a parse would have. WAYS='[[K, MiB, "slice"|"sync"|"stream"|"byob"], ...]' picks ways.
// THREADS=1 also prints the threads that took that CPU (every process's, from /proc/*/task):
// whether the read's cost lies on one thread of the browser's process (a limit however many
// cores) or on threads that more cores would run side by side.
import fs from 'node:fs';
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
const ways0 = [[1, 4, 'slice'], [1, 16, 'slice'], [1, 64, 'slice'], [1, 4, 'sync'], [1, 16, 'sync'], [1, 0, 'stream'],
  [2, 4, 'slice'], [2, 64, 'slice'], [2, 0, 'stream']];
const ways = process.env.WAYS ? JSON.parse(process.env.WAYS) : ways0;
const busy = () => {
  try {
    const v = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0].split(/\s+/).slice(1).map(Number);
    return v[0] + v[1] + v[2] + v[5] + v[6];
  } catch {
    return null;
  }
};
// CPU ticks of every thread on the machine, by "process name/thread name".
const threads = () => {
  const out = new Map();
  for (const pid of fs.readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    let tasks = [];
    try { tasks = fs.readdirSync(`/proc/${pid}/task`); } catch { continue; }
    let proc = '?';
    try { proc = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').match(/--type=([a-z-]+)/)?.[1] || fs.readFileSync(`/proc/${pid}/comm`, 'utf8').trim(); } catch { continue; }
    for (const t of tasks) {
      try {
        const st = fs.readFileSync(`/proc/${pid}/task/${t}/stat`, 'utf8');
        const name = st.slice(st.indexOf('(') + 1, st.lastIndexOf(')'));
        const f = st.slice(st.lastIndexOf(')') + 2).split(' ');
        out.set(`${pid}/${t}`, { name: `${proc}/${name}`, ticks: Number(f[11]) + Number(f[12]) });
      } catch { /* gone */ }
    }
  }
  return out;
};
for (let round = 0; round < 2; round++) {
  for (const [k, piece, how] of ways) {
    const t0 = process.env.THREADS === '1' ? threads() : null;
    const c0 = busy();
    const ms = await p.evaluate(async ([k, piece, how]) => {
      const file = document.getElementById('probe').files[0];
      const src = `onmessage = async (e) => {
        const { file, a, b, piece, how } = e.data;
        let sum = 0;
        if (how === 'byob') {
          const r = file.slice(a, b).stream().getReader({ mode: 'byob' });
          let buf = new ArrayBuffer(piece << 20);
          for (;;) {
            const { done, value } = await r.read(new Uint8Array(buf));
            if (done) break;
            sum += value[0];
            buf = value.buffer;
          }
          postMessage(sum);
          return;
        }
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
        // Let go after the threads' CPU is read (a thread that ended is not counted).
        w.onmessage = () => { (self.done ||= []).push(w); r(); };
        w.postMessage({ file, a: Math.floor((file.size * i) / k), b: Math.floor((file.size * (i + 1)) / k), piece, how });
      })));
      return performance.now() - t;
    }, [k, piece, how]);
    const c1 = busy();
    const cpu_s = c0 === null || c1 === null ? null : (c1 - c0) / 100;
    const what = how === 'byob' ? `stream() BYOB, ${piece} MiB buffer` : how === 'stream' ? 'stream()' : how === 'sync' ? `FileReaderSync, ${piece} MiB reads` : `slice().arrayBuffer(), ${piece} MiB reads`;
    let top;
    if (t0) {
      const t1 = threads();
      // Summed by name over the threads of a kind (a thread born meanwhile counts from 0).
      const by = new Map();
      for (const [id, { name, ticks }] of t1) {
        const d = (ticks - (t0.get(id)?.ticks || 0)) / 100;
        by.set(name, (by.get(name) || 0) + d);
      }
      top = [...by].filter(([, v]) => v >= 0.05).map(([n, v]) => [n, +v.toFixed(2)])
        .sort((a, b) => b[1] - a[1]).slice(0, 12);
    }
    await p.evaluate(() => { for (const w of self.done || []) w.terminate(); self.done = []; });
    console.log(JSON.stringify({ round, workers: k, how: what, ms: Math.round(ms), mb_s: Math.round((mb / ms) * 1000), cpu_s, threads: top }));
  }
}
await b.close();
srv.server.close();
