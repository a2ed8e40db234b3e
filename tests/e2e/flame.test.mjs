// The flame graph tab, end to end on the bundled demo trace: the root's total is checked against
// an independent read of the file with python's json module (host call stacks nested by time per
// thread, top-level durations clipped to the scope, exact ns via Decimal) and the ProfilerStep*
// frame against the CLI's operator row; clicking a frame and "Show in timeline" reveals its
// occurrences there; double-click zooms and the breadcrumb / Esc zoom out; the step picker and the
// GPU weight rescope it; an area dragged on the timeline opens as "Flame graph of selection" with
// the dragged range and thread. Screenshots (1440×900) go to target/e2e/.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { serve, browser, page, shot, cli, ROOT, CORPUS } from './harness.mjs';

const DEMO = path.join(ROOT, 'web/demo/demo.pt.trace.json.gz');
const URL_PATH = '/?url=' + encodeURIComponent('demo/demo.pt.trace.json.gz');

/** Sum of the top-level host frames' time in [t0, t1) on threads `tids` (all when empty), and
 * facts about the demo, computed by python from the file alone. */
function py(args) {
  const code = `
import gzip, json, sys
from decimal import Decimal
d = json.load(gzip.open(sys.argv[1]), parse_float=Decimal)
X = [e for e in d['traceEvents'] if e.get('ph') == 'X']
ns = lambda v: int(Decimal(v) * 1000)
HOST = ('cpu_op', 'user_annotation', 'cuda_runtime', 'cuda_driver')
def top_level(t0, t1, tids):
    by = {}
    for e in X:
        if e.get('cat') in HOST and (not tids or e['tid'] in tids):
            by.setdefault((e['pid'], e['tid']), []).append((ns(e['ts']), ns(e['ts']) + ns(e['dur'])))
    total = 0
    for evs in by.values():
        evs.sort(key=lambda v: (v[0], -v[1]))
        reach = None
        for s, e in evs:
            if reach is not None and e <= reach:
                continue  # inside an earlier top-level event
            reach = e
            total += max(0, min(e, t1) - max(s, t0))
    return total
steps = sorted((ns(e['ts']), ns(e['ts']) + ns(e['dur'])) for e in X if e['name'].startswith('ProfilerStep#'))
ops = {}
for e in X:
    if e.get('cat') == 'cpu_op':
        ops[e['tid']] = ops.get(e['tid'], 0) + 1
main = max(ops, key=ops.get)
name = next((e['args']['name'] for e in d['traceEvents'] if e.get('ph') == 'M' and e.get('name') == 'thread_name' and e.get('tid') == main), None)
big = 1 << 62
q = json.loads(sys.argv[2])
print(json.dumps({
  'all': str(top_level(-big, big, [])),
  'steps': len(steps),
  'step1': str(top_level(steps[0][0], steps[0][1], [])),
  'kernels': str(sum(ns(e['dur']) for e in X if e.get('cat') in ('kernel', 'gpu_memcpy', 'gpu_memset'))),
  'main': main,
  'main_name': name,
  'area': str(top_level(int(q['t0']), int(q['t1']), [main])) if q else None,
}))
`;
  return JSON.parse(execFileSync('python3', ['-c', code, DEMO, JSON.stringify(args ?? null)]).toString());
}

/** The CLI's `ProfilerStep*` operator row (host side). */
const stepRow = (file) => cli(file).ops.find((r) => r.name === 'ProfilerStep*' && !r.on_device);

let srv, b, F;
before(async () => { srv = await serve(); b = await browser(); F = py(); });
after(async () => { await b?.close(); srv?.server.close(); });

async function wide(errors) {
  const p = await page(b, errors);
  await p.setViewportSize({ width: 1440, height: 900 });
  return p;
}

const attr = (p, name) => p.getByTestId('flame').getAttribute(name);

/** Waits until the flame canvas has painted a graph whose attribute `name` passes `ok`. */
async function painted(p, name = 'data-frames', ok = (v) => Number(v) > 0) {
  await p.getByTestId('flame').waitFor();
  await p.waitForFunction(
    ([n, src]) => { const v = document.querySelector('[data-testid=flame]')?.getAttribute(n); return v != null && new Function('v', `return (${src})(v)`)(v); },
    [name, ok.toString()],
  );
}

