// Shared e2e plumbing: a static server for dist/, Chromium from Debian via playwright-core (never a
// downloaded browser), and the CLI's answer for a file, so tests compare the page with the CLI.
import assert from 'node:assert/strict';
import http from 'node:http';
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const CORPUS = path.resolve(ROOT, process.env.TRACELIGHT_CORPUS || '../shared/corpus');
export const DIST = path.resolve(ROOT, process.env.DIST || 'dist');
export const SHOTS = path.join(ROOT, 'target', 'e2e');
export const BENCH = path.join(ROOT, 'bench-data');

/** Set (to anything but empty, 0 or false) in CI: a missing corpus file fails instead of skipping. */
export const REQUIRE_CORPUS = ['TRACELIGHT_REQUIRE_CORPUS', 'CI'].some((k) => {
  const v = process.env[k];
  return !!v && v !== '0' && v !== 'false';
});

/**
 * The `skip` option of a test that reads corpus files: false when they all exist; else the reason,
 * naming the first missing file — or, where the corpus is required (CI), an error naming it, so the
 * run fails instead of passing without the reference checks.
 */
export function corpusSkip(...files) {
  const missing = files.find((f) => !fs.existsSync(f));
  if (!missing) return false;
  if (REQUIRE_CORPUS) throw new Error(`corpus file ${missing} is missing (TRACELIGHT_REQUIRE_CORPUS/CI is set)`);
  return `corpus absent: ${missing}`;
}

const TYPES = { '.html': 'text/html', '.js': 'text/javascript', '.wasm': 'application/wasm', '.css': 'text/css', '.gz': 'application/gzip', '.json': 'application/json' };

/** Serves dist/ (and, under /corpus/, the shared corpus) on an ephemeral loopback port. */
export async function serve() {
  const server = http.createServer((req, res) => {
    const url = new URL(req.url, 'http://x');
    let file;
    if (url.pathname.startsWith('/corpus/')) file = path.join(CORPUS, decodeURIComponent(url.pathname.slice(8)));
    else if (url.pathname.startsWith('/bench-data/')) file = path.join(BENCH, decodeURIComponent(url.pathname.slice(12)));
    else file = path.join(DIST, decodeURIComponent(url.pathname === '/' ? '/index.html' : url.pathname));
    if (!file.startsWith(DIST) && !file.startsWith(CORPUS) && !file.startsWith(BENCH)) { res.writeHead(403).end(); return; }
    fs.stat(file, (err, st) => {
      if (err || !st.isFile()) { res.writeHead(404).end('not found'); return; }
      res.writeHead(200, { 'content-type': TYPES[path.extname(file)] || 'application/octet-stream', 'content-length': st.size });
      fs.createReadStream(file).pipe(res);
    });
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  return { server, base: `http://127.0.0.1:${server.address().port}` };
}

export async function browser() {
  return chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}

/** `tracelight analyze FILE --json`, parsed. */
export function cli(file) {
  const bin = path.join(ROOT, 'target', 'release', 'tracelight');
  return JSON.parse(execFileSync(bin, ['analyze', file, '--json'], { maxBuffer: 256 << 20 }).toString());
}

/** A page that fails the test on any console error or uncaught exception. */
export async function page(b, errors) {
  const p = await b.newPage({ viewport: { width: 1400, height: 900 } });
  p.on('pageerror', (e) => errors.push(String(e)));
  p.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  // The reader worker is started from a blob: URL of the page's own text: in memory, not a request.
  p.on('request', (r) => { if (!/^(blob:)?http:\/\/127\.0\.0\.1[:/]/.test(r.url())) errors.push(`unexpected request ${r.url()}`); });
  return p;
}

export function shot(name) {
  fs.mkdirSync(SHOTS, { recursive: true });
  return path.join(SHOTS, name);
}

/** A duration as the page prints it ("12.345 ms") checked against the CLI's `us`, to the shown
 *  rounding (half a unit in the last digit, + 1 ns). */
export function assertDur(text, us, what) {
  const m = text.trim().match(/^(-?[\d.]+) (ns|µs|ms|s)$/);
  assert.ok(m, `${what}: a duration, got ${JSON.stringify(text)}`);
  const unit = { ns: 1, 'µs': 1e3, ms: 1e6, s: 1e9 }[m[2]];
  const tol = 0.5 * unit * 10 ** -((m[1].split('.')[1] || '').length) + 1;
  assert.ok(Math.abs(Number(m[1]) * unit - us * 1e3) <= tol, `${what}: page ${text} vs CLI ${us} µs`);
}

/** The text of one cell of a virtual table (`data-testid`, row index, column key). */
export const cellText = (p, table, row, col) => p.locator(`[data-testid=${table}] .vt-row[data-row="${row}"] [data-col=${col}]`).textContent();

/** Whether an element lies wholly inside the page's viewport now (not merely in the DOM). */
export async function inViewport(loc) {
  const box = await loc.boundingBox();
  const vp = loc.page().viewportSize();
  return !!box && box.width > 0 && box.height > 0 && box.y >= 0 && box.x >= 0 && box.y + box.height <= vp.height && box.x + box.width <= vp.width;
}

const PREFIX = { '': 1, k: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15, E: 1e18 };

/** A share or rate as the page prints it — "0.053%", "37.2%", "22.6 GFLOPS", "345 GFLOP" —
 *  checked against `value` (a fraction for `%`, FLOP or FLOP/s otherwise): at most three
 *  significant figures unless the integer part has more, a unit prefix that leaves 1–3 integer
 *  digits, and equal to `value` to the shown rounding. */
export function assertSig3(text, value, what) {
  const m = text.trim().match(/^([−-]?)([\d.]+)(%| ([kMGTPE]?)(FLOPS|FLOP))$/);
  assert.ok(m, `${what}: a share or a FLOP figure, got ${JSON.stringify(text)}`);
  const [, sign, digits, unitAll, prefix = '', unit] = m;
  const [int, frac = ''] = digits.split('.');
  const sig = (int.replace(/^0+/, '') + frac).replace(/^0+/, '').length;
  assert.ok(sig <= 3 || frac === '', `${what}: ${text} has more than 3 significant figures`);
  const scale = unitAll === '%' ? 0.01 : PREFIX[prefix];
  if (unitAll !== '%' && value !== 0) assert.ok(Number(int) >= 1 && int.length <= 3 || Math.abs(value) < 1, `${what}: ${text} is not in the unit that fits`);
  const shown = (sign ? -1 : 1) * Number(digits) * scale;
  const half = 0.5 * scale * 10 ** -frac.length;
  assert.ok(Math.abs(shown - value) <= half * 1.0001 + 1e-12 * Math.abs(value), `${what}: page ${text} vs ${value}${unit ? ' ' + unit : ''}`);
}
