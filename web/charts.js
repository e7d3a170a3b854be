// Time-series charts with uPlot (vendored from npm at build time). A chart keeps the points
// sampled since the page opened (add), or shows a history given whole (show), with optional
// marks (a scale decision: a dashed line at its time); when uPlot is not embedded the latest
// values show as text.

let uPlotModule = null;
const loading = import('./vendor/uPlot.esm.js')
  .then((m) => { uPlotModule = m.default; })
  .catch(() => { uPlotModule = null; });

export class TimeChart {
  constructor(parent, title, unit, maxPoints = 360) {
    this.title = title;
    this.unit = unit;
    this.maxPoints = maxPoints;
    this.series = new Map();  // name -> array of values aligned with this.times
    this.times = [];
    this.box = document.createElement('div');
    this.box.className = 'chart';
    this.box.dataset.title = title;
    // How many samples carried a value (data-filled on the element: what tests look for).
    this.filled = 0;
    this.box.dataset.filled = '0';
    parent.appendChild(this.box);
    this.plot = null;
    this.marks = [];
  }

  // Replaces the chart's points: `times` (seconds) and `values` {series name: values aligned
  // with times, null where none}.
  // Samples before the first that any series has are left out (a job started an hour after
  // the server keeps no empty hour).
  async show(times, values) {
    await loading;
    const lists = Object.values(values);
    let first = times.findIndex((_, i) => lists.some((v) => v[i] !== null && v[i] !== undefined));
    if (first < 0) first = times.length;
    this.times = times.slice(first);
    this.series = new Map(Object.entries(values).map(([name, v]) => [name, v.slice(first)])
      .sort(([a], [b]) => a.localeCompare(b)));
    this.filled = times.filter((_, i) => [...this.series.values()].some((v) => v[i] !== null && v[i] !== undefined)).length;
    this.box.dataset.filled = String(this.filled);
    if (!this.series.size) {
      if (this.plot) this.plot.destroy();
      this.plot = null;
      this.plotNames = null;
      this.box.innerHTML = '<h4></h4><p class="muted">nothing recorded in this window</p>';
      this.box.querySelector('h4').textContent = this.title;
      return;
    }
    const latest = {};
    for (const [name, points] of this.series) latest[name] = points[points.length - 1];
    this.render(latest);
  }

  // Dashed vertical lines at `marks` [{time (seconds), text}], drawn with the next render.
  setMarks(marks) {
    this.marks = marks;
    this.box.dataset.marks = String(marks.length);
    if (this.plot) this.plot.redraw();
  }

  // Adds one sample per series at `time` (seconds); series absent from `values` get null.
  async add(time, values) {
    await loading;
    for (const name of Object.keys(values)) {
      if (!this.series.has(name)) this.series.set(name, this.times.map(() => null));
    }
    this.times.push(time);
    if (Object.values(values).some((v) => v !== null && v !== undefined)) {
      this.box.dataset.filled = String(++this.filled);
    }
    for (const [name, points] of this.series) points.push(values[name] ?? null);
    if (this.times.length > this.maxPoints) {
      this.times.shift();
      for (const points of this.series.values()) points.shift();
    }
    this.render(values);
  }

  render(latest) {
    const names = [...this.series.keys()];
    if (!uPlotModule) {
      this.box.textContent = `${this.title}: ` +
        names.map((n) => `${n} ${latest[n]?.toFixed?.(3) ?? '-'} ${this.unit}`).join(', ');
      return;
    }
    const data = [this.times, ...names.map((n) => this.series.get(n))];
    if (this.plot && this.plotNames === names.join('\n')) {
      this.plot.setData(data);
      return;
    }
    if (this.plot) this.plot.destroy();
    this.box.innerHTML = '';
    this.plotNames = names.join('\n');
    this.plot = new uPlotModule({
      title: this.title, width: 520, height: 220,
      series: [{}, ...names.map((n, i) => ({ label: n, stroke: `hsl(${(i * 67) % 360} 65% 45%)` }))],
      axes: [{}, { label: this.unit }],
      hooks: { draw: [(u) => this.drawMarks(u)] },
    }, data, this.box);
  }

  drawMarks(u) {
    const ctx = u.ctx;
    ctx.save();
    ctx.strokeStyle = '#9333ea';
    ctx.setLineDash([4, 3]);
    for (const mark of this.marks) {
      const x = u.valToPos(mark.time, 'x', true);
      if (x < u.bbox.left || x > u.bbox.left + u.bbox.width) continue;
      ctx.beginPath();
      ctx.moveTo(x, u.bbox.top);
      ctx.lineTo(x, u.bbox.top + u.bbox.height);
      ctx.stroke();
    }
    ctx.restore();
  }
}

// A chart of whole series known at once (not sampled while the page is open): `times` (seconds)
// and one array of values per named series, over a fixed time range, so that a window of a day
// reads in hours and a month in days even when few steps hold values. The element carries
// data-series (the names, comma-separated) and data-points (steps with a value), what tests look
// for; without uPlot it shows each series' sum as text.
export class SeriesChart {
  constructor(parent, title, unit) {
    this.title = title;
    this.unit = unit;
    this.box = document.createElement('div');
    this.box.className = 'chart';
    this.box.dataset.title = title;
    parent.appendChild(this.box);
    this.plot = null;
  }

  // Draws `series` (Map name -> values aligned with `times`, null for no value) over
  // [from, to] (seconds); a value is drawn as a point and joined to its neighbours.
  async set(times, series, from, to) {
    await loading;
    const names = [...series.keys()];
    this.box.dataset.series = names.join(',');
    this.box.dataset.points = String([...series.values()].flat().filter((v) => v !== null).length);
    if (this.plot) this.plot.destroy();
    this.plot = null;
    this.box.innerHTML = '';
    if (!uPlotModule) {
      this.box.textContent = `${this.title}: ` + names.map((n) =>
        `${n} ${series.get(n).reduce((a, v) => a + (v ?? 0), 0).toFixed(2)} ${this.unit}`).join(', ');
      return;
    }
    this.plot = new uPlotModule({
      title: this.title, width: 560, height: 240,
      scales: { x: { time: true, range: [from, to] } },
      series: [{}, ...names.map((n, i) => ({
        label: n, stroke: `hsl(${(i * 67) % 360} 65% 45%)`, points: { show: true, size: 6 },
        spanGaps: false,
      }))],
      axes: [{}, { label: this.unit }],
    }, [times, ...names.map((n) => series.get(n))], this.box);
  }
}
