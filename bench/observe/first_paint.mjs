// The dashboard's first paint at issue 7's size: `strata up --simulate 1000x8:H100-80GB` (8,000
// GPUs) with 10,000 jobs that wait (each asks for more GPUs than a node has, so nothing runs),
// opened in headless Chromium (Debian's, driven by playwright-core). Measures, from navigation:
//   cluster: the Cluster page's summary counts all 8,000 GPUs (nodes, pods listed, /metrics
//            read, the canvas drawn);
//   jobs:    the Jobs page shows its first rows with all 10,000 jobs listed;
//   queues:  the Queues page lists the pending workloads with their explanations;
//   job:     a pending job's page (#jobs/team-a/wait-0) shows its whole explanation;
//   metrics: `/metrics` fetched whole from Node, and the Queues page's four strata_queue_*
//            families alone (`queue_metrics_ms`);
// each as the dashboard loads it (lists in pages of 500) and, side by side, with its lists'
// `limit` stripped so that each comes whole (`*_unpaged_ms`).
// With STRATA_BASELINE_BUILD=<another build dir> (main's, say), that build's strata up gets the
// same cluster and jobs at the same time, and each run opens each page on it right after ours
// (`base_*` keys; pages it lacks are skipped): a side-by-side figure on a machine whose load
// moves.
// Run: node bench/observe/first_paint.mjs <build dir> [runs] [screenshots dir]   (prints one
// JSON line per run and the medians). With a screenshots dir, after measuring, 36 jobs of two
// 8-GPU pods and 12 half-GPU jobs of four teams are run (582 GPUs held; more pods would pass
// this machine's 128 inotify instances, one per running pod) and the Cluster, Queues and job
// pages are saved there as PNGs at 1280 x 900.

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { adminHeaders, apply, chromiumPath, loadPlaywright, missingBrowser, startStrataUp, stop } from '../../tests/browser/browser_support.mjs';

const binaryDir = path.resolve(process.argv[2] || 'build/release');
const runs = Number(process.argv[3] || 5);
const screenshots = process.argv[4] ? path.resolve(process.argv[4]) : null;
const sourceDir = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');
const playwright = loadPlaywright(binaryDir, sourceDir);
const missing = missingBrowser(playwright);
if (missing) {
  console.error(missing);
  process.exit(2);
}

const kJobs = 10000;
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'strata-first-paint-'));
const startAt = (build, name) => startStrataUp(path.join(build, 'bin', 'strata'),
  ['--data-dir', path.join(dir, name), '--listen', '127.0.0.1:0', '--gateway-listen', '127.0.0.1:0',
   '--simulate', '1000x8:H100-80GB,racks=20',
    '--nvml-library=/nonexistent/libnvidia-ml.so.1'], path.join(dir, `${name}.log`));
const up = await startAt(binaryDir, 'data');
const baselineBuild = process.env.STRATA_BASELINE_BUILD;
const base = baselineBuild ? await startAt(path.resolve(baselineBuild), 'baseline') : null;
const planes = base ? [up, base] : [up];
// Runs jobs across the cluster (several teams, whole and half GPUs, outside the queues' quota)
// and saves the pages at 1,000 nodes.
async function takeScreenshots(browser) {
  fs.mkdirSync(screenshots, { recursive: true });
  const docs = [];
  const teams = ['vision', 'speech', 'llm', 'recsys'];
  for (let i = 0; i < 36; i++) {
    docs.push(`apiVersion: strata.dev/v1alpha1
kind: Job
metadata: {name: train-${i}, namespace: research, labels: {team: ${teams[i % 4]}}}
spec:
  replicas: 2
  procPerNode: 1
  resources: {cpu: 10m, memory: 1Mi, gpu: 8}
  template: {command: ["sleep", "3600"]}
`);
  }
  for (let i = 0; i < 12; i++) {
    docs.push(`apiVersion: strata.dev/v1alpha1
kind: Job
metadata: {name: notebook-${i}, namespace: research, labels: {team: ${teams[i % 4]}}}
spec:
  replicas: 1
  procPerNode: 1
  resources: {cpu: 10m, memory: 1Mi, gpu: 500m}
  template: {command: ["sleep", "3600"]}
`);
  }
  await apply(up, docs.join('---\n'));
  for (;;) {
    const pods = await (await fetch(`${up.url}/api/v1/namespaces/research/pods`, { headers: adminHeaders(up) })).json();
    if (pods.items.filter((p) => p.status?.phase === 'Running').length >= 84) break;
    await new Promise((resolve) => setTimeout(resolve, 2000));
  }
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  for (const [name, hash, ready] of [
    ['cluster-1000', '', '.legend-item'],
    ['queues-1000', '#queues', '.queue-card'],
    ['job-1000', '#jobs/research/train-0', 'table.pods td'],
  ]) {
    await page.goto(`${up.url}/?token=${up.token}${hash}`);
    await page.locator(ready).first().waitFor({ timeout: 600000 });
    await new Promise((resolve) => setTimeout(resolve, 3000));
    await page.screenshot({ path: path.join(screenshots, `${name}.png`) });
  }
  await page.close();
}

// The queues and 10,000 jobs of 16 GPUs on `plane`, then waits until every one is explained.
async function loadJobs(plane) {
  await apply(plane, fs.readFileSync(path.join(sourceDir, 'examples/team-queues/native.yaml'), 'utf8'));
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
    await apply(plane, docs.join('---\n'));
  }
  // Measure the steady state: every job listed and explained by the scheduler.
  for (;;) {
    const jobs = await (await fetch(`${plane.url}/apis/strata.dev/v1alpha1/jobs`, { headers: adminHeaders(plane) })).json();
    const explained = jobs.items.filter((j) => j.status?.message).length;
    if (jobs.items.length === kJobs && explained === kJobs) break;
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
}

try {
  await Promise.all(planes.map(loadJobs));
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
      for (const [name, hash, ready, oursOnly] of [
        ['cluster_ms', '', () => [...document.querySelectorAll('.summary div')]
          .some((d) => d.textContent === '8000GPUs')],
        ['jobs_ms', '#jobs', () => document.querySelectorAll('.vlist .row').length > 0],
        ['queues_ms', '#queues', () => [...document.querySelectorAll('.vlist .row')]
          .some((r) => r.textContent.includes('can never fit this cluster'))],
        ['job_ms', '#jobs/team-a/wait-0', () => document.querySelector('.explanation')
          ?.textContent.includes('can never fit this cluster'), true],
      ]) {
        for (const plane of planes) {
          if (plane === base && oursOnly) continue;
          const page = await browser.newPage({ viewport: { width: 1600, height: 1000 } });
          if (!paged) {
            await page.route(/[?&]limit=/, (route) => {
              const url = new URL(route.request().url());
              url.searchParams.delete('limit');
              return route.continue({ url: url.toString() });
            });
          }
          const start = Date.now();
          await page.goto(`${plane.url}/?token=${plane.token}${hash}`);
          await page.waitForFunction(ready, null, wait);
          const key = paged ? name : name.replace('_ms', '_unpaged_ms');
          result[plane === base ? `base_${key}` : key] = Date.now() - start;
          await page.close();
        }
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
  if (screenshots) await takeScreenshots(browser);
  await browser.close();
} finally {
  await Promise.all(planes.map((plane) => stop(plane.child)));
  fs.rmSync(dir, { recursive: true, force: true });
}
