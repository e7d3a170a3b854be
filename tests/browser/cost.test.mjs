// The dashboard's Cost page in a real browser: `strata up` with its simulated nodes, Debian's
// Chromium driven by playwright-core. Two teams' jobs run; the page charts spend over time by
// team with a series for each, and a table of totals; the job of one team is deleted, and its
// spend is still there, the same, after a reload. Screenshots go to
// $STRATA_BINARY_DIR/browser-artifacts. Exits 77 (skipped) when Chromium or playwright-core is
// missing.

import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';

import {
  adminHeaders, apply, browserTestEnvironment, openPage, signIn, startStrataUp, stop,
} from './browser_support.mjs';

const { sourceDir, strata, playwright, artifacts } = browserTestEnvironment();
const { money } = await import(path.join(sourceDir, 'web/cost.js'));
// Generous: a loaded CI machine; nothing here measures time.
const wait = { timeout: 60000 };
const limit = { timeout: 180000 };
let dir;
let up;
let browser;
let page;

const queueYaml = fs.readFileSync(path.join(sourceDir, 'examples/team-queues/native.yaml'), 'utf8');

function job(namespace, name, team, gpus, seconds) {
  return `apiVersion: strata.dev/v1alpha1
kind: Job
metadata: {name: ${name}, namespace: ${namespace}, labels: {team: ${team}}}
spec:
  replicas: 1
  procPerNode: 1
  queue: ${namespace}
  resources: {cpu: "1", memory: 1Gi, gpu: ${gpus}}
  template:
    command: [sleep, "${seconds}"]
`;
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function get(pathname) {
  const response = await fetch(`${up.url}${pathname}`, { headers: adminHeaders(up) });
  if (!response.ok) throw new Error(`${pathname}: ${response.status} ${await response.text()}`);
  return response.json();
}

// Polls `check` (async, truthy when done) every 200 ms for up to a minute.
async function until(what, check) {
  for (let i = 0; i < 300; ++i) {
    if (await check()) return;
    await sleep(200);
  }
  throw new Error(`timed out waiting for ${what}`);
}

const phase = async (namespace, name) =>
  (await get(`/apis/strata.dev/v1alpha1/namespaces/${namespace}/jobs/${name}`)).status?.phase;

// Each team's line over the page's default window, from the API.
async function linesByTeam() {
  const report = await get('/apis/strata.dev/v1alpha1/cost?by=team&window=24h&step=1h');
  return Object.fromEntries(report.lines.map((line) => [line.name, line]));
}

// The total cell of `team`'s row in the page's table.
const totalCell = (team) => page.locator(`table.cost-totals tr[data-name="${team}"] td`).nth(6);

before(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'strata-cost-browser-'));
  up = await startStrataUp(strata,
    ['--data-dir', path.join(dir, 'data'), '--listen', '127.0.0.1:0', '--gateway-listen=off',
      '--nvml-library=/nonexistent/libnvidia-ml.so.1'],
    path.join(artifacts, 'strata-up-cost.log'));
  ({ browser, page } = await openPage(playwright, 1280, 1000));
  await signIn(page, up);
});

after(async () => {
  await browser?.close();
  if (up) await stop(up.child);
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

test('spend over time by team, the totals, and a deleted job\'s spend kept', limit, async () => {
  await apply(up, queueYaml);
  await apply(up, job('team-a', 'short', 'alpha', 1, 2));
  await apply(up, job('team-b', 'long', 'beta', 2, 600));
  await until('alpha\'s job to succeed', async () => (await phase('team-a', 'short')) === 'Succeeded');
  await until('beta\'s job to run', async () => (await phase('team-b', 'long')) === 'Running');

  await page.goto(`${up.url}/#cost`);
  const byTeam = page.locator('.chart[data-title="spend by team"]');
  // A series for each team, in the chart's legend as a user reads it.
  await page.waitForFunction(() => {
    const chart = document.querySelector('.chart[data-title="spend by team"]');
    const names = (chart?.dataset.series || '').split(',');
    return names.includes('alpha') && names.includes('beta') && Number(chart.dataset.points) >= 2;
  }, null, wait);
  const legend = await byTeam.locator('.u-legend').textContent();
  assert.match(legend, /alpha/);
  assert.match(legend, /beta/);
  await totalCell('alpha').waitFor(wait);
  await totalCell('beta').waitFor(wait);
  assert.notEqual(await totalCell('beta').textContent(), '0');
  await page.locator('table.cost-totals tr[data-name="total"]').waitFor(wait);
  await page.screenshot({ path: path.join(artifacts, 'cost-running.png'), fullPage: true });

  // beta's job is deleted: its pods go, its spend stays.
  const deleted = await fetch(`${up.url}/apis/strata.dev/v1alpha1/namespaces/team-b/jobs/long`,
    { method: 'DELETE', headers: adminHeaders(up) });
  assert.ok(deleted.ok, `delete: ${deleted.status}`);
  await until('beta\'s pods to go', async () => (await get('/api/v1/namespaces/team-b/pods')).items.length === 0);
  // Closed once the ledger saw its pod go: nothing held now, so the figure no longer moves.
  let lines;
  await until('beta\'s allocation to close', async () => {
    lines = await linesByTeam();
    return lines.beta?.hourlyRate === 0 && lines.beta.total > 0;
  });
  await page.reload();
  await page.waitForFunction((expected) => {
    const row = document.querySelector('table.cost-totals tr[data-name="beta"]');
    return row && row.querySelectorAll('td')[6].textContent === expected;
  }, money(lines.beta.total), wait);
  assert.equal(await totalCell('alpha').textContent(), money(lines.alpha.total));
  await page.screenshot({ path: path.join(artifacts, 'cost-after-delete.png'), fullPage: true });
});
