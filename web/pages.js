// The Jobs and Cost pages, over live collections, and the helpers every page shares
// (queues.js, services.js, service.js, job.js and cluster.js have the other pages).

import { getJson } from './api.js';
import { TimeChart } from './charts.js';
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

// Cost: the cost endpoint's report by team (or another dimension), and each team's hourly rate
// over time.
export function costPage(parent) {
  section(parent, 'Cost');
  const controls = document.createElement('div');
  controls.innerHTML = `by <select id="cost-by"><option>team</option><option>project</option>
    <option>queue</option><option>job</option><option>service</option></select>
    window <select id="cost-window"><option>24h</option><option>1h</option><option>168h</option></select>`;
  parent.appendChild(controls);
  const table = document.createElement('table');
  parent.appendChild(table);
  const note = document.createElement('p');
  note.className = 'muted';
  parent.appendChild(note);
  const charts = document.createElement('div');
  charts.className = 'charts';
  parent.appendChild(charts);
  const rate = new TimeChart(charts, 'cost per hour, by team', '$/h');
  const money = (v) => (v === undefined ? '-' : v.toFixed(2));
  const refresh = async () => {
    const by = controls.querySelector('#cost-by').value;
    const window = controls.querySelector('#cost-window').value;
    try {
      const report = await getJson(`/apis/strata.dev/v1alpha1/cost?by=${by}&window=${window}`);
      const rows = [...report.lines, report.total];
      table.innerHTML = '<tr><th></th><th>pods</th><th>GPU-hours</th><th>GPU</th><th>CPU</th>' +
        '<th>memory</th><th>total</th><th>per hour</th><th>per 1M tokens</th></tr>';
      for (const line of rows) {
        const tr = document.createElement('tr');
        for (const value of [line.name, line.pods, line.gpuHours.toFixed(1), money(line.gpuCost),
          money(line.cpuCost), money(line.memoryCost), money(line.total), money(line.hourlyRate),
          line.costPerMillionTokens === undefined ? '-' : line.costPerMillionTokens.toFixed(4)]) {
          const td = document.createElement('td');
          td.textContent = value;
          tr.appendChild(td);
        }
        table.appendChild(tr);
      }
      note.textContent = `${report.currency}, ${report.windowStart} to ${report.windowEnd}`;
      if (by === 'team') {
        rate.add(Date.now() / 1000, Object.fromEntries(report.lines.map((l) => [l.name, l.hourlyRate])));
      }
    } catch (error) {
      note.textContent = String(error);
    }
  };
  controls.addEventListener('change', refresh);
  refresh();
  const timer = setInterval(refresh, 30000);
  return () => clearInterval(timer);
}
