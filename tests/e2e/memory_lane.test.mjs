// A trace and a memory file of the same run, opened together: the memory chart lines up under the
// timeline on the trace's clock. The expected offset is read here from the trace itself
// (baseTimeNanoseconds; the generated corpus README: timeline time = trace ts + base).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { serve, browser, page, shot, CORPUS, corpusSkip } from './harness.mjs';

let srv, b;
before(async () => { srv = await serve(); b = await browser(); });
after(async () => { await b?.close(); srv?.server.close(); });

const GEN = path.join(CORPUS, 'generated');
const TRACE = path.join(GEN, 'resnet_all.1795343593430138415.pt.trace.json.gz');
const TIMELINE = path.join(GEN, 'resnet_all.1795343593430138415.memory_timeline.json');
const OTHER = path.join(GEN, 'lstm_mem.1795343595561069429.pt.trace.json');

test('a trace and its own memory timeline line up on the trace clock', { skip: corpusSkip(TRACE) }, async () => {
  const base = JSON.parse(zlib.gunzipSync(fs.readFileSync(TRACE)).toString()).baseTimeNanoseconds;
  assert.ok(base > 0);
  const errors = [];
  const p = await page(b, errors);
  await p.goto(srv.base + '/');
  await p.getByTestId('file-input').setInputFiles([TRACE, TIMELINE]);
  await p.getByTestId('event-count').waitFor({ timeout: 60_000 });
  await p.getByTestId('tab-timeline').click();
  const lane = p.getByTestId('mem-lane');
  await lane.waitFor({ timeout: 30_000 });
  // The lane paints on the next animation frame: wait for it, then check what it drew.
  await p.waitForFunction(() => Number(document.querySelector('[data-testid=mem-lane]')?.dataset.polygons) > 0);
  assert.equal(Number(await lane.getAttribute('data-offset-ns')), base);
  assert.match(await lane.getAttribute('title'), /memory_timeline\.json/);
  await lane.scrollIntoViewIfNeeded();
  await p.screenshot({ path: shot('memory-lane.png') });
  assert.deepEqual(errors, []);
  await p.close();
});

test('a memory timeline from another run is not drawn against the trace, and the lane says why', { skip: corpusSkip(OTHER) }, async () => {
  const errors = [];
  const p = await page(b, errors);
  await p.goto(srv.base + '/');
  await p.getByTestId('file-input').setInputFiles([OTHER, TIMELINE]);
  await p.getByTestId('event-count').waitFor({ timeout: 60_000 });
  await p.getByTestId('tab-timeline').click();
  const note = p.getByTestId('mem-lane-note');
  await note.waitFor({ timeout: 30_000 });
  assert.match(await note.textContent(), /outside this trace's time range/);
  assert.equal(await p.getByTestId('mem-lane').count(), 0);
  assert.deepEqual(errors, []);
  await p.close();
});
