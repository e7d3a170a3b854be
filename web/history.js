// The server's history of a scope (GET /apis/strata.dev/v1alpha1/history/...): what the pages
// plot, for the hours the server keeps, so a page opens with its charts filled; then polled for
// what is new. Pure helpers are exported for the unit tests.

import { getJson } from './api.js';

export const historyBase = '/apis/strata.dev/v1alpha1/history';

// The key of one series of a history body: its scope, name and labels.
export function seriesKey(series) {
  const labels = Object.entries(series.labels || {}).sort(([a], [b]) => a.localeCompare(b));
  return `${series.scope || ''} ${series.name}{${labels.map(([k, v]) => `${k}=${v}`).join(',')}}`;
}

// Merges a history body into `state` ({times, series: Map key -> {scope, name, labels, values},
// events}): the samples later than the last one kept are appended to every series (null where
// a series has none), events not seen yet are added. Returns the number of samples added.
export function mergeHistory(state, body) {
  const last = state.times.length ? state.times[state.times.length - 1] : -Infinity;
  const fresh = [];
  (body.times || []).forEach((t, i) => { if (t > last) fresh.push(i); });
  for (const i of fresh) state.times.push(body.times[i]);
  const seen = new Set();
  for (const s of body.series || []) {
    const key = seriesKey(s);
    seen.add(key);
    let kept = state.series.get(key);
    if (!kept) {
      kept = { scope: s.scope || '', name: s.name, labels: s.labels || {}, values: new Array(state.times.length - fresh.length).fill(null) };
      state.series.set(key, kept);
    }
    for (const i of fresh) kept.values.push(s.values[i] ?? null);
  }
  for (const [key, kept] of state.series) {
    if (!seen.has(key)) for (let i = 0; i < fresh.length; i++) kept.values.push(null);
  }
  const known = new Set(state.events.map((e) => JSON.stringify(e)));
  for (const e of body.events || []) {
    if (!known.has(JSON.stringify(e))) state.events.push(e);
  }
  state.events.sort((a, b) => Date.parse(a.time) - Date.parse(b.time));
  return fresh.length;
}

// The series named `name` of `state`, by the value of their label `label` (or the series name
// when it has none): {labelValue: values}. `where` keeps only series whose labels match it.
export function seriesBy(state, name, label, where = {}) {
  const out = {};
  for (const s of state.series.values()) {
    if (s.name !== name) continue;
    if (Object.entries(where).some(([k, v]) => s.labels[k] !== v)) continue;
    out[label ? (s.labels[label] ?? '') : name] = s.values;
  }
  return out;
}

// One scope's history, loaded whole then polled every `every` ms for the samples since the
// last one; `onChange(state)` runs after each load that changed something.
export class HistoryFeed {
  constructor(path, onChange, { every = 15000, onError = () => {} } = {}) {
    this.path = `${historyBase}/${path}`;
    this.state = { times: [], series: new Map(), events: [] };
    this.onChange = onChange;
    this.onError = onError;
    this.poll();
    this.timer = setInterval(() => this.poll(), every);
  }

  async poll() {
    try {
      const last = this.state.times[this.state.times.length - 1];
      // Twice the step back: a clock between here and the server a little apart loses nothing.
      const window = last === undefined ? '' :
        `?window=${Math.ceil(Date.now() / 1000 - last + 2 * (this.step || 15))}s`;
      const body = await getJson(`${this.path}${window}`);
      this.step = body.stepSeconds;
      const added = mergeHistory(this.state, body);
      if (added || last === undefined) this.onChange(this.state);
    } catch (error) {
      this.onError(error);
    }
  }

  stop() { clearInterval(this.timer); }
}
