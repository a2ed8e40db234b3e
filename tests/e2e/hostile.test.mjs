// Hostile and broken input in the page (issue 16): bad files from scripts/gen_bad_inputs.py are
// dropped one after another onto a page with the demo open (each gets its message naming it, the
// session keeps the CLI's event count and operator rows); names, args and frames that look like HTML
// or javascript: URLs stay text (nothing runs, nothing is requested); the Content-Security-Policy
// raises no violation in normal use and narrows connect-src to this origin plus the ?url= and
// ?compare= ones; a sparse 10.7 GB file is refused as too big for the tab. The release CLI reads the
// two large inputs (a 2 GiB gzip bomb, 10⁶ events at one timestamp) in bounded time.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import os from 'node:os';
import crypto from 'node:crypto';
import { execFileSync, spawnSync } from 'node:child_process';
import { serve, browser, page, shot, cli, ROOT, DIST } from './harness.mjs';

const BAD = path.join(ROOT, 'crates/core/tests/fixtures/bad');
const BIN = path.join(ROOT, 'target/release/tracelight');
const GPU = path.join(ROOT, 'crates/core/tests/fixtures/torch-2.11-cuda13-h100');
const DEMO = path.join(ROOT, 'web/demo/demo.pt.trace.json.gz');
const LARGE = fs.mkdtempSync(path.join(os.tmpdir(), 'tl-hostile-'));

let srv, b;
before(async () => {
  srv = await serve();
  b = await browser();
  execFileSync('python3', [path.join(ROOT, 'scripts/gen_bad_inputs.py'), '--out', path.join(LARGE, 'small'), '--large', LARGE]);
});
after(async () => { await b?.close(); srv?.server.close(); fs.rmSync(LARGE, { recursive: true, force: true }); });

/** A page that also records CSP violations (they are console errors too, but say more). */
async function cspPage(errors) {
  const p = await page(b, errors);
  await p.addInitScript(() => {
    window.__csp = [];
    document.addEventListener('securitypolicyviolation', (e) => window.__csp.push(`${e.violatedDirective} ${e.blockedURI}`));
  });
  p.on('dialog', (d) => { errors.push(`dialog: ${d.message()}`); d.dismiss(); });
  return p;
}

/** Drops files onto the page the way a user does (a DragEvent carrying Files). */
async function drop(p, files) {
  const list = [files].flat().map((f) => ({ name: path.basename(f), bytes: fs.readFileSync(f).toString('base64') }));
  await p.evaluate((list) => {
    const dt = new DataTransfer();
    for (const { name, bytes } of list) dt.items.add(new File([Uint8Array.from(atob(bytes), (c) => c.charCodeAt(0))], name));
    const main = document.querySelector('main');
    main.dispatchEvent(new DragEvent('dragover', { bubbles: true, cancelable: true, dataTransfer: dt }));
    main.dispatchEvent(new DragEvent('drop', { bubbles: true, cancelable: true, dataTransfer: dt }));
  }, list);
}

async function openDemo(p) {
  await p.goto(srv.base + '/');
  await p.getByTestId('demo').click();
  await p.getByTestId('event-count').waitFor({ timeout: 60_000 });
}

/** What the CLI says of a file: its event count and operator-table rows (the page must agree). */
function expect(file) {
  const c = cli(file);
  return { events: String(c.files[0].events), ops: c.ops.length };
}

/** The open session answers: the event count and operator rows the CLI gives, rows on screen. */
async function usable(p, want, what) {
  assert.equal(await p.getByTestId('event-count').textContent(), want.events, `${what}: events`);
  await p.getByTestId('tab-operators').click();
  await p.getByTestId('op-table').waitFor();
  assert.equal(Number(await p.getByTestId('op-table').getAttribute('data-rows')), want.ops, `${what}: operator rows`);
  if (want.ops > 0) await p.waitForFunction(() => document.querySelectorAll('[data-testid=op-table] .vt-row').length > 0);
  await p.getByTestId('tab-overview').click();
}

