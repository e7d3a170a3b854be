// The Cluster page: a GPU map. Nodes are grouped by topology (block, then rack labels), each
// node's GPUs by NVLink island; every GPU is a cell coloured by what holds it (the job or
// service, or its team or queue), pale where allocated and filled from the bottom by its
// measured utilisation; MIG instances and fractional shares are drawn as parts of their GPU.
// Node names, a legend, search, and a click that opens the holder's page. One canvas sized to
// the page's width (8,000 cells draw in a few milliseconds; never a horizontal scrollbar). The
// layout helpers are pure and exported for the unit tests.

import { getText, parseMetrics } from './api.js';

const blockLabel = 'topology.strata.dev/block';
const rackLabel = 'topology.strata.dev/rack';

// A colour per name, stable across reloads; names that differ by one character (train-33,
// train-34) get hues far apart.
export function colourOf(name) {
  let hash = 0;
  for (let i = 0; i < name.length; i++) hash = (hash * 31 + name.charCodeAt(i)) | 0;
  hash = Math.imul(hash ^ (hash >>> 16), 0x45d9f3b);
  hash ^= hash >>> 16;
  const hue = (hash >>> 0) % 360;
  return `hsl(${hue} ${60 + ((hash >>> 9) % 3) * 10}% ${42 + ((hash >>> 12) % 3) * 8}%)`;
}

// A quantity of GPUs ("1", "500m", "0.25") as a number.
export function shareOf(text) {
  if (text === undefined || text === null || text === '') return 1;
  const s = String(text);
  return s.endsWith('m') ? Number(s.slice(0, -1)) / 1000 : Number(s);
}

// What holds a pod's GPUs: {kind, namespace, name, team, queue, href} (href: the holder's page).
export function holderOf(pod) {
  const owner = pod.spec?.owner || {};
  const ns = pod.metadata.namespace;
  const labels = pod.metadata.labels || {};
  const kind = owner.name ? owner.kind : 'Pod';
  const name = owner.name || pod.metadata.name;
  const href = kind === 'Job' ? `#jobs/${ns}/${name}` : kind === 'Service' ? `#services/${ns}/${name}` : null;
  return { kind, namespace: ns, name, team: labels.team || '(no team)', queue: pod.spec?.queue || '(no queue)',
    label: `${kind.toLowerCase()} ${ns}/${name}`, href };
}

// The part of `names` after their longest common prefix ending in '-' or '.', so that 1,000
// "sim-node-N" read "N"; {prefix, short: Map name -> short}.
export function shortNames(names) {
  let prefix = names.length > 1 ? names[0] : '';
  for (const n of names) while (prefix && !n.startsWith(prefix)) prefix = prefix.slice(0, -1);
  const cut = Math.max(prefix.lastIndexOf('-'), prefix.lastIndexOf('.')) + 1;
  prefix = prefix.slice(0, cut);
  return { prefix, short: new Map(names.map((n) => [n, n.slice(prefix.length)])) };
}

// Nodes grouped by topology: [{block, racks: [{rack, nodes}]}], blocks and racks and nodes in
// natural order.
const collator = new Intl.Collator(undefined, { numeric: true });

export function groupByTopology(nodes) {
  const natural = collator.compare;
  const blocks = new Map();
  for (const node of nodes) {
    const labels = node.metadata.labels || {};
    const block = labels[blockLabel] || '';
    const rack = labels[rackLabel] || '';
    if (!blocks.has(block)) blocks.set(block, new Map());
    const racks = blocks.get(block);
    if (!racks.has(rack)) racks.set(rack, []);
    racks.get(rack).push(node);
  }
  return [...blocks.keys()].sort(natural).map((block) => ({
    block,
    racks: [...blocks.get(block).keys()].sort(natural).map((rack) => ({
      rack, nodes: blocks.get(block).get(rack).sort((a, b) => natural(a.metadata.name, b.metadata.name)),
    })),
  }));
}

