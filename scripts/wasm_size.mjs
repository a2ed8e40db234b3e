#!/usr/bin/env node
// What weighs in the wasm: sums the code section's function bodies by crate (names from the name
// section of the module cargo writes, before wasm-bindgen and wasm-opt strip it) and lists the
// biggest functions. Numbers go to BENCHMARKS.md (bundle size).
//
//   node scripts/wasm_size.mjs target/wasm32-unknown-unknown/wasm-release/tracelight-web.wasm [TOP]
import fs from 'node:fs';
const buf = fs.readFileSync(process.argv[2]);
let p = 8;
const u32 = () => { let r = 0, s = 0, b; do { b = buf[p++]; r |= (b & 0x7f) << s; s += 7; } while (b & 0x80); return r >>> 0; };
let imports = 0, bodies = [], names = new Map(), dataSize = 0;
const secs = {};
while (p < buf.length) {
  const id = buf[p++]; const size = u32(); const start = p; const end = p + size;
  secs[id] = (secs[id] || 0) + size;
  if (id === 2) { const n = u32(); for (let i = 0; i < n; i++) { let l = u32(); p += l; l = u32(); p += l; const kind = buf[p++]; if (kind === 0) { imports++; u32(); } else if (kind === 1) { p++; const f = u32(); u32(); if (f & 1) u32(); } else if (kind === 2) { const f = u32(); u32(); if (f & 1) u32(); } else if (kind === 3) { p += 2; } } }
  if (id === 10) { const n = u32(); for (let i = 0; i < n; i++) { const l = u32(); bodies.push(l); p += l; } }
  if (id === 11) dataSize += size;
  if (id === 0) { const nl = u32(); const nm = buf.slice(p, p + nl).toString(); p += nl;
    if (nm === 'name') { while (p < end) { const sid = buf[p++]; const ss = u32(); const se = p + ss; if (sid === 1) { const n = u32(); for (let i = 0; i < n; i++) { const idx = u32(); const l = u32(); names.set(idx, buf.slice(p, p + l).toString()); p += l; } } p = se; } } }
  p = end;
}
const byCrate = new Map(); const top = [];
bodies.forEach((sz, i) => {
  const name = names.get(i + imports) || `f${i}`;
  let crate = 'other';
  const m = /^_ZN(\d+)(.*)$/.exec(name);
  if (m) { crate = m[2].slice(0, Number(m[1])); if (crate.startsWith('_$LT$')) { const mm = /_\$LT\$([a-z_0-9]+)/.exec(crate); crate = '<' + (mm ? mm[1] : '?'); } }
  else if (/^<?([a-z_0-9]+)::/.test(name)) crate = /^<?([a-z_0-9]+)::/.exec(name)[1];
  byCrate.set(crate, (byCrate.get(crate) || 0) + sz);
  top.push([sz, name]);
});
console.log('sections', secs, 'data', dataSize, 'code', bodies.reduce((a, b) => a + b, 0));
console.log([...byCrate].sort((a, b) => b[1] - a[1]).slice(0, 30).map(([c, s]) => `${s}\t${c}`).join('\n'));
if (process.argv[3]) console.log(top.sort((a, b) => b[0] - a[0]).slice(0, Number(process.argv[3])).map(([s, n]) => `${s}\t${n.slice(0, 150)}`).join('\n'));
