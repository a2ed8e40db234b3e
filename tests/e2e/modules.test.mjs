// From a kernel back to the code, end to end: the Modules tab's tree, source lines and forward ↔
// backward tables equal `tracelight analyze --json` on the same file (the H100 MLP recording, whose
// module figures core's tests check against the TensorBoard plugin and torch's device time); a
// row opens its occurrences in the timeline; a backward kernel's details name its forward op
// and module and jump to the forward op, whose details list the backward nodes.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import fs from 'node:fs';
import { serve, browser, cli, page, shot, cellText, assertDur, ROOT, corpusSkip, CORPUS } from './harness.mjs';

let srv, b;
before(async () => { srv = await serve(); b = await browser(); });
after(async () => { await b?.close(); srv?.server.close(); });

const MLP = path.join(ROOT, 'crates/core/tests/fixtures/torch-2.11-cuda13-h100/gpu_mlp.pt.trace.json.gz');

async function open(p, file) {
  await p.goto(srv.base + '/');
  await p.getByTestId('empty').waitFor();
  await p.getByTestId('file-input').setInputFiles(file);
  await p.getByTestId('overview').waitFor({ timeout: 120_000 });
}

test('the Modules tab shows the CLI\'s module tree, source lines and pairs; rows reveal in the timeline', async () => {
  const errors = [];
  const p = await page(b, errors);
  const c = cli(MLP);
  await open(p, MLP);
  await p.getByTestId('tab-modules').click();
  await p.getByTestId('module-table').waitFor();
  assert.equal(Number(await p.getByTestId('module-table').getAttribute('data-rows')), c.modules.length);
  // Tree order, indented names, every figure as the CLI's.
  for (let k = 0; k < c.modules.length; k++) {
    const m = c.modules[k];
    const name = await cellText(p, 'module-table', k, 'name');
    assert.equal(name.replace(/\u2003/g, ''), m.name, `row ${k}`);
    assert.equal(name.length - name.replace(/\u2003/g, '').length, m.depth, `${m.path} depth`);
    assert.equal(Number(await cellText(p, 'module-table', k, 'calls')), m.calls);
    assertDur(await cellText(p, 'module-table', k, 'host'), m.host_us, `${m.path} host`);
    assertDur(await cellText(p, 'module-table', k, 'gpu'), m.gpu_us, `${m.path} GPU fwd`);
    assertDur(await cellText(p, 'module-table', k, 'bwd_gpu'), m.backward_gpu_us, `${m.path} GPU bwd`);
  }
  await p.screenshot({ path: shot('modules-tree.png') });
  // Sorted by backward GPU time: flat, full paths, the CLI's largest first.
  await p.locator('[data-testid=module-table] .vt-head [data-col=bwd_gpu]').click();
  const top = [...c.modules].sort((x, y) => y.backward_gpu_us - x.backward_gpu_us)[0];
  assert.equal(await cellText(p, 'module-table', 0, 'name'), top.path);
  // A module row opens its calls in the timeline.
  const lin = c.modules.find((m) => m.name === 'Linear_1');
  await p.getByTestId('module-filter').fill('Linear_1');
  await p.locator('[data-testid=module-table] .vt-row[data-row="0"]').click();
  await p.getByTestId('timeline').waitFor();
  await p.waitForFunction((n) => Number(document.querySelector('[data-testid=reveal]')?.dataset.count) === n, lin.calls);
  assert.match(await p.getByTestId('reveal-label').textContent(), /Linear_1/);
  // Source lines: the CLI's rows.
  await p.getByTestId('tab-modules').click();
  await p.getByTestId('modules-mode-lines').click();
  await p.getByTestId('line-table').waitFor();
  const lines = c.source_lines.rows;
  assert.equal(Number(await p.getByTestId('line-table').getAttribute('data-rows')), lines.length);
  for (let k = 0; k < lines.length; k++) {
    assert.equal(await cellText(p, 'line-table', k, 'line'), lines[k].label);
    assertDur(await cellText(p, 'line-table', k, 'gpu'), lines[k].gpu_us, `${lines[k].label} GPU`);
  }
  // Forward ↔ backward.
  await p.getByTestId('modules-mode-backward').click();
  await p.getByTestId('backward-table').waitFor();
  assert.equal(Number(await p.getByTestId('backward-table').getAttribute('data-rows')), c.backward.length);
  for (let k = 0; k < c.backward.length; k++) {
    assert.equal(await cellText(p, 'backward-table', k, 'forward'), c.backward[k].forward);
    assert.equal(await cellText(p, 'backward-table', k, 'backward'), c.backward[k].backward);
    assertDur(await cellText(p, 'backward-table', k, 'bwd_gpu'), c.backward[k].backward_gpu_us, `${c.backward[k].backward} GPU`);
  }
  await p.screenshot({ path: shot('modules-backward.png') });
  assert.deepEqual(errors, []);
  await p.close();
});