// A node's GPUs by NVLink island, in index order: [[gpu...], ...].
export function islandsOf(node) {
  const islands = new Map();
  for (const gpu of node.status?.gpus || []) {
    const island = gpu.nvlinkIsland || 0;
    if (!islands.has(island)) islands.set(island, []);
    islands.get(island).push(gpu);
  }
  return [...islands.keys()].sort((a, b) => a - b).map((k) => islands.get(k).sort((a, b) => a.index - b.index));
}

// Sizes for a cluster of `count` nodes: readable names at 4, the whole map on a screen or two
// at 1,000.
export function scaleFor(count) {
  if (count <= 16) return { cell: 30, gap: 2, font: 13, pad: 6 };
  if (count <= 200) return { cell: 14, gap: 1, font: 10, pad: 4 };
  return { cell: 9, gap: 1, font: 9, pad: 3 };
}

export class ClusterView {
  // `search`: the text the map opens searching for ('' for none).
  constructor(parent, nodes, pods, search = '') {
    this.nodes = nodes;
    this.pods = pods;
    this.utilisation = new Map();  // GPU UUID -> percent
    this.summary = document.createElement('div');
    this.summary.className = 'summary';
    this.controls = document.createElement('div');
    this.controls.className = 'map-controls';
    this.controls.innerHTML = `<label>colour by <select class="colour-by"><option value="holder">job or
      service</option><option value="team">team</option><option value="queue">queue</option></select></label>
      <input class="search" type="search" placeholder="search nodes, jobs, services, teams">
      <span class="matches muted"></span>`;
    this.legend = document.createElement('div');
    this.legend.className = 'legend';
    this.canvas = document.createElement('canvas');
    this.canvas.className = 'gpus';
    this.tooltip = document.createElement('div');
    this.tooltip.className = 'tooltip';
    this.tooltip.hidden = true;
    parent.append(this.summary, this.controls, this.legend, this.canvas, this.tooltip);
    this.parent = parent;
    this.cells = [];
    this.colourBy = this.controls.querySelector('.colour-by');
    this.search = this.controls.querySelector('.search');
    this.search.value = search;
    this.colourBy.addEventListener('change', () => this.draw());
    this.search.addEventListener('input', () => this.draw());
    this.canvas.addEventListener('mousemove', (e) => this.hover(e));
    this.canvas.addEventListener('mouseleave', () => { this.tooltip.hidden = true; });
    this.canvas.addEventListener('click', (e) => this.open(e));
    this.onResize = () => { this.placement = null; this.draw(); };
    window.addEventListener('resize', this.onResize);
    // The layout changes with the nodes and the width only; pods change far more often.
    this.placement = null;
    this.unsubscribe = [
      nodes.subscribe(() => { this.placement = null; this.draw(); }),
      pods.subscribe(() => this.draw()),
    ];
    this.refreshUse();
    this.timer = setInterval(() => this.refreshUse(), 10000);
  }

  async refreshUse() {
    try {
      // Only the GPU family: the server then skips recomputing the cluster state's series.
      const samples = parseMetrics(await getText('/metrics?families=DCGM_FI_DEV_GPU_UTIL'),
        new Set(['DCGM_FI_DEV_GPU_UTIL']));
      this.utilisation = new Map(samples.map((s) => [s.labels.UUID, s.value]));
      this.draw();
    } catch (error) {
      this.summary.title = String(error);
    }
  }

  // GPU "node/index" -> [{holder, pod, share, mig}], and MIG instance UUID -> the same.
  holders() {
    const byGpu = new Map();
    for (const pod of this.pods.items.values()) {
      const phase = pod.status?.phase;
      if (!pod.spec?.nodeName || phase === 'Succeeded' || phase === 'Failed') continue;
      const holder = holderOf(pod);
      for (const gpu of pod.spec.assignedGpus || []) {
        const key = `${pod.spec.nodeName}/${gpu.index}`;
        const list = byGpu.get(key) || [];
        list.push({ holder, pod: pod.metadata.name, share: shareOf(gpu.share), mig: gpu.migInstance || '' });
        byGpu.set(key, list);
      }
    }
    return byGpu;
  }

