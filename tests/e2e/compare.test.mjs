// The compare view, end to end: `?url=A&compare=B` on the HTA trace_diff pair opens A with B as the
// comparison; the verdict, step times, breakdown, categories and the op and kernel diff rows the
// page shows must equal `tracelight diff A B --json` on the same files.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { serve, browser, page, shot, inViewport, assertSig3, CORPUS, ROOT, corpusSkip } from './harness.mjs';

let srv, b;
before(async () => { srv = await serve(); b = await browser(); });
after(async () => { await b?.close(); srv?.server.close(); });

const BIN = path.join(ROOT, 'target', 'release', 'tracelight');
const REL_A = 'real/hta/trace_diff/control_a100_rank3of8.json.gz';
const REL_B = 'real/hta/trace_diff/test_v100_rank1of2.json.gz';
const [A, B] = [REL_A, REL_B].map((r) => path.join(CORPUS, r));

const num = (loc, attr) => loc.getAttribute(attr).then(Number);
const near = (ns, us, what, tol = 1) => assert.ok(Math.abs(ns - us * 1e3) <= tol, `${what}: page ${ns} ns vs CLI ${us} µs`);

test('?url=A&compare=B shows the CLI diff of the trace_diff pair', { skip: corpusSkip(A, B) }, async () => {
  const c = JSON.parse(execFileSync(BIN, ['diff', A, B, '--json'], { maxBuffer: 256 << 20 }).toString());
  const errors = [];
  const p = await page(b, errors);
  await p.goto(`${srv.base}/?url=/corpus/${REL_A}&compare=/corpus/${REL_B}`);
  const view = p.getByTestId('compare-view');
  await view.waitFor({ timeout: 180_000 });

  assert.equal((await p.getByTestId('compare-verdict').textContent()).trim(), c.verdict);
  const step = p.getByTestId('compare-step');
  near(await num(step, 'data-a-ns'), c.step.a.mean_us, 'A mean step');
  near(await num(step, 'data-b-ns'), c.step.b.mean_us, 'B mean step');
  near(await num(step, 'data-delta-ns'), c.step.delta_us, 'step delta');
  near(await num(step, 'data-a-stdev-ns'), c.step.a.stdev_us, 'A step stdev');

  for (const [id, lines] of [['compare-breakdown', c.breakdown], ['compare-fine', c.fine_categories], ['compare-seed', c.categories]]) {
    for (const l of lines) {
      if (!l.a_us && !l.b_us) continue;
      const row = p.locator(`[data-testid=${id}] [data-key="${l.name}"]`);
      near(await num(row, 'data-delta-ns'), l.delta_us, `${id} ${l.name}`);
    }
  }

  // Tables: by impact (|Δ per step|), the CLI's rows re-sorted the same way.
  const impact = (rows) => [...rows].sort((x, y) => Math.abs(y.delta_step_us) - Math.abs(x.delta_step_us) || (x.name < y.name ? -1 : x.name > y.name ? 1 : 0));
  for (const [id, rows] of [['compare-ops', c.ops], ['compare-kernels', c.kernels]]) {
    const want = impact(rows).slice(0, 5);
    for (let k = 0; k < want.length; k++) {
      const row = p.locator(`[data-testid=${id}] .vt-row[data-row="${k}"]`);
      assert.equal(await row.locator('[data-col=name]').textContent(), want[k].name, `${id} row ${k}`);
      // Status, then B's name when it differs; how it was matched in core's words, as the CLI.
      const status = await row.locator('[data-col=status]').textContent();
      if (want[k].b_name) assert.ok(status.includes(` → ${want[k].b_name}`), `${id} row ${k}: ${status}`);
      else assert.equal(status, want[k].status);
      if (want[k].status !== 'same') assert.equal(await row.locator('[data-col=via]').textContent(), want[k].how, `${id} row ${k} how`);
    }
    assert.equal(Number(await p.getByTestId(id).getAttribute('data-rows')), rows.length, `${id} row count`);
  }
  await p.screenshot({ path: shot('compare-overview.png'), fullPage: true });

  // Filter: only kernels whose name (either side) holds the text.
  await p.getByTestId('compare-filter').fill('nccl');
  const n = c.kernels.filter((r) => (r.name + ' ' + (r.b_name || '')).toLowerCase().includes('nccl')).length;
  await p.waitForFunction((n) => Number(document.querySelector('[data-testid=compare-kernels]')?.dataset.rows) === n, n);
  await p.screenshot({ path: shot('compare-filtered.png'), fullPage: true });
  await p.getByTestId('compare-filter').fill('');

  // Timelines side by side: one step of each, on one relative axis (each step's start = 0).
  const tls = p.getByTestId('compare-timelines');
  assert.equal(Number(await tls.getAttribute('data-steps')), Math.min(c.step.a.n, c.step.b.n));
  const side = (s) => p.locator(`[data-testid=compare-tl-${s}]`);
  const rel = async (s) => {
    const o = BigInt(await side(s).getAttribute('data-origin-ns'));
    const w = (await side(s).locator('[data-testid=timeline]').getAttribute('data-window')).split(',').map(BigInt);
    return w.map((x) => x - o).join(',');
  };
  await side('a').locator('[data-testid=timeline]').waitFor();
  await side('b').locator('[data-testid=timeline]').waitFor();
  const before = await rel('a');
  assert.equal(await rel('b'), before, 'both sides open on the same relative window');
  // Zoom in on A: B follows to the same relative window.
  const canvasA = side('a').locator('[data-testid=timeline]');
  const winA0 = await canvasA.getAttribute('data-window');
  const box = await canvasA.boundingBox();
  await p.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
  for (let k = 0; k < 3; k++) await p.mouse.wheel(0, -240);
  await p.waitForFunction((w) => document.querySelector('[data-testid=compare-tl-a] [data-testid=timeline]')?.dataset.window !== w, winA0, { timeout: 5000 });
  const zoomed = await rel('a');
  assert.notEqual(zoomed, before, 'the wheel zoomed A');
  const want = zoomed.split(',').map(BigInt);
  await p.waitForFunction(([o, w]) => {
    const c = document.querySelector('[data-testid=compare-tl-b] [data-testid=timeline]');
    const win = c?.dataset.window?.split(',').map(BigInt);
    return win && win[0] - BigInt(o) === BigInt(w[0]) && win[1] - BigInt(o) === BigInt(w[1]);
  }, [await side('b').getAttribute('data-origin-ns'), want.map(String)], { timeout: 5000 }).catch(() => {});
  assert.equal(await rel('b'), zoomed, 'B follows A to the same relative window');

  // A kernel diff row: its occurrences in both timelines, as many as the CLI's calls on each side.
  const k0 = impact(c.kernels)[0];
  await p.locator('[data-testid=compare-kernels] .vt-row[data-row="0"]').click();
  for (const [s, n] of [['a', k0.a_calls], ['b', k0.b_calls]]) {
    const r = side(s).getByTestId('reveal');
    await r.waitFor();
    assert.equal(Number(await r.getAttribute('data-count')), n, `side ${s}: occurrences of ${k0.name}`);
  }
  // Each pane jumps to an occurrence inside the step compared (the window and the step from
  // that side's own start), and scrolls its track into the pane: the GPU stream of a kernel sits
  // below the CPU threads' fold in a ~300 px pane.
  for (const s of ['a', 'b']) {
    await p.waitForFunction((s) => {
      const c = document.querySelector(`[data-testid=compare-tl-${s}] [data-testid=timeline]`);
      return c?.dataset.selectedNs && c.dataset.selectedY;
    }, s, { timeout: 10_000 });
    const cv = side(s).locator('[data-testid=timeline]');
    const o = BigInt(await side(s).getAttribute('data-origin-ns'));
    const stepNs = BigInt(await side(s).getAttribute('data-step-ns'));
    const at = BigInt(await cv.getAttribute('data-selected-ns'));
    assert.ok(at >= o && at < o + stepNs, `side ${s}: occurrence at +${at - o} ns, outside the ${stepNs} ns step`);
    const [w0, w1] = (await cv.getAttribute('data-window')).split(',').map(BigInt);
    assert.ok(w0 <= at && at < w1, `side ${s}: occurrence at ${at} outside the window ${w0}..${w1}`);
    const y = Number(await cv.getAttribute('data-selected-y'));
    const scroll = Number(await cv.getAttribute('data-scroll'));
    const visible = (await cv.boundingBox()).height - Number(await cv.getAttribute('data-ruler-px'));
    assert.ok(y >= scroll && y + 18 <= scroll + visible, `side ${s}: its lane at y ${y} is off the pane (scroll ${scroll}, ${visible} px shown)`);
    // The position says which of the occurrences it is (all of them still step through).
    const pos = (await side(s).getByTestId('reveal-pos').textContent()).split(' / ').map(Number);
    assert.equal(pos[1], s === 'a' ? k0.a_calls : k0.b_calls);
    assert.ok(pos[0] >= 1 && pos[0] <= pos[1]);
  }
  await tls.scrollIntoViewIfNeeded();
  await tls.screenshot({ path: shot('compare-timelines.png') });

  // Ops keyed by name + input shapes: the rows of `diff --group-by-input-shape`.
  const cs = JSON.parse(execFileSync(BIN, ['diff', A, B, '--json', '--group-by-input-shape'], { maxBuffer: 256 << 20 }).toString());
  assert.notEqual(cs.ops.length, c.ops.length, 'shapes split some ops');
  await p.getByTestId('compare-by-shapes').check();
  await p.waitForFunction((n) => Number(document.querySelector('[data-testid=compare-ops]')?.dataset.rows) === n, cs.ops.length, { timeout: 30_000 });
  const top = impact(cs.ops)[0];
  assert.equal(await p.locator('[data-testid=compare-ops] .vt-row[data-row="0"] [data-col=name]').textContent(), top.name);
  assert.deepEqual(errors, []);
});

