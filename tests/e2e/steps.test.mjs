// Steps on the Overview (issue 23, point 10): a CPU loop annotated with its own `train_step_N`
// (no `profiler.step()`) has its steps — the step list, the step time, the scope picker — as
// `tracelight analyze --json` reports them (one definition: core's model::steps, documented in
// docs/definitions.md); a first step at least twice the median of the others is marked as the
// warm-up beside the mean it pulls up, and the median is shown; without a slow first step,
// nothing is marked. Hand-built loops whose steps are known by construction, and torch's own
// `train_step_N` trace from the corpus.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { serve, browser, page, shot, cli, CORPUS, corpusSkip } from './harness.mjs';
import fs from 'node:fs';
import os from 'node:os';

let srv, b;
before(async () => { srv = await serve(); b = await browser(); });
after(async () => { await b?.close(); srv?.server.close(); });

/** Four steps of the given µs named `train_step_k`, each with an aten::mm (30 µs) and an
 *  aten::add (10 µs). */
function loop(durs) {
  const v = [];
  let t0 = 1000;
  durs.forEach((d, k) => {
    v.push({ ph: 'X', cat: 'user_annotation', name: `train_step_${k}`, pid: 1, tid: 1, ts: t0, dur: d });
    v.push({ ph: 'X', cat: 'cpu_op', name: 'aten::mm', pid: 1, tid: 1, ts: t0 + 5, dur: 30 });
    v.push({ ph: 'X', cat: 'cpu_op', name: 'aten::add', pid: 1, tid: 1, ts: t0 + 50, dur: 10 });
    t0 += d;
  });
  const f = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'tl-steps-')), 'loop.json');
  fs.writeFileSync(f, JSON.stringify({ traceEvents: v }));
  return f;
}

async function open(file) {
  const errors = [];
  const p = await page(b, errors);
  await p.setViewportSize({ width: 1440, height: 900 });
  await p.goto(srv.base + '/');
  await p.getByTestId('file-input').setInputFiles(file);
  await p.getByTestId('step-time').waitFor({ timeout: 60_000 });
  return { p, errors };
}

const note = (p) => p.locator('.stat', { has: p.getByTestId('step-time') }).locator('.stat-note').textContent();

test('a train_step_N loop has its steps, as the CLI says; its slow first step is marked as the warm-up', async () => {
  const file = loop([400, 100, 100, 100]);
  const c = cli(file);
  assert.deepEqual(c.steps.map((s) => [s.name, s.dur_us]), [['train_step_0', 400], ['train_step_1', 100], ['train_step_2', 100], ['train_step_3', 100]]);
  const { p, errors } = await open(file);
  assert.equal(await p.getByTestId('no-steps').count(), 0, 'no "no steps" message');
  const rows = await p.getByTestId('step-row').evaluateAll((els) => els.map((e) => [e.dataset.name, Number(e.dataset.ns), e.dataset.warmup ?? null]));
  assert.deepEqual(rows.map((r) => r[0]), c.steps.map((s) => s.name));
  assert.deepEqual(rows.map((r) => r[1]), c.steps.map((s) => s.dur_us * 1e3));
  // The warm-up: step 0 only, 4× the median of the others (100 µs).
  assert.deepEqual(rows.map((r) => r[2]), ['4', null, null, null]);
  assert.equal(await p.getByTestId('warmup-tag').count(), 1);
  assert.equal(await p.getByTestId('warmup-tag').textContent(), 'warm-up');
  // The mean (175 µs) with the median beside it and the warm-up named.
  assert.equal(Number(await p.getByTestId('step-time').getAttribute('data-ns')), 175_000);
  assert.equal(await note(p), 'mean of 4 steps · median 100.000 µs · train_step_0 is a warm-up (4× the median)');
  // The scope picker offers each step by its own name.
  const opts = await p.getByTestId('scope-pick').locator('option').allTextContents();
  for (let k = 0; k < 4; k++) assert.ok(opts.some((o) => o.startsWith(`train_step_${k} · `)), `step ${k} in ${JSON.stringify(opts)}`);
  await p.getByTestId('warmup-tag').scrollIntoViewIfNeeded();
  await p.screenshot({ path: shot('steps-train-step-warmup.png') });
  assert.deepEqual(errors, []);
  await p.close();
});

