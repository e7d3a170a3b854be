// The dashboard's data layer under Node's test runner: the metrics parser and the live
// collection's watch handling (run by ctest as dashboard_js).
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { LiveCollection, parseMetrics } from '../api.js';

test('parseMetrics keeps the wanted families with their labels', () => {
  const text = [
    '# HELP DCGM_FI_DEV_GPU_UTIL GPU utilization (in %).',
    '# TYPE DCGM_FI_DEV_GPU_UTIL gauge',
    'DCGM_FI_DEV_GPU_UTIL{gpu="0",UUID="GPU-a",pod="x\\"y"} 87',
    'DCGM_FI_DEV_FB_USED{gpu="0",UUID="GPU-a"} 1000',
    'strata_up 1',
  ].join('\n');
  const samples = parseMetrics(text, new Set(['DCGM_FI_DEV_GPU_UTIL', 'strata_up']));
  assert.equal(samples.length, 2);
  assert.deepEqual(samples[0], {
    name: 'DCGM_FI_DEV_GPU_UTIL', labels: { gpu: '0', UUID: 'GPU-a', pod: 'x"y' }, value: 87,
  });
  assert.deepEqual(samples[1], { name: 'strata_up', labels: {}, value: 1 });
});

test('a burst of watch events costs one notification per animation frame', () => {
  const frames = [];
  globalThis.requestAnimationFrame = (callback) => frames.push(callback);
  const jobs = new LiveCollection('/apis/strata.dev/v1alpha1/jobs');
  let renders = 0;
  jobs.subscribe(() => { renders += 1; });
  for (let i = 0; i < 10000; i++) {
    jobs.apply({ type: 'ADDED', object: { metadata: { namespace: 'default', name: `job-${i}` } } });
  }
  jobs.apply({ type: 'DELETED', object: { metadata: { namespace: 'default', name: 'job-0' } } });
  jobs.apply({ type: 'BOOKMARK', object: { metadata: { resourceVersion: '9' } } });
  assert.equal(frames.length, 1);
  frames.shift()();
  assert.equal(renders, 1);
  assert.equal(jobs.items.size, 9999);
  assert.throws(() => jobs.apply({ type: 'ERROR', object: { message: 'too old' } }), /too old/);
});

test('the list arrives in pages, and the watch starts from the first page\'s version', async () => {
  globalThis.requestAnimationFrame = (callback) => callback();
  globalThis.sessionStorage = { getItem: () => null };
  const names = Array.from({ length: 1203 }, (_, i) => `job-${String(i).padStart(5, '0')}`);
  const requested = [];
  let jobs;
  globalThis.fetch = async (url) => {
    requested.push(url);
    const query = new URL(url, 'http://dashboard').searchParams;
    if (query.get('watch')) {
      jobs.stop();
      return { ok: false, status: 410 };
    }
    const start = Number(query.get('continue') ?? 0);
    const limit = Number(query.get('limit'));
    const metadata = { resourceVersion: start === 0 ? '7' : '9' };
    if (start + limit < names.length) metadata.continue = String(start + limit);
    const items = names.slice(start, start + limit).map((name) => ({ metadata: { namespace: 'a', name } }));
    return { ok: true, status: 200, json: async () => ({ metadata, items }) };
  };
  jobs = new LiveCollection('/apis/strata.dev/v1alpha1/jobs');
  const sizes = [];
  jobs.subscribe((items) => sizes.push(items.size));
  await jobs.start((error) => assert.fail(String(error)));
  assert.equal(jobs.items.size, names.length);
  assert.deepEqual(sizes, [500, 1000, 1203], 'a render per page: the first rows show first');
  assert.match(requested[0], /\?limit=500$/);
  assert.match(requested.at(-1), /watch=1&resourceVersion=7$/);
});

test('given onError, a collection starts on its first subscriber, once', async () => {
  globalThis.requestAnimationFrame = (callback) => callback();
  globalThis.sessionStorage = { getItem: () => null };
  const requested = [];
  let pods;
  globalThis.fetch = async (url) => {
    requested.push(url);
    if (new URL(url, 'http://dashboard').searchParams.get('watch')) {
      pods.stop();
      return { ok: false, status: 410 };
    }
    return { ok: true, status: 200, json: async () => ({ metadata: { resourceVersion: '3' }, items: [] }) };
  };
  let data = 0;
  pods = new LiveCollection('/api/v1/pods', { onError: (error) => assert.fail(String(error)), onData: () => { data += 1; } });
  await new Promise((resolve) => setTimeout(resolve, 0));
  assert.equal(requested.length, 0, 'nothing is read before a page subscribes');
  pods.subscribe(() => {});
  pods.subscribe(() => {});
  await new Promise((resolve) => setTimeout(resolve, 0));
  assert.deepEqual(requested, ['/api/v1/pods?limit=500', '/api/v1/pods?watch=1&resourceVersion=3']);
  assert.equal(data, 1);
});