test('a trace dropped on the compare target becomes B; A stays open', async () => {
  // B is the demo itself under another name: by construction every step delta is 0.
  const errors = [];
  const p = await page(b, errors);
  await p.goto(`${srv.base}/?url=demo/demo.pt.trace.json.gz`);
  await p.getByTestId('tab-compare').click({ timeout: 60_000 });
  await p.getByTestId('compare-drop').waitFor();
  await p.getByTestId('compare-drop').evaluate(async (el) => {
    const buf = await (await fetch('demo/demo.pt.trace.json.gz')).arrayBuffer();
    const dt = new DataTransfer();
    dt.items.add(new File([buf], 'b-copy.pt.trace.json.gz'));
    el.dispatchEvent(new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true }));
  });
  await p.getByTestId('compare-view').waitFor({ timeout: 60_000 });
  assert.match(await p.getByTestId('compare-view').locator('.toolbar').first().textContent(), /B b-copy\.pt\.trace\.json\.gz/);
  assert.equal(Number(await p.getByTestId('compare-step').getAttribute('data-delta-ns')), 0);
  // The drop did not replace A: one file chip, the demo.
  assert.deepEqual(await p.locator('.file-chip').allTextContents(), ['demo.pt.trace.json.gz']);
  assert.deepEqual(errors, []);
  await p.close();
});

