// While a big trace loads, the page shows a preview: the model of the file's head (from byte 0 to
// the first event boundary at or after `?preview=MB`), read by one more worker with its analysis
// (load/preview.rs). The whole trace replaces it when ready. Checked against the CLI: the preview
// shows what `tracelight analyze` reads from exactly those bytes, and the whole load what it reads
// from the whole file; a cancelled load puts back what was on screen before its preview.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { serve, browser, cli, page, shot, corpusSkip, CORPUS } from './harness.mjs';

let srv, b;
const TMP = fs.mkdtempSync(path.join(os.tmpdir(), 'tl-preview-'));
before(async () => { srv = await serve(); b = await browser(); });
after(async () => { await b?.close(); srv?.server.close(); fs.rmSync(TMP, { recursive: true, force: true }); });

const GZ = path.join(CORPUS, 'real/hta/a100_80gb_rank0of16.json.gz');
const plain = () => {
  const f = path.join(TMP, 'a100_rank0.json');
  if (!fs.existsSync(f)) fs.writeFileSync(f, zlib.gunzipSync(fs.readFileSync(GZ)));
  return f;
};

test('a preview of the head shows what the CLI reads from those bytes, then the whole trace replaces it', { skip: corpusSkip(GZ) }, async () => {
  const f = plain();
  const size = fs.statSync(f).size;
  const errors = [];
  const p = await page(b, errors);
  // The banner's figures as it first appears (the whole trace replaces it soon after).
  await p.addInitScript(() => {
    // The whole load's workers are held from the head's model until the page has drawn it.
    window.__held = [];
    const post = Worker.prototype.postMessage;
    Worker.prototype.postMessage = function (m, ...rest) {
      if (m && (m.kind === 'hold' || m.kind === 'go')) window.__held.push([m.kind, performance.now()]);
      return post.call(this, m, ...rest);
    };
    new MutationObserver(() => {
      const el = document.querySelector('[data-testid=preview-banner]');
      const shown = document.querySelector('[data-testid=event-count]');
      if (!el || !shown || window.__preview) return;
      window.__preview = {
        at: performance.now(),
        bytes: Number(el.dataset.previewBytes),
        events: Number(el.dataset.previewEvents),
        shownEvents: document.querySelector('[data-testid=event-count]')?.textContent,
        text: el.textContent,
      };
    }).observe(document, { childList: true, subtree: true, characterData: true });
  });
  await p.goto(`${srv.base}/?workers=2&preview=2`);
  await p.getByTestId('empty').waitFor();
  await p.getByTestId('file-input').setInputFiles(f);
  await p.waitForFunction(() => window.__preview && window.__preview.shownEvents, null, { timeout: 120_000 });
  const pv = await p.evaluate(() => window.__preview);
  // The head ends where an event begins, at or after 2 MB and well before the end.
  assert.ok(pv.bytes >= 2e6 && pv.bytes < size / 2, `head of ${pv.bytes} bytes`);
  const bytes = fs.readFileSync(f);
  assert.match(bytes.subarray(pv.bytes, pv.bytes + 16).toString(), /^\s*\{\s*"/, 'the head stops before an event');
  const head = path.join(TMP, 'head.json');
  fs.writeFileSync(head, bytes.subarray(0, pv.bytes));
  const h = cli(head);
  assert.equal(pv.events, h.files[0].events);
  assert.equal(Number(pv.shownEvents), h.files[0].events);
  assert.match(pv.text, /Preview: the first 2\.\d MB of \d+\.\d MB/);
  await p.waitForFunction(() => window.__held.some(([k]) => k === 'go'), null, { timeout: 10_000 });
  const held = await p.evaluate(() => window.__held);
  const holds = held.filter(([k]) => k === 'hold').map(([, t]) => t);
  const gos = held.filter(([k]) => k === 'go').map(([, t]) => t);
  assert.ok(holds.length >= 1 && holds.every((t) => t < pv.at), `held before the preview showed: ${JSON.stringify(held)} / ${pv.at}`);
  assert.ok(gos.length >= 1 && gos.every((t) => t > pv.at), `let go after it showed: ${JSON.stringify(held)} / ${pv.at}`);
  // Then the whole trace, as the CLI reads it; the banner is gone.
  await p.waitForFunction(() => !document.querySelector('[data-testid=preview-banner]') && document.querySelector('[data-testid=load-stats]')?.dataset.workers === '2', null, { timeout: 120_000 });
  const whole = cli(f);
  assert.equal(Number(await p.getByTestId('event-count').textContent()), whole.files[0].events);
  assert.ok(whole.files[0].events > 2 * h.files[0].events);
  await p.screenshot({ path: shot('preview-whole.png') });
  assert.deepEqual(errors, []);
  await p.close();
});

test('the preview is on screen while the rest loads, and a cancelled load puts back the trace before it', { skip: corpusSkip(GZ) }, async () => {
  const f = plain();
  const errors = [];
  const p = await page(b, errors);
  // First a small trace, on the page's own reader: what must come back after the cancel.
  await p.goto(`${srv.base}/?workers=2&preview=1`);
  await p.getByTestId('empty').waitFor();
  const small = path.join(CORPUS, 'real/kineto/h100_libkineto_before_fix_trace.json');
  await p.getByTestId('file-input').setInputFiles(small);
  await p.getByTestId('event-count').waitFor({ timeout: 60_000 });
  const before = await p.getByTestId('file-name').textContent();
  const beforeEvents = await p.getByTestId('event-count').textContent();
  // The whole trace's workers are stopped while the preview is up: Cancel ends the load.
  await p.evaluate(() => {
    new MutationObserver((_, obs) => {
      if (!document.querySelector('[data-testid=preview-banner]')) return;
      if (document.querySelector('[data-testid=file-name]')?.textContent !== 'a100_rank0.json') return;
      obs.disconnect();
      window.__sawPreview = document.querySelector('[data-testid=event-count]')?.textContent;
      document.querySelector('[data-testid=cancel]')?.click();
    }).observe(document, { childList: true, subtree: true });
  });
  await p.getByTestId('file-input').setInputFiles(f);
  await p.waitForFunction(() => window.__sawPreview !== undefined, null, { timeout: 120_000 });
  await p.screenshot({ path: shot('preview-head.png') });
  // The preview's figures are the head's, not the whole file's.
  assert.ok(Number(await p.evaluate(() => window.__sawPreview)) < cli(f).files[0].events);
  await p.getByTestId('progress').waitFor({ state: 'detached', timeout: 60_000 });
  await p.waitForFunction((n) => document.querySelector('[data-testid=file-name]')?.textContent === n, before, { timeout: 60_000 });
  assert.equal(await p.getByTestId('event-count').textContent(), beforeEvents);
  assert.equal(await p.getByTestId('preview-banner').count(), 0);
  assert.deepEqual(errors, []);
  await p.close();
});
