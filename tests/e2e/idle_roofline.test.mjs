// Why the GPU is idle and how far each op is from the hardware (issue 26), end to end on the
// repo's H100 fixture (a bf16 decoder LM with a sleeping data loader and a .item() per step): the
// idle causes on the Overview, in the step breakdown and on the GPU tab, the timeline stepping
// through a cause's intervals, the roofline chart and table, and the "% of roof" columns — each
// figure against `tracelight analyze --json` on the same file.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { serve, browser, cli, page, shot, cellText, ROOT } from './harness.mjs';

let srv, b;
before(async () => { srv = await serve(); b = await browser(); });
after(async () => { await b?.close(); srv?.server.close(); });

const LM = path.join(ROOT, 'crates/core/tests/fixtures/torch-2.11-cuda13-h100/gpu_lm_bf16.pt.trace.json.gz');
// A fraction as the page and the CLI print it: core's `num::share` (three significant figures,
// trailing zeros dropped), written again here so the test does not trust the page's formatter.
function sig3(x) {
  const a = Math.abs(x);
  if (!Number.isFinite(x)) return '–';
  if (a === 0) return '0';
  let d = Math.max(0, 2 - Math.floor(Math.log10(a)));
  if (Number(a.toFixed(d)) >= 10 ** (3 - d) && d > 0) d -= 1;
  let s = a.toFixed(d);
  if (s.includes('.')) s = s.replace(/0+$/, '').replace(/\.$/, '');
  return s === '0' ? '0' : (x < 0 ? '−' : '') + s;
}
const share = (f) => `${sig3(100 * f)}%`;

async function open(p, file) {
  await p.setViewportSize({ width: 1440, height: 900 });
  await p.goto(srv.base + '/');
  await p.getByTestId('empty').waitFor();
  await p.getByTestId('file-input').setInputFiles(file);
  await p.getByTestId('overview').waitFor({ timeout: 120_000 });
}

test('idle causes: Overview, step breakdown, GPU tab and the timeline agree with the CLI', async () => {
  const errors = [];
  const p = await page(b, errors);
  const c = cli(LM);
  const ic = c.idle_causes;
  await open(p, LM);
  const card = p.getByTestId('idle-causes').first();
  await card.waitFor();
  assert.ok(Math.abs(Number(await card.getAttribute('data-idle-ns')) - ic.idle_us * 1e3) <= 1, 'idle total');
  assert.ok(Math.abs(Number(await card.getAttribute('data-window-ns')) - ic.window_us * 1e3) <= 1, 'window');
  // One row per cause, in the CLI's order, with its time and share.
  const rows = await card.getByTestId('idle-cause').evaluateAll((els) => els.map((e) => [e.dataset.cause, Number(e.dataset.ns), Number(e.dataset.share)]));
  assert.deepEqual(rows.map((r) => r[0]), ic.causes.map((x) => x.cause));
  rows.forEach((r, k) => {
    assert.ok(Math.abs(r[1] - ic.causes[k].us * 1e3) <= 1, `${r[0]} time`);
    assert.ok(Math.abs(r[2] - ic.causes[k].share_of_window) < 1e-9, `${r[0]} share`);
  });
  // The causes sum to the idle time, and the headline quotes each main cause's share.
  assert.ok(Math.abs(ic.causes.reduce((s, x) => s + x.us, 0) - ic.idle_us) <= ic.causes.length);
  const head = await card.getByTestId('idle-headline').textContent();
  assert.match(head, new RegExp(`^GPU idle ${share(ic.idle_us / ic.window_us).replace('.', '\\.')} of step time: `));
  for (const x of ic.causes.filter((x) => x.share_of_window >= 0.005)) assert.ok(head.includes(share(x.share_of_window)), `${x.cause} in the headline`);
  // The data loader (a 2 ms sleep per step in "## data ##") is a cause, named by its annotation.
  const dl = ic.causes.find((x) => x.cause === 'data_loading');
  assert.ok(dl && dl.top[0].name === '## data ##');
  // The step breakdown: each step row carries its idle bar, whose segments are the CLI's step causes.
  const bars = await p.getByTestId('step-idle-bar').evaluateAll((els) => els.map((e) => [...e.querySelectorAll('[data-cause]')].map((s) => s.dataset.cause)));
  assert.equal(bars.length, ic.steps.length);
  for (const [k, st] of ic.steps.entries()) {
    const want = Object.entries(st.causes).filter(([, us]) => us > 0).map(([cause]) => cause).sort();
    assert.deepEqual([...bars[k]].sort(), want, `step ${st.name} causes`);
  }
  // Each cause's button steps through its intervals; where the kept ones are capped (the longest
  // of each cause) it says how many of how many.
  for (const x of ic.causes) {
    const kept = ic.intervals.filter((y) => y.cause === x.cause).length;
    const btn = await card.locator(`[data-cause=${x.cause}] [data-testid=idle-reveal]`).textContent();
    assert.equal(btn, kept < x.intervals ? `Longest ${kept} of ${x.intervals} →` : `Show ${kept} →`, `${x.cause} button`);
  }
  await p.getByTestId('idle-card').screenshot({ path: shot('idle-overview-card.png') });
  await p.screenshot({ path: shot('idle-overview.png') });

  // "Show N →" on data loading: the timeline steps through that cause's intervals, shaded.
  const want = ic.intervals.filter((x) => x.cause === 'data_loading').sort((x, y) => x.start_us - y.start_us);
  await card.locator('[data-cause=data_loading] [data-testid=idle-reveal]').click();
  const banner = p.getByTestId('reveal');
  await banner.waitFor();
  assert.equal(Number(await banner.getAttribute('data-count')), want.length);
  assert.match(await p.getByTestId('reveal-label').textContent(), /data loading — \d+ intervals/);
  const band = async () => (await banner.getAttribute('data-band')).split(',').map(Number);
  const near = (got, x) => Math.abs(got[0] - x.start_us * 1e3) <= 1 && Math.abs(got[1] - (x.start_us + x.dur_us) * 1e3) <= 1;
  assert.ok(near(await band(), want[0]), 'first interval shaded');
  await p.getByTestId('reveal-next').click();
  await p.waitForFunction(() => document.querySelector('[data-testid=reveal-pos]')?.textContent.startsWith('2 /'));
  assert.ok(near(await band(), want[1]), 'second interval shaded');
  await p.screenshot({ path: shot('idle-timeline-band.png') });

  // GPU tab: the per-stream split equals the CLI's.
  await p.getByTestId('tab-gpu').click();
  await p.getByTestId('stream-causes').waitFor();
  const srows = await p.getByTestId('stream-causes-row').evaluateAll((els) => els.map((e) => [Number(e.dataset.stream), Object.fromEntries([...e.querySelectorAll('[data-cause]')].map((td) => [td.dataset.cause, Number(td.dataset.ns)]))]));
  assert.equal(srows.length, ic.streams.length);
  for (const [k, s] of ic.streams.entries()) {
    assert.equal(srows[k][0], s.stream);
    for (const [cause, us] of Object.entries(s.causes)) assert.ok(Math.abs(srows[k][1][cause] - us * 1e3) <= 1, `stream ${s.stream} ${cause}`);
  }
  await p.getByTestId('gpu-idle-card').screenshot({ path: shot('idle-gpu-card.png') });
  assert.deepEqual(errors, []);
});

