// Embedding: a host page on another origin puts the app in an <iframe> and drives it with
// postMessage the way integrations drive Perfetto's UI (PING/PONG, {perfetto: {buffer | stream}},
// {perfetto: {timeStart, timeEnd, viewPercentage}}) plus our commands; the events it gets back are
// checked against the CLI and the trace's own JSON. A hostile host sends junk, huge and malformed
// messages, and a frame of a third origin sends a valid one: nothing crashes, each is counted, and
// the app still opens a trace afterwards.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { serve, browser, cli, shot, CORPUS, ROOT, corpusSkip } from './harness.mjs';

const DEMO = path.join(ROOT, 'web/demo/demo.pt.trace.json.gz');
const STREAMED = path.join(CORPUS, 'real/hta/nccl_data_a100_rank0of2.json.gz');

// The host page: an iframe of the app, a PING loop, and every message the app posts back.
const HOST = `<!doctype html><meta charset="utf-8"><body style="margin:0">
<iframe id="tl" style="width:1000px;height:700px;border:0"></iframe>
<script>
const q = new URLSearchParams(location.search);
const frame = document.getElementById('tl');
frame.src = q.get('app');
const APP = new URL(q.get('app')).origin;
window.events = [];
window.pongs = 0;
addEventListener('message', (e) => {
  if (e.source !== frame.contentWindow) return;
  if (e.data === 'PONG') { window.pongs++; window.pongReady = !!frame.contentWindow; return; }
  if (e.data && e.data.tracelight) window.events.push(e.data.tracelight);
});
window.send = (msg, transfer) => frame.contentWindow.postMessage(msg, APP, transfer || []);
window.handshake = () => new Promise((resolve) => {
  const t = setInterval(() => { if (window.pongs > 0) { clearInterval(t); resolve(); } else window.send('PING'); }, 50);
});
window.bytes = (b64) => Uint8Array.from(atob(b64), (c) => c.charCodeAt(0)).buffer;
// A frame of a third origin that finds the app's frame and posts it a valid trace.
window.addEvil = () => {
  const evil = document.createElement('iframe');
  evil.src = q.get('evil');
  document.body.append(evil);
};
</script>`;

// The third origin's page: posts a real-looking trace to its sibling, the app.
const EVIL = `<!doctype html><script>
const buf = new TextEncoder().encode('{"traceEvents":[{"ph":"X","name":"evil","ts":1,"dur":1,"pid":1,"tid":1}]}').buffer;
parent.frames[0].postMessage({ perfetto: { buffer: buf, title: 'evil', keepApiOpen: true } }, '*', [buf]);
parent.frames[0].postMessage('PING', '*');
parent.frames[0].postMessage({ tracelight: { command: 'open-tab', tab: 'kernels' } }, '*');
</script>`;

// The docs' copy-paste host snippet (docs/embedding.md, its first html block), pointed at this
// app; it fetches its trace from its own site.
function readmeSnippet(appUrl) {
  const section = fs.readFileSync(path.join(ROOT, 'docs/embedding.md'), 'utf8');
  const html = /```html\n([\s\S]*?)```/.exec(section)[1];
  assert.ok(html.includes('https://example.org/tools/tracelight/'));
  return `<!doctype html><meta charset="utf-8"><body>${html.replace('https://example.org/tools/tracelight/', appUrl)}`;
}

