// The timeline, end to end on the bundled demo trace: every number the page shows is checked
// against an independent read of the same file with python's json module (exact nanoseconds via
// Decimal): clicking a known kernel shows its name, duration and grid; its op link jumps to the op;
// search counts equal python's counts; a deep link reopens the same window and selection; the
// reveal flow steps through every occurrence; an area selection counts the slices of its track;
// keyboard zoom/pan move the window; the side panel resizes the canvas, whose backing store stays
// sharp at 2x. Screenshots go to target/e2e/.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import { serve, browser, page, shot, ROOT } from './harness.mjs';

const DEMO = path.join(ROOT, 'web/demo/demo.pt.trace.json.gz');
const URL_PATH = '/?url=' + encodeURIComponent('demo/demo.pt.trace.json.gz');

/** Facts about the demo computed by python, independently of the Rust reader. */
function facts() {
  const py = `
import gzip, json, sys
from decimal import Decimal
d = json.load(gzip.open(sys.argv[1]), parse_float=Decimal)
X = [e for e in d['traceEvents'] if e.get('ph') == 'X']
ns = lambda v: int(Decimal(v) * 1000)
k = max((e for e in X if e.get('cat') == 'kernel'), key=lambda e: e['dur'])
corr = k['args']['correlation']
launch = next(e for e in X if e.get('cat') == 'cuda_runtime' and e['args'].get('correlation') == corr)
ls, le = ns(launch['ts']), ns(launch['ts']) + ns(launch['dur'])
ops = [e for e in X if e.get('cat') == 'cpu_op' and e['pid'] == launch['pid'] and e['tid'] == launch['tid']
       and ns(e['ts']) <= ls and ns(e['ts']) + ns(e['dur']) >= le]
op = min(ops, key=lambda e: e['dur'])
print(json.dumps({
  'kernel': k['name'], 'start': str(ns(k['ts'])), 'dur': str(ns(k['dur'])), 'tid': k['tid'],
  'grid': k['args']['grid'], 'op': op['name'],
  'gemm': sum('gemm' in e['name'].lower() for e in X),
  'mm_or_addmm': sum(e['name'] in ('aten::mm', 'aten::addmm') for e in X),
  'aten_mm': sum(e['name'] == 'aten::mm' for e in X),
  'on_stream': sum(1 for e in X if e['pid'] == k['pid'] and e['tid'] == k['tid']),
}))
`;
  return JSON.parse(execFileSync('python3', ['-c', py, DEMO]).toString());
}

let srv, b, F;
before(async () => { srv = await serve(); b = await browser(); F = facts(); });
after(async () => { await b?.close(); srv?.server.close(); });

async function openTimeline(p, hash = '') {
  await p.goto(srv.base + URL_PATH + hash);
  // The tab bar appears once the trace is loaded (a deep link may open the timeline directly).
  await p.getByTestId('tab-timeline').waitFor({ timeout: 60_000 });
  if (!(await p.getByTestId('timeline').count())) await p.getByTestId('tab-timeline').click();
  await p.getByTestId('timeline').waitFor();
  await p.waitForFunction(() => Number(document.querySelector('[data-testid=timeline]')?.getAttribute('data-rects')) > 0);
}

async function geometry(p) {
  return p.getByTestId('timeline').evaluate((c) => ({
    rows: JSON.parse(c.getAttribute('data-rows')),
    ruler: Number(c.getAttribute('data-ruler-px')),
    gutter: Number(c.getAttribute('data-gutter-px')),
    scroll: Number(c.getAttribute('data-scroll')),
    window: c.getAttribute('data-window').split(',').map(BigInt),
    width: c.clientWidth,
    height: c.clientHeight,
  }));
}

/** The slice row of the kernel's stream (label "stream N" under a GPU group). */
function streamRow(g) {
  const gpuGroups = g.rows.filter((r) => r.kind === 'group' && /GPU/.test(r.label)).map((r) => r.group);
  return g.rows.find((r) => r.kind === 'slices' && gpuGroups.includes(r.group) && new RegExp(`\\b${F.tid}\\b`).test(r.label));
}

