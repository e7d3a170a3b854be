// The Queues and Jobs pages, over live collections and the metrics page, and the helpers every
// page shares (services.js has the Services page, cost.js the Cost page).

import { getJson, getText, parseMetrics } from './api.js';
import { VirtualList } from './vlist.js';

// How long ago `timestamp` (RFC 3339) was, in a unit that suits it: 42s, 5m, 3h, 2d.
export function age(timestamp) {
  if (!timestamp) return '-';
  const seconds = Math.max(0, (Date.now() - Date.parse(timestamp)) / 1000);
  if (seconds < 120) return `${Math.round(seconds)}s`;
  if (seconds < 7200) return `${Math.round(seconds / 60)}m`;
  if (seconds < 172800) return `${Math.round(seconds / 3600)}h`;
  return `${Math.round(seconds / 86400)}d`;
}

// A page's heading.
export function section(parent, title) {
  const h = document.createElement('h2');
  h.textContent = title;
  parent.appendChild(h);
}

// A hidden box under a list for the selected item's details.
export function detailBox(parent) {
  const box = document.createElement('div');
  box.className = 'detail';
  box.hidden = true;
  parent.appendChild(box);
  return box;
}

// Queues: quota use from the strata_queue_* series, and the pending workloads with the
// scheduler's explanation.
export function queuesPage(parent, { queues, jobs }) {
  section(parent, 'Queues');
  const usage = new Map();
  const list = new VirtualList(parent, [
    { title: 'queue', text: (q) => q.metadata.name },
    { title: 'cohort', text: (q) => q.spec?.cohort || '-' },
    { title: 'GPU usage', text: (q) => `${usage.get(`${q.metadata.name}/usage`) ?? 0}` },
    { title: 'nominal', text: (q) => `${usage.get(`${q.metadata.name}/nominal`) ?? '-'}` },
    { title: 'borrowed', text: (q) => `${usage.get(`${q.metadata.name}/borrowed`) ?? 0}` },
    { title: 'pending', text: (q) => `${usage.get(`${q.metadata.name}/pending`) ?? 0}` },
  ]);
  list.box.style.height = '30vh';
  section(parent, 'Pending workloads');
  const pending = new VirtualList(parent, [
    { title: 'job', width: '2fr', text: (j) => `${j.metadata.namespace}/${j.metadata.name}` },
    { title: 'queue', text: (j) => j.spec?.queue || '-' },
    { title: 'reason', text: (j) => j.status?.reason || 'NotYetScheduled' },
    { title: 'explanation', width: '5fr', text: (j) => j.status?.message || '' },
  ]);
  const refresh = async () => {
    try {
      const wanted = new Set(['strata_queue_usage', 'strata_queue_nominal_quota',
        'strata_queue_borrowed', 'strata_queue_pending_workloads']);
      usage.clear();
      const text = await getText(`/metrics?families=${[...wanted].join(',')}`);
      for (const s of parseMetrics(text, wanted)) {
        if (s.name === 'strata_queue_pending_workloads') {
          const key = `${s.labels.queue}/pending`;
          usage.set(key, (usage.get(key) || 0) + s.value);
        } else if (s.labels.resource === 'nvidia.com/gpu' || s.labels.resource === 'gpu') {
          const field = { strata_queue_usage: 'usage', strata_queue_nominal_quota: 'nominal',
            strata_queue_borrowed: 'borrowed' }[s.name];
          usage.set(`${s.labels.queue}/${field}`, s.value);
        }
      }
      list.render();
    } catch { /* the metrics page is optional here */ }
  };
  refresh();
  const timer = setInterval(refresh, 10000);
  const off = [
    queues.subscribe((items) => list.setItems([...items.values()])),
    jobs.subscribe((items) => pending.setItems([...items.values()]
      .filter((j) => (j.status?.phase || 'Pending') === 'Pending'))),
  ];
  return () => { clearInterval(timer); off.forEach((f) => f()); };
}

// Jobs: phase, restarts, checkpoint age; a click shows the job's events.
export function jobsPage(parent, { jobs }) {
  section(parent, 'Jobs');
  const detail = detailBox(parent);
  const show = async (job) => {
    detail.hidden = false;
    detail.textContent = `${job.metadata.namespace}/${job.metadata.name}: loading events…`;
    try {
      const events = await getJson(`/api/v1/namespaces/${job.metadata.namespace}/events`);
      const mine = (events.items || []).filter((e) => e.involvedObject?.name === job.metadata.name);
      detail.textContent = `${job.metadata.namespace}/${job.metadata.name} ${job.status?.message || ''}\n` +
        (mine.map((e) => `${e.lastTimestamp || ''} ${e.type} ${e.reason}: ${e.message}`).join('\n') || 'no events');
    } catch (error) {
      detail.textContent = String(error);
    }
  };
  const list = new VirtualList(parent, [
    { title: 'job', width: '2fr', text: (j) => `${j.metadata.namespace}/${j.metadata.name}` },
    { title: 'queue', text: (j) => j.spec?.queue || '-' },
    { title: 'phase', text: (j) => j.status?.phase || 'Pending',
      className: (j) => `phase-${j.status?.phase || 'Pending'}` },
    { title: 'replicas', text: (j) => `${j.spec?.replicas ?? 1}` },
    { title: 'restarts', text: (j) => `${j.status?.restartCount || 0}` },
    { title: 'checkpoint age', text: (j) => age(j.status?.lastCheckpointTime) },
    { title: 'age', text: (j) => age(j.metadata.creationTimestamp) },
    { title: 'reason', width: '2fr', text: (j) => j.status?.reason || '' },
  ], show);
  const off = jobs.subscribe((items) => list.setItems([...items.values()]));
  return off;
}
