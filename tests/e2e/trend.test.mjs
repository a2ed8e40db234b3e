// The Trend tab (issue 28), end to end, on a hand-built series whose changes are known by
// construction (crates/cli/tests/trend.rs builds the same): runs of ten steps with a fixed jitter,
// one run shifted by +100 µs (its gemm kernel 100 → 200 µs: the one change point), one by 1 µs
// (noise), one a run folder of two ranks, one of a single step (too short to tell). The folder is
// opened with "Open runs as a trend…"; every run's figures and the change points must be those
// of `tracelight trend DIR --json` on the same folder, the four small multiples drawn with a
// point per run; a click on the change point's point opens it against the run before in Compare,
// a click between two runs those two. The same series as digests (`tracelight digest`) opens as
// the same trend.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { serve, browser, page, shot, ROOT } from './harness.mjs';

let srv, b;
before(async () => { srv = await serve(); b = await browser(); });
after(async () => { await b?.close(); srv?.server.close(); });

const BIN = path.join(ROOT, 'target', 'release', 'tracelight');
const JITTER = [0, 7, -5, 3, -2, 6, -4, 1, 5, -3];
const steps = (base) => JITTER.map((j) => base + j);

/** Steps of the given µs, each with one aten::mm whose gemm kernel runs `gemm` µs; with `peak`,
 *  one device allocation of that many bytes. */
function trace(durs, gemm, peak) {
  const v = [];
  let t0 = 0;
  durs.forEach((d, k) => {
    v.push({ ph: 'X', cat: 'user_annotation', name: `ProfilerStep#${k}`, pid: 1, tid: 1, ts: t0, dur: d });
    v.push({ ph: 'X', cat: 'cpu_op', name: 'aten::mm', pid: 1, tid: 1, ts: t0 + 1, dur: 8 });
    v.push({ ph: 'X', cat: 'cuda_runtime', name: 'cudaLaunchKernel', pid: 1, tid: 1, ts: t0 + 2, dur: 5, args: { correlation: k } });
    v.push({ ph: 'X', cat: 'kernel', name: 'ampere_sgemm_128x64_nn', pid: 0, tid: 7, ts: t0 + 10, dur: gemm, args: { device: 0, stream: 7, correlation: k } });
    t0 += d;
  });
  if (peak) v.push({ ph: 'i', s: 't', cat: 'cpu_instant_event', name: '[memory]', pid: 1, tid: 1, ts: 3, args: { 'Device Type': 1, 'Device Id': 0, Addr: 4096, Bytes: peak, 'Total Allocated': peak, 'Total Reserved': peak } });
  return JSON.stringify({ traceEvents: v });
}

function series() {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'tl-trend-'));
  const w = (f, s) => fs.writeFileSync(path.join(d, f), s);
  w('2026-11-01.json', trace(steps(1000), 100, 1 << 30));
  w('2026-11-02.pt.trace.json', trace(steps(1001), 100, 1 << 30));
  w('2026-11-03.json', trace(steps(1101).reverse(), 200, 3 << 29));
  fs.mkdirSync(path.join(d, '2026-11-04'));
  for (const k of [0, 1]) w(`2026-11-04/rank-${k}.json`, trace(steps(1101), 200, 0));
  w('2026-11-05.json', trace([900], 200, 0));
  w('notes.txt', 'not a run');
  return d;
}

const trendJson = (dir) => JSON.parse(execFileSync(BIN, ['trend', dir, '--json']).toString());

/** The page's rows against the CLI's runs: names, steps, medians, kernel time, peak, top kernel,
 *  change points. */
