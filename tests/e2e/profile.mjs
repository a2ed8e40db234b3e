// CPU profiles of the page's thread for the benchmarks (not a test): `profiler(page, FILE)` gives
// `start()` and `stop()`; `stop()` writes the DevTools profile to FILE (open it in Chrome's
// DevTools) and prints the 25 functions with the most self time, every busy stretch (samples
// between idle ones) of 50 ms or more with the functions that ran longest in it, and the 40
// functions with the most inclusive time. With a wasm bound by `wasm-bindgen --keep-debug`
// (bench/prof_dist.sh) the wasm functions carry Rust's names.
import fs from 'node:fs';
import path from 'node:path';

export async function profiler(p, file) {
  const cdp = await p.context().newCDPSession(p);
  await cdp.send('Profiler.enable');
  await cdp.send('Profiler.setSamplingInterval', { interval: 250 });
  return {
    start: () => cdp.send('Profiler.start'),
    async stop() {
      const { profile } = await cdp.send('Profiler.stop');
      fs.writeFileSync(file, JSON.stringify(profile));
      summarize(profile);
    },
  };
}

function summarize(profile) {
  const self = new Map();
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const dt = profile.timeDeltas || [];
  profile.samples.forEach((id, k) => {
    const f = byId.get(id).callFrame;
    const key = `${f.functionName || '(anonymous)'} ${f.url ? path.basename(f.url) : ''}`;
    self.set(key, (self.get(key) || 0) + (dt[k + 1] ?? 0) / 1000);
  });
  const parent = new Map();
  for (const n of profile.nodes) for (const c of n.children || []) parent.set(c, n.id);
  const top = [...self].sort((a, b) => b[1] - a[1]).slice(0, 25);
  console.log('self time:');
  for (const [k, ms] of top) console.log(`${ms.toFixed(0).padStart(7)} ms  ${k}`);
  // Inclusive time: each function once per sample, however deep it recurses.
  const incl = new Map();
  profile.samples.forEach((id, k) => {
    const seen = new Set();
    for (let n = id; n !== undefined; n = parent.get(n)) {
      const name = byId.get(n).callFrame.functionName;
      if (!name || name.startsWith('(') || seen.has(name)) continue;
      seen.add(name);
      incl.set(name, (incl.get(name) || 0) + (dt[k + 1] ?? 0) / 1000);
    }
  });
  // Busy stretches (samples between idle ones) of 50 ms or more, each with the project's
  // functions that ran longest in it: which code a long task is.
  let run = [], t = 0;
  const stretches = [];
  profile.samples.forEach((id, k) => {
    const d = (dt[k + 1] ?? 0) / 1000;
    const name = byId.get(id).callFrame.functionName;
    if (name === '(idle)') { if (run.length) stretches.push([t, run]); run = []; }
    else { if (!run.length) t = 0; run.push([id, d]); t += d; }
  });
  if (run.length) stretches.push([t, run]);
  for (const [ms, samples] of stretches.filter(([ms]) => ms >= 50)) {
    const inc = new Map();
    for (const [id, d] of samples) {
      const seen = new Set();
      for (let n = id; n !== undefined; n = parent.get(n)) {
        const nm = byId.get(n).callFrame.functionName.replace(/::h[0-9a-f]{16}/, '');
        if (!nm || nm.startsWith('(') || /wasm_bindgen|js-to-wasm|wasm-to-js|^real$|Queue|Future|poll/.test(nm) || seen.has(nm)) continue;
        seen.add(nm);
        inc.set(nm, (inc.get(nm) || 0) + d);
      }
    }
    console.log(`busy ${ms.toFixed(0)} ms:`);
    for (const [k, v] of [...inc].sort((a, b) => b[1] - a[1]).slice(0, 12)) console.log(`  ${v.toFixed(0).padStart(6)} ms  ${k.slice(0, 160)}`);
  }
  console.log('inclusive time:');
  for (const [k, ms] of [...incl].sort((a, b) => b[1] - a[1]).slice(0, 40)) console.log(`${ms.toFixed(0).padStart(7)} ms  ${k}`);
  }

// `node tests/e2e/profile.mjs FILE.cpuprofile`: the same summary of a profile written before.
if (process.argv[1] && path.resolve(process.argv[1]) === path.resolve(new URL(import.meta.url).pathname)) {
  summarize(JSON.parse(fs.readFileSync(process.argv[2], 'utf8')));
}
