// The Queues page: each queue's use against its nominal quota per flavor as bars (borrowing
// beyond it shown apart, up to its borrowing limit), what each cohort lends and borrows, fair
// share over time (the server's history), and the pending workloads with the scheduler's whole
// explanation and their position in their queue. The pure helpers are exported for the unit
// tests.

import { TimeChart } from './charts.js';
import { HistoryFeed } from './history.js';
import { detailBox, section } from './pages.js';
import { VirtualList } from './vlist.js';

// A quantity ("32", "500m", "4Ti") as a number of units (GPUs for gpu).
export function quantity(text) {
  if (text === undefined || text === null) return 0;
  const m = /^([0-9.]+)([a-zA-Z]*)$/.exec(String(text));
  if (!m) return Number(text) || 0;
  const scale = { m: 1e-3, k: 1e3, M: 1e6, G: 1e9, T: 1e12, Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40 }[m[2]] ?? 1;
  return Number(m[1]) * scale;
}

// One queue's GPU figures per flavor: [{flavor, nominal, used, borrowed, borrowingLimit,
// lendingLimit}] (borrowingLimit/lendingLimit null when unlimited).
export function gpuFlavors(queue) {
  const out = new Map();
  for (const f of queue.spec?.flavors || []) {
    const gpu = (f.resources || []).find((r) => r.name === 'gpu');
    if (!gpu) continue;
    out.set(f.name, { flavor: f.name, nominal: quantity(gpu.nominal), used: 0, borrowed: 0,
      borrowingLimit: gpu.borrowingLimit === undefined ? null : quantity(gpu.borrowingLimit),
      lendingLimit: gpu.lendingLimit === undefined ? null : quantity(gpu.lendingLimit) });
  }
  for (const f of queue.status?.flavorsUsage || []) {
    const gpu = (f.resources || []).find((r) => r.name === 'gpu');
    if (!gpu) continue;
    const row = out.get(f.name) || { flavor: f.name, nominal: quantity(gpu.nominal), used: 0, borrowed: 0,
      borrowingLimit: null, lendingLimit: null };
    row.used = quantity(gpu.used);
    row.borrowed = quantity(gpu.borrowed);
    out.set(f.name, row);
  }
  return [...out.values()];
}

// The queue a job waits in: the Queue named by its spec.queue, or whose localQueues list its
// namespace and spec.queue.
export function queueOfJob(job, queues) {
  const name = job.spec?.queue;
  if (!name) return null;
  for (const q of queues) {
    if (q.metadata.name === name) return q.metadata.name;
    if ((q.spec?.localQueues || []).some((l) => l.namespace === job.metadata.namespace && l.name === name)) {
      return q.metadata.name;
    }
  }
  return name;
}

// Pending jobs with their queue and 1-based position in it (higher priority first, then
// earlier submission: the scheduler's BestEffortFIFO order within a queue).
export function pendingWithPositions(jobs, queues) {
  const byQueue = new Map();
  for (const j of jobs) {
    if ((j.status?.phase || 'Pending') !== 'Pending') continue;
    const queue = queueOfJob(j, queues) || '(no queue)';
    if (!byQueue.has(queue)) byQueue.set(queue, []);
    byQueue.get(queue).push(j);
  }
  // Plain comparisons on keys computed once: 10,000 jobs sort in milliseconds (localeCompare and
  // Date.parse per comparison took seconds).
  const compare = (a, b) => (a < b ? -1 : a > b ? 1 : 0);
  const out = [];
  for (const queue of [...byQueue.keys()].sort(compare)) {
    const list = byQueue.get(queue).map((job) => ({ job, priority: job.spec?.priority || 0,
      created: Date.parse(job.metadata.creationTimestamp), name: job.metadata.name }));
    list.sort((a, b) => b.priority - a.priority || a.created - b.created || compare(a.name, b.name));
    list.forEach(({ job }, i) => out.push({ job, queue, position: i + 1, of: list.length }));
  }
  return out;
}

// What each cohort's queues lend and borrow: [{cohort, queues: [{name, nominal, used,
// borrowed, lendable}]}]; lendable is unused nominal quota, capped by the lending limit.
export function cohortLending(queues) {
  const cohorts = new Map();
  for (const q of queues) {
    const cohort = q.spec?.cohort;
    if (!cohort) continue;
    const flavors = gpuFlavors(q);
    const sum = (f) => flavors.reduce((a, r) => a + f(r), 0);
    const row = { name: q.metadata.name, nominal: sum((r) => r.nominal), used: sum((r) => r.used),
      borrowed: sum((r) => r.borrowed),
      lendable: sum((r) => Math.min(Math.max(0, r.nominal - r.used), r.lendingLimit ?? Infinity)) };
    if (!cohorts.has(cohort)) cohorts.set(cohort, []);
    cohorts.get(cohort).push(row);
  }
  return [...cohorts.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([cohort, list]) => ({ cohort, queues: list }));
}

const fmt = (v) => String(+v.toFixed(2));

