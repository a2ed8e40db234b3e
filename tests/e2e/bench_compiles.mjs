// Which wasm functions V8 compiles in its top tier before and during a first load (not a test):
//   bash bench/prof_dist.sh && DEBUG=pw:browser DIST=dist-prof [IDLE_MS=3000] \
//     node tests/e2e/bench_compiles.mjs FILE > /tmp/c.out 2>&1 && python3 bench/wasm_compiles.py 'dist-prof/*_bg.wasm' /tmp/c.out
// Chromium runs with --trace-wasm-compilation-times; Playwright's browser log (DEBUG=pw:browser)
// carries V8's lines, `=== PICK` and `=== DONE` mark the load.
import { serve } from './harness.mjs';
import { chromium } from 'playwright-core';
const f = process.argv[2];
const srv = await serve();
const b = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--js-flags=--trace-wasm-compilation-times'], });
const p = await b.newPage();
await p.goto(`${srv.base}/?${process.env.Q || ''}`);
await p.getByTestId('empty').waitFor();
await p.waitForTimeout(Number(process.env.IDLE_MS || 3000));
console.error('=== PICK');
await p.getByTestId('file-input').setInputFiles(f);
await p.waitForFunction(() => { const s = document.querySelector('[data-testid=load-stats]'); return s && !document.querySelector('[data-testid=preview-banner]'); }, null, { timeout: 600000, polling: 100 });
await p.waitForTimeout(1500);
console.error('=== DONE');
await b.close();
srv.server.close();