test('steps of even length: no warm-up marked', async () => {
  const file = loop([100, 100, 110, 100]);
  const { p, errors } = await open(file);
  assert.equal(await p.getByTestId('step-row').count(), 4);
  assert.equal(await p.getByTestId('warmup-tag').count(), 0);
  assert.doesNotMatch(await note(p), /warm-up/);
  assert.deepEqual(errors, []);
  await p.close();
});

const MLP = path.join(CORPUS, 'generated/mlp_wide_flops_et.json');
test('torch\'s own train_step_N trace (no ProfilerStep) shows its two steps as the CLI does', { skip: corpusSkip(MLP) }, async () => {
  const c = cli(MLP);
  assert.deepEqual(c.steps.map((s) => s.name), ['train_step_0', 'train_step_1']);
  const { p, errors } = await open(MLP);
  const rows = await p.getByTestId('step-row').evaluateAll((els) => els.map((e) => [e.dataset.name, Number(e.dataset.ns)]));
  assert.deepEqual(rows, c.steps.map((s) => [s.name, Math.round(s.dur_us * 1e3)]));
  assert.deepEqual(errors, []);
  await p.close();
});

// A loop of 300 steps (issue 30: the page never blocks): the step list is windowed (only rows in
// view exist; scrolled to the end it shows the last step with its own time), the scope picker
// lists the first and last 100 steps and takes any other by number, and an annotation's name
// with markup stays text in the picker.
test('300 steps: a windowed step list, a step picked by number, names kept as text', async () => {
  const durs = Array.from({ length: 300 }, (_, k) => 100 + (k % 7) * 10);
  const file = loop(durs);
  // A record_function whose name is markup, inside step 0.
  const tr = JSON.parse(fs.readFileSync(file));
  const odd = '<img src=x onerror="window.__pwned=1"> & \'q\'';
  tr.traceEvents.push({ ph: 'X', cat: 'user_annotation', name: odd, pid: 1, tid: 1, ts: 1010, dur: 20 });
  fs.writeFileSync(file, JSON.stringify(tr));
  const c = cli(file);
  assert.equal(c.steps.length, 300);
  const { p, errors } = await open(file);
  const list = p.getByTestId('step-list');
  assert.equal(await list.getAttribute('data-steps'), '300');
  const shown = await p.getByTestId('step-row').count();
  assert.ok(shown > 0 && shown <= 40, `${shown} rows exist of 300`);
  await list.evaluate((el) => { el.scrollTop = el.scrollHeight; });
  const last = p.locator('[data-testid=step-row][data-index="299"]');
  await last.waitFor({ timeout: 10_000 });
  assert.equal(await last.getAttribute('data-name'), c.steps[299].name);
  assert.equal(Number(await last.getAttribute('data-ns')), c.steps[299].dur_us * 1e3);
  await p.getByTestId('step-breakdown').first().scrollIntoViewIfNeeded();
  await p.screenshot({ path: shot('steps-windowed.png') });

  // The picker: whole + 200 steps + the gap + the annotation's options.
  const pick = p.getByTestId('scope-pick');
  const values = await pick.locator('option').evaluateAll((os) => os.map((o) => o.value));
  assert.ok(values.includes('step:0') && values.includes('step:99') && values.includes('step:299'));
  assert.ok(!values.includes('step:150'), 'a middle step is not listed');
  assert.equal(values.filter((v) => v.startsWith('step:')).length, 200);
  const texts = await pick.locator('option').evaluateAll((os) => os.map((o) => o.textContent));
  assert.ok(texts.some((t) => t.startsWith(odd + ' · all 1')), 'the annotation name is the option text, as written');
  assert.equal(await p.evaluate(() => window.__pwned), undefined);
  // Step 150 by number: the scope and the step time are that step's.
  await p.getByTestId('scope-step-input').fill('150');
  await p.getByTestId('scope-step-input').press('Enter');
  await p.waitForFunction(() => document.querySelector('[data-testid=scope-bar]')?.getAttribute('data-scope') === 'step:150');
  await p.waitForFunction((ns) => Number(document.querySelector('[data-testid=step-time]')?.getAttribute('data-ns')) === ns, durs[150] * 1e3);
  assert.deepEqual(errors, []);
  await p.close();
});