async function hostServer() {
  const server = http.createServer((req, res) => {
    if (req.url === '/runs/42/rank0.pt.trace.json.gz') {
      res.writeHead(200, { 'content-type': 'application/gzip' }).end(fs.readFileSync(DEMO));
      return;
    }
    const body = req.url.startsWith('/evil.html') ? EVIL : req.url.startsWith('/snippet.html') ? readmeSnippet(app.base + '/') : HOST;
    res.writeHead(200, { 'content-type': 'text/html' }).end(body);
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  return { server, base: `http://127.0.0.1:${server.address().port}` };
}

let app, host, third, b;
before(async () => { app = await serve(); host = await hostServer(); third = await hostServer(); b = await browser(); });
after(async () => { await b?.close(); app?.server.close(); host?.server.close(); third?.server.close(); });

/** The host page with the app (at `query`) inside; every error of either is collected. */
async function open(errors, query = '', evil = false) {
  const p = await b.newPage({ viewport: { width: 1100, height: 800 } });
  p.on('pageerror', (e) => errors.push(String(e)));
  p.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  p.on('request', (r) => { if (!/^(blob:)?http:\/\/127\.0\.0\.1[:/]/.test(r.url())) errors.push(`unexpected request ${r.url()}`); });
  const url = `${host.base}/host.html?app=${encodeURIComponent(app.base + '/' + query)}${evil ? '&evil=' + encodeURIComponent(third.base + '/evil.html') : ''}`;
  await p.goto(url);
  const frame = () => p.frames().find((f) => f.url().startsWith(app.base));
  await p.waitForFunction(() => document.getElementById('tl').contentWindow);
  return { p, frame };
}

const events = (p, kind) => p.evaluate((k) => window.events.filter((e) => e.event === k), kind);
const waitEvent = (p, kind, n = 1) => p.waitForFunction(([k, m]) => window.events.filter((e) => e.event === k).length >= m, [kind, n], { timeout: 60_000 });

/** `analyze --json` of `file` with its path written as the page names it. */
function cliAs(file, name) {
  return JSON.parse(JSON.stringify(cli(file)).replaceAll(JSON.stringify(file).slice(1, -1), name));
}

const demoEvents = JSON.parse(zlib.gunzipSync(fs.readFileSync(DEMO))).traceEvents;

test('a host page opens a posted buffer, moves the window, reveals a kernel and switches tabs; the events match the CLI and the JSON', async () => {
  const errors = [];
  const { p, frame } = await open(errors);
  await p.evaluate(() => window.handshake());
  // PONG only once the app runs: by then its page is on screen.
  assert.equal(await frame().getByTestId('empty').count(), 1);
  const name = 'demo.pt.trace.json.gz';
  await p.evaluate(([b64, n]) => {
    const buf = window.bytes(b64);
    window.send({ perfetto: { buffer: buf, title: 'The demo', fileName: n, url: 'https://example.org/demo', keepApiOpen: true } }, [buf]);
  }, [fs.readFileSync(DEMO).toString('base64'), name]);
  await waitEvent(p, 'loaded');
  const [loaded] = await events(p, 'loaded');
  assert.equal(loaded.role, 'session');
  assert.equal(loaded.url, 'https://example.org/demo', 'the posted url, reported back (never fetched: the page checks requests)');
  assert.equal(loaded.files[0].name, name);
  assert.equal(loaded.files[0].bytes, fs.statSync(DEMO).size);
  // The summary the page computed in wasm from the posted bytes is `analyze --json` of the file.
  assert.deepEqual(loaded.summary, cliAs(DEMO, name));
  const progress = await events(p, 'progress');
  assert.ok(progress.length >= 1, 'progress events');
  assert.ok(progress.every((e) => e.total === fs.statSync(DEMO).size && e.name === name));
  assert.equal(Number(await frame().getByTestId('event-count').textContent()), cli(DEMO).files[0].events);

  // Perfetto's scroll-to-range, seconds, viewPercentage 0.5: the range padded by a quarter of its
  // length on each side (Perfetto's arithmetic, redone here).
  const kernel = 'nvjet_tst_256x128_64x4_1x2_h_bz_coopA_NTN';
  const occ = demoEvents.filter((e) => e.cat === 'kernel' && e.name === kernel).sort((x, y) => x.ts - y.ts);
  const k = occ[5];
  const [ts, te] = [k.ts / 1e6, (k.ts + k.dur) / 1e6];
  await p.evaluate(([a, z]) => window.send({ perfetto: { timeStart: a, timeEnd: z, viewPercentage: 0.5 } }), [ts, te]);
  const [a, z] = [ts * 1e9, te * 1e9];
  const pad = (z - a) * (1 - 0.5) / 2;
  await p.waitForFunction((s) => window.events.some((e) => e.event === 'window' && Math.abs(e.start_ns - s) < 1000), Math.round(a - pad));
  const win = (await events(p, 'window')).at(-1);
  assert.ok(Math.abs(win.start_ns - Math.round(a - pad)) <= 1 && Math.abs(win.end_ns - Math.round(z + pad)) <= 1, JSON.stringify(win));
  const shown = (await frame().getByTestId('timeline').getAttribute('data-window')).split(',').map(Number);
  assert.deepEqual(shown, [win.start_ns, win.end_ns]);

  // reveal: the 3rd occurrence (time order) of the kernel is selected and reported.
  await p.evaluate((n) => window.send({ tracelight: { command: 'reveal', kind: 'kernel', name: n, occurrence: 3 } }), kernel);
  await p.waitForFunction((n) => window.events.some((e) => e.event === 'selection' && e.name === n), kernel);
  const sel = (await events(p, 'selection')).filter((e) => e.name === kernel).at(-1);
  const nearest = occ.reduce((best, e, i) => (Math.abs(e.ts * 1000 - sel.ts_ns) < Math.abs(occ[best].ts * 1000 - sel.ts_ns) ? i : best), 0);
  assert.equal(nearest, 2, `selected ts ${sel.ts_ns} is occurrence ${nearest + 1}`);
  assert.ok(Math.abs(sel.ts_ns - occ[2].ts * 1000) < 1000);
  assert.equal(sel.dur_ns, Math.round(occ[2].dur * 1000));
  assert.equal(await frame().getByTestId('reveal-pos').textContent(), `3 / ${occ.length}`);

  // An op by name; a missing one is an error event, not a crash.
  await p.evaluate(() => window.send({ tracelight: { command: 'reveal', kind: 'op', name: 'aten::copy_', occurrence: 2 } }));
  await p.waitForFunction(() => window.events.some((e) => e.event === 'selection' && e.name === 'aten::copy_'));
  await p.evaluate(() => window.send({ tracelight: { command: 'reveal', kind: 'op', name: 'aten::nothing_here' } }));
  await waitEvent(p, 'error');

  await p.evaluate(() => window.send({ tracelight: { command: 'open-tab', tab: 'kernels' } }));
  await frame().getByTestId('kernels-view').waitFor();
  await p.screenshot({ path: shot('embed-host.png') });

  // compare: B posted as a buffer opens the Compare tab.
  await p.evaluate(([b64]) => {
    const buf = window.bytes(b64);
    window.send({ tracelight: { command: 'compare', buffer: buf, fileName: 'b.json.gz' } }, [buf]);
  }, [fs.readFileSync(DEMO).toString('base64')]);
  await p.waitForFunction(() => window.events.some((e) => e.event === 'loaded' && e.role === 'compare'));
  await frame().getByTestId('tab-compare').waitFor();

  await p.evaluate(() => window.send({ tracelight: { command: 'stats' } }));
  await waitEvent(p, 'stats');
  const [stats] = await events(p, 'stats');
  assert.equal(Object.values(stats.ignored).reduce((x, y) => x + y, 0), 1, JSON.stringify(stats));
  assert.equal(stats.ignored.not_found, 1);
  assert.deepEqual(errors, []);
  await p.close();
});

test('a host page streams a trace in (a transferred ReadableStream) with progress; the summary matches the CLI', { skip: corpusSkip(STREAMED) }, async () => {
  const errors = [];
  const { p } = await open(errors);
  await p.evaluate(() => window.handshake());
  const size = fs.statSync(STREAMED).size;
  const name = path.basename(STREAMED);
  await p.evaluate(([b64, n]) => {
    const all = new Uint8Array(window.bytes(b64));
    let at = 0;
    // 64 KiB at a time, 10 ms apart: a slow network, as the host would see it.
    const stream = new ReadableStream({
      async pull(c) {
        if (at >= all.length) { c.close(); return; }
        await new Promise((r) => setTimeout(r, 10));
        c.enqueue(all.slice(at, at + 65536));
        at += 65536;
      },
    });
    window.send({ perfetto: { stream, bytesTotal: all.length, title: 'streamed', fileName: n } }, [stream]);
  }, [fs.readFileSync(STREAMED).toString('base64'), name]);
  await waitEvent(p, 'loaded');
  const [loaded] = await events(p, 'loaded');
  assert.deepEqual(loaded.summary, cliAs(STREAMED, name));
  const progress = await events(p, 'progress');
  const done = progress.map((e) => e.done);
  assert.ok(progress.length >= 3, `progress events: ${progress.length}`);
  assert.ok(progress.every((e) => e.total === size));
  assert.ok(done.every((d, i) => i === 0 || d >= done[i - 1]) && done.at(-1) > 0, `progress grows: ${done}`);
  assert.deepEqual(errors, []);
  await p.close();
});

test('a hostile host: junk, huge and malformed messages and a third-origin frame are ignored and counted; the app keeps working', async () => {
  const errors = [];
  const { p, frame } = await open(errors, '', true);
  await p.evaluate(() => window.handshake());
  // The third-origin frame's trace, PING and command: all refused as untrusted.
  await p.evaluate(() => window.addEvil());
  await frame().waitForFunction(() => Number(document.documentElement.dataset.embedIgnored) >= 3);
  const sent = await p.evaluate(() => {
    const deep = {};
    let d = deep;
    for (let i = 0; i < 2000; i++) { d.x = {}; d = d.x; }
    const junk = [
      'PONG', 'ping', '', 42, null, true, [1, 2, 3], {}, { perfetto: 5 }, { perfetto: null },
      { perfetto: {} }, { perfetto: { buffer: 'not bytes', title: 't' } }, { perfetto: { stream: 'no', title: 't' } },
      { perfetto: { timeStart: 'a', timeEnd: 1 } }, { perfetto: { timeStart: 1 } }, { perfetto: { timeStart: 2, timeEnd: 1 } },
      { perfetto: { timeStart: 1e300, timeEnd: 1e301 } }, { perfetto: { buffer: new ArrayBuffer(8), title: 7 } },
      { tracelight: { command: 'no-such-command' } }, { tracelight: { command: 'open-tab' } }, { tracelight: { command: 'open-tab', tab: 5 } },
      { tracelight: { command: 'reveal', name: 'x', occurrence: -1 } }, { tracelight: { command: 'reveal', name: 'x', occurrence: 1.5 } },
      { tracelight: { command: 'reveal', kind: 'gpu', name: 'x' } }, { tracelight: { command: 'reveal' } }, { tracelight: 'reveal' },
      deep, { tracelight: deep }, new Array(100000).fill({ a: 1 }),
      { tracelight: { command: 'reveal', name: 'x'.repeat(50_000_000) } },
      { tracelight: { command: 'open-tab', tab: 'kernels'.repeat(20_000) } },
    ];
    for (const m of junk) window.send(m);
    // Perfetto's "not for you": ignored, not counted.
    window.send({ perfettoIgnore: true, perfetto: { buffer: new ArrayBuffer(4), title: 'x' } });
    return junk.length;
  });
  // Allow-listed origins only: this app instance takes nothing from the host.
  await frame().waitForFunction((n) => Number(document.documentElement.dataset.embedIgnored) >= 3 + n, sent, { timeout: 30_000 });
  await p.evaluate(() => window.send({ tracelight: { command: 'stats' } }));
  await waitEvent(p, 'stats');
  const [stats] = await events(p, 'stats');
  assert.equal(stats.ignored.untrusted, 3, JSON.stringify(stats));
  assert.equal(Object.values(stats.ignored).reduce((x, y) => x + y, 0), 3 + sent, JSON.stringify(stats));
  assert.equal(stats.ignored.too_long, 2);
  assert.equal(await frame().getByTestId('empty').count(), 1, 'the evil trace was not opened');
  // Still working: a real trace opens.
  await p.evaluate(([b64]) => {
    const buf = window.bytes(b64);
    window.send({ perfetto: { buffer: buf, title: 'demo' } }, [buf]);
  }, [fs.readFileSync(DEMO).toString('base64')]);
  await waitEvent(p, 'loaded');
  assert.equal(Number(await frame().getByTestId('event-count').textContent()), cli(DEMO).files[0].events);
  // Without keepApiOpen the first trace closes the API (Perfetto's rule): a second is refused.
  await p.evaluate(() => { const buf = new ArrayBuffer(4); window.send({ perfetto: { buffer: buf, title: 'again' } }, [buf]); });
  await p.evaluate(() => window.send({ tracelight: { command: 'stats' } }));
  await waitEvent(p, 'stats', 2);
  assert.equal((await events(p, 'stats'))[1].ignored.api_closed, 1);
  assert.deepEqual(errors, []);
  await p.close();
});

test('?origins= narrows who may send: a host outside the list gets no PONG and opens nothing', async () => {
  const errors = [];
  const { p, frame } = await open(errors, '?origins=' + encodeURIComponent('https://wiki.example.org'));
  await frame().getByTestId('empty').waitFor();
  await p.evaluate(() => { window.send('PING'); window.send({ tracelight: { command: 'stats' } }); });
  await frame().waitForFunction(() => Number(document.documentElement.dataset.embedIgnored) === 2);
  assert.equal(await p.evaluate(() => window.pongs), 0);
  assert.deepEqual(await p.evaluate(() => window.events), []);
  assert.deepEqual(errors, []);
  await p.close();
});

test('embed mode fits 600x400: no open bar, the cards over a painted timeline, every tab reachable, nothing overflows', async () => {
  const errors = [];
  const p = await b.newPage({ viewport: { width: 600, height: 400 } });
  p.on('pageerror', (e) => errors.push(String(e)));
  p.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  for (const q of ['?mode=embedded', '?hideSidebar=true', '#!/viewer?mode=embedded']) {
    await p.goto(`${app.base}/${q}`);
    await p.getByTestId('empty').waitFor();
    assert.equal(await p.locator('main.app.embedded').count(), 1, q);
  }
  await p.goto(`${app.base}/?embed=1&url=demo/demo.pt.trace.json.gz`);
  await p.getByTestId('step-time').waitFor({ timeout: 60_000 });
  await p.waitForFunction(() => Number(document.querySelector('[data-testid=timeline]')?.getAttribute('data-rects')) > 0);
  assert.equal(await p.locator('header h1').isVisible(), false);
  assert.equal(await p.getByTestId('demo').isVisible(), false, 'no open bar');
  const inside = async (loc) => {
    const r = await loc.boundingBox();
    assert.ok(r && r.x >= 0 && r.y >= 0 && r.x + r.width <= 600 && r.y + r.height <= 400, JSON.stringify(r));
    return r;
  };
  for (const id of ['step-time', 'gpu-util', 'peak-memory', 'tflops']) await inside(p.getByTestId(id));
  // The timeline's scroll box (its canvas is at least 200 px and scrolls inside it).
  const tl = await inside(p.locator('.tl-wrap'));
  assert.ok(tl.height >= 120, `timeline ${tl.height}px high`);
  // Readable: the figures at least 16 px, the tab labels at least 12 px.
  assert.ok(parseFloat(await p.getByTestId('step-time').evaluate((e) => getComputedStyle(e).fontSize)) >= 16);
  assert.ok(parseFloat(await p.getByTestId('tab-kernels').evaluate((e) => getComputedStyle(e).fontSize)) >= 12);
  const size = () => p.evaluate(() => [document.documentElement.scrollWidth, document.documentElement.scrollHeight]);
  assert.deepEqual(await size(), [600, 400]);
  await p.screenshot({ path: shot('embed-600x400.png') });
  // The timeline under the cards writes its window to the link, which keeps the Overview tab.
  await p.waitForFunction(() => location.hash.includes('visStart='));
  assert.match(await p.evaluate(() => location.hash), /^#tab=overview&/);
  for (const [tab, view] of [['timeline', 'timeline-view'], ['operators', 'operators-view'], ['kernels', 'kernels-view'], ['gpu', 'gpu-view'], ['compare', null], ['overview', 'step-time']]) {
    await p.getByTestId(`tab-${tab}`).click();
    if (view) await p.getByTestId(view).first().waitFor();
    assert.deepEqual(await size(), [600, 400], tab);
  }
  await p.getByTestId('tab-timeline').click();
  await p.waitForFunction(() => Number(document.querySelector('[data-testid=timeline]')?.getAttribute('data-rects')) > 0);
  await p.screenshot({ path: shot('embed-600x400-timeline.png') });
  assert.deepEqual(errors, []);
  await p.close();
});

const A100 = path.join(CORPUS, 'real/hta/a100_80gb_rank0of16.json.gz');
test('embed mode at 800x600: the rate card shows its figure and MFU whole (issue 23)', { skip: corpusSkip(A100) }, async () => {
  const c = cli(A100).flops;
  const errors = [];
  const p = await b.newPage({ viewport: { width: 800, height: 600 } });
  p.on('pageerror', (e) => errors.push(String(e)));
  p.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  await p.goto(`${app.base}/?embed=1&url=/corpus/real/hta/a100_80gb_rank0of16.json.gz`);
  const value = p.getByTestId('tflops');
  await value.waitFor({ timeout: 120_000 });
  const mfu = p.getByTestId('mfu');
  await p.waitForFunction(() => document.querySelector('[data-testid=mfu]')?.dataset.mfu);
  assert.ok(Math.abs(Number(await mfu.getAttribute('data-mfu')) - c.mfu) <= 1e-12, 'the CLI\'s MFU');
  assert.match(await mfu.textContent(), /^ · MFU [\d.]+%$/);
  // Nothing cut: the value box holds its text, and the MFU lies inside its card and the window.
  assert.ok(await value.evaluate((e) => e.scrollWidth <= e.clientWidth + 1), 'value not clipped');
  // The figure keeps its unit on its line ('22.6 GFLOPS', not '22.6' over 'GFLOPS').
  const lines = await value.evaluate((e) => { const r = document.createRange(); r.selectNodeContents([...e.childNodes].find((n) => n.nodeType === 3 && n.textContent.trim())); return new Set([...r.getClientRects()].map((q) => Math.round(q.top))).size; });
  assert.equal(lines, 1, 'the rate and its unit on one line');
  const card = await value.locator('xpath=..').boundingBox();
  for (const r of (await mfu.evaluate((e) => [...e.getClientRects()].map((q) => [q.left, q.right])))) {
    assert.ok(r[0] >= card.x - 0.5 && r[1] <= card.x + card.width + 0.5 && r[1] <= 800, `MFU at ${r} outside its card ${card.x}..${card.x + card.width}`);
  }
  await p.screenshot({ path: shot('embed-800x600-mfu.png') });
  assert.deepEqual(errors, []);
  await p.close();
});

test("the docs' host snippet, as written, opens a trace in the frame and hears `loaded`", async () => {
  const errors = [];
  const logs = [];
  const p = await b.newPage({ viewport: { width: 1100, height: 800 } });
  p.on('pageerror', (e) => errors.push(String(e)));
  p.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); else logs.push(m.text()); });
  await p.goto(`${host.base}/snippet.html`);
  await p.waitForFunction(() => document.getElementById('tl'));
  const frame = () => p.frames().find((f) => f.url().startsWith(app.base));
  await p.waitForFunction(() => window.sent === true, null, { timeout: 60_000 });
  await frame().getByTestId('event-count').waitFor({ timeout: 60_000 });
  assert.equal(Number(await frame().getByTestId('event-count').textContent()), cli(DEMO).files[0].events);
  for (let i = 0; i < 100 && !logs.some((l) => l.startsWith('step time')); i++) await p.waitForTimeout(100);
  assert.ok(logs.some((l) => l.startsWith('step time')), `the snippet logged: ${logs}`);
  assert.deepEqual(errors, []);
  await p.close();
});

test('a host that pings after its ?url= trace loaded still hears `loaded`, with that url', async () => {
  const errors = [];
  const { p, frame } = await open(errors, '?url=demo/demo.pt.trace.json.gz');
  await frame().getByTestId('event-count').waitFor({ timeout: 60_000 });
  await p.evaluate(() => window.handshake());
  await waitEvent(p, 'loaded');
  const [loaded] = await events(p, 'loaded');
  assert.equal(loaded.url, 'demo/demo.pt.trace.json.gz');
  assert.deepEqual(loaded.summary, cliAs(DEMO, 'demo.pt.trace.json.gz'));
  assert.deepEqual(errors, []);
  await p.close();
});