const windowAround = (start, dur) => `${start - dur},${start + 2n * dur}`;

test('clicking the longest kernel shows its name, exact duration and grid; the op link jumps to its op', async () => {
  const errors = [];
  const p = await page(b, errors);
  const start = BigInt(F.start), dur = BigInt(F.dur);
  await openTimeline(p, `#tab=timeline&file=0&t=${windowAround(start, dur)}`);
  const g = await geometry(p);
  assert.equal(g.window.join(','), windowAround(start, dur), 'the deep link set the window');
  const row = streamRow(g);
  assert.ok(row, `stream row for tid ${F.tid}: ${JSON.stringify(g.rows.map((r) => r.label))}`);
  const box = await p.getByTestId('timeline').boundingBox();
  const x = g.gutter + (g.width - g.gutter) / 2;
  const y = g.ruler + row.y + 3 + 9 - g.scroll;
  await p.mouse.click(box.x + x, box.y + y);
  await p.getByTestId('details').waitFor();
  assert.equal(await p.getByTestId('details-name').textContent(), F.kernel);
  assert.equal(await p.getByTestId('details-dur').getAttribute('data-ns'), F.dur);
  assert.equal(await p.getByTestId('details-start').getAttribute('data-ns'), F.start);
  assert.equal(await p.getByTestId('details-grid').textContent(), `[${F.grid.join(', ')}]`);
  assert.equal(await p.getByTestId('details-launch').textContent(), 'cudaLaunchKernel');
  await p.screenshot({ path: shot('timeline-kernel.png') });
  await p.getByTestId('details-op').click();
  await p.waitForFunction((n) => document.querySelector('[data-testid=details-name]')?.textContent === n, F.op);
  await p.screenshot({ path: shot('timeline-op.png') });
  assert.deepEqual(errors, []);
  await p.close();
});

test('search counts equal python counts, regex works, Enter steps to a match', async () => {
  const errors = [];
  const p = await page(b, errors);
  await openTimeline(p);
  await p.getByTestId('search').fill('GEMM');
  await p.waitForFunction((n) => document.querySelector('[data-testid=search-count]')?.dataset.count === String(n), F.gemm);
  await p.getByTestId('search').press('Enter');
  await p.getByTestId('details').waitFor();
  assert.match((await p.getByTestId('details-name').textContent()).toLowerCase(), /gemm/);
  assert.equal(await p.getByTestId('search-count').textContent(), `1 / ${F.gemm}`);
  await p.screenshot({ path: shot('timeline-search.png') });
  await p.getByTestId('search').fill('/^aten::(mm|addmm)$/');
  await p.waitForFunction((n) => document.querySelector('[data-testid=search-count]')?.dataset.count === String(n), F.mm_or_addmm);
  await p.getByTestId('search').fill('/(/');
  await p.getByTestId('search-error').waitFor();
  assert.deepEqual(errors, []);
  await p.close();
});