/** The row height the canvas paints and hit-tests with (rows share the window's height). */
const rowPx = async (p) => Number(await attr(p, 'data-row-px'));

/** Hovers the frame at (x px, row) of the canvas; returns the tooltip's name and figures. */
async function hover(p, x, row) {
  const box = await p.getByTestId('flame').boundingBox();
  const r = await rowPx(p);
  await p.mouse.move(box.x + x, box.y + row * r + r / 2);
  const tip = p.getByTestId('flame-tip');
  await tip.waitFor();
  const name = await p.getByTestId('flame-tip-name').textContent();
  const figs = Object.fromEntries(await tip.locator('[data-key]').evaluateAll((els) => els.map((e) => [e.dataset.key, e.dataset.value])));
  return { name, figs, box };
}

test('whole trace: root = python top-level sum; ProfilerStep* = CLI; click reveals; zoom and back', async () => {
  const errors = [];
  const p = await wide(errors);
  await p.goto(srv.base + URL_PATH);
  await p.getByTestId('tab-flame').click({ timeout: 60_000 });
  await painted(p);
  assert.equal(await attr(p, 'data-all-ns'), F.all, 'root total = top-level host time of every thread');
  assert.equal(await attr(p, 'data-root-ns'), F.all);
  const width = Number(await attr(p, 'data-width'));
  assert.ok(Math.abs(width - (await p.getByTestId('flame').evaluate((c) => c.clientWidth))) < 1, 'root spans the canvas');
  // Left heavy: the first frame under the root is the heaviest: the steps, merged.
  const { name, figs, box } = await hover(p, 4, 1);
  assert.equal(name, 'ProfilerStep*');
  const row = stepRow(DEMO);
  assert.ok(row, 'CLI has a ProfilerStep* row');
  assert.ok(Math.abs(Number(figs.Total) / 1e3 - row.cpu_total_us) < 0.002, `frame total ${figs.Total} ns = CLI ProfilerStep* CPU total ${row.cpu_total_us} µs`);
  assert.equal(Number(figs.Calls), row.calls);
  await p.screenshot({ path: shot('flame-demo.png') });
  // Click selects; "Show in timeline" reveals every step there.
  const r = await rowPx(p);
  await p.mouse.click(box.x + 4, box.y + r + r / 2);
  await p.getByTestId('flame-selected').waitFor();
  assert.match(await p.getByTestId('flame-reveal').textContent(), new RegExp(`Show ${F.steps} in`));
  assert.equal(await p.getByTestId('flame-selected').locator('[data-key=Total]').getAttribute('data-value'), figs.Total);
  // Double-click zooms into the frame; the breadcrumb has root and step; Esc goes back.
  await p.mouse.dblclick(box.x + 4, box.y + r + r / 2);
  await p.waitForFunction(() => document.querySelector('[data-testid=flame]').getAttribute('data-root') !== '0');
  assert.equal(await attr(p, 'data-root-ns'), figs.Total);
  assert.equal(await p.getByTestId('flame-crumb').count(), 2);
  await p.mouse.move(box.x + 300, box.y + 2 * (await rowPx(p)) + (await rowPx(p)) / 2);
  await p.getByTestId('flame-tip').waitFor();
  await p.screenshot({ path: shot('flame-demo-zoomed.png') });
  await p.keyboard.press('Escape');
  await p.waitForFunction(() => document.querySelector('[data-testid=flame]').getAttribute('data-root') === '0');
  await p.getByTestId('flame-reveal').click();
  await p.getByTestId('reveal').waitFor();
  assert.equal(Number(await p.getByTestId('reveal').getAttribute('data-count')), F.steps);
  assert.match(await p.getByTestId('reveal-label').textContent(), /^ProfilerStep\* — /);
  // Back on the tab, the scope and selection state are kept.
  await p.getByTestId('tab-flame').click();
  await painted(p);
  assert.equal(await attr(p, 'data-all-ns'), F.all);
  assert.deepEqual(errors, []);
  await p.close();
});

