// The Compare tab's differential flame graph, end to end, on a hand-built pair whose changes are
// known by construction (crates/cli/tests/folded.rs builds the same pair): A has 4 steps, B 2;
// aten::mm's gemm kernel runs 100 µs in A and 200 µs in B (2× slower), the convolution backend is
// renamed under aten::_convolution (cudnn → miopen, op and kernel), and aten::relu is new in B.
// Every frame the page draws must carry the self and total weights of `tracelight diff A B
// --folded` on the same files, its colour must be the change's (red +100 %, grey same, deepest red
// new) and be what the canvas shows; hover gives A, B, Δ; a click zooms.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { serve, browser, page, shot, ROOT, CORPUS, corpusSkip } from './harness.mjs';

let srv, b;
before(async () => { srv = await serve(); b = await browser(); });
after(async () => { await b?.close(); srv?.server.close(); });

const BIN = path.join(ROOT, 'target', 'release', 'tracelight');

const x = (cat, name, ts, dur, tid, args = {}) => ({ ph: 'X', cat, name, pid: 1, tid, ts, dur, args });
function op(v, name, kernel, ts, kdur, corr) {
  v.push(x('cpu_op', name, ts, 8, 1));
  v.push(x('cuda_runtime', 'cudaLaunchKernel', ts + 1, 5, 1, { correlation: corr }));
  v.push(x('kernel', kernel, ts + 10, kdur, 7, { device: 0, stream: 7, correlation: corr }));
}
function trace(steps, mmUs, [backend, kernel], relu) {
  const v = [];
  for (let k = 0; k < steps; k++) {
    const t0 = k * 1000, c = k * 10;
    v.push(x('user_annotation', `ProfilerStep#${k}`, t0, 1000, 1));
    op(v, 'aten::mm', 'ampere_sgemm_128x64_nn', t0 + 10, mmUs, c);
    v.push(x('cpu_op', 'aten::conv2d', t0 + 300, 40, 1));
    v.push(x('cpu_op', 'aten::_convolution', t0 + 301, 30, 1));
    op(v, backend, kernel, t0 + 302, 50, c + 1);
    if (relu) op(v, 'aten::relu', 'vectorized_elementwise_kernel', t0 + 600, 10, c + 2);
  }
  return JSON.stringify({ traceEvents: v });
}

function pair() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tl-dflame-'));
  const a = path.join(dir, 'a.json'), bb = path.join(dir, 'b.json');
  fs.writeFileSync(a, trace(4, 100, ['aten::cudnn_convolution', 'cudnn_fprop_kernel'], false));
  fs.writeFileSync(bb, trace(2, 200, ['aten::miopen_convolution', 'MIOpenConvFwd'], true));
  return [a, bb];
}

/** `tracelight diff A B --folded`: stack → [A, B] self ns per step. */
function folded(a, bb, ...extra) {
  const out = execFileSync(BIN, ['diff', a, bb, '--folded', ...extra]).toString();
  const m = new Map();
  for (const line of out.trim().split('\n')) {
    const k = line.lastIndexOf(' '), j = line.lastIndexOf(' ', k - 1);
    m.set(line.slice(0, j), [Number(line.slice(j + 1, k)), Number(line.slice(k + 1))]);
  }
  return m;
}

/** A new page with A open and B given to its Compare tab. */
async function openPair(A, B, errors) {
  const p = await page(b, errors);
  await p.goto(srv.base + '/');
  await p.getByTestId('file-input').setInputFiles(A);
  await p.getByTestId('tab-compare').click({ timeout: 60_000 });
  await p.getByTestId('compare-input').setInputFiles(B);
  return p;
}

const layout = async (canvas) => JSON.parse(await canvas.getAttribute('data-layout'));