async function assertRows(p, want) {
  const rows = await p.getByTestId('trend-row').evaluateAll((els) => els.map((e) => ({ ...e.dataset })));
  assert.deepEqual(rows.map((r) => r.run), want.runs.map((r) => r.name));
  rows.forEach((r, i) => {
    const c = want.runs[i];
    assert.equal(Number(r.steps), c.steps, `${c.name} steps`);
    assert.ok(Math.abs(Number(r.medianNs) / 1e3 - c.step_time.median_us) < 1e-6, `${c.name} median ${r.medianNs} vs ${c.step_time.median_us} µs`);
    assert.ok(Math.abs(Number(r.kernelNs) / 1e3 - c.breakdown_us.kernel) < 1e-6, `${c.name} kernel`);
    assert.equal(r.peak === '' ? null : Number(r.peak), c.peak_memory_bytes, `${c.name} peak`);
    assert.ok(Math.abs(Number(r.topKernelNs) / 1e3 - c.top_kernels[0].us_per_step) < 1e-6, `${c.name} top kernel`);
  });
  assert.deepEqual(rows.filter((r) => r.changePoint === 'true').map((r) => r.run), want.change_points);
}

/** Clicks canvas `testid` at run `i`'s x (or halfway to run i + 1). */
async function clickRun(p, testid, i, between = false) {
  const c = p.getByTestId(testid);
  const xs = (await c.getAttribute('data-xs')).split(',').map(Number);
  const x = between ? (xs[i] + xs[i + 1]) / 2 : xs[i];
  const box = await c.boundingBox();
  await c.click({ position: { x, y: box.height / 2 } });
}