  keyOf(holder) {
    const by = this.colourBy.value;
    return by === 'team' ? `team ${holder.team}` : by === 'queue' ? `queue ${holder.queue}` : holder.label;
  }

  // Places every node: racks flow across the width, each rack's nodes in a grid of roughly
  // twice as many columns as rows.
  layout(width, s) {
    const groups = groupByTopology([...this.nodes.items.values()]);
    const { prefix, short } = shortNames([...this.nodes.items.keys()]);
    this.prefix = prefix;
    const label = s.font + 4;
    const full = this.nodes.items.size <= 16;
    const nodeBox = (node) => {
      const islands = islandsOf(node);
      const cols = islands.map((g) => Math.min(4, Math.max(1, g.length)));
      const rows = Math.max(1, ...islands.map((g, i) => Math.ceil(g.length / cols[i])));
      const w = cols.reduce((a, c) => a + c * (s.cell + s.gap), 0) + (islands.length - 1) * 3 * s.gap + 2 * s.pad;
      // Wide enough for the name it shows (about 0.62 em per character).
      const text = full ? node.metadata.name : short.get(node.metadata.name);
      const named = Math.ceil(text.length * s.font * 0.62) + 2 * s.pad;
      return { w: Math.max(w, 2 * s.pad + s.cell, named), h: label + rows * (s.cell + s.gap) + s.pad, islands, cols };
    };
    const placed = [];
    const headers = [];
    let y = s.pad;
    for (const { block, racks } of groups) {
      if (block) {
        headers.push({ x: s.pad, y: y + s.font + 2, text: `block ${block}`, bold: true });
        y += s.font + 8;
      }
      let x = s.pad;
      let shelf = 0;
      for (const { rack, nodes } of racks) {
        const boxes = nodes.map(nodeBox);
        const nodeW = Math.max(...boxes.map((b) => b.w)) + s.gap * 2;
        const nodeH = Math.max(...boxes.map((b) => b.h)) + s.gap * 2;
        const fit = Math.max(1, Math.floor((width - 2 * s.pad - 8) / nodeW));
        const perRow = Math.min(nodes.length, fit, Math.max(1, Math.ceil(Math.sqrt(2 * nodes.length))));
        const title = rack ? `rack ${rack}` : 'no rack';
        const rackW = Math.max(perRow * nodeW + 8, Math.ceil(title.length * s.font * 0.62) + 10);
        const rackH = Math.ceil(nodes.length / perRow) * nodeH + label + 8;
        if (x + rackW > width - s.pad && x > s.pad) {
          x = s.pad;
          y += shelf + s.pad;
          shelf = 0;
        }
        headers.push({ x: x + 4, y: y + s.font + 2, text: title, rack: { x, y, w: rackW, h: rackH } });
        nodes.forEach((node, i) => {
          placed.push({ node, short: short.get(node.metadata.name), box: boxes[i],
            x: x + 4 + (i % perRow) * nodeW, y: y + label + 4 + Math.floor(i / perRow) * nodeH });
        });
        x += rackW + s.pad;
        shelf = Math.max(shelf, rackH);
      }
      y += shelf + s.pad;
    }
    return { placed, headers, height: y + s.pad };
  }