function bar(row) {
  const limit = row.borrowingLimit === null ? Math.max(row.used, row.nominal) : row.nominal + row.borrowingLimit;
  const scale = Math.max(limit, row.used, row.nominal, 1);
  const el = document.createElement('div');
  el.className = 'quota';
  el.dataset.flavor = row.flavor;
  const within = Math.min(row.used, row.nominal);
  el.innerHTML = `<span class="quota-label"></span><div class="quota-track"><div class="quota-used"></div>
    <div class="quota-borrowed"></div><div class="quota-nominal"></div></div>`;
  el.querySelector('.quota-label').textContent = `${row.flavor}: ${fmt(row.used)} of ${fmt(row.nominal)} GPUs` +
    (row.borrowed ? `, ${fmt(row.borrowed)} borrowed` : '') +
    (row.borrowingLimit !== null ? ` (may borrow ${fmt(row.borrowingLimit)})` : '') +
    (row.lendingLimit !== null ? `, lends at most ${fmt(row.lendingLimit)}` : '');
  el.querySelector('.quota-used').style.width = `${(100 * within) / scale}%`;
  const borrowed = el.querySelector('.quota-borrowed');
  borrowed.style.left = `${(100 * within) / scale}%`;
  borrowed.style.width = `${(100 * Math.max(0, row.used - row.nominal)) / scale}%`;
  el.querySelector('.quota-nominal').style.left = `${(100 * row.nominal) / scale}%`;
  return el;
}

export function queuesPage(parent, { queues, jobs }) {
  section(parent, 'Queues');
  const cards = document.createElement('div');
  cards.className = 'queue-cards';
  parent.appendChild(cards);
  const lending = document.createElement('div');
  lending.className = 'cohorts';
  parent.appendChild(lending);
  const charts = document.createElement('div');
  charts.className = 'charts';
  parent.appendChild(charts);
  const share = new TimeChart(charts, 'fair share (dominant share of nominal quota / weight)', 'share');
  const used = new TimeChart(charts, 'GPUs used per queue', 'GPUs');
  const pendingChart = new TimeChart(charts, 'pending workloads per queue', 'workloads');
  const feed = new HistoryFeed('queues', (state) => {
    share.show(state.times, byScope(state, 'share'));
    used.show(state.times, byScope(state, 'used'));
    pendingChart.show(state.times, byScope(state, 'pending'));
  });
  section(parent, 'Pending workloads, in queue order');
  const detail = detailBox(parent);
  const pending = new VirtualList(parent, [
    { title: 'queue', text: (p) => p.queue },
    { title: 'position', width: '0.6fr', text: (p) => `${p.position} of ${p.of}` },
    { title: 'job', width: '1.6fr', text: (p) => `${p.job.metadata.namespace}/${p.job.metadata.name}` },
    { title: 'reason', text: (p) => p.job.status?.reason || 'NotYetScheduled', className: () => 'wrap' },
    { title: 'explanation', width: '5fr', text: (p) => p.job.status?.message || '', className: () => 'wrap' },
  ], (p) => {
    detail.hidden = false;
    detail.innerHTML = '';
    const link = document.createElement('a');
    link.href = `#jobs/${p.job.metadata.namespace}/${p.job.metadata.name}`;
    link.textContent = `${p.job.metadata.namespace}/${p.job.metadata.name}`;
    detail.append(link, ` (position ${p.position} of ${p.of} in ${p.queue}): ${p.job.status?.reason || ''} ${p.job.status?.message || ''}`);
  }, { rowHeight: 64 });
  pending.box.classList.add('pending');

  const drawQueues = (items) => {
    const all = [...items.values()].sort((a, b) => a.metadata.name.localeCompare(b.metadata.name));
    cards.innerHTML = '';
    for (const q of all) {
      const card = document.createElement('div');
      card.className = 'queue-card';
      card.dataset.queue = q.metadata.name;
      const title = document.createElement('h3');
      title.textContent = q.metadata.name;
      const meta = document.createElement('div');
      meta.className = 'muted';
      meta.textContent = `cohort ${q.spec?.cohort || '-'}, weight ${q.spec?.weight ?? 1}, ` +
        `${q.status?.admittedWorkloads || 0} admitted, ${q.status?.pendingWorkloads || 0} pending`;
      card.append(title, meta);
      for (const row of gpuFlavors(q)) card.appendChild(bar(row));
      cards.appendChild(card);
    }
    lending.innerHTML = '';
    for (const { cohort, queues: members } of cohortLending(all)) {
      const h = document.createElement('h3');
      h.textContent = `cohort ${cohort}: GPUs lent and borrowed`;
      const table = document.createElement('table');
      table.className = 'cohort';
      table.innerHTML = '<tr><th>queue</th><th>nominal</th><th>used</th><th>borrowed</th><th>can lend now</th></tr>';
      for (const m of members) {
        const tr = document.createElement('tr');
        for (const v of [m.name, fmt(m.nominal), fmt(m.used), fmt(m.borrowed), fmt(m.lendable)]) {
          const td = document.createElement('td');
          td.textContent = v;
          tr.appendChild(td);
        }
        table.appendChild(tr);
      }
      lending.append(h, table);
    }
  };
  const drawPending = () => pending.setItems(pendingWithPositions([...jobs.items.values()], [...queues.items.values()]));
  const off = [
    queues.subscribe((items) => { drawQueues(items); drawPending(); }),
    jobs.subscribe(() => drawPending()),
  ];
  return () => { feed.stop(); off.forEach((f) => f()); };
}

// {queue: values} of the series `name` summed over its labels (flavors), one per queue scope.
function byScope(state, name) {
  const out = {};
  for (const s of state.series.values()) {
    if (s.name !== name) continue;
    const key = s.scope.replace(/^queues\//, '');
    out[key] = out[key] ? out[key].map((v, i) => (v ?? 0) + (s.values[i] ?? 0)) : [...s.values];
  }
  return out;
}