test('the differential flame graph carries the CLI folded weights, colours by change, hovers and zooms', async () => {
  const [A, B] = pair();
  const cli = folded(A, B, '--weight', 'device');
  assert.equal(cli.get('ProfilerStep*;aten::mm;cudaLaunchKernel;ampere_sgemm_128x64_nn').join(), '100000,200000');
  const errors = [];
  const p = await openPair(A, B, errors);
  const card = p.getByTestId('diff-flame');
  await card.waitFor({ timeout: 60_000 });
  const canvas = p.getByTestId('diff-flame-canvas');
  await p.waitForFunction(() => document.querySelector('[data-testid=diff-flame-canvas]')?.getAttribute('data-layout'), null, { timeout: 30_000 });
  assert.equal(await canvas.getAttribute('data-weight'), 'device', 'GPU time is the default when both sides ran kernels');

  const frames = await layout(canvas);
  const byStack = new Map(frames.map((f) => [f.stack, f]));
  // Every stack of the CLI with weight in B is drawn, with the CLI's self weights (integer ns).
  for (const [stack, [a, bw]] of cli) {
    const f = byStack.get(stack);
    assert.ok(f, `page draws ${stack}`);
    assert.deepEqual([Math.round(f.a_self), Math.round(f.b_self)], [a, bw], stack);
  }
  // Totals are the CLI's self weights summed over the frame's subtree.
  for (const f of frames) {
    if (!f.stack) continue;
    let [ta, tb] = [0, 0];
    for (const [s, [a, bw]] of cli) if (s === f.stack || s.startsWith(f.stack + ';')) { ta += a; tb += bw; }
    assert.ok(Math.abs(f.a - ta) <= 1 && Math.abs(f.b - tb) <= 1, `${f.stack}: page ${f.a}/${f.b} vs CLI ${ta}/${tb}`);
  }
  // Colours by construction: 2× slower is +100 %, the renamed convolution unchanged, relu new.
  const colour = (s) => byStack.get(s).color;
  assert.equal(colour('ProfilerStep*;aten::mm;cudaLaunchKernel;ampere_sgemm_128x64_nn'), '#b2182b');
  assert.equal(colour('ProfilerStep*;aten::conv2d;aten::_convolution;aten::miopen_convolution'), '#d9d9d9');
  assert.equal(colour('ProfilerStep*;aten::relu'), '#67001f');
  // ProfilerStep*: 150 → 260 µs of GPU work per step, +73.3 %: 0.2 + 0.8 × 0.733 of the way
  // from #d9d9d9 to #b2182b.
  const t = 0.2 + 0.8 * (110 / 150);
  const hex = (lo, hi) => Math.round(lo + (hi - lo) * t).toString(16).padStart(2, '0');
  assert.equal(colour('ProfilerStep*'), `#${hex(0xd9, 0xb2)}${hex(0xd9, 0x18)}${hex(0xd9, 0x2b)}`);
  // The canvas shows those colours (a pixel inside each frame, left of its label).
  const px = await canvas.evaluate((c, fs) => {
    const ctx = c.getContext('2d'), d = window.devicePixelRatio || 1;
    return fs.map((f) => {
      const [r, g, bl] = ctx.getImageData(Math.floor((f.x + 1.5) * d), Math.floor((f.y + 15.5) * d), 1, 1).data;
      return '#' + [r, g, bl].map((v) => v.toString(16).padStart(2, '0')).join('');
    });
  }, frames.filter((f) => f.w >= 4));
  frames.filter((f) => f.w >= 4).forEach((f, k) => assert.equal(px[k], f.color, `pixel of ${f.stack}`));

  // Hover: A, B, Δ, Δ% per step of the gemm kernel's frame.
  const mm = byStack.get('ProfilerStep*;aten::mm;cudaLaunchKernel;ampere_sgemm_128x64_nn');
  await canvas.hover({ position: { x: mm.x + mm.w / 2, y: mm.y + 9 } });
  const tip = p.getByTestId('diff-flame-tip');
  await tip.waitFor({ timeout: 10_000 });
  assert.equal(await tip.getAttribute('data-stack'), mm.stack);
  const val = async (k) => Number(await tip.locator(`[data-key="${k}"]`).getAttribute('data-value'));
  assert.deepEqual([await val('A'), await val('B'), await val('Δ'), await val('Δ%')], [100000, 200000, 100000, 1]);
  await card.screenshot({ path: shot('compare-diff-flame.png') });

  // Click zooms: aten::mm becomes the root, as wide as the canvas; the breadcrumb zooms out.
  const mmOp = byStack.get('ProfilerStep*;aten::mm');
  await canvas.click({ position: { x: mmOp.x + mmOp.w / 2, y: mmOp.y + 9 } });
  await p.waitForFunction((n) => document.querySelector('[data-testid=diff-flame-canvas]').getAttribute('data-root') === String(n), mmOp.node);
  const zoomed = await layout(canvas);
  assert.equal(zoomed[0].stack, 'ProfilerStep*;aten::mm');
  assert.ok(Math.abs(zoomed[0].w - Number(await canvas.getAttribute('data-width'))) <= 1.5);
  // ... and shows its slices in both paired timelines: 4 aten::mm in A's 4 steps, 2 in B's 2.
  const revealed = (side, n) => p.waitForFunction(([s, k]) => document.querySelector(`[data-testid=compare-tl-${s}] [data-testid=reveal]`)?.getAttribute('data-count') === String(k), [side, n], { timeout: 30_000 });
  await revealed('a', 4);
  await revealed('b', 2);
  await p.getByTestId('diff-flame-crumb').first().click();
  await p.waitForFunction(() => document.querySelector('[data-testid=diff-flame-canvas]').getAttribute('data-root') === '0');
  // The renamed frame: B's miopen op, and in A the cudnn op the diff renamed to it.
  const conv = byStack.get('ProfilerStep*;aten::conv2d;aten::_convolution;aten::miopen_convolution');
  await canvas.click({ position: { x: conv.x + conv.w / 2, y: conv.y + 9 } });
  await p.waitForFunction(() => (document.querySelector('[data-testid=compare-tl-a] [data-testid=reveal]')?.textContent || '').includes('miopen'), null, { timeout: 30_000 });
  await revealed('a', 4);
  await revealed('b', 2);
  await p.getByTestId('diff-flame-crumb').first().click();
  await p.waitForFunction(() => document.querySelector('[data-testid=diff-flame-canvas]').getAttribute('data-root') === '0');

  // Renames off: the cudnn stack is gone from B (listed), the miopen one new; as the CLI says.
  const off = folded(A, B, '--weight', 'device', '--no-renames');
  await p.getByTestId('compare-renames').uncheck();
  const gone = p.getByTestId('diff-flame-gone');
  await gone.waitFor({ timeout: 30_000 });
  const cudnn = 'ProfilerStep*;aten::conv2d;aten::_convolution;aten::cudnn_convolution';
  const li = gone.locator('li').first();
  assert.equal(await li.getAttribute('data-stack'), cudnn);
  const leaf = off.get(cudnn + ';cudaLaunchKernel;cudnn_fprop_kernel');
  assert.deepEqual(leaf, [50000, 0]);
  assert.equal(Number(await li.getAttribute('data-a-ns')), leaf[0]);
  const f2 = new Map((await layout(canvas)).map((f) => [f.stack, f]));
  assert.equal(f2.get('ProfilerStep*;aten::conv2d;aten::_convolution;aten::miopen_convolution').color, '#67001f');

  // CPU weight: the host self times of the CLI's --weight cpu.
  await p.getByTestId('compare-renames').check();
  await p.getByTestId('diff-flame-device').uncheck();
  await p.waitForFunction(() => document.querySelector('[data-testid=diff-flame-canvas]').getAttribute('data-weight') === 'cpu');
  await p.waitForFunction(() => (JSON.parse(document.querySelector('[data-testid=diff-flame-canvas]').getAttribute('data-layout')) || []).some((f) => f.stack === 'ProfilerStep*;aten::conv2d'));
  const cpu = folded(A, B, '--weight', 'cpu');
  const f3 = new Map((await layout(canvas)).map((f) => [f.stack, f]));
  for (const s of ['ProfilerStep*', 'ProfilerStep*;aten::mm', 'ProfilerStep*;aten::conv2d;aten::_convolution']) {
    assert.deepEqual([Math.round(f3.get(s).a_self), Math.round(f3.get(s).b_self)], cpu.get(s), s);
  }
  assert.deepEqual(errors, []);
  await p.close();
});

