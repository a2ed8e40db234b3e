// Tab ceiling benchmark (not a test: run by hand, numbers go to BENCHMARKS.md "Too big for the tab").
//
//   cargo build --release -p tracelight-synth
//   target/release/tracelight-synth bench-data/synth-5000mb.pt.trace.json --target-mb 4769
//   node tests/e2e/bench_ceiling.mjs bench-data/synth-5000mb.pt.trace.json [more files…]
//
// Picks each file in a fresh headless Chromium page (as a user would, after the app is up) and waits
// for either the trace to open (its event count on screen, then the timeline painted) or an error.
// Prints one JSON line per file: size, outcome, seconds, events, wasm memory after the load, the
// error text, and the renderer's peak RSS (the largest chromium process, sampled every second).
// Screenshots go to target/e2e/ceiling-<name>.png.
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { serve, browser, shot } from './harness.mjs';

/** The largest resident set of any chromium process now, in MB. */
function chromiumRssMb() {
  try {
    const out = execFileSync('ps', ['-C', 'chromium', '-o', 'rss='], { encoding: 'utf8' });
    return Math.max(0, ...out.split('\n').filter(Boolean).map((k) => Number(k) / 1024));
  } catch {
    return 0;
  }
}

const srv = await serve();
const b = await browser();
for (const f of process.argv.slice(2)) {
  const size = fs.statSync(f).size;
  const p = await b.newPage({ viewport: { width: 1400, height: 900 } });
  const crashed = new Promise((r) => p.on('crash', () => r('crash')));
  await p.goto(`${srv.base}/`);
  await p.getByTestId('empty').waitFor();
  await p.waitForTimeout(500);
  let peak = chromiumRssMb();
  const sampler = setInterval(() => { peak = Math.max(peak, chromiumRssMb()); }, 1000);
  const t0 = Date.now();
  await p.getByTestId('file-input').setInputFiles(f);
  const outcome = await Promise.race([
    crashed,
    // The whole trace's figures (a preview of its head shows its own, under the preview's banner).
    p.waitForFunction(() => document.querySelector('[data-testid=load-stats]') && !document.querySelector('[data-testid=preview-banner]'), null, { timeout: 900_000, polling: 200 }).then(() => 'opened'),
    p.getByTestId('error').waitFor({ timeout: 900_000 }).then(() => 'refused'),
  ]);
  const secs = (Date.now() - t0) / 1000;
  const r = { file: path.basename(f), size_gb: +(size / 1e9).toFixed(3), outcome, secs: +secs.toFixed(1) };
  if (outcome === 'opened') {
    r.events = Number(await p.getByTestId('event-count').textContent());
    const wasm = Number(await p.getByTestId('load-stats').getAttribute('data-wasm-bytes'));
    r.wasm_mb = Math.round(wasm / 1e6);
    r.wasm_vs_file = +(wasm / size).toFixed(2);
    await p.getByTestId('tab-timeline').click();
    await p.waitForFunction(() => Number(document.querySelector('[data-testid=timeline]')?.getAttribute('data-rects')) > 0, null, { timeout: 300_000 });
    r.timeline_secs = +((Date.now() - t0) / 1000 - secs).toFixed(1);
  } else if (outcome === 'refused') {
    r.error = await p.getByTestId('error').textContent();
  }
  // The merging worker's wasm memory, where workers read the file (its peak so far).
  r.worker_wasm_mb = Math.round(Number(await p.evaluate(() => document.documentElement.dataset.workerWasmBytes || 0)) / 1e6);
  clearInterval(sampler);
  r.chromium_peak_rss_mb = Math.round(peak);
  if (outcome !== 'crash') await p.screenshot({ path: shot(`ceiling-${path.basename(f)}.png`) });
  console.log(JSON.stringify(r));
  await p.close().catch(() => {});
}
await b.close();
srv.server.close();
