// Opens an HTML file written by tracelight.show(...).save() (or _repr_html_) in headless Chromium
// (Debian's, with the e2e harness's flags) from file://, waits until the embedded viewer reports
// the trace loaded, and prints what happened as JSON for the pytest side to check: the page's
// `loaded` event (its files and the analyze summary the page computed), the frame's layout
// (embed mode, the open bar hidden, the headline cards and a painted timeline on the overview),
// the selected tab, every request made, and errors.
//   node show_check.mjs PAGE.html SCREENSHOT.png [TAB]
import { pathToFileURL } from 'node:url';
import { browser } from '../../../../tests/e2e/harness.mjs';

const [file, png, tab] = process.argv.slice(2);
const b = await browser();
const out = { requests: [], errors: [] };
try {
  const p = await b.newPage({ viewport: { width: 1200, height: 900 } });
  p.on('request', (r) => out.requests.push(r.url()));
  p.on('pageerror', (e) => out.errors.push(String(e)));
  p.on('console', (m) => { if (m.type() === 'error') out.errors.push(m.text()); });
  // The notebook page's view of the frame's events (what the cell's script also receives).
  await p.addInitScript(() => {
    if (window !== window.top) return;
    window.__events = [];
    window.addEventListener('message', (e) => { if (e.data && e.data.tracelight) window.__events.push(e.data.tracelight); });
  });
  const url = pathToFileURL(file).href;
  out.url = url;
  await p.goto(url);
  await p.waitForFunction(
    () => ['loaded', 'error'].includes(document.querySelector('.tracelight-view')?.dataset.state),
    null, { timeout: 90_000 });
  out.state = await p.evaluate(() => document.querySelector('.tracelight-view').dataset.state);
  out.status = await p.evaluate(() => document.querySelector('.tracelight-view .tracelight-status').textContent);
  const frame = p.frames().find((f) => f !== p.mainFrame());
  out.frame_url = frame.url();
  if (out.state === 'loaded') {
    const loaded = await p.evaluate(() => window.__events.find((e) => e.event === 'loaded'));
    out.loaded_files = loaded.files;
    out.events = loaded.summary.files[0].events;
    out.embedded = await frame.locator('main.app.embedded').count();
    out.open_bar_visible = await frame.getByTestId('demo').isVisible();
    // The host's open-tab follows `loaded`: wait (bounded) for the tab asked for to be selected.
    const want = `tab-${tab || 'overview'}`;
    await frame.waitForFunction(
      (t) => document.querySelector('[role=tab][aria-selected=true]')?.dataset.testid === t,
      want, { timeout: 10_000 }).catch(() => {});
    out.tab = await frame.evaluate(() => document.querySelector('[role=tab][aria-selected=true]')?.dataset.testid);
    if (!tab) {
      await frame.getByTestId('step-time').waitFor({ timeout: 30_000 });
      await frame.waitForFunction(
        () => Number(document.querySelector('[data-testid=timeline]')?.getAttribute('data-rects')) > 0,
        null, { timeout: 30_000 });
      out.overview_cards = true;
    }
  }
  await p.screenshot({ path: png });
} catch (e) {
  out.errors.push(String(e));
} finally {
  await b.close();
}
console.log(JSON.stringify(out));
