// The console pages' pure helpers under Node's test runner (run by ctest as dashboard_js): the
// history merge, a job's timeline and ranks, the GPU map's grouping, and the Queues page's
// positions, bars and cohort lending.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { groupByTopology, holderOf, islandsOf, shareOf, shortNames } from '../cluster.js';
import { mergeHistory, seriesBy } from '../history.js';
import { inOrder, jobTimeline, podRank } from '../job.js';
import { cohortLending, gpuFlavors, pendingWithPositions, quantity } from '../queues.js';
import { scaleDecisions } from '../service.js';

const ready = (values, version = 'v1') => ({ scope: 'services/a/chat', name: 'ready', labels: { version }, values });

test('history merges only the samples after the last one kept, aligning new series', () => {
  const state = { times: [], series: new Map(), events: [] };
  assert.equal(mergeHistory(state, { times: [10, 20], series: [ready([1, 2])], events: [] }), 2);
  const added = mergeHistory(state, {
    times: [20, 30], series: [ready([2, 3]), ready([null, 5], 'v2')],
    events: [{ time: '2026-01-01T00:00:00Z', kind: 'scale', fields: { to: '2' } }],
  });
  assert.equal(added, 1);
  assert.deepEqual(state.times, [10, 20, 30]);
  assert.deepEqual(seriesBy(state, 'ready', 'version'), { v1: [1, 2, 3], v2: [null, null, 5] });
  mergeHistory(state, { times: [40], series: [], events: [{ time: '2026-01-01T00:00:00Z', kind: 'scale', fields: { to: '2' } }] });
  assert.deepEqual(seriesBy(state, 'ready', 'version').v1, [1, 2, 3, null]);
  assert.equal(state.events.length, 1, 'an event seen twice is kept once');
});

test('series of different scopes with the same name stay apart', () => {
  const state = { times: [], series: new Map(), events: [] };
  mergeHistory(state, { times: [1], series: [
    { scope: 'queues/a', name: 'share', labels: {}, values: [0.5] },
    { scope: 'queues/b', name: 'share', labels: {}, values: [0.25] }] });
  assert.equal(state.series.size, 2);
});

test("a job's timeline goes queued, admitted, running, with restarts, preemptions and checkpoints marked", () => {
  const t = (s) => `2026-01-01T00:00:${String(s).padStart(2, '0')}Z`;
  const job = { metadata: { creationTimestamp: t(0) }, status: {} };
  const events = [
    { reason: 'Running', lastTimestamp: t(10), message: '' },
    { reason: 'Scheduled', lastTimestamp: t(10), message: '' },  // the same second: admitted first
    { reason: 'Restarting', lastTimestamp: t(20), message: 'rank 1 exited 1' },
    { reason: 'Running', lastTimestamp: t(25), message: '' },
    { reason: 'Preempted', lastTimestamp: t(40), message: 'by team-b/big' },
  ];
  const { segments, marks } = jobTimeline(job, events, [Date.parse(t(30))], Date.parse(t(50)));
  assert.deepEqual(segments.map((s) => s.state), ['queued', 'running', 'restarting', 'running', 'queued']);
  assert.equal(segments[0].to, Date.parse(t(10)));
  assert.deepEqual(marks.map((m) => m.kind).sort(), ['checkpoint', 'preempted', 'restarting']);
  assert.deepEqual(inOrder(events.slice(0, 2)).map((e) => e.reason), ['Scheduled', 'Running']);
});

test("a pod's rank comes from the job's placement, else from its name", () => {
  const pod = { metadata: { name: 'train-worker-7' }, spec: { nodeName: 'n1', assignedGpus: [{ uuid: 'G2' }] } };
  const placement = { pods: [{ rank: 0, nodeName: 'n0', gpus: [{ uuid: 'G0' }] }, { rank: 1, nodeName: 'n1', gpus: [{ uuid: 'G2' }] }] };
  assert.equal(podRank(pod, placement), 1);
  assert.equal(podRank(pod, null), 7);
});