const MEM_A = 'generated/lstm_mem.1795343595561069429.pt.trace.json';
const MEM_B = 'generated/lstm_mem.1795343595695003232.pt.trace.json';
test('two traces with [memory]: A and B overlaid, peaks as the CLI diff', { skip: corpusSkip(path.join(CORPUS, MEM_A)) }, async () => {
  const c = JSON.parse(execFileSync(BIN, ['diff', path.join(CORPUS, MEM_A), path.join(CORPUS, MEM_B), '--json']).toString());
  const errors = [];
  const p = await page(b, errors);
  await p.goto(`${srv.base}/?url=/corpus/${MEM_A}&compare=/corpus/${MEM_B}`);
  const m = p.getByTestId('compare-memory');
  await m.waitFor({ timeout: 60_000 });
  assert.equal(Number(await m.getAttribute('data-a-peak')), c.memory.peak_allocated_bytes.a);
  assert.equal(Number(await m.getAttribute('data-b-peak')), c.memory.peak_allocated_bytes.b);
  await m.screenshot({ path: shot('compare-memory.png') });
  assert.deepEqual(errors, []);
  await p.close();
});

const RN = 'generated/resnet_all.1795343593430138415';
test('two sessions with memory timelines: each category of A and B overlaid, peaks as python reads them', { skip: corpusSkip(path.join(CORPUS, RN + '.memory_timeline.json')) }, async () => {
  // B is A's files under other names: by construction every category's peak is the same on both.
  const [trace, timeline] = ['.pt.trace.json.gz', '.memory_timeline.json'].map((s) => path.join(CORPUS, RN + s));
  const [times, sizes] = JSON.parse(fs.readFileSync(timeline, 'utf8'));
  assert.equal(times.length, sizes.length);
  const CATS = ['parameter', 'optimizer_state', 'input', 'temporary', 'activation', 'gradient', 'autograd_detail', 'unknown'];
  const want = CATS.map((name, c) => [name, Math.max(0, ...sizes.map((r) => r[c + 1]))]).filter(([, v]) => v > 0);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tl-cmp-'));
  const bFiles = [['b.pt.trace.json.gz', trace], ['b.memory_timeline.json', timeline]].map(([n, f]) => {
    fs.copyFileSync(f, path.join(dir, n));
    return path.join(dir, n);
  });
  const errors = [];
  const p = await page(b, errors);
  await p.goto(srv.base + '/');
  await p.getByTestId('file-input').setInputFiles([trace, timeline]);
  await p.getByTestId('tab-compare').click({ timeout: 60_000 });
  await p.getByTestId('compare-input').setInputFiles(bFiles);
  await p.getByTestId('compare-memory-categories').waitFor({ timeout: 60_000 });
  const got = await p.getByTestId('compare-memory-category').evaluateAll((els) => els.map((e) => [e.dataset.category, Number(e.dataset.aPeak), Number(e.dataset.bPeak)]));
  assert.deepEqual(got, want.map(([n, v]) => [n, v, v]));
  await p.getByTestId('compare-memory-categories').screenshot({ path: shot('compare-memory-categories.png') });
  assert.deepEqual(errors, []);
  await p.close();
});