/** Visits every tab the page offers and waits for it to render. */
async function everyTab(p, seen) {
  const tabs = await p.locator('[data-testid^=tab-]').evaluateAll((els) => els.map((e) => e.dataset.testid));
  for (const t of tabs) {
    await p.getByTestId(t).click();
    await p.waitForFunction((id) => document.querySelector(`[data-testid=${id}]`)?.getAttribute('aria-selected') === 'true', t);
    await p.waitForTimeout(250);
    seen.push(t);
  }
  return tabs;
}

// What each dropped file must say (the error names the file first).
const REFUSED = [
  ['empty.json', /empty\.json: .*the file is empty/],
  ['png_renamed.json', /png_renamed\.json: .*PNG image/],
  ['whitespace_only.json', /whitespace_only\.json: .*all whitespace/],
  ['pickle_global_os_system.pickle', /pickle_global_os_system\.pickle: refused: pickle opcode GLOBAL/],
  ['pickle_frame_2p62.pickle', /pickle_frame_2p62\.pickle: limit exceeded: declared length 4611686018427387904/],
  ['memory_timeline_length_mismatch.json', /memory_timeline_length_mismatch\.json: .*3 times but 1 size rows/],
  ['trace_events_not_array.json', /trace_events_not_array\.json: .*`traceEvents` is not an array/],
];
// Loaded, with a warning that says what was repaired.
const WARNED = [
  ['bad_ts_dur.json', /ts or dur not a usable time/],
  ['invalid_utf8_names.json', /not UTF-8/],
  ['dur_overflow.json', /ts or dur not a usable time/],
  ['duplicate_keys.json', /key given twice/],
  // Loaded as they are (nothing to repair).
  ['deep_args_1e5.json.gz', null],
  ['name_1e6_chars.json.gz', null],
  ['flow_cycle.json', null],
];

test('bad files dropped one after another each get their message; the open session stays usable', async () => {
  const errors = [];
  const p = await cspPage(errors);
  await openDemo(p);
  const demo = expect(DEMO);
  await usable(p, demo, 'demo');
  const seen = [];
  for (const [name, says] of REFUSED) {
    await p.evaluate(() => document.querySelector('[data-testid=error] button')?.click());
    await p.getByTestId('error').waitFor({ state: 'detached' });
    await drop(p, path.join(BAD, name));
    await p.getByTestId('error').waitFor({ timeout: 60_000 });
    const msg = await p.getByTestId('error').textContent();
    assert.match(msg, says, name);
    seen.push(`${name}: ${msg}`);
    await usable(p, demo, `demo after ${name}`);
  }
  // The 2 GiB gzip bomb (2 MB on disk): refused after 16 MiB of blanks, in seconds.
  await p.evaluate(() => document.querySelector('[data-testid=error] button')?.click());
  await p.getByTestId('error').waitFor({ state: 'detached' });
  const t0 = Date.now();
  await drop(p, path.join(LARGE, 'gzip_bomb_2gib_whitespace.json.gz'));
  await p.getByTestId('error').waitFor({ timeout: 60_000 });
  const bombMs = Date.now() - t0;
  assert.match(await p.getByTestId('error').textContent(), /gzip_bomb_2gib_whitespace\.json\.gz: .*whitespace.*decompression bomb/);
  seen.push(`bomb refused in ${bombMs} ms`);
  await usable(p, demo, 'demo after the bomb');
  await p.screenshot({ path: shot('hostile-refused.png') });
  // These open (replacing the session), with the events and operator rows the CLI finds and the
  // warning that says what was repaired.
  for (const [name, says] of WARNED) {
    await drop(p, path.join(BAD, name));
    await p.waitForFunction((n) => document.querySelector('[data-testid=file-name]')?.textContent === n, name, { timeout: 60_000 });
    if (says) {
      await p.getByTestId('warnings').waitFor();
      assert.match(await p.getByTestId('warnings').innerText(), says, name);
    }
    await usable(p, expect(path.join(BAD, name)), name);
  }
  await p.screenshot({ path: shot('hostile-warned.png') });
  // 10⁶ events at one timestamp on one thread load, and the timeline paints them.
  await drop(p, path.join(LARGE, 'same_ts_1e6.json.gz'));
  await p.waitForFunction(() => document.querySelector('[data-testid=event-count]')?.textContent === '1000000', null, { timeout: 120_000 });
  await p.getByTestId('tab-timeline').click();
  await p.waitForFunction(() => Number(document.querySelector('[data-testid=timeline]')?.getAttribute('data-rects')) > 0, null, { timeout: 60_000 });
  await p.screenshot({ path: shot('hostile-same-ts.png') });
  console.log(seen.join('\n'));
  assert.deepEqual(await p.evaluate(() => window.__csp), []);
  assert.deepEqual(errors, []);
  await p.close();
});