// The per-step picker: A's first step is a 500 µs warm-up of aten::mm's kernel, then 100 µs; B's
// two steps run it 200 µs each. Picking a step on either side gives the weights of
// `tracelight diff A B --folded --step-a I --step-b J` on the same files, frame for frame.
function stepsTrace(mmUs) {
  const v = [];
  mmUs.forEach((us, k) => {
    const t0 = k * 2000;
    v.push(x('user_annotation', `ProfilerStep#${k}`, t0, 2000, 1));
    op(v, 'aten::mm', 'ampere_sgemm_128x64_nn', t0 + 10, us, k * 10);
  });
  return JSON.stringify({ traceEvents: v });
}

test('the differential flame graph compares one step of A with one step of B as the CLI does', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tl-dflame-steps-'));
  const A = path.join(dir, 'a.json'), B = path.join(dir, 'b.json');
  fs.writeFileSync(A, stepsTrace([500, 100, 100]));
  fs.writeFileSync(B, stepsTrace([200, 200]));
  const KERNEL = 'ProfilerStep*;aten::mm;cudaLaunchKernel;ampere_sgemm_128x64_nn';
  const errors = [];
  const p = await openPair(A, B, errors);
  await p.getByTestId('diff-flame').waitFor({ timeout: 60_000 });
  const canvas = p.getByTestId('diff-flame-canvas');
  const pickA = p.getByTestId('diff-flame-step-a'), pickB = p.getByTestId('diff-flame-step-b');
  // The pickers list each side's steps, as many as its longest rank has.
  assert.equal(await pickA.locator('option').count(), 1 + 3);
  assert.equal(await pickB.locator('option').count(), 1 + 2);
  const kernelOf = async () => {
    const f = (await layout(canvas)).find((r) => r.stack === KERNEL);
    return [Math.round(f.a_self), Math.round(f.b_self)];
  };
  const settle = (a, bw) => p.waitForFunction(([k, va, vb]) => {
    const l = JSON.parse(document.querySelector('[data-testid=diff-flame-canvas]')?.getAttribute('data-layout') || '[]');
    const f = l.find((r) => r.stack === k);
    return f && Math.round(f.a_self) === va && Math.round(f.b_self) === vb;
  }, [KERNEL, a, bw], { timeout: 30_000 });
  const cases = [
    [[], null, null],
    [['--step-a', '0', '--step-b', '1'], '0', '1'],
    [['--step-a', '1', '--step-b', '0'], '1', '0'],
    [['--step-b', '1'], 'all', '1'],
  ];
  for (const [flags, sa, sb] of cases) {
    const cli = folded(A, B, '--weight', 'device', ...flags);
    const [wa, wb] = cli.get(KERNEL);
    if (sa !== null) {
      await pickA.selectOption(sa);
      await pickB.selectOption(sb);
    }
    await settle(wa, wb);
    // Every stack of the CLI's output is drawn with its self weights.
    const byStack = new Map((await layout(canvas)).map((f) => [f.stack, f]));
    for (const [stack, [a, bw]] of cli) {
      const f = byStack.get(stack);
      assert.ok(f, `${flags.join(' ')}: page draws ${stack}`);
      assert.deepEqual([Math.round(f.a_self), Math.round(f.b_self)], [a, bw], `${flags.join(' ')}: ${stack}`);
    }
  }
  // By construction: all steps 700/3 µs against 200; A's warm-up step 500 against 200; 100 vs 200.
  await pickA.selectOption('0');
  await pickB.selectOption('0');
  await settle(500000, 200000);
  assert.deepEqual(await kernelOf(), [500000, 200000]);
  assert.match(await p.getByTestId('diff-flame').locator('h2').textContent(), /A: step 0, B: step 0/);
  // The warm-up step against B's: the kernel shrank 60 %, so it is drawn in blue.
  const k = (await layout(canvas)).find((r) => r.stack === KERNEL);
  const [r, , bl] = [1, 3, 5].map((i) => parseInt(k.color.slice(i, i + 2), 16));
  assert.ok(bl > r, `shrank frame is blue: ${k.color}`);
  await p.getByTestId('diff-flame').screenshot({ path: shot('compare-diff-flame-steps.png') });
  assert.deepEqual(errors, []);
  await p.close();
});