test('a deep link round-trips the window and the selection', async () => {
  const errors = [];
  const p = await page(b, errors);
  await openTimeline(p);
  await p.getByTestId('search').fill('aten::addmm');
  await p.getByTestId('search').press('Enter');
  await p.getByTestId('details').waitFor();
  const name = await p.getByTestId('details-name').textContent();
  const slice = await p.getByTestId('details').getAttribute('data-slice');
  const start = await p.getByTestId('details-start').getAttribute('data-ns');
  await p.waitForFunction((s) => location.hash.includes(`ts=${s}`), start);
  const url = await p.evaluate(() => location.href);
  const win = (await geometry(p)).window.join(',');
  assert.match(url, /#tab=timeline&file=0&visStart=-?\d+&visEnd=-?\d+&ts=\d+&dur=\d+&track=[^&]+$/);
  const q = await page(b, errors);
  await q.goto(url);
  await q.getByTestId('details').waitFor({ timeout: 60_000 });
  assert.equal(await q.getByTestId('details-name').textContent(), name);
  assert.equal(await q.getByTestId('details').getAttribute('data-slice'), slice);
  await q.waitForFunction(() => Number(document.querySelector('[data-testid=timeline]')?.getAttribute('data-rects')) > 0);
  assert.equal((await geometry(q)).window.join(','), win);
  assert.deepEqual(errors, []);
  await p.close();
  await q.close();
});

test('reveal: "all occurrences" shows a banner with the count and steps through them', async () => {
  const errors = [];
  const p = await page(b, errors);
  await openTimeline(p);
  await p.getByTestId('search').fill('/^aten::mm$/');
  await p.getByTestId('search').press('Enter');
  await p.getByTestId('details-occurrences').click();
  await p.getByTestId('reveal').waitFor();
  assert.equal(await p.getByTestId('reveal-label').textContent(), `aten::mm — ${F.aten_mm} occurrences`);
  assert.equal(await p.getByTestId('reveal-pos').textContent(), `1 / ${F.aten_mm}`);
  const first = await p.getByTestId('details').getAttribute('data-slice');
  await p.getByTestId('reveal-next').click();
  assert.equal(await p.getByTestId('reveal-pos').textContent(), `2 / ${F.aten_mm}`);
  await p.waitForFunction((s) => document.querySelector('[data-testid=details]')?.dataset.slice !== s, first);
  assert.equal(await p.getByTestId('details-name').textContent(), 'aten::mm');
  await p.screenshot({ path: shot('timeline-reveal.png') });
  await p.getByTestId('reveal-prev').click();
  await p.getByTestId('reveal-prev').click();
  assert.equal(await p.getByTestId('reveal-pos').textContent(), `${F.aten_mm} / ${F.aten_mm}`);
  assert.deepEqual(errors, []);
  await p.close();
});

test('an area drag over one stream counts its slices; WASD moves the window; dark theme paints', async () => {
  const errors = [];
  const p = await page(b, errors);
  await openTimeline(p);
  await p.getByTestId('reset-zoom').click();
  const g = await geometry(p);
  const row = streamRow(g);
  const box = await p.getByTestId('timeline').boundingBox();
  // Start in the row's top padding (empty space), sweep the whole window within the row.
  const y0 = box.y + g.ruler + row.y + 1 - g.scroll;
  const y1 = box.y + g.ruler + row.y + row.h - 2 - g.scroll;
  await p.mouse.move(box.x + g.gutter + 1, y0);
  await p.mouse.down();
  await p.mouse.move(box.x + g.width / 2, y1, { steps: 4 });
  await p.mouse.move(box.x + g.width - 1, y1, { steps: 4 });
  await p.mouse.up();
  await p.getByTestId('area').waitFor();
  assert.equal(Number(await p.getByTestId('area-summary').getAttribute('data-count')), F.on_stream);
  await p.screenshot({ path: shot('timeline-area.png') });
  const before = (await geometry(p)).window;
  await p.mouse.move(box.x + g.gutter + (g.width - g.gutter) / 2, box.y + g.height - 5);
  await p.keyboard.press('w');
  await p.waitForFunction((w) => document.querySelector('[data-testid=timeline]').getAttribute('data-window') !== w, before.join(','));
  const zoomed = (await geometry(p)).window;
  assert.ok(zoomed[1] - zoomed[0] < before[1] - before[0], 'w zooms in');
  await p.keyboard.press('d');
  await p.waitForFunction((w) => document.querySelector('[data-testid=timeline]').getAttribute('data-window') !== w, zoomed.join(','));
  const panned = (await geometry(p)).window;
  assert.ok(panned[0] > zoomed[0] && panned[1] - panned[0] === zoomed[1] - zoomed[0], 'd pans right');
  await p.getByTestId('theme-toggle').click();
  await p.waitForFunction(() => document.documentElement.dataset.theme === 'dark');
  await p.waitForTimeout(100);
  const bg = await p.getByTestId('timeline').evaluate((c) => Array.from(c.getContext('2d').getImageData(c.width - 3, c.height - 3, 1, 1).data.slice(0, 3)));
  assert.ok(bg.every((v) => v < 60), `dark canvas background ${bg}`);
  await p.screenshot({ path: shot('timeline-dark.png') });
  assert.deepEqual(errors, []);
  await p.close();
});

test('the side panel takes its width from the tracks; the canvas backing store follows its box at 2x', async () => {
  const errors = [];
  const p = await b.newPage({ viewport: { width: 1400, height: 900 }, deviceScaleFactor: 2 });
  p.on('pageerror', (e) => errors.push(String(e)));
  p.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  await openTimeline(p);
  const sizes = () => p.evaluate(() => {
    const c = document.querySelector('[data-testid=timeline]');
    const s = document.querySelector('[data-testid=tl-side]');
    return { css: c.clientWidth, cssH: c.clientHeight, backing: c.width, backingH: c.height, side: s.getBoundingClientRect().width, shown: getComputedStyle(s).display !== 'none' };
  });
  // The backing store is the box times the device pixel ratio: sharp, not stretched.
  const sharp = (s) => s.backing === Math.round(s.css * 2) && s.backingH === Math.round(s.cssH * 2);
  // The canvas is resized on the animation frame after its box changes: wait for that frame.
  const settled = () => p.waitForFunction(() => {
    const c = document.querySelector('[data-testid=timeline]');
    return c.width === Math.round(c.clientWidth * 2) && c.height === Math.round(c.clientHeight * 2);
  });
  await settled();
  const s0 = await sizes();
  assert.ok(!s0.shown && sharp(s0), JSON.stringify(s0));
  await p.getByTestId('search').fill('aten::addmm');
  await p.getByTestId('search').press('Enter');
  await p.getByTestId('details').waitFor();
  await p.waitForFunction((w) => document.querySelector('[data-testid=timeline]').width < w, s0.backing);
  await settled();
  const s1 = await sizes();
  assert.ok(s1.shown && sharp(s1), JSON.stringify(s1));
  assert.ok(Math.abs(s0.css - s1.css - s1.side) <= 2, `the canvas gave the panel its width: ${JSON.stringify([s0, s1])}`);
  // Details and tracks are on screen together: the panel is beside the canvas, not below the fold.
  const det = await p.getByTestId('details-name').boundingBox();
  const cv = await p.getByTestId('timeline').boundingBox();
  assert.ok(det.x >= cv.x + cv.width - 1 && det.y + det.height <= 900, JSON.stringify([det, cv]));
  // Dragging the panel's edge 100 px left widens it by 100 px and narrows the canvas to match.
  const edge = await p.getByTestId('tl-side-edge').boundingBox();
  const ex = edge.x + edge.width / 2, ey = edge.y + 60;
  await p.mouse.move(ex, ey);
  await p.mouse.down();
  await p.mouse.move(ex - 100, ey, { steps: 5 });
  await p.mouse.up();
  await p.waitForFunction((w) => {
    const c = document.querySelector('[data-testid=timeline]');
    return c.clientWidth < w - 90 && c.width === Math.round(c.clientWidth * 2);
  }, s1.css);
  const s2 = await sizes();
  assert.ok(Math.abs(s2.side - s1.side - 100) <= 1 && Math.abs(s1.css - s2.css - 100) <= 2 && sharp(s2), JSON.stringify([s1, s2]));
  await p.screenshot({ path: shot('timeline-side-2x.png') });
  // × clears the selection and gives the width back.
  await p.getByTestId('tl-side-close').click();
  await p.waitForFunction((w) => document.querySelector('[data-testid=timeline]').clientWidth === w, s0.css);
  await settled();
  const s3 = await sizes();
  assert.ok(!s3.shown && sharp(s3), JSON.stringify(s3));
  assert.equal(await p.getByTestId('details').count(), 0);
  assert.deepEqual(errors, []);
  await p.close();
});

/** The canvas pixel (CSS px inside the canvas) as `#rrggbb`, read back from its 2D context. */
async function pixel(p, x, y) {
  return p.getByTestId('timeline').evaluate((c, [x, y]) => {
    const dpr = c.width / c.clientWidth;
    const d = c.getContext('2d').getImageData(Math.round(x * dpr), Math.round(y * dpr), 1, 1).data;
    return '#' + [d[0], d[1], d[2]].map((v) => v.toString(16).padStart(2, '0')).join('');
  }, [x, y]);
}

test('a fine-rule edit on the Kernels tab recolours that kernel on the timeline and its legend', async () => {
  const errors = [];
  const p = await page(b, errors);
  const start = BigInt(F.start), dur = BigInt(F.dur);
  await openTimeline(p, `#tab=timeline&file=0&t=${windowAround(start, dur)}`);
  // Where the longest kernel is drawn: the middle of its span in the current window, its lane.
  const at = async () => {
    const g = await geometry(p);
    const [w0, w1] = g.window;
    const mid = Number(start + dur / 2n - w0) / Number(w1 - w0);
    const row = streamRow(g);
    // Near the lane top: the name label is drawn across its middle.
    return [g.gutter + mid * (g.width - g.gutter), g.ruler + row.y + 3 + 2 - g.scroll];
  };
  // Colours are the core palette's (crates/core/src/view/palette.rs). The longest demo kernel is
  // an NCCL all-reduce: the default rules file it under comm (brown), and the legend says so.
  const before = await pixel(p, ...(await at()));
  assert.equal(before, '#8c564b', 'comm-coloured before the edit');
  assert.match(await p.getByTestId('legend').innerText(), /kernel: comm/);
  // File the longest kernel under attention (a rule checked first) and apply.
  await p.getByTestId('tab-kernels').click();
  await p.getByTestId('fine-rules-open').click();
  const rules = p.getByTestId('fine-rules');
  const needle = F.kernel.toLowerCase().slice(0, 40);
  await rules.fill(`attention: ${needle}\n` + (await rules.inputValue()));
  await p.getByTestId('fine-rules-apply').click();
  await p.getByTestId('tab-timeline').click();
  await p.getByTestId('timeline').waitFor();
  await p.waitForFunction(() => Number(document.querySelector('[data-testid=timeline]')?.getAttribute('data-rects')) > 0);
  await p.waitForFunction(() => /kernel: attention/.test(document.querySelector('[data-testid=legend]')?.innerText ?? ''));
  // Now attention's colour.
  assert.equal(await pixel(p, ...(await at())), '#8cd17d', `was ${before}`);
  await p.screenshot({ path: shot('timeline-fine-rules.png') });
  assert.deepEqual(errors, []);
  await p.close();
});

test('layout: the main thread, then the GPU; idle threads folded; lanes follow the window; jump to kernel and back', async () => {
  // Hand-built: a second process comes first in the file, a pin-memory thread is nearly idle, the
  // main thread's op launches one kernel and a deep stack sits at the end of the step. By
  // construction the GPU row follows the main thread's process, the idle thread is behind one row,
  // and the main thread needs 2 lanes early in the step, 5 at its end.
  const x = (name, cat, pid, tid, ts, dur, args) => ({ ph: 'X', cat, name, pid, tid, ts, dur, ...(args ? { args } : {}) });
  const events = [
    x('other process op', 'cpu_op', 2, 9, 0, 50),
    x('pin_memory', 'cpu_op', 1, 5, 0, 0.5),
    x('ProfilerStep#1', 'user_annotation', 1, 1, 0, 1000),
    x('aten::mm', 'cpu_op', 1, 1, 10, 30),
    x('cudaLaunchKernel', 'cuda_runtime', 1, 1, 15, 5, { correlation: 7 }),
    x('sgemm_tiled', 'kernel', 0, 7, 60, 20, { correlation: 7, device: 0, stream: 7 }),
    x('a', 'cpu_op', 1, 1, 900, 50), x('b', 'cpu_op', 1, 1, 901, 40), x('c', 'cpu_op', 1, 1, 902, 30), x('d', 'cpu_op', 1, 1, 903, 20),
    { ph: 's', id: 7, pid: 1, tid: 1, ts: 15, cat: 'ac2g', name: 'ac2g' },
    { ph: 'f', id: 7, pid: 0, tid: 7, ts: 60, cat: 'ac2g', name: 'ac2g', bp: 'e' },
  ];
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'tl-layout-')), 'layout.json');
  fs.writeFileSync(file, JSON.stringify({ traceEvents: events }));
  const errors = [];
  let p = await page(b, errors);
  await p.goto(srv.base + '/');
  await p.getByTestId('file-input').setInputFiles(file);
  await p.getByTestId('tab-timeline').click();
  await p.waitForFunction(() => Number(document.querySelector('[data-testid=timeline]')?.getAttribute('data-rects')) > 0);
  let g = await geometry(p);
  const groups = g.rows.filter((r) => r.kind === 'group').map((r) => r.label);
  assert.match(groups[0], /pid 1\)$/, `groups ${groups}`);
  assert.match(groups[1], /^GPU 0/);
  assert.match(groups[2], /pid 2\)$/);
  const idle = g.rows.find((r) => r.kind === 'idle');
  assert.equal(idle?.label, '▸ 1 idle thread');
  assert.ok(!g.rows.some((r) => /\b5\b/.test(r.label) && r.kind === 'slices'), 'the idle thread starts folded');
  const mainRow = () => g.rows.find((r) => r.kind === 'slices' && r.group === 0);
  assert.equal(mainRow().depths, 5, 'whole trace: step + a/b/c/d');
  await p.screenshot({ path: shot('timeline-layout.png') });

  // The window on the first 100 µs (a fresh page opened on a deep link): the main thread shows 3
  // lanes (step, mm, the launch).
  await p.close();
  p = await page(b, errors);
  await p.goto(srv.base + '/#tab=timeline&file=0&visStart=0&visEnd=100000');
  await p.getByTestId('file-input').setInputFiles(file);
  await p.waitForFunction(() => Number(document.querySelector('[data-testid=timeline]')?.getAttribute('data-rects')) > 0);
  g = await geometry(p);
  assert.equal(g.window.join(','), '0,100000', 'the deep link set the window');
  assert.equal(mainRow().depths, 3, `window ${g.window}: step, mm, launch`);

  // Opening the idle row shows the pin-memory thread.
  const box = await p.getByTestId('timeline').boundingBox();
  const idleRow = g.rows.find((r) => r.kind === 'idle');
  await p.mouse.click(box.x + 40, box.y + g.ruler + idleRow.y + idleRow.h / 2 - g.scroll);
  await p.waitForFunction(() => JSON.parse(document.querySelector('[data-testid=timeline]').getAttribute('data-rows')).some((r) => r.kind === 'idle' && r.label.startsWith('▾')));
  g = await geometry(p);
  assert.ok(g.rows.some((r) => r.kind === 'slices' && r.group === 0 && r.y > idleRow.y), 'the idle thread row appears under its toggle');

  // Select aten::mm (lane 1 of the main thread): "Jump to kernel" goes to sgemm_tiled, and back.
  const main = mainRow();
  const ns = (v) => Number(v);
  const [w0, w1] = g.window.map(ns);
  const xAt = (us) => g.gutter + ((us * 1000 - w0) / (w1 - w0)) * (g.width - g.gutter);
  await p.mouse.click(box.x + xAt(30), box.y + g.ruler + main.y + 3 + 18 + 9 - g.scroll);
  await p.getByTestId('details').waitFor();
  assert.equal(await p.getByTestId('details-name').textContent(), 'aten::mm');
  await p.getByTestId('jump-kernel').click();
  await p.waitForFunction(() => document.querySelector('[data-testid=details-name]')?.textContent === 'sgemm_tiled');
  await p.screenshot({ path: shot('timeline-jump-kernel.png') });
  await p.getByTestId('jump-op').click();
  await p.waitForFunction(() => document.querySelector('[data-testid=details-name]')?.textContent === 'aten::mm');
  assert.deepEqual(errors, []);
  await p.close();
});
