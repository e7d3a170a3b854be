// The dashboard in a real browser: `strata up` with its simulated nodes, Debian's Chromium
// driven by playwright-core. The page loads the cluster; a job submitted through the API
// appears and changes state; a job that cannot be placed shows the scheduler's explanation.
// Screenshots go to $STRATA_BINARY_DIR/browser-artifacts. Exits 77 (skipped) when Chromium or
// playwright-core is missing.

import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';

import {
  apply, browserTestEnvironment, openPage, signIn, startStrataUp, stop,
} from './browser_support.mjs';

const { sourceDir, strata, playwright, artifacts } = browserTestEnvironment();
// Generous: a loaded CI machine; nothing here measures time. Each test also has a limit of its
// own, so that a stuck page fails its test and `after` still stops `strata up`.
const wait = { timeout: 30000 };
const limit = { timeout: 60000 };
let dir;
let up;
let browser;
let page;

// The two teams' queues: team-a-cq has 32 GPUs and may borrow 32 more from its cohort.
const queueYaml = fs.readFileSync(path.join(sourceDir, 'examples/team-queues/native.yaml'), 'utf8');

function job(name, gpus, command, replicas = 1) {
  return `apiVersion: strata.dev/v1alpha1
kind: Job
metadata: {name: ${name}, namespace: team-a, labels: {team: ml}}
spec:
  replicas: ${replicas}
  procPerNode: 1
  queue: team-a
  resources: {cpu: "1", memory: 1Gi, gpu: ${gpus}}
  template:
    image: busybox
    command: ${JSON.stringify(command)}
`;
}

async function screenshot(name) {
  await page.screenshot({ path: path.join(artifacts, `${name}.png`), fullPage: true });
}

before(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'strata-browser-'));
  up = await startStrataUp(strata,
    ['--data-dir', path.join(dir, 'data'), '--listen', '127.0.0.1:0', '--gateway-listen', '127.0.0.1:0',
      '--nvml-library=/nonexistent/libnvidia-ml.so.1'],
    path.join(artifacts, 'strata-up.log'));
  ({ browser, page } = await openPage(playwright, 1280, 900));
  await signIn(page, up);
});

after(async () => {
  await browser?.close();
  if (up) await stop(up.child);
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

test('the cluster page shows the simulated nodes and their GPUs', limit, async () => {
  await page.goto(`${up.url}/`);
  const summary = page.locator('.summary');
  await summary.getByText('GPUs').waitFor(wait);
  // The default simulated cluster: 4 nodes x 8 H100s, nothing allocated yet.
  await page.waitForFunction(() => {
    const cells = [...document.querySelectorAll('.summary div')].map((d) => d.textContent);
    return cells.includes('4nodes') && cells.includes('32GPUs');
  }, null, wait);
  await screenshot('cluster');
});

test('a job submitted through the API appears and changes state', limit, async () => {
  await apply(up, queueYaml);
  await page.goto(`${up.url}/#jobs`);
  await page.locator('.vhead').first().waitFor(wait);
  await apply(up, job('quick', 1, ['sleep', '2']));
  const row = page.locator('.vlist .row', { hasText: 'team-a/quick' });
  await row.waitFor(wait);
  await screenshot('job-appeared');
  // From Pending or Running to Succeeded, through the live watch (no reload).
  await row.locator('.phase-Succeeded').waitFor(wait);
  assert.match(await row.textContent(), /Succeeded/);
  await screenshot('job-succeeded');
});

test('a pending job shows why it waits', limit, async () => {
  // 40 GPUs in one gang: more than the whole cluster has, so the scheduler says it never fits.
  await apply(up, job('too-big', 8, ['sleep', '600'], 5));
  await page.goto(`${up.url}/#queues`);
  const row = page.locator('.vlist .row', { hasText: 'team-a/too-big' });
  await row.waitFor(wait);
  await page.waitForFunction(() => [...document.querySelectorAll('.vlist .row')]
    .some((r) => r.textContent.includes('team-a/too-big') && r.textContent.includes('can never fit')),
  null, wait);
  const text = await row.textContent();
  assert.match(text, /can never fit this cluster: 5 pods of 8 GPUs/);
  // The queue's GPU quota is a bar per flavor, from the Queue's status.
  await page.locator('.queue-card[data-queue="team-a-cq"] .quota', { hasText: 'of 32 GPUs' }).waitFor(wait);
  await screenshot('pending-explained');

  // The Jobs page shows the reason tier; a click opens the job's page with the explanation.
  await page.goto(`${up.url}/#jobs`);
  const jobRow = page.locator('.vlist .row', { hasText: 'team-a/too-big' });
  await jobRow.waitFor(wait);
  await jobRow.click();
  await page.locator('.explanation', { hasText: 'can never fit this cluster' }).waitFor(wait);
  assert.equal(new URL(page.url()).hash, '#jobs/team-a/too-big');
  await screenshot('pending-job-detail');
});