// HTA's trace_diff pair (A100 eager rank of 8 against V100 torch.compile rank of 2): every frame
// the page draws carries the weights the CLI writes for the same stack.
const REL_A = 'real/hta/trace_diff/control_a100_rank3of8.json.gz';
const REL_B = 'real/hta/trace_diff/test_v100_rank1of2.json.gz';
const [HA, HB] = [REL_A, REL_B].map((r) => path.join(CORPUS, r));

test('on the trace_diff pair every drawn frame has the CLI folded weights', { skip: corpusSkip(HA, HB) }, async () => {
  const cli = new Map();
  const out = execFileSync(BIN, ['diff', HA, HB, '--folded'], { maxBuffer: 256 << 20 }).toString();
  for (const line of out.trim().split('\n')) {
    const k = line.lastIndexOf(' '), j = line.lastIndexOf(' ', k - 1);
    cli.set(line.slice(0, j), [Number(line.slice(j + 1, k)), Number(line.slice(k + 1))]);
  }
  const errors = [];
  const p = await page(b, errors);
  await p.goto(`${srv.base}/?url=/corpus/${REL_A}&compare=/corpus/${REL_B}`);
  await p.getByTestId('compare-view').waitFor({ timeout: 180_000 });
  const canvas = p.getByTestId('diff-flame-canvas');
  await p.waitForFunction(() => document.querySelector('[data-testid=diff-flame-canvas]')?.getAttribute('data-layout'), null, { timeout: 60_000 });
  const frames = await layout(canvas);
  let checked = 0;
  for (const f of frames) {
    if (!f.stack) continue;
    const [a, bw] = cli.get(f.stack) || [0, 0];
    assert.ok(Math.abs(f.a_self - a) <= 0.5 && Math.abs(f.b_self - bw) <= 0.5, `${f.stack}: page ${f.a_self}/${f.b_self} vs CLI ${a}/${bw}`);
    checked++;
  }
  assert.ok(checked >= 20, `checked ${checked} frames`);
  await p.getByTestId('diff-flame').scrollIntoViewIfNeeded();
  await p.screenshot({ path: shot('compare-diff-flame-trace-diff.png') });
  assert.deepEqual(errors, []);
  await p.close();
});