// Issue 23, point 1: B runs torch.compile and CUDA graphs on a V100 rank of 2, A is eager on an
// A100 rank of 8, and B's FLOP count covers a fraction of A's: the page says so above the figures,
// shows FLOPs and counted ops per step, and greys the rates instead of a −95% "achieved TFLOPS".
test('the trace_diff pair: setup banner, FLOP coverage per step, rates greyed with the reason', { skip: corpusSkip(A, B) }, async () => {
  const c = JSON.parse(execFileSync(BIN, ['diff', A, B, '--json'], { maxBuffer: 256 << 20 }).toString());
  assert.equal(c.flops.rates_comparable, false, 'the CLI does not compare these rates either');
  const errors = [];
  const p = await page(b, errors);
  await p.goto(`${srv.base}/?url=/corpus/${REL_A}&compare=/corpus/${REL_B}`);
  const banner = p.getByTestId('compare-setup');
  await banner.waitFor({ timeout: 180_000 });
  assert.ok(await inViewport(banner), 'the setup banner is on screen when the view opens');
  const text = await banner.textContent();
  for (const note of c.setup_notes) assert.ok(text.includes(note), `banner says ${note}: ${text}`);
  assert.match(text, /A100-PG509-200.*V100-SXM2-16GB/);
  assert.match(text, /world size: A 8, B 2/);
  assert.match(text, /B runs torch\.compile/);

  const fig = (k) => p.locator(`[data-testid=compare-figures] tr[data-key="${k}"]`);
  const cells = async (k) => (await fig(k).locator('td').allTextContents()).map((t) => t.trim());
  const flops = await cells('flops_per_step');
  assert.equal(flops[0], 'FLOPs counted / step');
  assertSig3(flops[1], c.flops.flops_per_step.a, 'A FLOPs / step');
  assertSig3(flops[2], c.flops.flops_per_step.b, 'B FLOPs / step');
  const ops = await cells('flop_ops_per_step');
  assert.equal(Number(ops[1]), Math.round(c.flops.flop_ops_per_step.a));
  assert.equal(Number(ops[2]), Math.round(c.flops.flop_ops_per_step.b));
  for (const k of ['tflops', 'tflops_busy', 'mfu']) {
    const row = fig(k);
    assert.match(await row.getAttribute('class'), /cmp-na/, `${k} greyed`);
    const [, a, bb, d] = await cells(k);
    assert.equal(d, 'not comparable');
    const scale = k === 'mfu' ? 1 : 1e12;
    assertSig3(a, c.flops[k].a * scale, `A ${k}`);
    assertSig3(bb, c.flops[k].b * scale, `B ${k}`);
    assert.equal(await row.getAttribute('title'), c.flops.not_comparable_because.join('; '));
  }
  // The rate's unit fits its size: B's window rate is GFLOPS, not "0.21 TFLOPS".
  assert.match((await cells('tflops'))[2], / GFLOPS$/);
  const note = await p.getByTestId('compare-rates-note').textContent();
  assert.ok(note.includes(c.flops.not_comparable_because[0]), note);
  // The category shares do not sum to 100%: the page says why (overlapping streams).
  assert.match(await p.getByTestId('compare-fine-note').textContent(), /sum to \d+% of the step-time change: GPU time is summed over streams that run at once/);
  // Units stay on the numbers' line: no cell of the overview tables wraps.
  const wrapped = await p.locator('table.cmp td.num').evaluateAll((tds) => tds.filter((td) => td.textContent.trim() && td.getClientRects().length && td.getBoundingClientRect().height > 24).map((td) => td.textContent));
  assert.deepEqual(wrapped, [], 'numeric cells on one line');
  // The median step beside the mean (B's first step is a 166 ms warm-up).
  const med = p.getByTestId('compare-step-median');
  assert.ok(Math.abs(Number(await med.getAttribute('data-b-ns')) - c.step.b.median_us * 1e3) <= 1);
  await p.getByTestId('compare-figures').scrollIntoViewIfNeeded();
  await p.screenshot({ path: shot('compare-coverage.png') });
  assert.deepEqual(errors, []);
  await p.close();
});

