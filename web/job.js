// A job's page (#jobs/NS/NAME): its pods and ranks (node, GPUs, phase, restarts), a timeline of
// queued, admitted, running, restarts, checkpoints and preemptions, its events in time order,
// live logs per rank (the pod log endpoint kubectl logs -f uses) and GPU utilisation per rank
// (the server's history of the DCGM series that carry the pod). The pure helpers are exported
// for the unit tests.

import { pollJson, token } from './api.js';
import { TimeChart } from './charts.js';
import { HistoryFeed, seriesBy } from './history.js';
import { age, section } from './pages.js';

// What each event reason does to the job's state on the timeline.
const stateAfter = {
  Scheduled: 'admitted', Running: 'running', Restarting: 'restarting', Preempted: 'queued',
  Requeued: 'queued', Evicted: 'queued', Succeeded: 'succeeded', Failed: 'failed',
  MaxRestartsExceeded: 'failed',
};

// Where an event falls in a job's life, for events of the same second.
const lifecycle = ['FailedScheduling', 'Scheduled', 'Running', 'Restarting', 'Preempted', 'Evicted',
  'Requeued', 'Succeeded', 'Failed', 'MaxRestartsExceeded'];

// Events in the order they happened: by time, then by their place in a job's life.
export function inOrder(events) {
  const place = (e) => { const i = lifecycle.indexOf(e.reason); return i < 0 ? lifecycle.length : i; };
  return events.slice().sort((a, b) => Date.parse(eventTime(a)) - Date.parse(eventTime(b)) || place(a) - place(b));
}

function eventTime(e) {
  return e.lastTimestamp || e.eventTime || e.firstTimestamp || e.metadata?.creationTimestamp;
}

// The job's timeline from its creation, its events and its checkpoints: segments
// [{state, from, to}] (ms; `to` of the last is `now`) and marks [{time, kind, text}] for
// restarts, checkpoints and preemptions.
export function jobTimeline(job, events, checkpoints, now) {
  const created = Date.parse(job.metadata.creationTimestamp);
  const segments = [{ state: 'queued', from: created, to: now }];
  const marks = [];
  for (const e of inOrder(events)) {
    const at = Date.parse(eventTime(e));
    const state = stateAfter[e.reason];
    if (['Restarting', 'Preempted', 'Evicted'].includes(e.reason)) {
      marks.push({ time: at, kind: e.reason.toLowerCase(), text: `${e.reason}: ${e.message}` });
    }
    if (!state) continue;
    const last = segments[segments.length - 1];
    if (last.state === state) continue;
    last.to = at;
    segments.push({ state, from: at, to: now });
  }
  const end = job.status?.completionTime ? Date.parse(job.status.completionTime) : now;
  segments[segments.length - 1].to = Math.max(segments[segments.length - 1].from, end);
  for (const time of checkpoints) marks.push({ time, kind: 'checkpoint', text: 'checkpoint' });
  return { segments: segments.filter((s) => s.to > s.from || s === segments[segments.length - 1]), marks };
}

// The pod's group rank: its place in the job's placement (matched by node and first GPU), else
// the number its name ends with.
export function podRank(pod, placement) {
  const first = pod.spec?.assignedGpus?.[0]?.uuid;
  for (const p of placement?.pods || []) {
    if (p.nodeName === pod.spec?.nodeName && first && p.gpus?.[0]?.uuid === first) return p.rank;
  }
  const m = /(\d+)$/.exec(pod.metadata.name);
  return m ? Number(m[1]) : 0;
}

const colours = { queued: '#f59e0b', admitted: '#60a5fa', running: '#10b981', restarting: '#ef4444',
  succeeded: '#9ca3af', failed: '#dc2626' };

function drawTimeline(box, timeline) {
  box.innerHTML = '';
  const { segments, marks } = timeline;
  const start = segments[0].from;
  const end = Math.max(...segments.map((s) => s.to), start + 1);
  const x = (t) => `${(100 * (t - start)) / (end - start)}%`;
  const bar = document.createElement('div');
  bar.className = 'timeline-bar';
  for (const s of segments) {
    const seg = document.createElement('div');
    seg.className = `segment state-${s.state}`;
    seg.style.left = x(s.from);
    seg.style.width = `${Math.max(0.3, (100 * (s.to - s.from)) / (end - start))}%`;
    seg.style.background = colours[s.state];
    seg.title = `${s.state} from ${new Date(s.from).toLocaleString()}`;
    seg.textContent = s.state;
    bar.appendChild(seg);
  }
  for (const m of marks) {
    const mark = document.createElement('div');
    mark.className = `mark mark-${m.kind}`;
    mark.style.left = x(m.time);
    mark.title = `${new Date(m.time).toLocaleString()} ${m.text}`;
    bar.appendChild(mark);
  }
  const axis = document.createElement('div');
  axis.className = 'timeline-axis muted';
  axis.textContent = `${new Date(start).toLocaleString()} — ${new Date(end).toLocaleString()}; ` +
    'marks: ▲ checkpoint, ▼ restart or preemption';
  box.append(bar, axis);
}

