// The console's pages in a real browser at 4 nodes: `strata up` with its simulated nodes and
// gateway (history sampled every second), a training job running, one that cannot be placed and
// a service serving streamed traffic, Debian's Chromium driven by playwright-core. Asserts what
// a user sees on the Cluster map (names, legend, MIG instances as parts of a GPU, search, a
// click to the holder, no horizontal scrollbar), the Queues page (quota bars, cohort lending, the whole explanation and the
// position of a pending job, fair share over time), a job's page (ranks, timeline, live logs,
// events, GPU utilisation) and a service's page (history that survives a reload, scale
// decisions). Screenshots go to $STRATA_BINARY_DIR/browser-artifacts. Exits 77 (skipped) when
// Chromium or playwright-core is missing.

import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';

import {
  adminHeaders, apply, browserTestEnvironment, openPage, signIn, startStrataUp, stop,
} from './browser_support.mjs';

const { sourceDir, strata, playwright, artifacts } = browserTestEnvironment();
// Generous: a loaded CI machine; nothing here measures time.
const wait = { timeout: 60000 };
const limit = { timeout: 180000 };
let dir;
let up;
let browser;
let page;
let flowing = true;
let clients = [];

const workloads = `apiVersion: strata.dev/v1alpha1
kind: Job
metadata: {name: train, namespace: team-a, labels: {team: ml}}
spec:
  replicas: 2
  procPerNode: 2
  queue: team-a
  resources: {cpu: "1", memory: 1Gi, gpu: 4}
  template:
    command: [sh, -c, "echo rank $RANK starting; i=0; while true; do i=$((i+1)); echo step $i; sleep 1; done"]
---
apiVersion: strata.dev/v1alpha1
kind: Job
metadata: {name: too-big, namespace: team-a, labels: {team: ml}}
spec:
  replicas: 5
  queue: team-a
  resources: {cpu: "1", memory: 1Gi, gpu: 8}
  template: {command: [sleep, "600"]}
---
apiVersion: strata.dev/v1alpha1
kind: Service
metadata: {name: chat, namespace: team-b, labels: {team: nlp}}
spec:
  model: m
  queue: team-b
  engine: {command: [vllm, serve, m]}
  resources: {cpu: "1", memory: 1Gi, gpu: 1}
  minReplicas: 1
  maxReplicas: 2
`;

// A node with one MIG-enabled GPU cut in two instances (registered by hand: no agent renews
// it, so its pods tolerate not-ready) and two jobs that each take one instance.
const migYaml = `apiVersion: strata.dev/v1alpha1
kind: Node
metadata: {name: mig-node, labels: {topology.strata.dev/rack: rack-9}}
status:
  capacity: {cpu: "8", memory: 64Gi}
  allocatable: {cpu: "8", memory: 64Gi}
  gpus:
    - index: 0
      uuid: GPU-mig-0
      model: A100-40GB
      memory: 40Gi
      migEnabled: true
      migInstances: [{profile: 3g.20gb, uuid: MIG-a}, {profile: 3g.20gb, uuid: MIG-b}]
${['a', 'b'].map((n) => `---
apiVersion: strata.dev/v1alpha1
kind: Job
metadata: {name: mig-${n}, namespace: team-c}
spec:
  resources: {cpu: 100m, memory: 100Mi, migProfile: 3g.20gb}
  tolerations: [{key: node.kubernetes.io/not-ready, operator: Exists}]
  template: {command: [sleep, "600"]}
`).join('')}`;

async function screenshot(name) {
  await page.screenshot({ path: path.join(artifacts, `${name}.png`), fullPage: true });
}

async function chat() {
  while (flowing) {
    try {
      const response = await fetch(`${up.gateway}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'Tell me about GPUs.' }], max_tokens: 8, stream: true }),
      });
      await response.text();
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
}

const chartFilled = (title) => page.evaluate((t) =>
  Number(document.querySelector(`.chart[data-title="${t}"]`)?.dataset.filled || 0), title);

before(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'strata-browser-console-'));
  up = await startStrataUp(strata,
    ['--data-dir', path.join(dir, 'data'), '--listen', '127.0.0.1:0', '--gateway-listen', '127.0.0.1:0',
      '--sim-startup-delay', '1', '--history-step', '1', '--nvml-library=/nonexistent/libnvidia-ml.so.1'],
    path.join(artifacts, 'strata-up-console.log'));
  await apply(up, fs.readFileSync(path.join(sourceDir, 'examples/team-queues/native.yaml'), 'utf8'));
  await apply(up, workloads);
  await apply(up, migYaml);
  clients = [chat(), chat()];
  ({ browser, page } = await openPage(playwright, 1280, 900));
  await signIn(page, up);
});

after(async () => {
  flowing = false;
  await Promise.all(clients);
  await browser?.close();
  if (up) await stop(up.child);
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

test('the cluster map names nodes, keys holders, searches, opens a holder, never scrolls sideways', limit, async () => {
  await page.goto(`${up.url}/#cluster`);
  await page.locator('.legend-item', { hasText: 'job team-a/train (8 GPU)' }).waitFor(wait);
  await page.locator('.legend-item', { hasText: 'service team-b/chat' }).waitFor(wait);
  assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth),
    'no horizontal scrollbar');
  // The first GPU of the first node: the tooltip names its node and holder.
  const canvas = page.locator('canvas.gpus');
  const box = await canvas.boundingBox();
  // Rack headers, then node names, then the node's GPUs: find a held cell by hovering a grid.
  let tooltip = '';
  for (let y = 20; y < Math.min(box.height, 160) && !tooltip.includes('team-a/train'); y += 6) {
    for (let x = 10; x < Math.min(box.width, 300) && !tooltip.includes('team-a/train'); x += 6) {
      await page.mouse.move(box.x + x, box.y + y);
      tooltip = await page.locator('.tooltip').evaluate((t) => (t.hidden ? '' : t.textContent));
      if (tooltip.includes('team-a/train')) {
        assert.match(tooltip, /^sim-node-\d GPU \d H100-80GB/);
        await page.mouse.click(box.x + x, box.y + y);
      }
    }
  }
  assert.match(tooltip, /job team-a\/train/);
  await page.waitForFunction(() => location.hash === '#jobs/team-a/train', null, wait);
  await page.goto(`${up.url}/#cluster`);
  await page.locator('.legend-item').first().waitFor(wait);
  // Each MIG instance is half of its GPU.
  await page.locator('.legend-item', { hasText: 'job team-c/mig-a (0.5 GPU)' }).waitFor(wait);
  await page.locator('.legend-item', { hasText: 'job team-c/mig-b (0.5 GPU)' }).waitFor(wait);
  await page.fill('.search', 'chat');
  await page.locator('.matches', { hasText: 'GPU(s) match' }).waitFor(wait);
  await screenshot('console-cluster');
});