test('roofline: chart, table, hover and click, and % of roof in the op and kernel tables match the CLI', async () => {
  const errors = [];
  const p = await page(b, errors);
  const c = cli(LM);
  const r = c.roofline;
  await open(p, LM);
  await p.getByTestId('tab-roofline').click();
  const canvas = p.getByTestId('roofline');
  await canvas.waitFor();
  await p.waitForFunction(() => Number(document.querySelector('[data-testid=roofline]')?.dataset.dots) > 0);
  const drawable = r.ops.filter((o) => o.intensity > 0 && o.achieved_tflops > 0 && o.device_us > 0);
  assert.equal(Number(await canvas.getAttribute('data-dots')), drawable.length);
  assert.ok(Number(await canvas.getAttribute('data-roofs')) >= 2, 'bf16 tensor-core and SIMT roofs');
  assert.match(await p.getByTestId('roofline-device').textContent(), /H100 SXM .*3350 GB\/s/);
  // The table: every group in the CLI's order with its % of roof.
  assert.equal(Number(await p.getByTestId('roofline-table').getAttribute('data-rows')), r.ops.length);
  for (const k of [0, 1, 2]) {
    assert.equal(await cellText(p, 'roofline-table', k, 'name'), r.ops[k].name);
    assert.equal(await cellText(p, 'roofline-table', k, 'roof'), r.ops[k].pct_of_roof == null ? '' : share(r.ops[k].pct_of_roof));
  }
  // Hover the largest dot: the tooltip names its op; a click selects it.
  const [op, x, y] = (await canvas.getAttribute('data-first-dot')).split(',').map(Number);
  const box = await canvas.boundingBox();
  await p.mouse.move(box.x + x, box.y + y);
  const tip = p.getByTestId('roofline-tip');
  await tip.waitFor();
  assert.ok((await tip.textContent()).startsWith(r.ops[op].name));
  await p.screenshot({ path: shot('roofline-hover.png') });
  await p.mouse.click(box.x + x, box.y + y);
  const sel = p.getByTestId('roofline-selected');
  await sel.waitFor();
  assert.equal(await sel.getAttribute('data-name'), r.ops[op].name);
  await p.getByTestId('roofline-show').click();
  await p.getByTestId('reveal').waitFor();
  assert.ok(Number(await p.getByTestId('reveal').getAttribute('data-count')) >= r.ops[op].calls, 'its calls in the timeline');
  // % of roof in the Operators and Kernels tables, as the CLI's rows.
  await p.getByTestId('tab-operators').click();
  await p.getByTestId('op-table').waitFor();
  await p.getByTestId('op-table').locator('[data-col=pct_of_roof]').first().waitFor();
  const withRoof = c.ops.filter((o) => o.pct_of_roof != null);
  assert.ok(withRoof.length > 5);
  await p.getByTestId('op-filter').fill(withRoof[0].name);
  await p.waitForFunction((n) => document.querySelector('[data-testid=op-table] .vt-row[data-row="0"] [data-col=name]')?.textContent === n, withRoof[0].name);
  assert.equal(await cellText(p, 'op-table', 0, 'pct_of_roof'), share(withRoof[0].pct_of_roof));
  await p.getByTestId('tab-kernels').click();
  await p.getByTestId('kernel-table').waitFor();
  const k0 = c.kernels.findIndex((k) => k.pct_of_roof != null);
  assert.ok(k0 >= 0);
  assert.equal(await cellText(p, 'kernel-table', k0, 'pct_of_roof'), share(c.kernels[k0].pct_of_roof));
  await p.getByTestId('tab-roofline').click();
  await canvas.waitFor();
  await p.screenshot({ path: shot('roofline.png') });
  assert.deepEqual(errors, []);
});
