// The Jobs page, over live collections, and the helpers every page shares (queues.js,
// services.js, service.js, job.js, cluster.js and cost.js have the other pages).

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

// Jobs: phase, restarts, checkpoint age; a click opens the job's page (job.js).
export function jobsPage(parent, { jobs }) {
  section(parent, 'Jobs');
  const show = (job) => { location.hash = `#jobs/${job.metadata.namespace}/${job.metadata.name}`; };
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