const XSS = [
  '<img src=/pwned-img onerror="window.__pwned=1">',
  '<script>window.__pwned=2</script>',
  'javascript:window.__pwned=3',
  '"><svg onload="window.__pwned=4">',
  '<a href="javascript:window.__pwned=5">click</a>',
];

function xssTrace(file) {
  const ev = [];
  XSS.forEach((n, k) => {
    ev.push({ ph: 'X', cat: 'cpu_op', name: n, pid: 1, tid: 1, ts: k * 100, dur: 50,
      args: { 'External id': k + 1, [n]: n, 'Input Dims': [[1]], 'Call stack': n, url: 'javascript:window.__pwned=6' } });
    ev.push({ ph: 'X', cat: 'kernel', name: n, pid: 0, tid: 7, ts: k * 100 + 10, dur: 20,
      args: { correlation: k + 1, device: 0, stream: 7, grid: [1, 1, 1], block: [1, 1, 1] } });
    ev.push({ ph: 'X', cat: 'python_function', name: `${n}.py(1): ${n}`, pid: 1, tid: 1, ts: k * 100 + 1, dur: 40 });
  });
  ev.push({ ph: 'M', name: 'thread_name', pid: 1, tid: 1, args: { name: XSS[0] } });
  ev.push({ ph: 'M', name: 'process_name', pid: 1, args: { name: XSS[3] } });
  fs.writeFileSync(file, JSON.stringify({ schemaVersion: 1, deviceProperties: [{ name: XSS[1] }], traceEvents: ev }));
}

test('names, args and frames that look like HTML or javascript: URLs are shown as text; nothing runs or is requested', async () => {
  const errors = [];
  const p = await cspPage(errors);
  const requests = [];
  p.on('request', (r) => requests.push(r.url()));
  const file = path.join(LARGE, 'xss.pt.trace.json');
  xssTrace(file);
  await p.goto(srv.base + '/');
  await p.getByTestId('file-input').setInputFiles(file);
  await p.getByTestId('event-count').waitFor({ timeout: 60_000 });
  for (const tab of ['tab-operators', 'tab-kernels', 'tab-timeline', 'tab-overview']) {
    await p.getByTestId(tab).click();
    await p.waitForTimeout(300);
  }
  // The operator table shows the names as literal text.
  await p.getByTestId('tab-operators').click();
  const text = await p.getByTestId('op-table').innerText();
  assert.ok(text.includes('<img src=/pwned-img'), text.slice(0, 300));
  // Search for one, open its details (args and stack are rendered there).
  await p.getByTestId('tab-timeline').click();
  await p.getByTestId('search').fill('onerror');
  await p.getByTestId('search').press('Enter');
  await p.getByTestId('details').waitFor();
  assert.equal(await p.getByTestId('details-name').textContent(), XSS[0]);
  assert.ok((await p.getByTestId('details').innerText()).includes('javascript:window.__pwned=6'));
  await p.screenshot({ path: shot('hostile-xss.png') });
  assert.equal(await p.evaluate(() => window.__pwned), undefined);
  // No element the trace could have made: no <img>, no handlers, no javascript: links or scripts.
  assert.equal(await p.evaluate(() => document.querySelectorAll('img, [onerror], [onload], a[href^="javascript:"]').length), 0);
  assert.equal(await p.evaluate(() => [...document.scripts].some((s) => s.text.includes('__pwned'))), false);
  assert.deepEqual(requests.filter((u) => /pwned|javascript:/.test(u)), []);
  assert.deepEqual(await p.evaluate(() => window.__csp), []);
  assert.deepEqual(errors, []);
  await p.close();
});