  draw() {
    const width = Math.max(320, this.parent.clientWidth - 2);
    const s = scaleFor(this.nodes.items.size);
    if (!this.placement || this.placement.width !== width) {
      this.placement = { width, ...this.layout(width, s) };
    }
    const { placed, headers, height } = this.placement;
    const byGpu = this.holders();
    const query = this.search.value.trim().toLowerCase();
    const ratio = window.devicePixelRatio || 1;
    this.canvas.width = width * ratio;
    this.canvas.height = height * ratio;
    this.canvas.style.width = `${width}px`;
    this.canvas.style.height = `${height}px`;
    const ctx = this.canvas.getContext('2d');
    ctx.scale(ratio, ratio);
    ctx.clearRect(0, 0, width, height);
    ctx.textBaseline = 'alphabetic';
    for (const h of headers) {
      if (h.rack) {
        ctx.strokeStyle = '#d1d5db';
        ctx.strokeRect(h.rack.x + 0.5, h.rack.y + 0.5, h.rack.w, h.rack.h);
      }
      ctx.fillStyle = '#374151';
      ctx.font = `${h.bold ? '600 ' : ''}${s.font}px system-ui, sans-serif`;
      ctx.fillText(h.text, h.x, h.y);
    }
    this.cells = [];
    const legend = new Map();  // colour key -> {gpus, href}
    let total = 0; let allocated = 0; let busy = 0; let matches = 0;
    for (const { node, short, box, x, y } of placed) {
      const name = node.metadata.name;
      const nodeMatch = !query || name.toLowerCase().includes(query);
      ctx.font = `${s.font}px system-ui, sans-serif`;
      ctx.fillStyle = nodeMatch && query ? '#b45309' : '#4b5563';
      ctx.fillText(this.nodes.items.size <= 16 ? name : short, x + s.pad, y + s.font);
      let gx = x + s.pad;
      const gy = y + s.font + 4;
      box.islands.forEach((island, k) => {
        const cols = box.cols[k];
        if (k > 0) {  // a thin line between NVLink islands
          ctx.fillStyle = '#9ca3af';
          ctx.fillRect(gx - 2 * s.gap, gy, Math.max(1, s.gap), Math.ceil(island.length / cols) * (s.cell + s.gap));
        }
        island.forEach((gpu, g) => {
          const cx = gx + (g % cols) * (s.cell + s.gap);
          const cy = gy + Math.floor(g / cols) * (s.cell + s.gap);
          const held = byGpu.get(`${name}/${gpu.index}`) || [];
          const util = this.utilisation.get(gpu.uuid);
          total += 1;
          const used = Math.min(1, held.reduce((a, h) => a + (h.mig ? 1 / Math.max(1, (gpu.migInstances || []).length) : h.share), 0));
          allocated += used;
          if (util !== undefined) busy += util / 100;
          const match = !query || nodeMatch || held.some((h) =>
            [h.holder.label, h.holder.team, h.holder.queue, h.pod].some((t) => t.toLowerCase().includes(query)));
          if (query && match) matches += 1;
          ctx.globalAlpha = match ? 1 : 0.15;
          this.drawGpu(ctx, cx, cy, s.cell, gpu, held, util, legend);
          ctx.globalAlpha = 1;
          this.cells.push({ x: cx, y: cy, size: s.cell, node: name, gpu, held, util });
        });
        gx += cols * (s.cell + s.gap) + 3 * s.gap;
      });
    }
    this.drawLegend(legend);
    this.controls.querySelector('.matches').textContent = query ? `${matches} GPU(s) match` : '';
    const pct = (v) => (total ? `${Math.round((100 * v) / total)} %` : '-');
    this.summary.innerHTML = '';
    for (const [label, value] of [['nodes', this.nodes.items.size], ['GPUs', total],
      ['allocated', `${+allocated.toFixed(1)} (${pct(allocated)})`], ['busy', `${busy.toFixed(1)} (${pct(busy)})`]]) {
      const d = document.createElement('div');
      d.innerHTML = '<b></b><span class="muted"></span>';
      d.querySelector('b').textContent = value;
      d.querySelector('span').textContent = label;
      this.summary.appendChild(d);
    }
  }

