// The analysis views, end to end on real corpus traces: the numbers the page shows (overview, operators,
// kernels, GPU, ranks) must equal `tracelight analyze --json` on the same file; tables are virtualised
// and keyboard driven; the exports (Markdown summary, key_averages text, CSV) match the CLI.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import os from 'node:os';
import { execFileSync } from 'node:child_process';
import { serve, browser, cli, page, shot, cellText, assertSig3, inViewport, CORPUS, ROOT, corpusSkip } from './harness.mjs';

let srv, b;
before(async () => { srv = await serve(); b = await browser(); });
after(async () => { await b?.close(); srv?.server.close(); });

const BIN = path.join(ROOT, 'target', 'release', 'tracelight');
const NCCL = path.join(CORPUS, 'real/hta/nccl_data_a100_rank0of2.json.gz');
const RESNET = path.join(CORPUS, 'real/kineto/resnet50_v100_2021-06_num_workers_0.worker0.1623143089861.pt.trace.json.gz');
const DLRM = path.join(CORPUS, 'real/param/dlrm_8rank/kineto');

/** "12.345 ms" → ns, and the rounding the text allows (half a unit in the last digit). */
function parseDur(text) {
  const m = text.trim().match(/^(-?[\d.]+) (ns|µs|ms|s)$/);
  assert.ok(m, `a duration: ${JSON.stringify(text)}`);
  const unit = { ns: 1, 'µs': 1e3, ms: 1e6, s: 1e9 }[m[2]];
  const decimals = (m[1].split('.')[1] || '').length;
  return { ns: Number(m[1]) * unit, tol: 0.5 * unit * 10 ** -decimals + 1e-6 };
}
function assertDur(text, us, what) {
  const { ns, tol } = parseDur(text);
  assert.ok(Math.abs(ns - us * 1e3) <= tol + 1, `${what}: page ${text} vs CLI ${us} µs`);
}

async function open(p, files) {
  await p.goto(srv.base + '/');
  await p.getByTestId('empty').waitFor();
  await p.getByTestId('file-input').setInputFiles(files);
  // One trace opens on its Overview, a run (several rank traces) on its Ranks tab.
  await p.locator('[data-testid=overview], [data-testid=ranks-view]').first().waitFor({ timeout: 120_000 });
}

