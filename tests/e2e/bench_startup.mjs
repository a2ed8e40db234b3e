// The page's thread from navigation until it is idle (not a test): every long task (> 50 ms) of
// the app's start-up, nothing picked. `RUNS=3 [DIST=dist-prof PROFILE=/tmp/s.cpuprofile] node
// tests/e2e/bench_startup.mjs`; with PROFILE, the first run's CPU profile and its busy stretches.
import { serve, browser } from './harness.mjs';
import { profiler } from './profile.mjs';

const RUNS = Number(process.env.RUNS || 3);
const WAIT_MS = Number(process.env.WAIT_MS || 3000);
const srv = await serve();
const b = await browser();
try {
  for (let i = 0; i < RUNS; i++) {
    const p = await b.newPage();
    await p.addInitScript(() => {
      window.__long = [];
      new PerformanceObserver((l) => {
        for (const e of l.getEntries()) window.__long.push([Math.round(e.startTime), Math.round(e.duration)]);
      }).observe({ type: 'longtask', buffered: true });
    });
    const prof = process.env.PROFILE && i === 0 ? await profiler(p, process.env.PROFILE) : null;
    if (prof) await prof.start();
    await p.goto(srv.base + '/');
    await p.getByTestId('empty').waitFor();
    await p.waitForTimeout(WAIT_MS);
    if (prof) await prof.stop();
    console.log(JSON.stringify({ run: i, long_tasks: await p.evaluate(() => window.__long) }));
    await p.close();
  }
} finally {
  await b.close();
  srv.server.close();
}