/** A CUDA allocator snapshot (torch's `_dump_snapshot` dict) whose stack frames are XSS[k]. */
function xssSnapshot(file) {
  const code = `
import json, pickle, sys
xss = json.loads(sys.argv[2])
MB = 1 << 20
def frames(k):
    return [{'filename': 'javascript:window.__pwned=8', 'line': 1, 'name': xss[k % len(xss)]},
            {'filename': xss[(k + 1) % len(xss)], 'line': 2, 'name': xss[(k + 2) % len(xss)]}]
trace, segs, t = [], [], 1_000
for k in range(5):
    a = 0x7f0000000000 + k * 64 * MB
    trace.append({'action': 'segment_alloc', 'addr': a, 'size': 32 * MB, 'stream': 0, 'time_us': t + k, 'frames': frames(k)})
    trace.append({'action': 'alloc', 'addr': a, 'size': (k + 1) * MB, 'stream': 0, 'time_us': t + 10 + k, 'frames': frames(k)})
    segs.append({'device': 0, 'address': a, 'total_size': 32 * MB, 'allocated_size': (k + 1) * MB,
                 'active_size': (k + 1) * MB, 'requested_size': (k + 1) * MB, 'stream': 0, 'segment_type': 'large',
                 'segment_pool_id': (0, 0), 'is_expandable': False, 'frames': [],
                 'blocks': [{'address': a, 'size': (k + 1) * MB, 'requested_size': (k + 1) * MB, 'state': 'active_allocated', 'frames': frames(k)},
                            {'address': a + (k + 1) * MB, 'size': (31 - k) * MB, 'requested_size': 0, 'state': 'inactive', 'frames': []}]})
pickle.dump({'segments': segs, 'device_traces': [trace], 'allocator_settings': {}, 'external_annotations': []}, open(sys.argv[1], 'wb'), protocol=4)
`;
  execFileSync('python3', ['-c', code, file, JSON.stringify(XSS)]);
}

test('a snapshot whose stack frames look like HTML or javascript: URLs shows them as text; nothing runs or is requested', async () => {
  const errors = [];
  const p = await cspPage(errors);
  const requests = [];
  p.on('request', (r) => requests.push(r.url()));
  const file = path.join(LARGE, 'xss.snapshot.pickle');
  xssSnapshot(file);
  await p.goto(srv.base + '/');
  await p.getByTestId('file-input').setInputFiles(file);
  await p.getByTestId('memory-view').waitFor({ timeout: 60_000 });
  await p.getByTestId('peak-table').waitFor();
  const tables = (await p.getByTestId('peak-table').innerText()) + (await p.getByTestId('stack-table').innerText());
  assert.ok(tables.includes('<img src=/pwned-img onerror='), tables.slice(0, 400));
  // Hover the chart until an allocation's tooltip (size and stack) shows.
  const box = await p.getByTestId('mem-chart').boundingBox();
  let tip = '';
  for (let fx = 0.1; fx < 0.98 && !tip; fx += 0.04) {
    for (const fy of [0.9, 0.7, 0.5]) {
      await p.mouse.move(box.x + box.width * fx, box.y + box.height * fy);
      if (await p.getByTestId('mem-tooltip').isVisible().catch(() => false)) { tip = await p.getByTestId('mem-tooltip').innerText(); break; }
    }
  }
  assert.ok(/pwned/.test(tip), `a tooltip with the frames as text: ${tip}`);
  await p.screenshot({ path: shot('hostile-xss-snapshot.png') });
  assert.equal(await p.evaluate(() => window.__pwned), undefined);
  assert.equal(await p.evaluate(() => document.querySelectorAll('img, svg[onload], [onerror], [onload], a[href^="javascript:"]').length), 0);
  assert.deepEqual(requests.filter((u) => /pwned|javascript:/.test(u)), []);
  assert.deepEqual(await p.evaluate(() => window.__csp), []);
  assert.deepEqual(errors, []);
  await p.close();
});