// Issue 23, point 2: renames pair only within one family, say how and how sure, and can be
// turned off — as `tracelight diff` (and `--no-renames`) does.
test('renamed kernels pair only like with like, say how, and matching can be turned off', { skip: corpusSkip(A, B) }, async () => {
  const c = JSON.parse(execFileSync(BIN, ['diff', A, B, '--json'], { maxBuffer: 256 << 20 }).toString());
  const off = JSON.parse(execFileSync(BIN, ['diff', A, B, '--json', '--no-renames'], { maxBuffer: 256 << 20 }).toString());
  const errors = [];
  const p = await page(b, errors);
  await p.goto(`${srv.base}/?url=/corpus/${REL_A}&compare=/corpus/${REL_B}`);
  await p.getByTestId('compare-view').waitFor({ timeout: 180_000 });
  // The tanh kernels: none is read as a gemm any more.
  await p.getByTestId('compare-filter').fill('tanh');
  const tanh = c.kernels.filter((r) => (r.name + ' ' + (r.b_name || '')).toLowerCase().includes('tanh'));
  assert.ok(tanh.length > 0);
  await p.waitForFunction((n) => Number(document.querySelector('[data-testid=compare-kernels]')?.dataset.rows) === n, tanh.length);
  const statuses = await p.locator('[data-testid=compare-kernels] .vt-row [data-col=status]').allTextContents();
  assert.ok(statuses.length > 0 && statuses.every((s) => !/gemm/i.test(s)), statuses.join(' | '));
  await p.getByTestId('compare-filter').fill('');
  // Renamed rows: the How column names the family, the parent and the confidence, as the CLI.
  const renamed = c.kernels.filter((r) => r.matched_by === 'parent' || r.matched_by === 'sizes');
  assert.ok(renamed.length > 0);
  await p.getByTestId('compare-filter').fill('split_embedding_codegen_forward');
  const hits = c.kernels.filter((r) => (r.name + ' ' + (r.b_name || '')).includes('split_embedding_codegen_forward'));
  const emb = hits.find((r) => r.matched_by === 'sizes');
  await p.waitForFunction((n) => Number(document.querySelector('[data-testid=compare-kernels]')?.dataset.rows) === n, hits.length);
  const names = await p.locator('[data-testid=compare-kernels] .vt-row [data-col=name]').allTextContents();
  const how = await p.locator(`[data-testid=compare-kernels] .vt-row[data-row="${names.indexOf(emb.name)}"] [data-col=via]`).textContent();
  assert.equal(how, emb.how);
  assert.match(how, /^high: same kernel, other sizes, under fbgemm::/);
  await p.locator('[data-testid=compare-kernels]').scrollIntoViewIfNeeded();
  await p.screenshot({ path: shot('compare-renames.png') });
  await p.getByTestId('compare-filter').fill('');
  // Off: the rows of `diff --no-renames`, nothing renamed or merged.
  await p.getByTestId('compare-renames').uncheck();
  await p.waitForFunction((n) => Number(document.querySelector('[data-testid=compare-kernels]')?.dataset.rows) === n, off.kernels.length, { timeout: 30_000 });
  assert.equal(Number(await p.getByTestId('compare-ops').getAttribute('data-rows')), off.ops.length);
  const offStatus = await p.locator('[data-testid=compare-kernels] .vt-row [data-col=status]').allTextContents();
  assert.ok(offStatus.every((s) => !/^(renamed|merged)/.test(s)), offStatus.join(' | '));
  assert.deepEqual(errors, []);
  await p.close();
});

