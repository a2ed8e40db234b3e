// The first renders rehearsed offscreen before any pick (crates/web/src/rehearse.rs): a generated
// snapshot's Memory tab, then a generated trace's Overview, each mounted in a hidden, inert element
// and removed. They must render without an error, never show, go away by themselves, and give way
// at once to a file picked while one is on.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { serve, browser, page, CORPUS, corpusSkip } from './harness.mjs';

let srv, b;
before(async () => { srv = await serve(); b = await browser(); });
after(async () => { await b?.close(); srv?.server.close(); });

const TRACE = path.join(CORPUS, 'real/hta/nccl_data_a100_rank0of2.json.gz');

/** What the rehearsal host holds, sampled every 5 ms until `until` says stop: [ms, state]. */
const watch = (p, ms) => p.evaluate((ms) => new Promise((resolve) => {
  const t0 = performance.now();
  const out = [];
  let last = '';
  const tick = () => {
    const hosts = document.querySelectorAll('[data-rehearsal]');
    const h = hosts[0];
    let s = 'none';
    if (hosts.length > 1) s = 'two hosts';
    else if (h?.querySelector('[data-testid=overview]')) s = 'overview';
    else if (h?.querySelector('[data-testid=mem-chart]')) s = 'memory';
    else if (h) s = 'host';
    if (h) {
      const r = h.getBoundingClientRect();
      const st = getComputedStyle(h);
      if (r.right > 0 || st.visibility !== 'hidden' || !h.hasAttribute('inert')) s += ' SHOWN';
    }
    if (s !== last) { out.push([Math.round(performance.now() - t0), s]); last = s; }
    if (performance.now() - t0 > ms) return resolve(out);
    setTimeout(tick, 5);
  };
  tick();
}), ms);

test('the rehearsals render offscreen, then leave nothing behind', async () => {
  const errors = [];
  const p = await page(b, errors);
  await p.goto(srv.base + '/');
  await p.getByTestId('empty').waitFor();
  const seen = await watch(p, 8000);
  const states = seen.map(([, s]) => s);
  assert.ok(!states.some((s) => s.includes('SHOWN') || s === 'two hosts'), `hidden, one at a time: ${JSON.stringify(seen)}`);
  // The snapshot's Memory tab (its chart), then the trace's Overview, each in turn, then nothing.
  const mem = states.indexOf('memory');
  const ov = states.indexOf('overview');
  assert.ok(mem >= 0 && ov > mem, `the chart, then the Overview: ${JSON.stringify(seen)}`);
  assert.equal(states[states.length - 1], 'none', `removed: ${JSON.stringify(seen)}`);
  assert.equal(await p.locator('[data-testid=overview], [data-testid=mem-chart]').count(), 0);
  assert.ok(await p.getByTestId('empty').isVisible(), 'the start screen stays as it was');
  assert.deepEqual(errors, []);
  await p.close();
});

test('a file picked while the Overview is rehearsed opens as the only Overview', { skip: corpusSkip(TRACE) }, async () => {
  const errors = [];
  const p = await page(b, errors);
  await p.goto(srv.base + '/');
  await p.getByTestId('empty').waitFor();
  await p.waitForFunction(() => document.querySelector('[data-rehearsal] [data-testid=overview]'), null, { timeout: 20_000, polling: 5 });
  await p.getByTestId('file-input').setInputFiles(TRACE);
  await p.locator('main [data-testid=overview]').waitFor({ timeout: 60_000 });
  assert.equal(await p.locator('[data-rehearsal]').count(), 0, 'the rehearsal is gone once the file is on screen');
  assert.equal(await p.locator('[data-testid=overview]').count(), 1);
  // The file's own figures, not the rehearsal's generated trace.
  const facts = await p.getByTestId('overview').textContent();
  assert.ok(facts.includes('nccl_data_a100_rank0of2'), 'the picked file is the one shown');
  assert.deepEqual(errors, []);
  await p.close();
});
