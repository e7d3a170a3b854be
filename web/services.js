// The Services page: each service's replicas from the status the service controller writes
// (desired, ready, draining, per version, the last scale decision; a click opens the service's
// page, service.js), and per model the gateway's
// TTFT and TPOT percentiles and output tokens/s by tenant over time, from the metrics page.
// The summarising functions are pure and exported for the unit tests.

import { getText, parseMetrics } from './api.js';
import { TimeChart } from './charts.js';
import { age, section } from './pages.js';
import { VirtualList } from './vlist.js';

// How often the page samples /metrics: each chart point covers this much traffic.
export const sampleIntervalMs = 3000;

const ttftBuckets = 'strata_gateway_ttft_seconds_bucket';
const tpotBuckets = 'strata_gateway_tpot_seconds_bucket';
const tokensTotal = 'strata_gateway_tokens_total';

// What the Services list shows of one service's status: sums over its versions, a compact
// "v1 2/3" (ready/desired) per version, and the newest scale decision.
export function serviceSummary(service) {
  const status = service.status || {};
  const versions = status.versions || [];
  const sum = (field) => versions.reduce((total, v) => total + (v[field] || 0), 0);
  const decisions = status.decisions || [];
  return {
    desired: versions.length ? sum('desiredReplicas') : null,
    ready: status.readyReplicas ?? sum('readyReplicas'),
    replicas: status.replicas ?? sum('replicas'),
    starting: sum('startingReplicas'),
    draining: sum('drainingReplicas'),
    versions: versions.map((v) => `${v.name} ${v.readyReplicas || 0}/${v.desiredReplicas || 0}`).join(', '),
    lastDecision: decisions.length ? decisions[decisions.length - 1] : null,
  };
}

// One scale decision in words: "v1 1→2: <reason>".
export function describeDecision(decision) {
  return `${decision.version} ${decision.from}→${decision.to}: ${decision.reason || ''}`;
}

// The q-quantile of a cumulative histogram ([[le, count]] sorted by le), interpolated linearly
// within its bucket as Prometheus's histogram_quantile does; null without observations. A rank
// in the +Inf bucket answers the highest finite bound.
export function histogramQuantile(buckets, q) {
  const total = buckets.length ? buckets[buckets.length - 1][1] : 0;
  if (!(total > 0)) return null;
  const rank = q * total;
  let lower = 0;
  let below = 0;
  for (const [le, count] of buckets) {
    if (count >= rank) {
      if (le === Infinity) return lower;
      return count === below ? le : lower + ((le - lower) * (rank - below)) / (count - below);
    }
    lower = le;
    below = count;
  }
  return lower;
}

function modelState(models, name) {
  if (!models.has(name)) models.set(name, { ttft: new Map(), tpot: new Map(), tokens: new Map() });
  return models.get(name);
}

// The gateway's series of one metrics scrape, per model: TTFT and TPOT buckets (le -> count,
// summed over versions) and output (completion) tokens by tenant (the gateway's "-", requests
// without one, reads "no tenant").
export function gatewaySnapshot(samples) {
  const models = new Map();
  for (const s of samples) {
    const state = modelState(models, s.labels.model || '');
    if (s.name === ttftBuckets || s.name === tpotBuckets) {
      const le = s.labels.le === '+Inf' ? Infinity : Number(s.labels.le);
      const histogram = s.name === ttftBuckets ? state.ttft : state.tpot;
      histogram.set(le, (histogram.get(le) || 0) + s.value);
    } else if (s.name === tokensTotal && s.labels.kind === 'completion') {
      const tenant = !s.labels.tenant || s.labels.tenant === '-' ? 'no tenant' : s.labels.tenant;
      state.tokens.set(tenant, (state.tokens.get(tenant) || 0) + s.value);
    }
  }
  return models;
}

function observations(histogram) {
  return histogram.get(Infinity) || 0;
}

