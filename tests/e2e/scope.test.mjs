// The scope picker, end to end (issue 25): one control over the Overview, Operators, Kernels and
// Modules tabs, kept in the link's `scope=`. Under a step, an annotation occurrence, a link's
// scope and a window dragged on the timeline, the page's figures equal
// `tracelight analyze --json --scope SPEC` on the same file — core's `Analysis::scoped` serves both,
// and the CLI's scoped output is itself checked against the file cut by hand to the scope
// (crates/cli/tests/scoped.rs). Also: a module's "flame ›" cell opens the flame graph at the
// module's frame, and the Operators table names each backward node's forward op (both against the
// CLI's module and forward ↔ backward tables).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { serve, browser, cli, page, shot, cellText, assertDur, assertSig3, ROOT } from './harness.mjs';

let srv, b;
before(async () => { srv = await serve(); b = await browser(); });
after(async () => { await b?.close(); srv?.server.close(); });

const BIN = path.join(ROOT, 'target', 'release', 'tracelight');
const MLP = path.join(ROOT, 'crates/core/tests/fixtures/torch-2.11-cuda13-h100/gpu_mlp.pt.trace.json.gz');

const scoped = (spec) => JSON.parse(execFileSync(BIN, ['analyze', MLP, '--json', '--scope', spec], { maxBuffer: 256 << 20 }).toString());

async function wide(errors) {
  const p = await page(b, errors);
  await p.setViewportSize({ width: 1440, height: 900 });
  return p;
}

async function open(p, hash = '') {
  await p.goto(srv.base + '/' + hash);
  await p.getByTestId('empty').waitFor();
  await p.getByTestId('file-input').setInputFiles(MLP);
  await p.getByTestId('scope-bar').waitFor({ timeout: 120_000 });
}

async function pick(p, spec) {
  await p.getByTestId('scope-pick').selectOption(spec);
  await p.locator(`[data-testid=scope-bar][data-scope="${spec}"]`).waitFor();
}

const rows = async (p, id) => Number(await p.getByTestId(id).getAttribute('data-rows'));

/** Every tab under the scope shows the CLI's scoped figures. */
async function sameAsCli(p, c, what) {
  assert.equal(await p.getByTestId('scope-bar').getAttribute('data-scope'), c.scope.spec, what);
  await p.getByTestId('tab-overview').click();
  await p.getByTestId('overview').waitFor();
  assertSig3(await p.getByTestId('gpu-util').textContent(), c.gpu.utilization, `${what}: GPU utilization`);
  const mean = c.steps.reduce((s, x) => s + x.dur_us, 0) / c.steps.length;
  assert.ok(Math.abs(Number(await p.getByTestId('step-time').getAttribute('data-ns')) - mean * 1e3) <= 1, `${what}: step time`);
  const steps = await p.getByTestId('step-row').evaluateAll((els) => els.map((e) => [e.dataset.name, Number(e.dataset.ns)]));
  assert.deepEqual(steps.map((s) => s[0]), c.steps.map((s) => s.name), `${what}: windows`);
  for (const [k, us] of Object.entries(c.categories)) {
    const ns = Number(await p.locator(`[data-testid=seed-categories] [data-key=${k}]`).getAttribute('data-ns'));
    assert.ok(Math.abs(ns - us * 1e3) <= 1, `${what}: category ${k}`);
  }
  await p.getByTestId('tab-operators').click();
  await p.getByTestId('op-table').waitFor();
  assert.equal(await rows(p, 'op-table'), c.ops.length, `${what}: op rows`);
  for (let r = 0; r < Math.min(8, c.ops.length); r++) {
    assert.equal(await cellText(p, 'op-table', r, 'name'), c.ops[r].name, `${what}: op row ${r}`);
    assert.equal(Number(await cellText(p, 'op-table', r, 'calls')), c.ops[r].calls, `${what}: ${c.ops[r].name} calls`);
    assertDur(await cellText(p, 'op-table', r, 'self_cpu'), c.ops[r].self_cpu_us, `${what}: ${c.ops[r].name} self CPU`);
    assertDur(await cellText(p, 'op-table', r, 'device_total'), c.ops[r].device_total_us, `${what}: ${c.ops[r].name} device total`);
  }
  await p.getByTestId('tab-kernels').click();
  await p.getByTestId('kernel-table').waitFor();
  assert.equal(await rows(p, 'kernel-table'), c.kernels.length, `${what}: kernel rows`);
  for (let r = 0; r < Math.min(6, c.kernels.length); r++) {
    assert.equal(await cellText(p, 'kernel-table', r, 'name'), c.kernels[r].name, `${what}: kernel row ${r}`);
    assert.equal(Number(await cellText(p, 'kernel-table', r, 'calls')), c.kernels[r].calls, `${what}: kernel ${r} calls`);
    assertDur(await cellText(p, 'kernel-table', r, 'total'), c.kernels[r].total_us, `${what}: kernel ${r} total`);
  }
  await p.getByTestId('tab-modules').click();
  await p.getByTestId('module-table').waitFor();
  assert.equal(await rows(p, 'module-table'), c.modules.length, `${what}: module rows`);
  for (let k = 0; k < c.modules.length; k++) {
    const m = c.modules[k];
    assert.equal((await cellText(p, 'module-table', k, 'name')).replace(/\u2003/g, ''), m.name, `${what}: module row ${k}`);
    assert.equal(Number(await cellText(p, 'module-table', k, 'calls')), m.calls, `${what}: ${m.path} calls`);
    assertDur(await cellText(p, 'module-table', k, 'host'), m.host_us, `${what}: ${m.path} host`);
  }
}