test('the queues page shows quota bars, lending, fair share and the whole explanation with its position', limit, async () => {
  await page.goto(`${up.url}/#queues`);
  await page.locator('.queue-card[data-queue="team-a-cq"] .quota', { hasText: 'h100: 8 of 32 GPUs' }).waitFor(wait);
  await page.locator('table.cohort td', { hasText: 'team-b-cq' }).waitFor(wait);
  const row = page.locator('.vlist .row', { hasText: 'team-a/too-big' });
  await page.waitForFunction(() => [...document.querySelectorAll('.vlist .row')]
    .some((r) => r.textContent.includes('team-a/too-big') && r.textContent.includes('can never fit')), null, wait);
  const cells = await row.locator('.cell').allTextContents();
  assert.equal(cells[1], '1 of 1');
  const job = await (await fetch(`${up.url}/apis/strata.dev/v1alpha1/namespaces/team-a/jobs/too-big`,
    { headers: adminHeaders(up) })).json();
  assert.equal(cells[4], job.status.message, 'the whole explanation');
  const clipped = await row.locator('.cell.wrap').last().evaluate((c) => c.scrollHeight > c.clientHeight + 1);
  assert.equal(clipped, false, 'the explanation shows whole');
  await page.waitForFunction(() => Number(document.querySelector(
    '.chart[data-title^="fair share"]')?.dataset.filled || 0) >= 2, null, wait);
  await screenshot('console-queues');
});

test("a job's page shows its ranks, timeline, live logs, events and GPU utilisation", limit, async () => {
  await page.goto(`${up.url}/#jobs/team-a/train`);
  await page.locator('table.pods td', { hasText: 'rank-2, rank-3' }).waitFor(wait);
  await page.locator('.timeline .segment.state-running').waitFor(wait);
  await page.locator('pre.logs', { hasText: 'step' }).waitFor(wait);
  assert.match(await page.locator('pre.logs').textContent(), /rank 0 starting/);
  await page.locator('table.events td', { hasText: 'Scheduled' }).waitFor(wait);
  await page.waitForFunction(() => Number(document.querySelector(
    '.chart[data-title="GPU utilisation per rank (pod)"]')?.dataset.filled || 0) >= 1, null, wait);
  // Its GPUs on the map: the map opens searching for the job.
  await page.click('a.on-map');
  await page.locator('.matches', { hasText: '8 GPU(s) match' }).waitFor(wait);
  assert.equal(await page.inputValue('.search'), 'team-a/train');
  await page.goto(`${up.url}/#jobs/team-a/train`);
  await page.locator('table.pods td', { hasText: 'rank-2, rank-3' }).waitFor(wait);
  // Another rank's log.
  await page.selectOption('select.log-rank', { label: 'rank-3 (train-worker-1)' });
  await page.locator('pre.logs', { hasText: 'rank 3 starting' }).waitFor(wait);
  await screenshot('console-job');

  await page.goto(`${up.url}/#jobs/team-a/too-big`);
  await page.locator('.explanation', { hasText: 'can never fit this cluster: 5 pods of 8 GPUs' }).waitFor(wait);
  await page.locator('.timeline .segment.state-queued').waitFor(wait);
});

test("a service's page opens with its history, through a reload, and lists its scale decisions", limit, async () => {
  await page.goto(`${up.url}/#services/team-b/chat`);
  await page.locator('table.decisions td', { hasText: 'replicas' }).first().waitFor(wait);
  await page.waitForFunction(() => ['TTFT p50 / p99', 'goodput and requests per version', 'tokens/s per tenant']
    .every((t) => Number(document.querySelector(`.chart[data-title="${t}"]`)?.dataset.filled || 0) >= 2), null, wait);
  await page.reload();
  await page.waitForFunction(() => Number(document.querySelector(
    '.chart[data-title="TTFT p50 / p99"]')?.dataset.filled || 0) >= 2, null, wait);
  assert.ok(await chartFilled('replicas (desired / ready) and scale decisions') >= 2);
  await page.waitForFunction(() => Number(document.querySelector(
    '.chart[data-title="prefix-cache hit ratio per replica"]')?.dataset.filled || 0) >= 1, null, wait);
  assert.ok(Number(await page.locator('.chart[data-title^="replicas"]').getAttribute('data-marks')) >= 1,
    'the scale decisions are marked on the replicas chart');
  await screenshot('console-service');
});