  // One GPU: grey when free; each holder's part (its share, or its MIG instance's slice) pale in
  // its colour; measured utilisation filled from the bottom.
  drawGpu(ctx, x, y, size, gpu, held, util, legend) {
    ctx.fillStyle = '#e5e7eb';
    ctx.fillRect(x, y, size, size);
    const instances = gpu.migInstances || [];
    let offset = 0;
    for (const h of held) {
      const key = this.keyOf(h.holder);
      const entry = legend.get(key) || { gpus: 0, href: this.colourBy.value === 'holder' ? h.holder.href : null };
      let from = offset;
      let part = Math.min(1 - offset, h.share);
      if (h.mig && instances.length) {
        const at = Math.max(0, instances.findIndex((m) => m.uuid === h.mig));
        from = at / instances.length;
        part = 1 / instances.length;
      } else {
        offset += part;
      }
      entry.gpus += part;
      legend.set(key, entry);
      ctx.fillStyle = colourOf(key);
      const alpha = ctx.globalAlpha;
      ctx.globalAlpha = alpha * 0.4;
      ctx.fillRect(x + Math.round(from * size), y, Math.max(1, Math.round(part * size)), size);
      ctx.globalAlpha = alpha;
      if (util !== undefined) {
        const level = Math.round((size * util) / 100);
        ctx.fillRect(x + Math.round(from * size), y + size - level, Math.max(1, Math.round(part * size)), level);
      } else {
        ctx.fillRect(x + Math.round(from * size), y, Math.max(1, Math.round(part * size)), size);
      }
    }
    if (!held.length && util) {
      ctx.fillStyle = '#6b7280';  // use nobody was allocated: a stray process
      const level = Math.round((size * util) / 100);
      ctx.fillRect(x, y + size - level, size, level);
    }
    if (instances.length > 1 && size >= 9) {  // the MIG instances' boundaries
      ctx.fillStyle = '#ffffff';
      for (let i = 1; i < instances.length; i++) ctx.fillRect(x + Math.round((i * size) / instances.length), y, 1, size);
    }
  }

  drawLegend(legend) {
    this.legend.innerHTML = '';
    const key = document.createElement('span');
    key.className = 'muted';
    key.textContent = 'grey: free; pale: allocated; solid from the bottom: measured utilisation; ' +
      'a GPU split in parts: fractional shares or MIG instances; | between GPUs: NVLink islands' +
      (this.prefix && this.nodes.items.size > 16 ? `; node names without "${this.prefix}"` : '');
    this.legend.appendChild(key);
    const top = [...legend.entries()].sort((a, b) => b[1].gpus - a[1].gpus);
    for (const [name, { gpus, href }] of top.slice(0, 12)) {
      const item = document.createElement(href ? 'a' : 'span');
      item.className = 'legend-item';
      if (href) item.href = href;
      item.innerHTML = '<i></i>';
      item.querySelector('i').style.background = colourOf(name);
      item.append(`${name} (${+gpus.toFixed(2)} GPU)`);
      this.legend.appendChild(item);
    }
    if (top.length > 12) this.legend.append(` and ${top.length - 12} more (search to find one)`);
  }

  cellAt(event) {
    const rect = this.canvas.getBoundingClientRect();
    const x = event.clientX - rect.left;
    const y = event.clientY - rect.top;
    return this.cells.find((c) => x >= c.x && x < c.x + c.size && y >= c.y && y < c.y + c.size);
  }

  hover(event) {
    const hit = this.cellAt(event);
    this.canvas.style.cursor = hit?.held.some((h) => h.holder.href) ? 'pointer' : 'default';
    if (!hit) { this.tooltip.hidden = true; return; }
    const holders = hit.held.map((h) => `${h.holder.label} (pod ${h.pod}, ${h.mig ? `MIG ${h.mig}` : `${h.share} GPU`}, team ${h.holder.team})`).join('\n') || 'free';
    const util = hit.util === undefined ? 'not measured' : `${hit.util} %`;
    const mig = (hit.gpu.migInstances || []).map((m) => m.profile).join(', ');
    this.tooltip.textContent = `${hit.node} GPU ${hit.gpu.index} ${hit.gpu.model} (NVLink island ${hit.gpu.nvlinkIsland || 0}` +
      `${mig ? `, MIG ${mig}` : ''})\n${holders}\nutilisation ${util}`;
    this.tooltip.style.left = `${Math.min(event.clientX + 12, window.innerWidth - 360)}px`;
    this.tooltip.style.top = `${event.clientY + 12}px`;
    this.tooltip.hidden = false;
  }

  open(event) {
    const hit = this.cellAt(event);
    const href = hit?.held.find((h) => h.holder.href)?.holder.href;
    if (href) location.hash = href;
  }

  destroy() {
    clearInterval(this.timer);
    window.removeEventListener('resize', this.onResize);
    for (const u of this.unsubscribe) u();
  }
}