// Issue 23.10: a figure's unit never wraps away from its number in the Compare tables. Every
// table cell of the view holding a number and a unit ("27.26 ms", "+4.3 pt", "1.50 GiB") lies on
// one line — the text's line boxes share one top — at 1440 and at 1024 px wide.
test('Compare tables keep each number with its unit on one line at 1440 and 1024 px', { skip: corpusSkip(A, B) }, async () => {
  const errors = [];
  const p = await page(b, errors);
  for (const width of [1440, 1024]) {
    await p.setViewportSize({ width, height: 900 });
    await p.goto(`${srv.base}/?url=/corpus/${REL_A}&compare=/corpus/${REL_B}`);
    await p.getByTestId('compare-view').waitFor({ timeout: 180_000 });
    await p.getByTestId('compare-breakdown').waitFor();
    const cells = await p.evaluate(() => {
      const unit = /\d\s*(ns|µs|ms|s|pt|%|B|KiB|MiB|GiB|TiB|FLOPS|GFLOPS|TFLOPS)\b/;
      const out = { checked: 0, wrapped: [] };
      for (const el of document.querySelectorAll('[data-testid=compare-view] td, [data-testid=compare-view] [data-col]')) {
        const text = el.textContent.trim();
        if (!unit.test(text)) continue;
        out.checked += 1;
        const r = document.createRange();
        r.selectNodeContents(el);
        const tops = new Set(Array.from(r.getClientRects()).filter((x) => x.width > 0).map((x) => Math.round(x.top)));
        if (tops.size > 1) out.wrapped.push(text);
      }
      return out;
    });
    assert.ok(cells.checked > 50, `${width}: ${cells.checked} cells with units checked`);
    assert.deepEqual(cells.wrapped, [], `${width} px: cells whose unit wraps`);
    await p.screenshot({ path: shot(`compare-units-${width}.png`) });
  }
  assert.deepEqual(errors, []);
  await p.close();
});