const kernelUs = (c) => c.kernels.reduce((s, k) => s + k.total_us, 0);

test('the scope picker shows the CLI\'s --scope figures on all four tabs: a step, an annotation occurrence, a link', async () => {
  const errors = [];
  const p = await wide(errors);
  await open(p);
  const whole = cli(MLP);
  assert.equal(await p.getByTestId('scope-bar').getAttribute('data-scope'), 'whole');
  const specs = await p.getByTestId('scope-pick').locator('option').evaluateAll((os) => os.map((o) => o.value));
  const stepSpecs = specs.filter((s) => s.startsWith('step:'));
  assert.equal(stepSpecs.length, whole.steps.length, 'one choice per ProfilerStep');

  // One step: its tables, strictly less kernel time than the whole trace's.
  const step = stepSpecs[1];
  await pick(p, step);
  assert.ok((await p.evaluate(() => location.hash)).includes(`scope=${step}`), 'the scope is in the link');
  const cs = scoped(step);
  assert.ok(kernelUs(cs) > 0 && kernelUs(cs) < kernelUs(whole), `a step is part of the trace: ${kernelUs(cs)} of ${kernelUs(whole)} µs`);
  await sameAsCli(p, cs, step);
  await p.getByTestId('tab-overview').click();
  await p.screenshot({ path: shot('scope-step-overview.png') });
  // A row's occurrences in the timeline are the scope's: as many as its scoped calls.
  for (const [tab, table, rowsOf] of [['operators', 'op-table', cs.ops], ['kernels', 'kernel-table', cs.kernels]]) {
    await p.getByTestId(`tab-${tab}`).click();
    await p.locator(`[data-testid=${table}] .vt-row[data-row="0"] [data-col=name]`).click();
    await p.getByTestId('reveal').waitFor();
    assert.equal(Number(await p.getByTestId('reveal').getAttribute('data-count')), rowsOf[0].calls, `${step}: ${rowsOf[0].name} occurrences`);
  }
  await p.getByTestId('tab-overview').click();

  // One occurrence of an annotation (the second backward pass).
  const occ = specs.find((s) => /^annotation:## backward ##:2$/.test(s)) || specs.find((s) => /^annotation:.*:2$/.test(s));
  assert.ok(occ, `an annotation occurrence among ${specs.length} choices`);
  await pick(p, occ);
  const ca = scoped(occ);
  assert.equal(ca.scope.windows.length, 1);
  await sameAsCli(p, ca, occ);
  await p.screenshot({ path: shot('scope-annotation-modules.png') });

  // Back to the whole trace: the unscoped CLI figures again, and no scope in the link.
  await p.getByTestId('scope-reset').click();
  await p.locator('[data-testid=scope-bar][data-scope=whole]').waitFor();
  assert.ok(!(await p.evaluate(() => location.hash)).includes('scope='));
  await p.getByTestId('tab-operators').click();
  assert.equal(await rows(p, 'op-table'), whole.ops.length);
  assert.deepEqual(errors, []);
  await p.close();

  // A copied link reopens the same scope on the same tab.
  const errors2 = [];
  const q = await wide(errors2);
  await open(q, `#tab=kernels&scope=${encodeURIComponent(occ).replace(/%3A/g, ':')}`);
  await q.getByTestId('kernel-table').waitFor();
  await sameAsCli(q, ca, `${occ} from the link`);
  assert.deepEqual(errors2, []);
  await q.close();
});

test('a window dragged on the timeline scopes the tables as the CLI\'s window: scope', async () => {
  const errors = [];
  const p = await wide(errors);
  await open(p);
  await p.getByTestId('tab-timeline').click();
  const tl = p.getByTestId('timeline');
  await p.waitForFunction(() => Number(document.querySelector('[data-testid=timeline]')?.getAttribute('data-rects')) > 0);
  const g = await tl.evaluate((c) => ({
    rows: JSON.parse(c.getAttribute('data-rows')),
    ruler: Number(c.getAttribute('data-ruler-px')),
    gutter: Number(c.getAttribute('data-gutter-px')),
    width: c.clientWidth,
  }));
  const row = g.rows.find((r) => r.kind === 'slices');
  const box = await tl.boundingBox();
  const y = box.y + g.ruler + row.y + 2;
  const x0 = box.x + g.gutter + (g.width - g.gutter) * 0.35;
  const x1 = box.x + g.gutter + (g.width - g.gutter) * 0.65;
  await p.mouse.move(x0, y);
  await p.mouse.down();
  await p.mouse.move((x0 + x1) / 2, y + 4, { steps: 4 });
  await p.mouse.move(x1, y + 4, { steps: 4 });
  await p.mouse.up();
  await p.getByTestId('area-scope').click();
  await p.getByTestId('overview').waitFor();
  const spec = await p.getByTestId('scope-bar').getAttribute('data-scope');
  assert.match(spec, /^window:\d+-\d+$/);
  const cw = scoped(spec);
  assert.ok(kernelUs(cw) > 0 && kernelUs(cw) < kernelUs(cli(MLP)), 'the window holds part of the GPU work');
  await sameAsCli(p, cw, spec);
  await p.getByTestId('tab-overview').click();
  await p.screenshot({ path: shot('scope-window-overview.png') });
  assert.deepEqual(errors, []);
  await p.close();
});

test('a module opens its flame frame; the Operators table names each backward node\'s forward op', async () => {
  const errors = [];
  const p = await wide(errors);
  await open(p);
  const c = cli(MLP);
  await p.getByTestId('tab-modules').click();
  await p.getByTestId('module-table').waitFor();
  // The deepest module of the first branch: its frame's breadcrumb spells its path.
  const k = c.modules.reduce((best, m, i) => (m.depth > c.modules[best].depth ? i : best), 0);
  const m = c.modules[k];
  await p.locator(`[data-testid=module-table] .vt-row[data-row="${k}"] [data-col=flame]`).click();
  await p.getByTestId('flame-selected').waitFor();
  assert.equal(await p.getByTestId('tab-flame').getAttribute('aria-selected'), 'true');
  assert.equal(await p.getByTestId('flame-python').isChecked(), true, 'Python frames shown (module frames are Python frames)');
  const crumbs = await p.getByTestId('flame-crumb').allTextContents();
  const modules = crumbs.filter((x) => x.startsWith('nn.Module: ')).map((x) => x.slice('nn.Module: '.length));
  assert.equal(modules.join('/'), m.path, 'the breadcrumb is the module path');
  assert.equal((await p.locator('[data-testid=flame-selected] .flame-name').textContent()).trim(), `nn.Module: ${m.name}`);
  // Its calls merged into that frame: the module's calls in this stack.
  const shown = Number((await p.getByTestId('flame-reveal').textContent()).match(/Show (\d+)/)[1]);
  assert.ok(shown >= 1 && shown <= m.calls, `${shown} of ${m.calls} calls`);
  await p.screenshot({ path: shot('scope-module-flame.png') });

  // Operators: "Backward of" = the CLI's forward ↔ backward pairs; grouped, under the forward op.
  const pair = c.backward[0];
  await p.getByTestId('tab-operators').click();
  await p.getByTestId('op-filter').fill(pair.backward);
  await p.getByTestId('op-table').waitFor();
  const n = await rows(p, 'op-table');
  assert.ok(n >= 1);
  for (let r = 0; r < n; r++) {
    const name = await cellText(p, 'op-table', r, 'name');
    const node = name.replace('autograd::engine::evaluate_function: ', '');
    const want = [...new Set(c.backward.filter((x) => x.backward === node).map((x) => x.forward))].sort();
    const got = (await cellText(p, 'op-table', r, 'backward_of')).split(', ').filter(Boolean).sort();
    assert.deepEqual(got, want, `${name}: backward of`);
  }
  await p.getByTestId('op-filter').fill('');
  await p.getByTestId('op-group-fwd').check();
  const names = [];
  // The table is virtualised: scroll each page of rows into the DOM before reading it.
  for (let r = 0; r < Math.min(await rows(p, 'op-table'), 300); r++) {
    if (r % 16 === 0) await p.locator('[data-testid=op-table] .vt-scroll').evaluate((el, y) => { el.scrollTop = y; el.dispatchEvent(new Event('scroll')); }, r * 26);
    names.push(await cellText(p, 'op-table', r, 'name'));
  }
  const at = names.findIndex((x) => x === pair.forward);
  assert.ok(at >= 0, `${pair.forward} listed`);
  const under = [];
  for (let r = at + 1; r < names.length && names[r].includes('↳ '); r++) under.push(names[r].split('↳ ')[1]);
  assert.ok(under.some((x) => x.endsWith(pair.backward)), `${pair.backward} right under ${pair.forward}: ${under}`);
  await p.locator('[data-testid=op-table] .vt-scroll').evaluate((el, y) => { el.scrollTop = y; el.dispatchEvent(new Event('scroll')); }, Math.max(0, at - 3) * 26);
  await p.locator(`[data-testid=op-table] .vt-row[data-row="${at}"]`).waitFor();
  await p.screenshot({ path: shot('scope-operators-backward.png') });
  assert.deepEqual(errors, []);
  await p.close();
});