// Chart points per model for the traffic between two snapshots `seconds` apart: TTFT and TPOT
// p50/p99 of the requests in between (null: none), and output tokens/s per tenant. Without a
// previous snapshot (the page's first sample) the percentiles cover everything counted so far
// and there is no rate; a counter that went down (the server restarted) counts from zero.
export function gatewayPoints(previous, current, seconds) {
  const points = new Map();
  for (const [model, now] of current) {
    let before = previous?.get(model) || null;
    if (before && (observations(now.ttft) < observations(before.ttft) ||
      observations(now.tpot) < observations(before.tpot))) before = null;
    const percentiles = (key) => {
      const window = [...now[key]].map(([le, count]) => [le, count - (before?.[key].get(le) || 0)])
        .sort((a, b) => a[0] - b[0]);
      return { p50: histogramQuantile(window, 0.5), p99: histogramQuantile(window, 0.99) };
    };
    const tokens = {};
    if (previous && seconds > 0) {
      for (const [tenant, count] of now.tokens) {
        const base = before?.tokens.get(tenant) || 0;
        tokens[tenant] = (count >= base ? count - base : count) / seconds;
      }
    }
    points.set(model, { ttft: percentiles('ttft'), tpot: percentiles('tpot'), tokens });
  }
  return points;
}

// The three charts of one model, created when the model first shows in the gateway's series.
class ModelCharts {
  constructor(parent, model) {
    this.box = document.createElement('div');
    this.box.className = 'model-charts';
    this.box.dataset.model = model;
    const title = document.createElement('h3');
    title.textContent = `model ${model || '(none)'}`;
    const charts = document.createElement('div');
    charts.className = 'charts';
    this.box.append(title, charts);
    parent.appendChild(this.box);
    this.ttft = new TimeChart(charts, 'TTFT p50 / p99', 's');
    this.tpot = new TimeChart(charts, 'TPOT p50 / p99', 's');
    this.tokens = new TimeChart(charts, 'output tokens/s by tenant', 'tok/s');
  }

  add(time, point) {
    this.ttft.add(time, point.ttft);
    this.tpot.add(time, point.tpot);
    if (Object.keys(point.tokens).length) this.tokens.add(time, point.tokens);
  }
}

// The page: the services list (a click opens the service's page, service.js) and the
// per-model charts, sampled every sampleIntervalMs. Returns its teardown.
export function servicesPage(parent, { services }) {
  section(parent, 'Services');
  const show = (service) => {
    location.hash = `#services/${service.metadata.namespace}/${service.metadata.name}`;
  };
  const list = new VirtualList(parent, [
    { title: 'service', width: '2fr', text: (s) => `${s.metadata.namespace}/${s.metadata.name}` },
    { title: 'model', text: (s) => s.spec?.model || '' },
    { title: 'min/max', text: (s) => `${s.spec?.minReplicas ?? 1}/${s.spec?.maxReplicas ?? 1}` },
    { title: 'desired', text: (s) => `${serviceSummary(s).desired ?? '-'}` },
    { title: 'ready', text: (s) => `${serviceSummary(s).ready}/${serviceSummary(s).replicas}` },
    { title: 'starting', text: (s) => `${serviceSummary(s).starting}` },
    { title: 'draining', text: (s) => `${serviceSummary(s).draining}` },
    { title: 'versions (ready/desired)', width: '2fr', text: (s) => serviceSummary(s).versions || '-' },
    { title: 'last scale decision', width: '4fr', text: (s) => {
      const d = serviceSummary(s).lastDecision;
      return d ? `${age(d.time)} ago ${describeDecision(d)}` : '-';
    } },
    { title: 'tenants', width: '2fr', text: (s) => (s.spec?.tenants || []).join(', ') || 'all' },
  ], show);
  list.box.style.height = '25vh';
  const chartsBox = document.createElement('div');
  const waiting = document.createElement('p');
  waiting.className = 'muted';
  waiting.textContent = "Each model's charts appear once the gateway has answered its requests.";
  chartsBox.appendChild(waiting);
  parent.appendChild(chartsBox);
  const byModel = new Map();
  let previous = null;
  let previousTime = 0;
  const sample = async () => {
    try {
      const wanted = new Set([ttftBuckets, tpotBuckets, tokensTotal]);
      const snapshot = gatewaySnapshot(parseMetrics(await getText('/metrics'), wanted));
      const now = Date.now() / 1000;
      const points = gatewayPoints(previous, snapshot, now - previousTime);
      previous = snapshot;
      previousTime = now;
      for (const model of [...points.keys()].sort()) {
        if (!byModel.has(model)) {
          waiting.remove();
          byModel.set(model, new ModelCharts(chartsBox, model));
        }
        byModel.get(model).add(now, points.get(model));
      }
    } catch { /* keep the last points; the next sample tries again */ }
  };
  sample();
  const timer = setInterval(sample, sampleIntervalMs);
  const off = services.subscribe((items) => list.setItems([...items.values()]));
  return () => { clearInterval(timer); off(); };
}