test('the GPU map groups nodes by block and rack, GPUs by NVLink island, in natural order', () => {
  const node = (name, labels, gpus = []) => ({ metadata: { name, labels }, status: { gpus } });
  const groups = groupByTopology([
    node('n-10', { 'topology.strata.dev/rack': 'r1' }), node('n-9', { 'topology.strata.dev/rack': 'r1' }),
    node('n-2', { 'topology.strata.dev/rack': 'r0', 'topology.strata.dev/block': 'b1' }),
  ]);
  assert.deepEqual(groups.map((g) => g.block), ['', 'b1']);
  assert.deepEqual(groups[0].racks[0].nodes.map((n) => n.metadata.name), ['n-9', 'n-10']);
  const islands = islandsOf(node('x', {}, [{ index: 1, nvlinkIsland: 1 }, { index: 0 }, { index: 2, nvlinkIsland: 1 }]));
  assert.deepEqual(islands.map((i) => i.map((g) => g.index)), [[0], [1, 2]]);
  assert.deepEqual(shortNames(['sim-node-0', 'sim-node-12']).prefix, 'sim-node-');
  assert.equal(shortNames(['sim-node-0', 'sim-node-12']).short.get('sim-node-12'), '12');
  assert.equal(shareOf('500m'), 0.5);
  assert.equal(shareOf(undefined), 1);
  const holder = holderOf({ metadata: { namespace: 'a', name: 'p', labels: { team: 'ml' } }, spec: { owner: { kind: 'Service', name: 'chat' } } });
  assert.equal(holder.href, '#services/a/chat');
  assert.equal(holder.team, 'ml');
});

test('pending jobs get their position in their queue: priority first, then submission', () => {
  const queues = [{ metadata: { name: 'team-a-cq' }, spec: { localQueues: [{ namespace: 'team-a', name: 'team-a' }] } }];
  const job = (name, created, priority = 0, phase = 'Pending') => ({
    metadata: { namespace: 'team-a', name, creationTimestamp: created },
    spec: { queue: 'team-a', priority }, status: { phase } });
  const rows = pendingWithPositions([
    job('late', '2026-01-01T00:00:05Z'), job('early', '2026-01-01T00:00:01Z'),
    job('urgent', '2026-01-01T00:00:09Z', 10), job('running', '2026-01-01T00:00:00Z', 0, 'Running'),
  ], queues);
  assert.deepEqual(rows.map((r) => `${r.job.metadata.name} ${r.position}/${r.of} ${r.queue}`),
    ['urgent 1/3 team-a-cq', 'early 2/3 team-a-cq', 'late 3/3 team-a-cq']);
});

test("a queue's bars and its cohort's lending come from its quota and status", () => {
  assert.equal(quantity('4Ti'), 4 * 2 ** 40);
  assert.equal(quantity('1500m'), 1.5);
  const queue = (name, used, lendingLimit) => ({
    metadata: { name },
    spec: { cohort: 'pool', flavors: [{ name: 'h100', resources: [{ name: 'gpu', nominal: '8', borrowingLimit: '4', ...(lendingLimit ? { lendingLimit } : {}) }] }] },
    status: { flavorsUsage: [{ name: 'h100', resources: [{ name: 'gpu', used, borrowed: String(Math.max(0, Number(used) - 8)) }] }] },
  });
  assert.deepEqual(gpuFlavors(queue('a', '12')), [{ flavor: 'h100', nominal: 8, used: 12, borrowed: 4, borrowingLimit: 4, lendingLimit: null }]);
  const [pool] = cohortLending([queue('a', '12'), queue('b', '2', '3')]);
  assert.deepEqual(pool.queues.map((q) => [q.name, q.borrowed, q.lendable]), [['a', 4, 0], ['b', 0, 3]]);
});

test("a service's scale decisions join the history's and the status's, each once, oldest first", () => {
  const decisions = scaleDecisions(
    [{ kind: 'scale', time: '2026-01-01T00:00:01Z', fields: { version: 'v1', from: '0', to: '1', reason: 'min 1' } }],
    { decisions: [{ time: '2026-01-01T00:00:01Z', version: 'v1', from: 0, to: 1, reason: 'min 1' },
      { time: '2026-01-01T00:00:09Z', version: 'v1', from: 1, to: 2, reason: 'load 2.1 over target 1' }] });
  assert.deepEqual(decisions.map((d) => d.to), [1, 2]);
});
