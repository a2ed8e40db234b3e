// Deep links on the demo trace: a view reached by clicking (a kernel's 3rd occurrence revealed,
// zoomed, a tab) is copied with "Copy link" and opened in a fresh page, which must show the same
// tab, window, selection and occurrence. Hand-written links address a step by name, an op or a
// kernel by name and occurrence, and a slice by ts/dur/track; the expected times come from
// python's exact (Decimal) read of the JSON, not from the Rust reader.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { serve, browser, page, shot, ROOT } from './harness.mjs';

const DEMO = path.join(ROOT, 'web/demo/demo.pt.trace.json.gz');
const URL_PATH = '/?url=' + encodeURIComponent('demo/demo.pt.trace.json.gz');
const KERNEL = 'nvjet_tst_256x128_64x4_1x2_h_bz_coopA_NTN';

function facts() {
  const py = `
import gzip, json, sys
from decimal import Decimal
d = json.load(gzip.open(sys.argv[1]), parse_float=Decimal)
X = [e for e in d['traceEvents'] if e.get('ph') == 'X']
ns = lambda v: int(Decimal(v) * 1000)
step = next(e for e in X if e['name'] == 'ProfilerStep#3')
ks = sorted((e for e in X if e.get('cat') == 'kernel' and e['name'] == sys.argv[2]), key=lambda e: Decimal(e['ts']))
copies = sorted((e for e in X if e.get('cat') == 'cpu_op' and e['name'] == 'aten::copy_'), key=lambda e: Decimal(e['ts']))
print(json.dumps({
  'step': [str(ns(step['ts'])), str(ns(step['ts']) + ns(step['dur']))],
  'kernels': len(ks), 'k3': [str(ns(ks[2]['ts'])), str(ns(ks[2]['dur']))], 'k7': [str(ns(ks[6]['ts'])), str(ns(ks[6]['dur']))],
  'copies': len(copies), 'copy2': str(ns(copies[1]['ts'])),
}))
`;
  return JSON.parse(execFileSync('python3', ['-c', py, DEMO, KERNEL]).toString());
}

let srv, b, F;
before(async () => { srv = await serve(); b = await browser(); F = facts(); });
after(async () => { await b?.close(); srv?.server.close(); });

const painted = (p) => p.waitForFunction(() => Number(document.querySelector('[data-testid=timeline]')?.getAttribute('data-rects')) > 0, null, { timeout: 60_000 });
const windowOf = async (p) => (await p.getByTestId('timeline').getAttribute('data-window')).split(',').map(BigInt);
/** The selected slice's start and duration in ns, as the details panel states them. */
const selected = async (p) => [await p.getByTestId('details-start').getAttribute('data-ns'), await p.getByTestId('details-dur').getAttribute('data-ns')];

test('Copy link from the timeline (a revealed kernel, stepped and zoomed) and from a table tab reopens the same view', async () => {
  const errors = [];
  const p = await page(b, errors);
  await p.goto(srv.base + URL_PATH);
  await p.getByTestId('tab-kernels').click();
  await p.getByTestId('kernel-filter').fill(KERNEL);
  await p.locator('[data-testid=kernel-table] .vt-row').first().click();
  await p.getByTestId('reveal').waitFor();
  await p.getByTestId('reveal-next').click();
  await p.getByTestId('reveal-next').click();
  assert.equal(await p.getByTestId('reveal-pos').textContent(), `3 / ${F.kernels}`);
  assert.deepEqual(await selected(p), F.k3);
  // Zoom out a little with the keyboard so the window is one no click produced.
  await p.getByTestId('timeline').hover();
  await p.keyboard.press('s');
  await painted(p);
  await p.waitForTimeout(400); // the hash is written 250 ms after the last change
  const win = await windowOf(p);
  await p.getByTestId('copy-link').click();
  const link = await p.getByTestId('copy-link').getAttribute('data-link');
  assert.match(link, /#tab=timeline&file=0&visStart=\d+&visEnd=\d+&kernel=nvjet[^&]*&n=3&ts=\d+&dur=\d+&track=/);

  const q = await page(b, errors);
  await q.goto(link);
  await q.getByTestId('timeline').waitFor({ timeout: 60_000 });
  await painted(q);
  assert.deepEqual(await windowOf(q), win);
  assert.equal(await q.getByTestId('reveal-pos').textContent(), `3 / ${F.kernels}`);
  assert.match(await q.getByTestId('reveal-label').textContent(), new RegExp(`^${KERNEL} — ${F.kernels} occurrences`));
  assert.deepEqual(await selected(q), F.k3);
  await q.screenshot({ path: shot('links-reopened.png') });

  // A table tab: the link names the tab.
  await p.getByTestId('tab-gpu').click();
  await p.getByTestId('gpu-view').waitFor();
  await p.getByTestId('copy-link').click();
  const gpuLink = await p.getByTestId('copy-link').getAttribute('data-link');
  await q.goto('about:blank');
  await q.goto(gpuLink);
  await q.getByTestId('gpu-view').waitFor({ timeout: 60_000 });
  assert.equal(await q.getByTestId('tab-gpu').getAttribute('aria-selected'), 'true');
  assert.deepEqual(errors, []);
  await p.close();
  await q.close();
});

test('hand-written links: a step by name, an op and a kernel by occurrence, a slice by ts/dur/track', async () => {
  const errors = [];
  const p = await page(b, errors);
  await p.goto(srv.base + URL_PATH + '#tab=timeline&step=ProfilerStep%233');
  await p.getByTestId('timeline').waitFor({ timeout: 60_000 });
  await painted(p);
  assert.deepEqual(await windowOf(p), F.step.map(BigInt));

  await p.goto('about:blank');
  await p.goto(srv.base + URL_PATH + `#tab=timeline&kernel=${encodeURIComponent(KERNEL)}&n=7`);
  await p.getByTestId('details').waitFor({ timeout: 60_000 });
  assert.equal(await p.getByTestId('reveal-pos').textContent(), `7 / ${F.kernels}`);
  assert.deepEqual(await selected(p), F.k7);
  // The track as the page names it (from its own hash), for the ts/dur/track link below.
  await p.waitForFunction(() => location.hash.includes('track='));
  const track = await p.evaluate(() => decodeURIComponent(location.hash.match(/track=([^&]*)/)[1]));

  await p.goto('about:blank');
  await p.goto(srv.base + URL_PATH + '#tab=timeline&op=aten%3A%3Acopy_&n=2');
  await p.getByTestId('details').waitFor({ timeout: 60_000 });
  assert.equal(await p.getByTestId('reveal-pos').textContent(), `2 / ${F.copies}`);
  assert.equal((await selected(p))[0], F.copy2);

  await p.goto('about:blank');
  await p.goto(srv.base + URL_PATH + `#tab=timeline&ts=${F.k3[0]}&dur=${F.k3[1]}&track=${encodeURIComponent(track)}`);
  await p.getByTestId('details').waitFor({ timeout: 60_000 });
  assert.deepEqual(await selected(p), F.k3);
  assert.equal(await p.getByTestId('details-name').textContent(), KERNEL);
  assert.deepEqual(errors, []);
  await p.close();
});