// Follows one process's log (GET .../pods/POD/log?container=rank-N&follow=true) into `pre`,
// keeping its last 2,000 lines. Returns a function that stops it.
function followLog(namespace, pod, container, pre) {
  const controller = new AbortController();
  pre.textContent = '';
  (async () => {
    try {
      const headers = token() ? { Authorization: `Bearer ${token()}` } : {};
      const response = await fetch(`/api/v1/namespaces/${namespace}/pods/${pod}/log?container=` +
        `${encodeURIComponent(container)}&follow=true&tailLines=500`, { headers, signal: controller.signal });
      if (!response.ok) {
        const body = await response.json().catch(() => ({}));
        pre.textContent = body.message || `HTTP ${response.status}`;
        return;
      }
      const reader = response.body.getReader();
      const decoder = new TextDecoder();
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        const atEnd = pre.scrollTop + pre.clientHeight >= pre.scrollHeight - 4;
        let text = pre.textContent + decoder.decode(value, { stream: true });
        const lines = text.split('\n');
        if (lines.length > 2000) text = lines.slice(-2000).join('\n');
        pre.textContent = text;
        if (atEnd) pre.scrollTop = pre.scrollHeight;
      }
    } catch (error) {
      if (error.name !== 'AbortError') pre.textContent += `\n${error.message}`;
    }
  })();
  return () => controller.abort();
}

function block(parent, title) {
  const h = document.createElement('h3');
  h.textContent = title;
  const box = document.createElement('div');
  parent.append(h, box);
  return box;
}