test('a folder of runs opens as the CLI\'s trend, change point marked; a click opens that pair in Compare', async () => {
  const dir = series();
  const want = trendJson(dir);
  assert.deepEqual(want.change_points, ['2026-11-03'], 'the construction');
  const errors = [];
  const p = await page(b, errors);
  await p.setViewportSize({ width: 1440, height: 900 });
  await p.goto(srv.base + '/');
  await p.getByTestId('empty').waitFor();
  await p.getByTestId('trend-input').setInputFiles(dir);
  await p.getByTestId('trend-view').waitFor({ timeout: 60_000 });
  assert.equal(await p.getByTestId('tab-trend').getAttribute('aria-selected'), 'true');
  await assertRows(p, want);
  assert.match(await p.getByTestId('trend-summary').textContent(), /Change points .*: 2026-11-03\.$/);
  // The change against the run before, in the CLI's Markdown words.
  const md = execFileSync(BIN, ['trend', dir]).toString();
  const cpRow = md.split('\n').find((l) => l.startsWith('| **2026-11-03** |'));
  const vs = cpRow.split('|')[4].trim();
  assert.equal((await p.locator('[data-testid=trend-row][data-run="2026-11-03"] td').nth(3).textContent()).trim(), vs);
  assert.match(vs, /^▲ \+100\.0 µs \(\+9\.99%;/);
  // The four panels, each with a point per run.
  for (const id of ['trend-step', 'trend-breakdown', 'trend-kernels', 'trend-memory']) {
    await p.waitForFunction((t) => document.querySelector(`[data-testid=${t}]`)?.getAttribute('data-xs'), id, { timeout: 10_000 });
    assert.equal((await p.getByTestId(id).getAttribute('data-xs')).split(',').length, want.runs.length, id);
  }
  assert.deepEqual(await p.getByTestId('trend-kernel').allTextContents(), ['ampere_sgemm_128x64_nn']);
  // The change point's column is shaded red on the step panel (the differential flame's "grew").
  const shade = await p.getByTestId('trend-step').evaluate((c) => {
    const xs = c.dataset.xs.split(',').map(Number), d = window.devicePixelRatio || 1;
    const px = (x, y) => Array.from(c.getContext('2d').getImageData(Math.floor(x * d), Math.floor(y * d), 1, 1).data.slice(0, 3));
    // Just under the top margin, away from the line: the shading against the run before's.
    return [px(xs[2] + 12, 40), px(xs[1] + 12, 40)];
  });
  assert.ok(shade[0][0] > shade[0][2] && shade[0][1] < 250, `shaded: ${shade[0]}`);
  assert.deepEqual(shade[1], [255, 255, 255], 'no shade off the change point');
  // Hover names the pair.
  const step = p.getByTestId('trend-step');
  const xs = (await step.getAttribute('data-xs')).split(',').map(Number);
  await step.hover({ position: { x: xs[2], y: 100 } });
  await p.waitForFunction(() => document.querySelector('[data-testid=trend-pointed]').textContent.startsWith('Click: compare 2026-11-02 (A) with 2026-11-03 (B)'));
  await p.screenshot({ path: shot('trend.png') });

  // A click on the change point opens it against the run before.
  await clickRun(p, 'trend-step', 2);
  await p.getByTestId('compare-view').waitFor({ timeout: 60_000 });
  const bar = await p.locator('[data-testid=compare-view] > .toolbar').first().textContent();
  assert.match(bar, /A 2026-11-02\.pt\.trace\.json · 10 steps/);
  assert.match(bar, /B 2026-11-03\.json · 10 steps/);
  const stepRow = p.getByTestId('compare-step-median');
  assert.equal(Number(await stepRow.getAttribute('data-a-ns')) / 1e3, want.runs[1].step_time.median_us);
  assert.equal(Number(await stepRow.getAttribute('data-b-ns')) / 1e3, want.runs[2].step_time.median_us);
  await p.screenshot({ path: shot('trend-compare.png') });
  // Back on the Trend tab, a click between the run folder and the last run opens those two.
  await p.getByTestId('tab-trend').click();
  await p.getByTestId('trend-view').waitFor();
  await p.waitForFunction(() => document.querySelector('[data-testid=trend-kernels]')?.getAttribute('data-xs'));
  await clickRun(p, 'trend-kernels', 3, true);
  await p.getByTestId('compare-view').waitFor({ timeout: 60_000 });
  const bar2 = await p.locator('[data-testid=compare-view] > .toolbar').first().textContent();
  assert.match(bar2, /A rank-0\.json … \(2 ranks\) · 20 steps/);
  assert.match(bar2, /B 2026-11-05\.json · 1 steps/);
  // And a row's button: 2026-11-02 against 2026-11-01.
  await p.getByTestId('tab-trend').click();
  await p.locator('[data-testid=trend-row][data-run="2026-11-02"] [data-testid=trend-compare]').click();
  await p.getByTestId('compare-view').waitFor({ timeout: 60_000 });
  assert.match(await p.locator('[data-testid=compare-view] > .toolbar').first().textContent(), /A 2026-11-01\.json · 10 steps.*B 2026-11-02\.pt\.trace\.json/);
  assert.deepEqual(errors, []);
  await p.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

test('the same series as digests opens as the same trend', async () => {
  const dir = series();
  const out = fs.mkdtempSync(path.join(os.tmpdir(), 'tl-trend-digests-'));
  for (const f of ['2026-11-01.json', '2026-11-02.pt.trace.json', '2026-11-03.json', '2026-11-05.json']) {
    execFileSync(BIN, ['digest', path.join(dir, f), '-o', out]);
  }
  execFileSync(BIN, ['digest', path.join(dir, '2026-11-04/rank-0.json'), path.join(dir, '2026-11-04/rank-1.json'), '-o', path.join(out, '2026-11-04')]);
  const want = trendJson(out);
  const traces = trendJson(dir);
  assert.deepEqual(want.change_points, traces.change_points);
  assert.deepEqual(want.runs.map((r) => r.step_time), traces.runs.map((r) => r.step_time));
  const errors = [];
  const p = await page(b, errors);
  await p.setViewportSize({ width: 1440, height: 900 });
  await p.goto(srv.base + '/');
  await p.getByTestId('empty').waitFor();
  await p.getByTestId('trend-input').setInputFiles(out);
  await p.getByTestId('trend-view').waitFor({ timeout: 60_000 });
  await assertRows(p, want);
  await p.screenshot({ path: shot('trend-digests.png') });
  assert.deepEqual(errors, []);
  await p.close();
  fs.rmSync(dir, { recursive: true, force: true });
  fs.rmSync(out, { recursive: true, force: true });
});
