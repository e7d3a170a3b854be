// The REST API as the dashboard uses it: JSON reads, the metrics page, and live collections
// kept current by the API's watch (one JSON event per line), re-listed when the watch expires.

const tokenKey = 'strata.token';

export function token() { return sessionStorage.getItem(tokenKey) || ''; }
export function setToken(value) { sessionStorage.setItem(tokenKey, value); }

// strata's own form of the core kinds (a pod's placement), not Kubernetes' v1 Pod.
const accept = 'application/json;g=strata.dev;v=v1alpha1';

function headers() {
  const t = token();
  return t ? { Accept: accept, Authorization: `Bearer ${t}` } : { Accept: accept };
}

export async function getJson(path) {
  const response = await fetch(path, { headers: headers() });
  const body = await response.json().catch(() => ({}));
  if (!response.ok) throw new Error(body.message || `${path}: HTTP ${response.status}`);
  return body;
}

export async function getText(path) {
  const response = await fetch(path, { headers: headers() });
  if (!response.ok) throw new Error(`${path}: HTTP ${response.status}`);
  return response.text();
}

// Parses Prometheus text into [{name, labels, value}], keeping only families in `wanted`.
export function parseMetrics(text, wanted) {
  const out = [];
  for (const line of text.split('\n')) {
    if (!line || line[0] === '#') continue;
    const brace = line.indexOf('{');
    const space = line.lastIndexOf(' ');
    const name = brace >= 0 ? line.slice(0, brace) : line.slice(0, space);
    if (!wanted.has(name)) continue;
    const labels = {};
    if (brace >= 0) {
      const body = line.slice(brace + 1, line.lastIndexOf('}'));
      const re = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;
      let m;
      while ((m = re.exec(body)) !== null) labels[m[1]] = m[2].replace(/\\(.)/g, (_, c) => (c === 'n' ? '\n' : c));
    }
    out.push({ name, labels, value: Number(line.slice(space + 1)) });
  }
  return out;
}

// A collection (`/api/v1/pods`, `/apis/strata.dev/v1alpha1/jobs`...) mirrored in a Map keyed by
// namespace/name. Listeners run at most once per animation frame, however many events arrive,
// so 10,000 objects changing at once cost one render. Given `onError`, the collection lists and
// watches from its first subscriber on (a page that never shows jobs never loads them) and
// keeps watching afterwards, so a page opened again draws at once; without it, `start` does.
// `onData` runs with each render.
export class LiveCollection {
  static pageSize = 500;  // kubectl's chunk size

  constructor(path, { onError = null, onData = null } = {}) {
    this.path = path;
    this.items = new Map();
    this.listeners = new Set();
    this.scheduled = false;
    this.stopped = false;
    this.started = false;
    this.controller = null;
    this.onError = onError;
    this.onData = onData;
  }

  static key(object) {
    const m = object.metadata || {};
    return m.namespace ? `${m.namespace}/${m.name}` : m.name;
  }

  subscribe(listener) {
    this.listeners.add(listener);
    if (this.items.size) listener(this.items);
    if (this.onError && !this.started) this.start(this.onError);
    return () => this.listeners.delete(listener);
  }

  notify() {
    if (this.scheduled) return;
    this.scheduled = true;
    requestAnimationFrame(() => {
      this.scheduled = false;
      if (this.onData) this.onData();
      for (const listener of this.listeners) listener(this.items);
    });
  }

  async start(onError) {
    this.started = true;
    while (!this.stopped) {
      try {
        // In pages, so the first rows show while the rest arrive; the watch from the first
        // page's version then replays every change made while the pages were read.
        const sep = this.path.includes('?') ? '&' : '?';
        let list = await getJson(`${this.path}${sep}limit=${LiveCollection.pageSize}`);
        const version = list.metadata.resourceVersion;
        this.items = new Map();
        for (;;) {
          for (const o of list.items || []) this.items.set(LiveCollection.key(o), o);
          this.notify();
          const next = list.metadata.continue;
          if (!next || this.stopped) break;
          list = await getJson(`${this.path}${sep}limit=${LiveCollection.pageSize}` +
            `&continue=${encodeURIComponent(next)}`);
        }
        await this.watch(version);
      } catch (error) {
        if (this.stopped) return;
        onError(error);
        await new Promise((resolve) => setTimeout(resolve, 2000));
      }
    }
  }

  async watch(version) {
    this.controller = new AbortController();
    const sep = this.path.includes('?') ? '&' : '?';
    const response = await fetch(`${this.path}${sep}watch=1&resourceVersion=${version}`,
      { headers: headers(), signal: this.controller.signal });
    if (!response.ok) return;  // 410 Expired and the like: list again
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    let buffered = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffered += decoder.decode(value, { stream: true });
      let newline;
      while ((newline = buffered.indexOf('\n')) >= 0) {
        const line = buffered.slice(0, newline).trim();
        buffered = buffered.slice(newline + 1);
        if (line) this.apply(JSON.parse(line));
      }
    }
  }

  apply(event) {
    if (event.type === 'ERROR') throw new Error(event.object?.message || 'watch error');
    if (event.type === 'BOOKMARK') return;
    const key = LiveCollection.key(event.object);
    if (event.type === 'DELETED') this.items.delete(key);
    else this.items.set(key, event.object);
    this.notify();
  }

  stop() {
    this.stopped = true;
    if (this.controller) this.controller.abort();
  }
}

// Reads `path` now and every `every` ms, calling onData(body) with each answer (and onError
// with a failure); for a page about one object, which would otherwise hold one of the browser's
// six connections to the server per watch. Returns a function that stops it.
export function pollJson(path, onData, { every = 2000, onError = () => {} } = {}) {
  let stopped = false;
  let timer = null;
  const tick = async () => {
    try {
      const body = await getJson(path);
      if (!stopped) onData(body);
    } catch (error) {
      if (!stopped) onError(error);
    }
    if (!stopped) timer = setTimeout(tick, every);
  };
  tick();
  return () => { stopped = true; clearTimeout(timer); };
}