test('step picker and GPU weight rescope the graph; search highlights', async () => {
  const errors = [];
  const p = await wide(errors);
  await p.goto(srv.base + URL_PATH);
  await p.getByTestId('tab-flame').click({ timeout: 60_000 });
  await painted(p);
  const first = await p.getByTestId('flame-scope').locator('option').nth(1).getAttribute('value');
  await p.getByTestId('flame-scope').selectOption(first);
  await painted(p, 'data-all-ns', (v) => v !== '0');
  await p.waitForFunction((want) => document.querySelector('[data-testid=flame]').getAttribute('data-all-ns') === want, F.step1);
  await p.getByTestId('flame-weight').selectOption('device');
  await p.getByTestId('flame-scope').selectOption('all');
  await p.waitForFunction((want) => document.querySelector('[data-testid=flame]').getAttribute('data-all-ns') === want, F.kernels);
  assert.equal(await attr(p, 'data-weight'), 'GPU time launched');
  await p.getByTestId('flame-search').fill('gemm');
  await p.getByTestId('flame-matches').waitFor();
  assert.ok(Number(await p.getByTestId('flame-matches').getAttribute('data-count')) > 0);
  await p.screenshot({ path: shot('flame-demo-gpu.png') });
  assert.deepEqual(errors, []);
  await p.close();
});

test('an area dragged on the timeline opens as a flame graph of that range and thread', async () => {
  const errors = [];
  const p = await wide(errors);
  await p.goto(srv.base + URL_PATH);
  await p.getByTestId('tab-timeline').click({ timeout: 60_000 });
  const tl = p.getByTestId('timeline');
  await p.waitForFunction(() => Number(document.querySelector('[data-testid=timeline]')?.getAttribute('data-rects')) > 0);
  const g = await tl.evaluate((c) => ({
    rows: JSON.parse(c.getAttribute('data-rows')),
    ruler: Number(c.getAttribute('data-ruler-px')),
    gutter: Number(c.getAttribute('data-gutter-px')),
    width: c.clientWidth,
  }));
  const row = g.rows.find((r) => r.kind === 'slices' && r.label === F.main_name);
  assert.ok(row, `a row for thread ${F.main} (${F.main_name})`);
  const box = await tl.boundingBox();
  const y0 = box.y + g.ruler + row.y + 1;
  const y1 = box.y + g.ruler + row.y + Math.min(row.h, 40) - 2;
  const x0 = box.x + g.gutter + (g.width - g.gutter) * 0.3;
  const x1 = box.x + g.gutter + (g.width - g.gutter) * 0.6;
  await p.mouse.move(x0, y0);
  await p.mouse.down();
  await p.mouse.move((x0 + x1) / 2, y1, { steps: 4 });
  await p.mouse.move(x1, y1, { steps: 4 });
  await p.mouse.up();
  await p.getByTestId('area-flame').click();
  await painted(p);
  assert.equal(await p.getByTestId('flame-scope').inputValue(), 'area');
  const [t0, t1] = (await attr(p, 'data-range')).split(',');
  const want = py({ t0, t1 }).area;
  assert.ok(Number(want) > 0);
  assert.equal(await attr(p, 'data-all-ns'), want, 'root = the dragged range of that thread');
  await p.screenshot({ path: shot('flame-area.png') });
  assert.deepEqual(errors, []);
  await p.close();
});

