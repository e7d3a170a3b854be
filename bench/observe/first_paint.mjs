// The dashboard's first paint at issue 7's size: `strata up --simulate 1000x8:H100-80GB` (8,000
// GPUs) with 10,000 jobs that wait (each asks for more GPUs than a node has, so nothing runs),
// opened in headless Chromium (Debian's, driven by playwright-core). Measures, from navigation:
//   cluster: the Cluster page's summary counts all 8,000 GPUs (nodes, pods listed, /metrics
//            read, the canvas drawn);
//   jobs:    the Jobs page shows its first rows with all 10,000 jobs listed;
//   queues:  the Queues page lists the pending workloads with their explanations;
//   metrics: `/metrics` fetched whole from Node, and the Queues page's four strata_queue_*
//            families alone (`queue_metrics_ms`);
// each as the dashboard loads it (lists in pages of 500) and, side by side, with its lists'
// `limit` stripped so that each comes whole (`*_unpaged_ms`).
// Run: node bench/observe/first_paint.mjs <build dir> [runs]   (prints one JSON line per run
// and the medians)

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { adminHeaders, apply, chromiumPath, loadPlaywright, missingBrowser, startStrataUp, stop } from '../../tests/browser/browser_support.mjs';

const binaryDir = path.resolve(process.argv[2] || 'build/release');
const runs = Number(process.argv[3] || 5);
const sourceDir = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');
const playwright = loadPlaywright(binaryDir, sourceDir);
const missing = missingBrowser(playwright);
if (missing) {
  console.error(missing);
  process.exit(2);
}

const kJobs = 10000;
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'strata-first-paint-'));
const up = await startStrataUp(path.join(binaryDir, 'bin', 'strata'),
  ['--data-dir', path.join(dir, 'data'), '--listen', '127.0.0.1:0', '--gateway-listen', '127.0.0.1:0',
   '--simulate', '1000x8:H100-80GB,racks=20',
    '--nvml-library=/nonexistent/libnvidia-ml.so.1'], path.join(dir, 'up.log'));
try {
  await apply(up, fs.readFileSync(path.join(sourceDir, 'examples/team-queues/native.yaml'), 'utf8'));
  const batch = 500;
  for (let first = 0; first < kJobs; first += batch) {
    const docs = [];
    for (let i = first; i < first + batch; i++) {
      docs.push(`apiVersion: strata.dev/v1alpha1
kind: Job
metadata: {name: wait-${i}, namespace: team-a, labels: {team: ml}}
spec:
  replicas: 1
  procPerNode: 1
  queue: team-a
  resources: {cpu: "1", memory: 1Gi, gpu: 16}
  template:
    image: busybox
    command: ["sleep", "1"]
`);
    }
    await apply(up, docs.join('---\n'));
  }

  // Measure the steady state: every job listed and explained by the scheduler.
  for (;;) {
    const jobs = await (await fetch(`${up.url}/apis/strata.dev/v1alpha1/jobs`, { headers: adminHeaders(up) })).json();
    const explained = jobs.items.filter((j) => j.status?.message).length;
    if (jobs.items.length === kJobs && explained === kJobs) break;
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
  const nodes = await (await fetch(`${up.url}/api/v1/nodes`, { headers: adminHeaders(up) })).json();
  console.log(JSON.stringify({ nodes: nodes.items.length, jobs: kJobs, explained: kJobs }));

  const browser = await playwright.chromium.launch({ executablePath: chromiumPath, args: ['--no-sandbox'] });
  const results = [];
  const wait = { timeout: 600000 };
  for (let run = 0; run < runs; run++) {
    const result = {};
    // Each page twice, side by side: as the dashboard loads it (lists in pages of 500), and
    // with the `limit` stripped from its list requests, so each list comes whole in one reply.
    for (const paged of [true, false]) {
      for (const [name, hash, ready] of [
        ['cluster_ms', '', () => [...document.querySelectorAll('.summary div')]
          .some((d) => d.textContent === '8000GPUs')],
        ['jobs_ms', '#jobs', () => document.querySelectorAll('.vlist .row').length > 0],
        ['queues_ms', '#queues', () => [...document.querySelectorAll('.vlist .row')]
          .some((r) => r.textContent.includes('can never fit this cluster'))],
      ]) {
        const page = await browser.newPage({ viewport: { width: 1600, height: 1000 } });
        if (!paged) {
          await page.route(/[?&]limit=/, (route) => {
            const url = new URL(route.request().url());
            url.searchParams.delete('limit');
            return route.continue({ url: url.toString() });
          });
        }
        const start = Date.now();
        await page.goto(`${up.url}/?token=${up.token}${hash}`);
        await page.waitForFunction(ready, null, wait);
        result[paged ? name : name.replace('_ms', '_unpaged_ms')] = Date.now() - start;
        await page.close();
      }
    }
    // The metrics page read from Node: whole, and the Queues page's four families alone.
    for (const [name, target] of [
      ['metrics_ms', '/metrics'],
      ['queue_metrics_ms', '/metrics?families=strata_queue_usage,strata_queue_nominal_quota,' +
        'strata_queue_borrowed,strata_queue_pending_workloads'],
    ]) {
      const start = Date.now();
      await (await fetch(`${up.url}${target}`, { headers: adminHeaders(up) })).text();
      result[name] = Date.now() - start;
    }
    console.log(JSON.stringify(result));
    results.push(result);
  }
  const median = (key) => {
    const values = results.map((r) => r[key]).sort((a, b) => a - b);
    return values[Math.floor(values.length / 2)];
  };
  const medians = { runs };
  for (const key of Object.keys(results[0])) medians[`median_${key}`] = median(key);
  console.log(JSON.stringify(medians));
  await browser.close();
} finally {
  await stop(up.child);
  fs.rmSync(dir, { recursive: true, force: true });
}
