// The dashboard's Services page in a real browser, on the live delivery layer: `strata up` with
// simulated GPUs (replicas run `strata engine-sim`) and its gateway, Debian's Chromium driven by
// playwright-core. A service applied through the API shows its model and ready replicas; while
// streamed chat completions flow through the gateway, its model's TTFT, TPOT and tokens/s
// charts fill. Screenshots go to $STRATA_BINARY_DIR/browser-artifacts. Exits 77 (skipped) when
// Chromium or playwright-core is missing.

import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';

import {
  adminHeaders, apply, browserTestEnvironment, openPage, signIn, startStrataUp, stop,
} from './browser_support.mjs';

const { strata, playwright, artifacts } = browserTestEnvironment();
// Generous: a loaded CI machine; nothing here measures time. The test has a limit of its own, so
// that a stuck page fails it and `after` still stops `strata up`.
const wait = { timeout: 60000 };
const limit = { timeout: 180000 };
const servicePath = '/apis/strata.dev/v1alpha1/namespaces/default/services/chat';
let dir;
let up;
let browser;
let page;

const serviceYaml = `apiVersion: strata.dev/v1alpha1
kind: Service
metadata: {name: chat, namespace: default}
spec:
  model: m
  engine: {command: [vllm, serve, m]}
  resources: {cpu: "1", memory: 1Gi, gpu: 1}
  minReplicas: 1
  maxReplicas: 2
`;

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function screenshot(name) {
  await page.screenshot({ path: path.join(artifacts, `${name}.png`), fullPage: true });
}

// One streamed chat completion through the gateway, read to its end; throws on an error answer.
async function streamChat() {
  const response = await fetch(`${up.gateway}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Authorization: 'Bearer unused' },
    body: JSON.stringify({
      model: 'm', messages: [{ role: 'user', content: 'Tell me about GPUs.' }], max_tokens: 16, stream: true,
    }),
  });
  const body = await response.text();
  assert.equal(response.status, 200, body);
  assert.match(body, /data: \[DONE\]/);
}

// The cells of the Services list's row for default/chat, or null while it is absent.
function chatRow() {
  return page.evaluate(() => {
    const row = [...document.querySelectorAll('.vlist .row')]
      .find((r) => r.firstChild?.textContent === 'default/chat');
    return row ? [...row.children].map((c) => c.textContent) : null;
  });
}

// The number of samples with data in chart `title` of model `model` (0 while it is absent).
function filled(model, title) {
  return page.evaluate(([m, t]) => Number(document.querySelector(
    `.model-charts[data-model="${m}"] .chart[data-title="${t}"]`)?.dataset.filled || 0), [model, title]);
}

// Deletes the service and waits until none of its pods is left running.
async function deleteService() {
  const response = await fetch(`${up.url}${servicePath}`, { method: 'DELETE', headers: adminHeaders(up) });
  if (response.status === 404) return;
  assert.ok(response.ok, `delete: ${response.status} ${await response.text()}`);
  const deadline = Date.now() + 60000;
  while (Date.now() < deadline) {
    const pods = await (await fetch(`${up.url}/api/v1/namespaces/default/pods`, { headers: adminHeaders(up) })).json();
    if ((pods.items || []).every((p) => p.status?.phase === 'Succeeded' || p.status?.phase === 'Failed')) return;
    await sleep(200);
  }
}

before(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'strata-browser-services-'));
  up = await startStrataUp(strata,
    ['--data-dir', path.join(dir, 'data'), '--listen', '127.0.0.1:0', '--gateway-listen', '127.0.0.1:0',
      '--simulate', '2x4:H100-80GB', '--sim-startup-delay', '1', '--nvml-library=/nonexistent/libnvidia-ml.so.1'],
    path.join(artifacts, 'strata-up-services.log'));
  ({ browser, page } = await openPage(playwright, 1400, 1000));
  await signIn(page, up);
});

after(async () => {
  await browser?.close();
  if (up) {
    await deleteService().catch((error) => console.log(`cleanup: ${error.message}`));
    await stop(up.child);
  }
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

test("a service's row shows its replicas and its charts fill as traffic flows", limit, async () => {
  await page.goto(`${up.url}/#services`);
  await page.locator('.vhead').first().waitFor(wait);
  await apply(up, serviceYaml);

  // The row appears through the live watch, then its replica becomes ready (engine start-up 1 s).
  await page.waitForFunction(() => [...document.querySelectorAll('.vlist .row')].some((r) =>
    r.firstChild?.textContent === 'default/chat' && r.children[4]?.textContent === '1/1'), null, wait);
  const cells = await chatRow();
  const headings = await page.locator('.vhead').first().locator('.cell').allTextContents();
  const cell = (title) => cells[headings.indexOf(title)];
  assert.equal(cell('model'), 'm');
  assert.equal(cell('min/max'), '1/2');
  assert.equal(cell('desired'), '1');
  assert.equal(cell('ready'), '1/1');
  assert.equal(cell('draining'), '0');
  assert.match(cell('versions (ready/desired)'), /1\/1$/);
  await screenshot('services-ready');

  // Traffic until the model's charts have points: the page samples /metrics every few seconds.
  let flowing = true;
  const failures = [];
  const clients = Array.from({ length: 2 }, async () => {
    while (flowing) await streamChat().catch((error) => { failures.push(String(error)); flowing = false; });
  });
  try {
    await page.waitForFunction(() => {
      const chart = (t) => Number(document.querySelector(
        `.model-charts[data-model="m"] .chart[data-title="${t}"]`)?.dataset.filled || 0);
      return chart('TTFT p50 / p99') >= 2 && chart('output tokens/s by tenant') >= 1;
    }, null, wait);
  } catch (error) {
    throw new Error(`${error.message}; failed requests: ${failures.join('; ') || 'none'}`);
  } finally {
    flowing = false;
    await Promise.all(clients);
  }
  assert.deepEqual(failures, [], 'every streamed request succeeded');
  assert.ok(await filled('m', 'TPOT p50 / p99') >= 1, 'the TPOT chart has a point');
  await screenshot('services-traffic');

  // A click opens the service's page: its scale decisions with their reasons, and charts that
  // open with the server's history (a reload keeps them filled).
  await page.locator('.vlist .row', { hasText: 'default/chat' }).click();
  await page.locator('table.decisions td', { hasText: 'replicas' }).first().waitFor(wait);
  await page.reload();
  await page.waitForFunction(() => Number(document.querySelector(
    '.chart[data-title="replicas (desired / ready) and scale decisions"]')?.dataset.filled || 0) >= 1, null, wait);
});
