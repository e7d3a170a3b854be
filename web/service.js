// A service's page (#services/NS/NAME): its replicas per version over time with every scale
// decision and its reason, TTFT and TPOT percentiles, goodput, traffic per version, tokens and
// throttling per tenant, prefix-cache hits per replica. The charts open with the server's
// history (history.js) and follow it; the replica counts and decisions also follow the
// Service's status live.

import { pollJson } from './api.js';
import { TimeChart } from './charts.js';
import { HistoryFeed, seriesBy } from './history.js';
import { section } from './pages.js';
import { describeDecision, serviceSummary } from './services.js';

// {`${label} ${name}`: values} of several series names, for one chart.
function combined(state, names, label) {
  const out = {};
  for (const name of names) {
    for (const [value, values] of Object.entries(seriesBy(state, name, label))) {
      out[label ? `${name.replace(/_per_second$|_seconds$/, '')} ${value}` : name] = values;
    }
  }
  return out;
}

// {tenant: values} of tenant_tokens_per_second summed over the kinds (prompt, completion).
function tokensByTenant(state) {
  const out = {};
  for (const s of state.series.values()) {
    if (s.name !== 'tenant_tokens_per_second') continue;
    const key = `${s.labels.tenant} ${s.labels.kind}`;
    out[key] = s.values;
  }
  return out;
}

// The scale decisions of the history's events and the status (newest last), each once.
export function scaleDecisions(events, status) {
  const seen = new Map();
  for (const e of events.filter((x) => x.kind === 'scale')) {
    const d = { time: e.time, version: e.fields.version, from: Number(e.fields.from),
      to: Number(e.fields.to), reason: e.fields.reason };
    seen.set(`${Date.parse(d.time)}/${d.version}/${d.from}/${d.to}`, d);
  }
  for (const d of status?.decisions || []) {
    seen.set(`${Date.parse(d.time)}/${d.version}/${d.from}/${d.to}`, d);
  }
  return [...seen.values()].sort((a, b) => Date.parse(a.time) - Date.parse(b.time));
}

export function servicePage(parent, namespace, name) {
  section(parent, `Service ${namespace}/${name}`);
  const back = document.createElement('a');
  back.href = '#services';
  back.textContent = '← all services';
  const summary = document.createElement('div');
  summary.className = 'summary service-summary';
  parent.append(back, summary);
  const charts = document.createElement('div');
  charts.className = 'charts';
  parent.appendChild(charts);
  const replicas = new TimeChart(charts, 'replicas (desired / ready) and scale decisions', 'replicas');
  const ttft = new TimeChart(charts, 'TTFT p50 / p99', 's');
  const tpot = new TimeChart(charts, 'TPOT p50 / p99', 's');
  const goodput = new TimeChart(charts, 'goodput and requests per version', 'req/s');
  const tokens = new TimeChart(charts, 'tokens/s per tenant', 'tok/s');
  const throttled = new TimeChart(charts, 'throttled (429) per tenant', 'req/s');
  const prefix = new TimeChart(charts, 'prefix-cache hit ratio per replica', 'ratio');
  const heading = document.createElement('h3');
  heading.textContent = 'Scale decisions, newest first';
  const table = document.createElement('table');
  table.className = 'decisions';
  parent.append(heading, table);

  let service = null;
  let feed = null;
  const drawDecisions = () => {
    const decisions = scaleDecisions(feed ? feed.state.events : [], service?.status);
    replicas.setMarks(decisions.map((d) => ({ time: Date.parse(d.time) / 1000, text: describeDecision(d) })));
    table.innerHTML = '<tr><th>time</th><th>version</th><th>replicas</th><th>reason</th></tr>';
    for (const d of decisions.slice().reverse()) {
      const tr = document.createElement('tr');
      for (const text of [new Date(d.time).toLocaleString(), d.version, `${d.from} → ${d.to}`, d.reason || '']) {
        const td = document.createElement('td');
        td.textContent = text;
        tr.appendChild(td);
      }
      table.appendChild(tr);
    }
    if (!decisions.length) table.innerHTML += '<tr><td colspan="4" class="muted">none yet</td></tr>';
  };
  feed = new HistoryFeed(`namespaces/${namespace}/services/${name}`, (state) => {
    replicas.show(state.times, combined(state, ['desired', 'ready'], 'version'));
    ttft.show(state.times, seriesBy(state, 'ttft_seconds', 'quantile'));
    tpot.show(state.times, seriesBy(state, 'tpot_seconds', 'quantile'));
    goodput.show(state.times, combined(state, ['goodput_per_second', 'requests_per_second'], 'version'));
    tokens.show(state.times, tokensByTenant(state));
    throttled.show(state.times, seriesBy(state, 'throttled_per_second', 'tenant'));
    prefix.show(state.times, seriesBy(state, 'prefix_hit_ratio', 'replica'));
    drawDecisions();
  }, { every: 5000, onError: (error) => { summary.title = String(error.message || error); } });
  const quiet = { onError: (error) => { summary.textContent = String(error.message || error); } };

  const off = pollJson(`/apis/strata.dev/v1alpha1/namespaces/${namespace}/services/` +
    `${encodeURIComponent(name)}`, (body) => {
    service = body;
    summary.innerHTML = '';
    if (!service) {
      summary.textContent = 'no such service (yet)';
      return;
    }
    const s = serviceSummary(service);
    for (const [label, value] of [['model', service.spec?.model || '-'], ['desired', s.desired ?? '-'],
      ['ready', `${s.ready}/${s.replicas}`], ['starting', s.starting], ['draining', s.draining],
      ['versions (ready/desired)', s.versions || '-'],
      ['cold start', `${(service.status?.coldStartSeconds || 0).toFixed(1)} s`]]) {
      const d = document.createElement('div');
      d.innerHTML = '<b></b><span class="muted"></span>';
      d.querySelector('b').textContent = value;
      d.querySelector('span').textContent = label;
      summary.appendChild(d);
    }
    drawDecisions();
  }, quiet);
  return () => { off(); feed.stop(); };
}
