// Opens an HTML file written by tracelight.show(...).save() (or _repr_html_) in headless Chromium
// (Debian's, with the e2e harness's flags) from file://, waits until the embedded viewer reports
// the trace loaded, and prints what the page shows as JSON for the pytest side to check: the
// event count and file name inside the frame, the selected tab, every request made, and errors.
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
  const url = pathToFileURL(file).href;
  out.url = url;
  await p.goto(url);
  await p.waitForFunction(
    () => ['loaded', 'error'].includes(document.querySelector('.tracelight-view')?.dataset.state),
    null, { timeout: 90_000 });
  out.state = await p.evaluate(() => document.querySelector('.tracelight-view').dataset.state);
  out.status = await p.evaluate(() => document.querySelector('.tracelight-status').textContent);
  const frame = p.frames().find((f) => f !== p.mainFrame());
  out.frame_url = frame.url();
  if (out.state === 'loaded') {
    // The host's open-tab follows `loaded`: wait (bounded) for the tab asked for to be selected.
    const selected = () => document.querySelector('[role=tab][aria-selected=true]')?.dataset.testid;
    if (tab) {
      await frame.waitForFunction(
        (t) => document.querySelector('[role=tab][aria-selected=true]')?.dataset.testid === `tab-${t}`,
        tab, { timeout: 10_000 }).catch(() => {});
    }
    out.tab = await frame.evaluate(selected);
    await p.screenshot({ path: png });
    // The overview's facts: the file's name and its event count.
    await frame.getByTestId('tab-overview').click();
    await frame.getByTestId('event-count').waitFor({ timeout: 30_000 });
    out.events = Number(await frame.getByTestId('event-count').textContent());
    out.file_name = await frame.getByTestId('file-name').first().textContent();
  }
} catch (e) {
  out.errors.push(String(e));
} finally {
  await b.close();
}
console.log(JSON.stringify(out));