test('a backward kernel names its forward op, module and line; the jump lands on the forward op, which lists its backward', async () => {
  const errors = [];
  const p = await page(b, errors);
  const c = cli(MLP);
  await open(p, MLP);
  // The AddmmBackward0 pairs' backward nodes, through the Forward ↔ backward table's row.
  await p.getByTestId('tab-modules').click();
  await p.getByTestId('modules-mode-backward').click();
  const k = c.backward.findIndex((r) => r.backward === 'AddmmBackward0');
  await p.locator(`[data-testid=backward-table] .vt-row[data-row="${k}"]`).click();
  await p.getByTestId('timeline').waitFor();
  await p.getByTestId('details').waitFor();
  assert.match(await p.getByTestId('details-name').textContent(), /AddmmBackward0/);
  assert.equal(await p.getByTestId('jump-forward').textContent(), 'aten::addmm');
  // Its first kernel: the same forward op, module and line.
  await p.getByTestId('jump-kernel').click();
  await p.waitForFunction(() => document.querySelector('[data-testid=details-cat]')?.textContent.startsWith('kernel'));
  assert.equal(await p.getByTestId('jump-forward').textContent(), 'aten::addmm');
  const module = await p.getByTestId('details-module').textContent();
  assert.ok(c.modules.some((m) => m.path === module), `module ${module}`);
  assert.equal(await p.getByTestId('details-source').textContent(), c.source_lines.rows[0].label);
  await p.screenshot({ path: shot('modules-backward-kernel.png') });
  // Jump to the forward op: it lists its backward nodes and their GPU time.
  await p.getByTestId('jump-forward').click();
  await p.waitForFunction(() => document.querySelector('[data-testid=details-name]')?.textContent === 'aten::addmm');
  assert.ok((await p.getByTestId('jump-backward').count()) >= 1);
  assert.match(await p.getByTestId('jump-backward').first().textContent(), /AddmmBackward0/);
  assert.ok(Number(await p.getByTestId('details-backward-gpu').getAttribute('data-ns')) > 0);
  assert.ok((await p.locator('[data-testid=details-stack] li').count()) > 3);
  assert.deepEqual(errors, []);
  await p.close();
});

const A100 = path.join(CORPUS, 'real/hta/a100_80gb_rank0of16.json.gz');

test('CUDA graph replays, the GPU health line and the per-step column show the CLI\'s figures', { skip: corpusSkip(A100) }, async () => {
  const errors = [];
  const p = await page(b, errors);
  const c = cli(A100);
  await open(p, A100);
  // The health line under the headline figures: its parts are the CLI's.
  const health = p.getByTestId('gpu-health');
  await health.waitFor();
  assert.ok(Math.abs(Number(await health.getAttribute('data-gpu-ns')) - c.gpu_health.gpu_us * 1e3) <= 1);
  const graphNs = Number(await p.locator('[data-testid=gpu-health] [data-key=graph]').getAttribute('data-ns'));
  assert.ok(Math.abs(graphNs - c.gpu_health.graph_replay_us * 1e3) <= 1, 'graph replay time');
  assert.ok(graphNs > 0);
  await p.screenshot({ path: shot('health-line.png') });
  // GPU tab: one row per replay, the CLI's totals.
  await p.getByTestId('tab-gpu').click();
  await p.getByTestId('graph-replays').waitFor();
  assert.equal(Number(await p.getByTestId('graph-table').getAttribute('data-rows')), c.cuda_graphs.launches);
  assert.equal(Number(await p.getByTestId('graph-summary').getAttribute('data-kernels')), c.cuda_graphs.kernels);
  assertDur(await cellText(p, 'graph-table', 0, 'gpu'), c.cuda_graphs.replays[0].gpu_us, 'first replay GPU time');
  assert.equal(Number(await cellText(p, 'graph-table', 0, 'kernels')), c.cuda_graphs.replays[0].kernels);
  await p.getByTestId('graph-replays').scrollIntoViewIfNeeded();
  await p.screenshot({ path: shot('graph-replays.png') });
  // A replay row shows its kernels in the timeline.
  await p.locator('[data-testid=graph-table] .vt-row[data-row="0"]').click();
  await p.getByTestId('timeline').waitFor();
  await p.waitForFunction((n) => Number(document.querySelector('[data-testid=reveal]')?.dataset.count) === n, c.cuda_graphs.replays[0].kernels);
  // Kernels tab: the per-step column (this trace has steps).
  await p.getByTestId('tab-kernels').click();
  await p.getByTestId('kernel-table').waitFor();
  const steps = await cellText(p, 'kernel-table', 0, 'steps');
  assert.match(steps, /^[▁▂▃▄▅▆▇█]+ med /, steps);
  assert.deepEqual(errors, []);
  await p.close();
});
