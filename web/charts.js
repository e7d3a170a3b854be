// Time-series charts with uPlot (vendored from npm at build time). Each chart keeps the points
// sampled since the page opened; when uPlot is not embedded the latest values show as text.

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
    if (this.plot && this.plot.series.length === names.length + 1) {
      this.plot.setData(data);
      return;
    }
    if (this.plot) this.plot.destroy();
    this.box.innerHTML = '';
    this.plot = new uPlotModule({
      title: this.title, width: 520, height: 220,
      series: [{}, ...names.map((n, i) => ({ label: n, stroke: `hsl(${(i * 67) % 360} 65% 45%)` }))],
      axes: [{}, { label: this.unit }],
    }, data, this.box);
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