export function jobPage(parent, namespace, name) {
  section(parent, `Job ${namespace}/${name}`);
  const back = document.createElement('a');
  back.href = '#jobs';
  back.textContent = '← all jobs';
  const onMap = document.createElement('a');
  onMap.className = 'on-map';
  onMap.href = `#cluster/${namespace}/${name}`;
  onMap.textContent = 'its GPUs on the map';
  const summary = document.createElement('div');
  summary.className = 'summary job-summary';
  const explanation = document.createElement('div');
  explanation.className = 'explanation';
  parent.append(back, ' · ', onMap, summary, explanation);
  const timelineBox = block(parent, 'Timeline');
  timelineBox.className = 'timeline';
  const podsBox = block(parent, 'Pods and ranks');
  const podsTable = document.createElement('table');
  podsTable.className = 'pods';
  podsBox.appendChild(podsTable);
  const chartsBox = document.createElement('div');
  chartsBox.className = 'charts';
  parent.appendChild(chartsBox);
  const utilisation = new TimeChart(chartsBox, 'GPU utilisation per rank (pod)', '%');
  const logsBox = block(parent, 'Logs');
  const picker = document.createElement('select');
  picker.className = 'log-rank';
  const pre = document.createElement('pre');
  pre.className = 'logs';
  logsBox.append(picker, pre);
  const eventsBox = block(parent, 'Events, oldest first');
  const eventsTable = document.createElement('table');
  eventsTable.className = 'events';
  eventsBox.appendChild(eventsTable);

  // Polled rather than watched: a watch each would leave no connection for the log stream.
  let job = null;
  let pods = [];
  let events = [];
  let checkpoints = [];
  let stopLog = null;

  const redraw = () => {
    summary.innerHTML = '';
    if (!job) {
      summary.textContent = 'no such job (yet)';
      return;
    }
    const st = job.status || {};
    for (const [label, value] of [['phase', st.phase || 'Pending'], ['queue', job.spec?.queue || '-'],
      ['replicas × procs', `${job.spec?.replicas ?? 1} × ${job.spec?.procPerNode ?? 1}`],
      ['GPUs per pod', job.spec?.resources?.gpu ?? 0], ['restarts', st.restartCount || 0],
      ['preemptions', st.preemptionCount || 0], ['runs', st.runs || 0],
      ['last checkpoint', st.lastCheckpointTime ? `${age(st.lastCheckpointTime)} ago` : '-'],
      ['age', age(job.metadata.creationTimestamp)]]) {
      const d = document.createElement('div');
      d.innerHTML = '<b></b><span class="muted"></span>';
      d.querySelector('b').textContent = value;
      d.querySelector('span').textContent = label;
      summary.appendChild(d);
    }
    // The whole explanation, never cut: why it waits, or how it ended.
    explanation.textContent = st.message ? `${st.reason || ''} ${st.message}`.trim() : '';
    explanation.hidden = !st.message;
    const ckpt = new Set(checkpoints);
    if (st.lastCheckpointTime) ckpt.add(Date.parse(st.lastCheckpointTime));
    drawTimeline(timelineBox, jobTimeline(job, events, [...ckpt], Date.now()));
  };

  const drawPods = () => {
    const procs = Number(job?.spec?.procPerNode || 1);
    const rows = pods.map((p) => ({ pod: p, rank: podRank(p, job?.status?.placement) }))
      .sort((a, b) => a.rank - b.rank);
    podsTable.innerHTML = '<tr><th>rank</th><th>pod</th><th>node</th><th>GPUs</th><th>phase</th>' +
      '<th>restarts</th><th>processes</th></tr>';
    const options = [];
    for (const { pod, rank } of rows) {
      const gpus = (pod.spec?.assignedGpus || []).map((g) => (g.share && g.share !== '1' ? `${g.index} (${g.share})` : `${g.index}`)).join(', ');
      const restarts = pod.metadata.annotations?.['strata.dev/restart-count'] || '0';
      const ranks = [];
      for (let i = 0; i < procs; i++) ranks.push(`rank-${rank * procs + i}`);
      const tr = document.createElement('tr');
      for (const [text, cls] of [[rank, ''], [pod.metadata.name, ''], [pod.spec?.nodeName || '-', ''],
        [gpus || '-', ''], [pod.status?.phase || 'Pending', `phase-${pod.status?.phase || 'Pending'}`],
        [restarts, ''], [ranks.join(', '), '']]) {
        const td = document.createElement('td');
        td.textContent = text;
        if (cls) td.className = cls;
        tr.appendChild(td);
      }
      podsTable.appendChild(tr);
      for (const r of ranks) options.push({ pod: pod.metadata.name, container: r, label: `${r} (${pod.metadata.name})` });
    }
    logsBox.hidden = !options.length;
    const current = picker.value;
    const wanted = options.map((o) => `${o.pod}/${o.container}`).join('|');
    if (picker.dataset.options !== wanted) {
      picker.dataset.options = wanted;
      picker.innerHTML = '';
      for (const o of options) {
        const opt = document.createElement('option');
        opt.value = `${o.pod}/${o.container}`;
        opt.textContent = o.label;
        picker.appendChild(opt);
      }
      if (options.some((o) => `${o.pod}/${o.container}` === current)) picker.value = current;
      if (!stopLog && options.length) startLog();
    }
  };

  const startLog = () => {
    if (stopLog) stopLog();
    stopLog = null;
    if (!picker.value) return;
    const [pod, container] = picker.value.split('/');
    stopLog = followLog(namespace, pod, container, pre);
  };
  picker.addEventListener('change', startLog);

  const drawEvents = () => {
    eventsTable.innerHTML = '<tr><th>time</th><th>type</th><th>reason</th><th>message</th></tr>';
    for (const e of inOrder(events)) {
      const tr = document.createElement('tr');
      for (const text of [new Date(eventTime(e)).toLocaleString(), e.type, e.reason, e.message]) {
        const td = document.createElement('td');
        td.textContent = text;
        tr.appendChild(td);
      }
      eventsTable.appendChild(tr);
    }
    redraw();
  };

  const feed = new HistoryFeed(`namespaces/${namespace}/jobs/${name}`, (state) => {
    // Named by rank where the pod is known: "rank 1 (train-worker-1)".
    const ranks = new Map(pods.map((p) => [p.metadata.name, podRank(p, job?.status?.placement)]));
    const byPod = seriesBy(state, 'gpu_utilisation', 'pod');
    utilisation.show(state.times, Object.fromEntries(Object.entries(byPod).map(([pod, values]) =>
      [ranks.has(pod) ? `rank ${ranks.get(pod)} (${pod})` : pod, values])));
    checkpoints = state.events.filter((e) => e.kind === 'checkpoint').map((e) => Date.parse(e.time));
    redraw();
  }, { every: 15000 });
  const quiet = { onError: (error) => { summary.title = String(error.message || error); } };
  const off = [
    pollJson(`/apis/strata.dev/v1alpha1/namespaces/${namespace}/jobs/${encodeURIComponent(name)}`, (body) => {
      job = body;
      redraw();
      drawPods();
    }, quiet),
    pollJson(`/api/v1/namespaces/${namespace}/pods?labelSelector=` +
      `${encodeURIComponent(`strata.dev/job-name=${name}`)}`, (list) => {
      pods = list.items || [];
      drawPods();
    }, quiet),
    pollJson(`/api/v1/namespaces/${namespace}/events?fieldSelector=` +
      `${encodeURIComponent(`involvedObject.name=${name}`)}`, (list) => {
      events = list.items || [];
      drawEvents();
    }, quiet),
  ];
  redraw();
  return () => {
    off.forEach((f) => f());
    feed.stop();
    if (stopLog) stopLog();
  };
}