test('the graph fills the window: rows share its height, and a click hits the row it paints', async () => {
  const errors = [];
  const p = await wide(errors);
  await p.goto(srv.base + URL_PATH);
  await p.getByTestId('tab-flame').click({ timeout: 60_000 });
  await painted(p);
  const canvas = p.getByTestId('flame');
  const rows = Number(await attr(p, 'data-rows'));
  const r = await rowPx(p);
  const box = await canvas.boundingBox();
  const vh = p.viewportSize().height;
  // Rows between 18 and 40 px, as tall as the window's height below the graph allows; the canvas
  // reaches the window's bottom (16 px spare) whatever the rows need.
  assert.ok(r >= 18 && r <= 40, `row ${r}px`);
  assert.equal(r, Math.max(18, Math.min(40, Math.floor((vh - box.y - 16) / rows))), `row ${r}px for ${rows} rows`);
  assert.ok(Math.abs(box.y + box.height - (vh - 16)) <= 1.5, `bottom ${box.y + box.height} of ${vh}`);
  // A click in the lower half of row 1 selects the row-1 frame (ProfilerStep*), as painted.
  await p.mouse.click(box.x + 4, box.y + r + r * 0.9);
  await p.getByTestId('flame-selected').waitFor();
  assert.match(await p.getByTestId('flame-selected').textContent(), /ProfilerStep\*/);
  await p.screenshot({ path: shot('flame-window-height.png') });
  // A shorter window: the canvas follows it.
  await p.setViewportSize({ width: 1440, height: 700 });
  await p.waitForFunction(() => Math.abs(document.querySelector('[data-testid=flame]').getBoundingClientRect().bottom - (700 - 16)) <= 1.5);
  assert.ok((await rowPx(p)) <= r);
  assert.deepEqual(errors, []);
  await p.close();
});

test('a real A100 trace: screenshot of the flame graph, CPU and GPU time', async () => {
  const file = 'real/hta/a100_80gb_rank0of16.json.gz';
  const errors = [];
  const p = await wide(errors);
  await p.goto(srv.base + '/?url=' + encodeURIComponent('corpus/' + file));
  await p.getByTestId('tab-flame').click({ timeout: 120_000 });
  await painted(p);
  const row = stepRow(path.join(CORPUS, file));
  const { name, figs } = await hover(p, 4, 1);
  assert.equal(name, 'ProfilerStep*');
  assert.ok(Math.abs(Number(figs.Total) / 1e3 - row.cpu_total_us) < 0.002, `${figs.Total} ns vs CLI ${row.cpu_total_us} µs`);
  await p.mouse.move(0, 0);
  const nodes = await attr(p, 'data-nodes'), ms = await attr(p, 'data-build-ms');
  console.log(`A100 flame: ${nodes} frames built in ${ms} ms (CPU weight, whole trace)`);
  await p.screenshot({ path: shot('flame-a100.png') });
  await p.getByTestId('flame-weight').selectOption('device');
  await painted(p, 'data-weight', (v) => v === 'GPU time launched');
  console.log(`A100 flame: ${await attr(p, 'data-nodes')} frames built in ${await attr(p, 'data-build-ms')} ms (GPU weight)`);
  await p.screenshot({ path: shot('flame-a100-gpu.png') });
  assert.deepEqual(errors, []);
  await p.close();
});

test('a stack 300 frames deep draws 240 rows (bounded canvas) and says how to reach the rest', async () => {
  const errors = [];
  const p = await wide(errors);
  // f0 ⊃ f1 ⊃ … ⊃ f299 on one thread: 300 rows, each 2 µs shorter than its parent.
  const ev = Array.from({ length: 300 }, (_, i) => ({ ph: 'X', cat: 'cpu_op', name: `f${i}`, pid: 1, tid: 1, ts: i, dur: 1000 - 2 * i }));
  await p.goto(srv.base + '/');
  await p.getByTestId('file-input').setInputFiles({ name: 'deep.json', mimeType: 'application/json', buffer: Buffer.from(JSON.stringify({ traceEvents: ev })) });
  await p.getByTestId('tab-flame').click({ timeout: 60_000 });
  await painted(p);
  assert.equal(await p.getByTestId('flame').evaluate((c) => c.style.height), `${240 * 18}px`);
  // Root row + 300 frames = 301 rows; 240 drawn.
  assert.match(await p.getByTestId('flame-hidden').textContent(), /^61 deeper rows/);
  const box = await p.getByTestId('flame').boundingBox();
  assert.equal(await rowPx(p), 18, 'a deep graph keeps the least row height');
  await p.mouse.dblclick(box.x + 50, box.y + 18 + 9);
  await p.waitForFunction(() => document.querySelector('[data-testid=flame-hidden]')?.textContent.startsWith('60 '));
  assert.equal(await attr(p, 'data-root-ns'), '1000000');
  assert.deepEqual(errors, []);
  await p.close();
});