/** Another origin serving files with CORS, as a trace host would: { url(name), close() }. */
async function traceHost(files) {
  const server = http.createServer((req, res) => {
    const file = files[decodeURIComponent(new URL(req.url, 'http://x').pathname.slice(1))];
    if (!file) { res.writeHead(404).end(); return; }
    const body = fs.readFileSync(file);
    res.writeHead(200, { 'access-control-allow-origin': '*', 'content-type': 'application/octet-stream', 'content-length': body.length });
    res.end(body);
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${server.address().port}`;
  return { base, url: (name) => `${base}/${name}`, close: () => server.close() };
}

/** The built page's policy (the first CSP meta) and the sha256 of each inline script, by hand. */
function builtPolicy(html) {
  const csp = html.match(/<meta http-equiv="Content-Security-Policy" content="([^"]+)"/i)?.[1];
  const inline = [...html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/gi)]
    .filter((m) => !/\bsrc=|type="application\/octet-stream"/.test(m[1]))
    .map((m) => `'sha256-${crypto.createHash('sha256').update(m[2]).digest('base64')}'`);
  return { csp, inline };
}

test('the built policy needs no unsafe-eval or unsafe-inline and allows exactly the inline scripts it has', () => {
  const { csp, inline } = builtPolicy(fs.readFileSync(path.join(DIST, 'index.html'), 'utf8'));
  assert.ok(csp, 'a CSP meta in dist/index.html');
  assert.doesNotMatch(csp, /'unsafe-eval'|script-src[^;]*'unsafe-inline'/);
  const script = csp.split(';').map((d) => d.trim().split(/\s+/)).find((d) => d[0] === 'script-src');
  assert.equal(inline.length, 2, "trunk's start-up module and the connect-src script");
  assert.deepEqual(script.slice(1).sort(), ["'self'", "'wasm-unsafe-eval'", ...inline].sort());
  for (const d of ["object-src 'none'", "base-uri 'none'", "form-action 'none'", "default-src 'self'", "worker-src 'self' blob:"]) assert.ok(csp.includes(d), d);
});

test('normal use raises no policy violation: the demo, dropped files, every tab, ?url=A&compare=B from other origins', async () => {
  const errors = [];
  const p = await cspPage(errors);
  const tabs = [];
  await openDemo(p);
  await everyTab(p, tabs);
  // Dropped together: a trace, its memory timeline and a snapshot (the Memory tab shows them).
  await p.evaluate(() => document.querySelector('[data-testid=error] button')?.click());
  await drop(p, [path.join(GPU, 'gpu_mlp.pt.trace.json.gz'), path.join(GPU, 'gpu_mlp.memory_timeline.json'), path.join(GPU, 'gpu_lm_bf16.snapshot.pickle')]);
  await p.getByTestId('tab-overview').click();
  await p.waitForFunction(() => document.querySelector('[data-testid=file-name]')?.textContent === 'gpu_mlp.pt.trace.json.gz', null, { timeout: 60_000 });
  assert.equal(await p.getByTestId('event-count').textContent(), expect(path.join(GPU, 'gpu_mlp.pt.trace.json.gz')).events);
  const afterDrop = await everyTab(p, tabs);
  assert.ok(afterDrop.includes('tab-memory'), afterDrop.join());
  await p.getByTestId('tab-memory').click();
  await p.screenshot({ path: shot('hostile-csp-memory.png') });
  assert.deepEqual(await p.evaluate(() => window.__csp), []);
  await p.close();
  // A and B on two other origins: the page allows both (and fetches nothing else).
  const hostA = await traceHost({ 'a.pt.trace.json.gz': path.join(GPU, 'gpu_mlp.pt.trace.json.gz') });
  const hostB = await traceHost({ 'b.pt.trace.json.gz': path.join(GPU, 'gpu_mlp_plain.pt.trace.json.gz') });
  try {
    const q = await cspPage(errors);
    const requests = [];
    q.on('request', (r) => requests.push(r.url()));
    await q.goto(`${srv.base}/?url=${encodeURIComponent(hostA.url('a.pt.trace.json.gz'))}&compare=${encodeURIComponent(hostB.url('b.pt.trace.json.gz'))}`);
    await q.getByTestId('compare-view').waitFor({ timeout: 120_000 });
    assert.ok(Number(await q.getByTestId('compare-ops').getAttribute('data-rows')) > 0);
    await q.screenshot({ path: shot('hostile-csp-compare.png') });
    await everyTab(q, tabs);
    assert.deepEqual(await q.evaluate(() => window.__csp), []);
    const foreign = requests.filter((u) => !u.startsWith(srv.base) && !u.startsWith('blob:'));
    assert.deepEqual(foreign.sort(), [hostA.url('a.pt.trace.json.gz'), hostB.url('b.pt.trace.json.gz')].sort());
    await q.close();
  } finally {
    hostA.close();
    hostB.close();
  }
  console.log(`tabs visited: ${tabs.join(' ')}`);
  assert.deepEqual(errors, []);
});

test('connect-src: a fetch elsewhere is blocked without ?url=; with ?url= only that origin is allowed', async () => {
  const host = await traceHost({ 'demo.pt.trace.json.gz': DEMO });
  const elsewhere = await traceHost({ 'x': DEMO });
  const url = host.url('demo.pt.trace.json.gz');
  const tryFetch = (p, u) => p.evaluate((u) => fetch(u).then((r) => `fetched ${r.status}`, (e) => `blocked: ${e}`), u);
  try {
    // Without ?url=, a fetch to that origin is blocked by the policy (and reported as a violation).
    const errors = [];
    const p = await cspPage(errors);
    await openDemo(p);
    assert.match(await tryFetch(p, url), /^blocked/);
    assert.deepEqual(await p.evaluate(() => window.__csp), [`connect-src ${url}`]);
    await p.close();
    // With ?url= on that origin, the page (its reader worker) fetches and opens it, no violation;
    // the page itself may fetch that origin, and any other origin stays blocked.
    const q = await cspPage([]);
    await q.goto(`${srv.base}/?url=${encodeURIComponent(url)}`);
    await q.getByTestId('event-count').waitFor({ timeout: 60_000 });
    assert.equal(await q.getByTestId('event-count').textContent(), expect(DEMO).events);
    assert.deepEqual(await q.evaluate(() => window.__csp), []);
    assert.equal(await tryFetch(q, url), 'fetched 200');
    assert.match(await tryFetch(q, elsewhere.url('x')), /^blocked/);
    assert.deepEqual(await q.evaluate(() => window.__csp), [`connect-src ${elsewhere.url('x')}`]);
    await q.close();
  } finally {
    host.close();
    elsewhere.close();
  }
});

test('a file whose model would not fit the tab\'s wasm memory is refused before it is read, pointing to the CLI', async () => {
  // 10.7 GB (sparse on disk), a Kineto trace by its first bytes, so read by workers: the one that
  // merges them needs 0.40 bytes per byte, 4.28 GB, and a worker gets 4 GiB less 64 MiB (the page
  // would fit: 0.35 bytes per byte, 3.75 GB). (The refusal starts near 10.6 GB of JSON, see
  // docs/troubleshooting.md and ingest/budget.rs.)
  const file = path.join(LARGE, 'huge.pt.trace.json');
  const fd = fs.openSync(file, 'w');
  fs.writeSync(fd, '{"traceEvents": [');
  fs.ftruncateSync(fd, 10.7e9);
  fs.closeSync(fd);
  const errors = [];
  const p = await cspPage(errors);
  await openDemo(p);
  const t0 = Date.now();
  await p.getByTestId('file-input').setInputFiles(file);
  await p.getByTestId('error').waitFor({ timeout: 60_000 });
  const msg = await p.getByTestId('error').textContent();
  assert.match(msg, /huge\.pt\.trace\.json: limit exceeded: too big for a browser tab: its model would need about 4\.28 GB of WebAssembly memory, more than the 4\.23 GB the reader worker that builds it can give it/);
  assert.match(msg, /tracelight summary FILE/);
  // Refused before its first byte: no place in the file is named (it said "at byte 0").
  assert.doesNotMatch(msg, /at byte/);
  const ms = Date.now() - t0;
  console.log(`10.7 GB file refused in ${ms} ms`);
  assert.ok(ms < 30_000, `refused in ${ms} ms`);
  await usable(p, expect(DEMO), 'demo after the 10.7 GB file');
  await p.screenshot({ path: shot('hostile-too-big.png') });
  assert.deepEqual(errors, []);
  await p.close();
  fs.rmSync(file);
});

test('a file of small events is judged by its slices: 3.2 GB of ~90-byte events is refused before it is read, where its bytes alone would pass', async () => {
  // Sparse on disk: a Kineto head, and 256 KiB of 94-byte X events at a quarter, half and three
  // quarters of the file, where the page samples it. At 0.40 bytes per byte the merger would take
  // it (1.28 GB); such a file ran the merger out of memory half-way (BENCHMARKS.md). By its slices
  // it needs ~1.6 bytes per byte there (ingest/budget.rs): over 4.9 GB.
  const file = path.join(LARGE, 'dense.pt.trace.json');
  const size = 3.2e9;
  const fd = fs.openSync(file, 'w');
  fs.writeSync(fd, '{"traceEvents": [\n');
  let events = '';
  for (let n = 0; events.length < 300_000; n++) {
    events += `  {"ph": "X", "cat": "cpu_op", "name": "op${n % 50}", "pid": 1, "tid": ${1 + (n % 4)}, "ts": ${10 * n}, "dur": 1},\n`;
  }
  for (const q of [0.25, 0.5, 0.75]) fs.writeSync(fd, events, Math.floor(size * q) - 1000);
  fs.ftruncateSync(fd, size);
  fs.closeSync(fd);
  const errors = [];
  const p = await cspPage(errors);
  await openDemo(p);
  await p.getByTestId('file-input').setInputFiles(file);
  await p.getByTestId('error').waitFor({ timeout: 60_000 });
  const msg = await p.getByTestId('error').textContent();
  const need = msg.match(/dense\.pt\.trace\.json: limit exceeded: too big for a browser tab: its model would need about (\d+\.\d\d) GB of WebAssembly memory, more than the 4\.23 GB the reader worker that builds it can give it/);
  assert.ok(need, msg);
  // Its events are ~90 bytes: 0.12 + 133 / 90 = 1.59 bytes per byte, ~5.1 GB.
  assert.ok(+need[1] > 4.9 && +need[1] < 5.5, msg);
  assert.doesNotMatch(msg, /at byte/);
  await usable(p, expect(DEMO), 'demo after the dense file');
  await p.screenshot({ path: shot('hostile-dense.png') });
  assert.deepEqual(errors, []);
  await p.close();
  fs.rmSync(file);
});

test('the release CLI refuses the 2 GiB gzip bomb in seconds and reads 10⁶ events at one timestamp', () => {
  let t0 = Date.now();
  const r = spawnSync(BIN, ['analyze', path.join(LARGE, 'gzip_bomb_2gib_whitespace.json.gz'), '--json']);
  const bombMs = Date.now() - t0;
  assert.equal(r.status, 2);
  assert.match(r.stderr.toString(), /^tracelight: .*gzip_bomb_2gib_whitespace\.json\.gz: limit exceeded: more than 16 MiB of nothing but whitespace/);
  t0 = Date.now();
  const out = JSON.parse(execFileSync(BIN, ['analyze', path.join(LARGE, 'same_ts_1e6.json.gz'), '--json'], { maxBuffer: 64 << 20 }));
  const sameMs = Date.now() - t0;
  assert.equal(out.files[0].events, 1_000_000);
  console.log(`CLI: bomb refused in ${bombMs} ms, 1e6 same-ts events in ${sameMs} ms`);
});