test('overview, operators, kernels and GPU views show the CLI numbers for an A100 DDP trace', { skip: corpusSkip(NCCL) }, async () => {
  const errors = [];
  const p = await page(b, errors);
  const c = cli(NCCL);
  await open(p, NCCL);
  // Overview: facts kept, GPU utilization, step times, categories, top op.
  assert.equal(Number(await p.getByTestId('event-count').textContent()), c.files[0].events);
  assertSig3(await p.getByTestId('gpu-util').textContent(), c.gpu.utilization, 'GPU utilization');
  const mean = c.steps.reduce((s, x) => s + x.dur_us, 0) / c.steps.length;
  assert.ok(Math.abs(Number(await p.getByTestId('step-time').getAttribute('data-ns')) - mean * 1e3) <= 1, 'mean step time');
  const steps = await p.getByTestId('step-row').evaluateAll((els) => els.map((e) => [e.dataset.name, Number(e.dataset.ns)]));
  assert.deepEqual(steps.map((s) => s[0]), c.steps.map((s) => s.name));
  steps.forEach((s, k) => assert.ok(Math.abs(s[1] - c.steps[k].dur_us * 1e3) <= 1, `step ${s[0]}`));
  // Step breakdown parts = the CLI's per-step parts summed.
  for (const key of ['kernel', 'memcpy', 'runtime', 'cpu_exec', 'other']) {
    const ns = Number(await p.locator(`[data-testid=step-breakdown] [data-key=${key}]`).getAttribute('data-ns'));
    const us = c.steps.reduce((s, x) => s + x[`${key}_us`], 0);
    assert.ok(Math.abs(ns - us * 1e3) <= c.steps.length, `step part ${key}: ${ns} vs ${us}`);
  }
  for (const [k, us] of Object.entries(c.categories)) {
    const ns = Number(await p.locator(`[data-testid=seed-categories] [data-key=${k}]`).getAttribute('data-ns'));
    assert.ok(Math.abs(ns - us * 1e3) <= 1, `category ${k}`);
  }
  const cpuOps = c.ops.filter((o) => !o.on_device);
  assert.equal(await cellText(p, 'top-ops', 0, 'name'), cpuOps[0].name);
  assert.equal(await cellText(p, 'top-kernels', 0, 'name'), c.kernels[0].name);
  assert.equal(await p.getByTestId('recommendation').count(), c.recommendations.length);
  await p.screenshot({ path: shot('views-overview.png'), fullPage: true });

  // Markdown summary download = `tracelight summary` (after the first line, which names the path).
  const [dl] = await Promise.all([p.waitForEvent('download'), p.getByTestId('download-summary').click()]);
  const md = fs.readFileSync(await dl.path(), 'utf8');
  const want = execFileSync(BIN, ['summary', NCCL]).toString();
  assert.equal(md.split('\n').slice(1).join('\n').trimEnd(), want.split('\n').slice(1).join('\n').trimEnd());

  // Operators: every row, the top rows' calls and self CPU as the CLI, filter, sort, row click.
  await p.getByTestId('tab-operators').click();
  await p.getByTestId('op-table').waitFor();
  assert.equal(Number(await p.getByTestId('op-table').getAttribute('data-rows')), c.ops.length);
  for (let r = 0; r < 8; r++) {
    assert.equal(await cellText(p, 'op-table', r, 'name'), c.ops[r].name, `op row ${r}`);
    assert.equal(Number(await cellText(p, 'op-table', r, 'calls')), c.ops[r].calls);
    assertDur(await cellText(p, 'op-table', r, 'self_cpu'), c.ops[r].self_cpu_us, `${c.ops[r].name} self CPU`);
    assertDur(await cellText(p, 'op-table', r, 'device_total'), c.ops[r].device_total_us, `${c.ops[r].name} device total`);
  }
  await p.screenshot({ path: shot('views-operators.png') });
  await p.locator('[data-testid=op-table] [data-col=calls] button').click();
  const maxCalls = Math.max(...c.ops.map((o) => o.calls));
  assert.equal(Number(await cellText(p, 'op-table', 0, 'calls')), maxCalls);
  await p.getByTestId('op-filter').fill('aten::mm');
  const nFiltered = c.ops.filter((o) => o.name.toLowerCase().includes('aten::mm')).length;
  assert.equal(Number(await p.getByTestId('op-table').getAttribute('data-rows')), nFiltered);
  assert.match(await cellText(p, 'op-table', 0, 'name'), /aten::mm/);
  const revealed = await cellText(p, 'op-table', 0, 'name');
  await p.locator('[data-testid=op-table] .vt-row[data-row="0"]').click();
  assert.equal(await p.getByTestId('tab-timeline').getAttribute('aria-selected'), 'true');
  // The timeline shows that op's occurrences: as many as the CLI's call count.
  await p.getByTestId('reveal').waitFor();
  const expectedCalls = c.ops.find((o) => o.name === revealed.trim()).calls;
  assert.equal(Number(await p.getByTestId('reveal').getAttribute('data-count')), expectedCalls);
  assert.match(await p.getByTestId('reveal-label').textContent(), new RegExp(`^${revealed.trim()} — ${expectedCalls} occurrences`));
  await p.getByTestId('tab-operators').click();

  // Kernels: the kernel table and the categories as the CLI.
  await p.getByTestId('tab-kernels').click();
  await p.getByTestId('kernel-table').waitFor();
  assert.equal(Number(await p.getByTestId('kernel-table').getAttribute('data-rows')), c.kernels.length);
  for (let r = 0; r < 5; r++) {
    assert.equal(await cellText(p, 'kernel-table', r, 'name'), c.kernels[r].name);
    assert.equal(Number(await cellText(p, 'kernel-table', r, 'calls')), c.kernels[r].calls);
    assertDur(await cellText(p, 'kernel-table', r, 'total'), c.kernels[r].total_us, `kernel ${r} total`);
    assert.equal(await cellText(p, 'kernel-table', r, 'category'), c.kernels[r].category);
    assert.equal(await cellText(p, 'kernel-table', r, 'fine'), c.kernels[r].fine_category);
  }
  for (const f of c.fine_categories) {
    const ns = Number(await p.locator(`[data-testid=kernel-fine-chart] [data-key="${f.name}"]`).getAttribute('data-ns'));
    assert.ok(Math.abs(ns - f.us * 1e3) <= 1, `fine category ${f.name}`);
  }
  await p.screenshot({ path: shot('views-kernels.png') });

  // GPU: utilization, exposed communication, gaps listed and linked.
  await p.getByTestId('tab-gpu').click();
  await p.getByTestId('gpu-view').waitFor();
  assertSig3(await p.getByTestId('gpu-util-gpu').textContent(), c.gpu.utilization, 'GPU utilization (GPU tab)');
  assert.ok(Number(await p.getByTestId('gap-table').getAttribute('data-rows')) > 0);
  // The temporal breakdown shown is the CLI's gpu.temporal (all GPU work), and the note beside it
  // says whether HTA's own selection (gpu.temporal_hta) gives the same figures.
  for (const key of ['compute', 'non_compute', 'idle']) {
    const ns = Number(await p.locator(`[data-testid=temporal] [data-key=${key}]`).getAttribute('data-ns'));
    assert.ok(Math.abs(ns - c.gpu.temporal[`${key}_us`] * 1e3) <= 1, `temporal ${key}: ${ns}`);
  }
  const same = ['kernel_span_us', 'compute_us', 'non_compute_us', 'idle_us'].every((k) => c.gpu.temporal[k] === c.gpu.temporal_hta[k]);
  const note = await p.getByTestId('temporal-hta').textContent();
  if (same) assert.equal(note, "Equals HTA's get_temporal_breakdown on this trace.");
  else assert.match(note, /^HTA's get_temporal_breakdown selects other events here/);
  await p.screenshot({ path: shot('views-gpu.png'), fullPage: true });
  await p.locator('[data-testid=gap-table] .vt-row[data-row="0"]').click();
  assert.equal(await p.getByTestId('tab-timeline').getAttribute('aria-selected'), 'true');
  assert.deepEqual(errors, []);
  await p.close();
});

test('a V100 ResNet-50 trace: steps, recommendations and the key_averages text as the CLI', { skip: corpusSkip(RESNET) }, async () => {
  const errors = [];
  const ctx = await b.newContext({ viewport: { width: 1400, height: 900 }, permissions: ['clipboard-read', 'clipboard-write'] });
  const p = await ctx.newPage();
  p.on('pageerror', (e) => errors.push(String(e)));
  p.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  const c = cli(RESNET);
  await open(p, RESNET);
  assertSig3(await p.getByTestId('gpu-util').textContent(), c.gpu.utilization, 'GPU utilization');
  assert.equal(await p.getByTestId('step-row').count(), c.steps.length);
  const rules = await p.getByTestId('recommendation').evaluateAll((els) => els.map((e) => e.dataset.rule));
  assert.equal(rules.length, c.recommendations.length);
  // Each recommendation's figures as the CLI's.
  const nums = await p.locator('[data-testid=recommendation] .rec-num').evaluateAll((els) => els.map((e) => [e.dataset.name, Number(e.dataset.value)]));
  const cliNums = c.recommendations.flatMap((r) => r.numbers);
  assert.deepEqual(nums.map((n) => n[0]), cliNums.map((n) => n[0]));
  nums.forEach((n, k) => assert.ok(Math.abs(n[1] - cliNums[k][1]) <= 1e-9 * Math.max(1, Math.abs(n[1])), n[0]));
  if (c.flops.achieved_tflops_window) assertSig3((await p.getByTestId('tflops').textContent()).split(' · ')[0], c.flops.achieved_tflops_window * 1e12, 'achieved FLOPS');
  await p.screenshot({ path: shot('views-overview-resnet.png'), fullPage: true });
  await p.getByTestId('tab-operators').click();
  await p.getByTestId('op-copy').click();
  await p.getByText('Copied ✓').waitFor();
  const copied = await p.evaluate(() => navigator.clipboard.readText());
  assert.equal(copied, execFileSync(BIN, ['table', RESNET]).toString());
  // CSV: one line per row plus the header.
  const [dl] = await Promise.all([p.waitForEvent('download'), p.getByTestId('op-csv').click()]);
  const csv = fs.readFileSync(await dl.path(), 'utf8').trim().split('\n');
  assert.equal(csv.length, c.ops.length + 1);
  assert.match(csv[0], /^name,input_shapes,on_device,calls,self_cpu_us/);
  // Group by input shape adds the shapes column and more rows.
  await p.getByTestId('op-group-shapes').check();
  await p.locator('[data-testid=op-table] .vt-th[data-col=shapes]').waitFor();
  assert.ok(Number(await p.getByTestId('op-table').getAttribute('data-rows')) > c.ops.length);
  assert.deepEqual(errors, []);
  await ctx.close();
});

test('eight DLRM rank files at once: the GPU tab points to the Ranks tab, whose rows are the CLI\'s ranks', { skip: corpusSkip(DLRM) }, async () => {
  // The per-rank figures have one home, the Ranks tab (its figures are checked against the CLI in
  // ranks.test.mjs); the GPU tab keeps only a pointer there.
  const errors = [];
  const p = await page(b, errors);
  const files = fs.readdirSync(DLRM).filter((f) => f.endsWith('.json')).sort().map((f) => path.join(DLRM, f));
  assert.equal(files.length, 8);
  const c = JSON.parse(execFileSync(BIN, ['analyze', ...files, '--json'], { maxBuffer: 256 << 20 }).toString());
  await open(p, files);
  await p.getByTestId('tab-gpu').click();
  await p.getByTestId('gpu-view').waitFor();
  assert.equal(await p.getByTestId('rank-table').count(), 0, 'no second per-rank table');
  assert.match(await p.getByTestId('gpu-ranks-pointer').textContent(), /^8 traces are open/);
  await p.getByTestId('gpu-to-ranks').click();
  await p.getByTestId('ranks-view').waitFor();
  assert.equal(Number(await p.getByTestId('ranks-table').getAttribute('data-rows')), c.ranks.length);
  for (let r = 0; r < c.ranks.length; r++) assert.equal(Number(await cellText(p, 'ranks-table', r, 'rank')), c.ranks[r].rank);
  assert.equal(Number(await p.getByTestId('run-straggler').getAttribute('data-rank')), c.straggler.rank);
  assert.deepEqual(errors, []);
  await p.close();
});

test('a 12 000-row operator table stays virtual, sorts, and is driven by the keyboard', async () => {
  const errors = [];
  const p = await page(b, errors);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tl-views-'));
  const file = path.join(dir, 'many_ops.pt.trace.json');
  const ev = [];
  for (let k = 0; k < 12000; k++) ev.push({ ph: 'X', cat: 'cpu_op', name: `op_${String(k).padStart(5, '0')}`, pid: 1, tid: 1, ts: k * 10, dur: 1 + (k % 7) });
  fs.writeFileSync(file, JSON.stringify({ traceEvents: ev }));
  await open(p, file);
  await p.getByTestId('tab-operators').click();
  await p.getByTestId('op-table').waitFor();
  assert.equal(Number(await p.getByTestId('op-table').getAttribute('data-rows')), 12000);
  const inDom = await p.locator('[data-testid=op-table] .vt-row').count();
  assert.ok(inDom < 80, `only visible rows are rendered: ${inDom}`);
  // Sort by name, then keyboard: focus the first row, arrows, End, Enter.
  await p.locator('[data-testid=op-table] [data-col=name] button').click();
  assert.equal(await cellText(p, 'op-table', 0, 'name'), 'op_00000');
  await p.locator('[data-testid=op-table] .vt-row[data-row="0"]').focus();
  for (let k = 0; k < 3; k++) await p.keyboard.press('ArrowDown');
  await p.waitForFunction(() => document.activeElement?.dataset?.row === '3');
  await p.keyboard.press('End');
  await p.waitForFunction(() => document.activeElement?.dataset?.row === '11999');
  assert.equal(await cellText(p, 'op-table', 11999, 'name'), 'op_11999');
  assert.ok((await p.locator('[data-testid=op-table] .vt-row').count()) < 80);
  await p.screenshot({ path: shot('views-virtual.png') });
  await p.keyboard.press('Enter');
  assert.equal(await p.getByTestId('tab-timeline').getAttribute('aria-selected'), 'true');
  assert.deepEqual(errors, []);
  await p.close();
});

const LSTM = path.join(CORPUS, 'generated/lstm_mem.1795343595561069429.pt.trace.json');
test('a CPU trace with [memory] and FLOPs: peak memory as the CLI, a link to Memory, MFU from an entered peak', { skip: corpusSkip(LSTM) }, async () => {
  const errors = [];
  const p = await page(b, errors);
  const c = cli(LSTM);
  await open(p, LSTM);
  assert.equal(Number(await p.getByTestId('peak-memory').getAttribute('data-bytes')), c.memory.peak_allocated_bytes);
  // No GPU work: no utilization card, no kernel cards, no device column in the top operators.
  assert.equal(await p.getByTestId('gpu-util').count(), 0);
  assert.equal(await p.getByTestId('top-kernels').count(), 0);
  assert.equal(await p.getByTestId('seed-categories').count(), 0);
  assert.equal(await p.locator('[data-testid=top-ops] [data-col=device_total]').count(), 0);
  if (c.steps.length) assert.equal(await p.getByTestId('step-row').count(), c.steps.length); else await p.getByTestId('no-steps').waitFor();
  // A CPU trace: achieved TFLOPS, no MFU and no peak to enter (MFU is a GPU figure); no GPU or
  // Kernels tab to open onto an empty page.
  const achieved = c.flops.achieved_tflops_window;
  assert.ok(achieved > 0);
  assert.equal(c.flops.mfu, null);
  await p.getByTestId('mfu-cpu').waitFor();
  assert.equal(await p.getByTestId('peak-input').count(), 0);
  assert.equal(await p.getByTestId('mfu').textContent(), '');
  assert.equal(await p.getByTestId('tab-gpu').count(), 0);
  assert.equal(await p.getByTestId('tab-kernels').count(), 0);
  assert.equal(await p.getByTestId('tab-operators').count(), 1);
  await p.screenshot({ path: shot('views-overview-cpu.png'), fullPage: true });
  await p.getByTestId('open-memory').click();
  assert.equal(await p.getByTestId('tab-memory').getAttribute('aria-selected'), 'true');
  // Operators of a CPU-only trace: CPU columns, rows as the CLI's.
  await p.getByTestId('tab-operators').click();
  assert.equal(Number(await p.getByTestId('op-table').getAttribute('data-rows')), c.ops.length);
  for (let r = 0; r < 5; r++) {
    assert.equal(await cellText(p, 'op-table', r, 'name'), c.ops[r].name);
    assertDur(await cellText(p, 'op-table', r, 'self_cpu'), c.ops[r].self_cpu_us, `${c.ops[r].name} self CPU`);
  }
  assert.deepEqual(errors, []);
  await p.close();
});

// Issue 23, point 4: the Overview's FLOP card of the A100 rank-0-of-16 trace said "ACHIEVED TFLOPS"
// over "22.64 GFLOPS", printed its blended peak as 43.022365246629555 labelled "tf32", rounded MFU
// 0.053% to "0.1%" and left out the rate while the kernels run. One formatter now: three
// significant figures, small values kept, the title in the value's unit.
const A100 = path.join(CORPUS, 'real/hta/a100_80gb_rank0of16.json.gz');
const H100_LM = path.join(ROOT, 'crates/core/tests/fixtures/torch-2.11-cuda13-h100/gpu_lm_bf16.pt.trace.json.gz');
test('the FLOP card: title in the value\'s unit, 3 significant figures, a small MFU kept (not rounded to 0.1%), the blended peak said so', { skip: corpusSkip(A100, H100_LM) }, async () => {
  const errors = [];
  const p = await page(b, errors);
  const c = cli(A100);
  await open(p, A100);
  const f = c.flops;
  assert.ok(f.achieved_tflops_window < 1 && f.mfu < 0.001, 'the trace is the small-rate case');
  const card = p.getByTestId('tflops').locator('xpath=..');
  assert.ok(await inViewport(card), 'the FLOP card is on screen when the Overview opens');
  assert.equal(await p.getByTestId('tflops-title').textContent(), 'Achieved GFLOPS / MFU');
  const value = (await p.getByTestId('tflops').textContent()).split(' · ')[0];
  assert.match(value, / GFLOPS$/);
  assertSig3(value, f.achieved_tflops_window * 1e12, 'achieved over the window');
  const mfu = (await p.getByTestId('mfu').textContent()).replace(/^ · MFU /, '');
  assertSig3(mfu, f.mfu, 'MFU');
  assert.notEqual(mfu, '0.1%');
  assert.match(mfu, /^0\.0[1-9]\d?%$/, "a small MFU keeps its figures");
  assertSig3((await p.getByTestId('tflops-busy').textContent()).replace(' while their kernels run', ''), f.achieved_tflops_device * 1e12, 'while busy');
  const note = await card.locator('.stat-note').textContent();
  const peak = note.match(/peak (\S+ TFLOPS) \(FLOP-weighted blend: (.*)\) · /);
  assert.ok(peak, note);
  assertSig3(peak[1], f.peak_tflops * 1e12, 'peak');
  assert.equal(peak[2], f.peak_source);
  assert.ok(!/\d\.\d{4,}/.test(note), `no long decimals: ${note}`);
  await card.screenshot({ path: shot('views-flop-card-a100.png') });
  // H100, bf16 GEMMs with some fp32: the blend's peak (988.78…) reads 989 TFLOPS.
  const h = cli(H100_LM);
  await open(p, H100_LM);
  const hnote = await p.getByTestId('tflops').locator('xpath=..').locator('.stat-note').textContent();
  const hp = hnote.match(/peak (\S+ TFLOPS)/);
  assertSig3(hp[1], h.flops.peak_tflops * 1e12, 'H100 peak');
  assert.equal(hp[1], '989 TFLOPS');
  assert.deepEqual(errors, []);
  await p.close();
});
