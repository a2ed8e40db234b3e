// Writes the screenshots of docs/ (docs/img/*.png, 1440x900): each tab of the page on the demo
// trace (the Modules tab on the repository's H100 MLP recording, made `with_stack=True`, the
// Roofline tab on its H100 decoder LM), the Ranks tab on the 8-rank DLRM run and the Compare tab on two of its ranks (those two
// need ../shared/corpus; without it they are left as they are). Needs a release build in dist/
// (`trunk build --release`) and Debian's chromium; not part of CI. Run: node scripts/docs_screenshots.mjs
import fs from 'node:fs';
import path from 'node:path';
import { serve, browser, ROOT, CORPUS } from '../tests/e2e/harness.mjs';

const OUT = path.join(ROOT, 'docs', 'img');
fs.mkdirSync(OUT, { recursive: true });
const srv = await serve();
const b = await browser();
const p = await b.newPage({ viewport: { width: 1440, height: 900 } });
const save = async (name) => {
  await p.waitForTimeout(800); // let the canvases settle after the last frame
  await p.screenshot({ path: path.join(OUT, `${name}.png`) });
  console.log(`docs/img/${name}.png`);
};

try {
  await p.goto(`${srv.base}/?url=${encodeURIComponent('demo/demo.pt.trace.json.gz')}`);
  await p.getByTestId('overview').waitFor({ timeout: 120_000 });
  await save('overview');
  for (const tab of ['timeline', 'operators', 'flame', 'kernels', 'gpu', 'memory']) {
    await p.getByTestId(`tab-${tab}`).click({ timeout: 60_000 });
    await save(tab);
  }
  // The demo has no Python stacks: the Modules tab on the H100 MLP recording (with_stack=True).
  await p.goto(`${srv.base}/`);
  await p.getByTestId('empty').waitFor();
  await p.getByTestId('file-input').setInputFiles(path.join(ROOT, 'crates/core/tests/fixtures/torch-2.11-cuda13-h100/gpu_mlp.pt.trace.json.gz'));
  await p.getByTestId('overview').waitFor({ timeout: 120_000 });
  if (await p.getByTestId('tab-modules').count()) {
    await p.getByTestId('tab-modules').click();
    await p.getByTestId('module-table').waitFor();
    await save('modules');
  } else console.log('no Modules tab in this build of dist/: docs/img/modules.png left as it is');
  // The roofline on the H100 decoder LM (bf16 GEMMs and attention, fp32 norms and elementwise).
  await p.goto(`${srv.base}/`);
  await p.getByTestId('empty').waitFor();
  await p.getByTestId('file-input').setInputFiles(path.join(ROOT, 'crates/core/tests/fixtures/torch-2.11-cuda13-h100/gpu_lm_bf16.pt.trace.json.gz'));
  await p.getByTestId('overview').waitFor({ timeout: 120_000 });
  if (await p.getByTestId('tab-roofline').count()) {
    await p.getByTestId('tab-roofline').click();
    await p.waitForFunction(() => Number(document.querySelector('[data-testid=roofline]')?.dataset.dots) > 0);
    await save('roofline');
  } else console.log('no Roofline tab in this build of dist/: docs/img/roofline.png left as it is');
  const dlrm = path.join(CORPUS, 'real/param/dlrm_8rank/kineto');
  if (fs.existsSync(dlrm)) {
    const files = fs.readdirSync(dlrm).sort().map((f) => path.join(dlrm, f));
    await p.goto(`${srv.base}/`);
    await p.getByTestId('empty').waitFor();
    await p.getByTestId('file-input').setInputFiles(files);
    await p.locator('[data-testid=overview], [data-testid=ranks-view]').first().waitFor({ timeout: 120_000 });
    await p.getByTestId('tab-ranks').click();
    await p.getByTestId('ranks-view').waitFor({ timeout: 120_000 });
    await save('ranks');
    const rel = (f) => '/corpus/' + path.relative(CORPUS, f).split(path.sep).map(encodeURIComponent).join('/');
    await p.goto(`${srv.base}/?url=${encodeURIComponent(rel(files[0]))}&compare=${encodeURIComponent(rel(files[7]))}`);
    await p.getByTestId('tab-compare').click({ timeout: 120_000 });
    await p.waitForTimeout(3000);
    await save('compare');
  }
} finally {
  await b.close();
  srv.server.close();
}
