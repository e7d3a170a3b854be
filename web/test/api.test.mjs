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
