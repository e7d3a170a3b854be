// The Services page's summaries under Node's test runner: a service's status in the list, and
// the gateway's histograms and token counters turned into per-model chart points (run by ctest
// as dashboard_js).
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { parseMetrics } from '../api.js';
import {
  describeDecision, gatewayPoints, gatewaySnapshot, histogramQuantile, serviceSummary,
} from '../services.js';

test('a service summary sums its versions and keeps the newest decision', () => {
  const summary = serviceSummary({
    metadata: { namespace: 'default', name: 'chat' },
    status: {
      replicas: 4, readyReplicas: 3,
      versions: [
        { name: 'v1', desiredReplicas: 3, replicas: 3, readyReplicas: 2, startingReplicas: 1 },
        { name: 'v2', desiredReplicas: 1, replicas: 1, readyReplicas: 1, drainingReplicas: 2 },
      ],
      decisions: [
        { time: '2026-01-01T00:00:00Z', version: 'v1', from: 1, to: 2, reason: 'old' },
        { time: '2026-01-01T00:01:00Z', version: 'v1', from: 2, to: 3, reason: 'concurrency 11 over target 4' },
      ],
    },
  });
  assert.equal(summary.desired, 4);
  assert.equal(summary.ready, 3);
  assert.equal(summary.replicas, 4);
  assert.equal(summary.starting, 1);
  assert.equal(summary.draining, 2);
  assert.equal(summary.versions, 'v1 2/3, v2 1/1');
  assert.equal(describeDecision(summary.lastDecision), 'v1 2→3: concurrency 11 over target 4');
});

test('a service without a status yet summarises as nothing desired and nothing ready', () => {
  const summary = serviceSummary({ metadata: { namespace: 'default', name: 'new' } });
  assert.equal(summary.desired, null);
  assert.equal(summary.ready, 0);
  assert.equal(summary.replicas, 0);
  assert.equal(summary.versions, '');
  assert.equal(summary.lastDecision, null);
});

test('histogramQuantile interpolates within the bucket and is null without observations', () => {
  // 10 observations: 4 under 0.1 s, 4 more under 0.2 s, 2 above 0.4 s.
  const buckets = [[0.1, 4], [0.2, 8], [0.4, 8], [Infinity, 10]];
  assert.equal(histogramQuantile(buckets, 0.2), 0.05);
  assert.ok(Math.abs(histogramQuantile(buckets, 0.5) - 0.125) < 1e-12);
  assert.equal(histogramQuantile(buckets, 0.99), 0.4, 'the +Inf bucket answers the highest bound');
  assert.equal(histogramQuantile([[0.1, 0], [Infinity, 0]], 0.5), null);
  assert.equal(histogramQuantile([], 0.5), null);
});

function scrape(ttftUnderTenMs, ttftTotal, tokensByTenant) {
  const lines = [
    `strata_gateway_ttft_seconds_bucket{model="chat",version="v1",le="0.01"} ${ttftUnderTenMs}`,
    `strata_gateway_ttft_seconds_bucket{model="chat",version="v1",le="+Inf"} ${ttftTotal}`,
    'strata_gateway_ttft_seconds_bucket{model="other",version="v1",le="0.01"} 0',
    'strata_gateway_ttft_seconds_bucket{model="other",version="v1",le="+Inf"} 0',
    'strata_gateway_tokens_total{model="chat",tenant="acme",kind="prompt"} 999',
  ];
  for (const [tenant, count] of Object.entries(tokensByTenant)) {
    lines.push(`strata_gateway_tokens_total{model="chat",tenant="${tenant}",kind="completion"} ${count}`);
  }
  return gatewaySnapshot(parseMetrics(lines.join('\n'), new Set([
    'strata_gateway_ttft_seconds_bucket', 'strata_gateway_tpot_seconds_bucket', 'strata_gateway_tokens_total'])));
}

test('chart points cover the traffic between two samples, per model and tenant', () => {
  const first = scrape(10, 10, { acme: 100 });
  const start = gatewayPoints(null, first, 0);
  assert.deepEqual([...start.keys()].sort(), ['chat', 'other']);
  assert.ok(start.get('chat').ttft.p50 <= 0.01, 'the first sample covers everything so far');
  assert.deepEqual(start.get('chat').tokens, {}, 'no rate without a previous sample');
  assert.equal(start.get('other').ttft.p50, null, 'a model without requests has no point');

  // 10 more requests, all slower than 10 ms; 300 more output tokens for acme, 60 for a new tenant,
  // 30 for requests without a tenant.
  const second = scrape(10, 20, { acme: 400, beta: 60, '-': 30 });
  const points = gatewayPoints(first, second, 3);
  assert.equal(points.get('chat').ttft.p50, 0.01, 'only the window: every request above 10 ms');
  assert.deepEqual(points.get('chat').tokens, { acme: 100, beta: 20, 'no tenant': 10 });
  assert.equal(points.get('chat').tpot.p50, null);
});

test('counters that went down (a restarted server) count from zero', () => {
  const before = scrape(0, 50, { acme: 1000 });
  const after = scrape(5, 5, { acme: 30 });
  const points = gatewayPoints(before, after, 3);
  assert.ok(points.get('chat').ttft.p50 <= 0.01);
  assert.deepEqual(points.get('chat').tokens, { acme: 10 });
});
