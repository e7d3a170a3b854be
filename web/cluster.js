// The Cluster page: every GPU of every node as one cell of a canvas (8,000 cells draw in a few
// milliseconds), coloured by the workload that holds it, with measured utilisation as the
// cell's fill level; allocation against use summed above it.

import { getText, parseMetrics } from './api.js';

const cell = 9;
const gap = 1;
const nodeGap = 4;

function colourOf(name) {
  let hash = 0;
  for (let i = 0; i < name.length; i++) hash = (hash * 31 + name.charCodeAt(i)) | 0;
  return `hsl(${Math.abs(hash) % 360} 65% 55%)`;
}

function holderOf(pod) {
  const owner = pod.spec.owner || {};
  return owner.name ? `${owner.kind}/${owner.name}` : `Pod/${pod.metadata.name}`;
}

export class ClusterView {
  constructor(parent, nodes, pods) {
    this.nodes = nodes;
    this.pods = pods;
    this.utilisation = new Map();  // GPU UUID -> percent
    this.summary = document.createElement('div');
    this.summary.className = 'summary';
    this.canvas = document.createElement('canvas');
    this.canvas.className = 'gpus';
    this.tooltip = document.createElement('div');
    this.tooltip.className = 'tooltip';
    this.tooltip.hidden = true;
    parent.append(this.summary, this.canvas, this.tooltip);
    this.cells = [];
    this.canvas.addEventListener('mousemove', (e) => this.hover(e));
    this.canvas.addEventListener('mouseleave', () => { this.tooltip.hidden = true; });
    this.unsubscribe = [nodes.subscribe(() => this.draw()), pods.subscribe(() => this.draw())];
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

  holders() {
    const byGpu = new Map();
    for (const pod of this.pods.items.values()) {
      const phase = pod.status?.phase;
      if (!pod.spec?.nodeName || phase === 'Succeeded' || phase === 'Failed') continue;
      for (const gpu of pod.spec.assignedGpus || []) {
        const key = `${pod.spec.nodeName}/${gpu.index}`;
        const list = byGpu.get(key) || [];
        list.push({ holder: holderOf(pod), pod: pod.metadata.name, share: gpu.share || '1' });
        byGpu.set(key, list);
      }
    }
    return byGpu;
  }

  draw() {
    const nodes = [...this.nodes.items.values()].sort((a, b) =>
      a.metadata.name.localeCompare(b.metadata.name, undefined, { numeric: true }));
    const byGpu = this.holders();
    const perRow = 4;  // GPUs per row inside a node block
    const width = Math.max(600, this.canvas.parentElement.clientWidth - 4);
    const blockWidth = perRow * (cell + gap) + nodeGap;
    const maxGpus = Math.max(1, ...nodes.map((n) => (n.status?.gpus || []).length));
    const blockHeight = Math.ceil(maxGpus / perRow) * (cell + gap) + nodeGap;
    const blocksPerLine = Math.max(1, Math.floor(width / blockWidth));
    const height = Math.ceil(nodes.length / blocksPerLine) * blockHeight + nodeGap;
    const ratio = window.devicePixelRatio || 1;
    this.canvas.width = width * ratio;
    this.canvas.height = height * ratio;
    this.canvas.style.width = `${width}px`;
    this.canvas.style.height = `${height}px`;
    const ctx = this.canvas.getContext('2d');
    ctx.scale(ratio, ratio);
    ctx.clearRect(0, 0, width, height);
    this.cells = [];
    let total = 0; let allocated = 0; let busy = 0;
    nodes.forEach((node, n) => {
      const x0 = (n % blocksPerLine) * blockWidth + nodeGap;
      const y0 = Math.floor(n / blocksPerLine) * blockHeight + nodeGap;
      (node.status?.gpus || []).forEach((gpu, g) => {
        const x = x0 + (g % perRow) * (cell + gap);
        const y = y0 + Math.floor(g / perRow) * (cell + gap);
        const held = byGpu.get(`${node.metadata.name}/${gpu.index}`) || [];
        const util = this.utilisation.get(gpu.uuid);
        total += 1;
        if (held.length) allocated += 1;
        if (util !== undefined) busy += util / 100;
        ctx.fillStyle = '#e5e7eb';
        ctx.fillRect(x, y, cell, cell);
        if (held.length) {
          ctx.fillStyle = colourOf(held[0].holder);
          ctx.globalAlpha = 0.35;
          ctx.fillRect(x, y, cell, cell);
          ctx.globalAlpha = 1;
          const level = util === undefined ? cell : Math.round((cell * util) / 100);
          ctx.fillRect(x, y + cell - level, cell, level);
        } else if (util) {
          ctx.fillStyle = '#9ca3af';  // use nobody was allocated: a stray process
          const level = Math.round((cell * util) / 100);
          ctx.fillRect(x, y + cell - level, cell, level);
        }
        this.cells.push({ x, y, node: node.metadata.name, gpu, held, util });
      });
    });
    const pct = (v) => (total ? `${Math.round((100 * v) / total)} %` : '-');
    this.summary.innerHTML = '';
    for (const [label, value] of [['nodes', nodes.length], ['GPUs', total],
      ['allocated', `${allocated} (${pct(allocated)})`], ['busy', `${busy.toFixed(1)} (${pct(busy)})`]]) {
      const d = document.createElement('div');
      d.innerHTML = `<b></b><span class="muted"></span>`;
      d.querySelector('b').textContent = value;
      d.querySelector('span').textContent = label;
      this.summary.appendChild(d);
    }
  }

  hover(event) {
    const rect = this.canvas.getBoundingClientRect();
    const x = event.clientX - rect.left;
    const y = event.clientY - rect.top;
    const hit = this.cells.find((c) => x >= c.x && x < c.x + cell && y >= c.y && y < c.y + cell);
    if (!hit) { this.tooltip.hidden = true; return; }
    const holders = hit.held.map((h) => `${h.holder} (${h.pod}, ${h.share} GPU)`).join('\n') || 'free';
    const util = hit.util === undefined ? 'not measured' : `${hit.util} %`;
    this.tooltip.textContent = `${hit.node} GPU ${hit.gpu.index} ${hit.gpu.model}\n${holders}\nutilisation ${util}`;
    this.tooltip.style.left = `${event.clientX + 12}px`;
    this.tooltip.style.top = `${event.clientY + 12}px`;
    this.tooltip.hidden = false;
  }

  destroy() {
    clearInterval(this.timer);
    for (const u of this.unsubscribe) u();
  }
}
