// The Cost page: spend over time by team, project, queue and service from the cost endpoint's
// series (the durable ledger: a deleted job's spend stays), each on a time axis in the unit the
// window asks for (minutes for an hour, hours for a day, days for a week or a month), a table of
// totals by the dimension chosen, and the services' cost per million tokens.

import { getJson } from './api.js';
import { SeriesChart } from './charts.js';

// The windows the page offers and the step each is drawn in.
export const windows = [
  { window: '1h', step: '5m', label: 'last hour' },
  { window: '24h', step: '1h', label: 'last 24 hours' },
  { window: '7d', step: '1d', label: 'last 7 days' },
  { window: '30d', step: '1d', label: 'last 30 days' },
];

// The dimensions charted over time (the table may also show job and pod).
export const chartedDimensions = ['team', 'project', 'queue', 'service'];

// An amount (money, GPU-hours) as people read it: two decimals for a unit or more, three
// significant digits below (a few seconds of a GPU is not "0.00").
export function money(value) {
  if (value === undefined || value === null) return '-';
  if (value === 0) return '0';
  return Math.abs(value) >= 1 ? value.toFixed(2) : value.toPrecision(3);
}

// The cost endpoint's series as chart data: step starts in seconds, and per group its spend per
// step (or, with `field` costPerMillionTokens, that per step, null where a step served nothing).
export function seriesData(report, field = 'cost') {
  const times = report.series.starts.map((s) => Date.parse(s) / 1000);
  const series = new Map();
  for (const line of report.series.lines) {
    if (line[field]) series.set(line.name, line[field]);
  }
  return { times, series, from: Date.parse(report.windowStart) / 1000,
    to: Date.parse(report.windowEnd) / 1000 };
}

// The table's rows: each group's totals, then the total.
export function tableRows(report) {
  return [...report.lines, report.total].map((line) => [
    line.name, String(line.pods), money(line.gpuHours), money(line.gpuCost), money(line.cpuCost),
    money(line.memoryCost), money(line.total), money(line.hourlyRate),
    line.tokens === undefined ? '-' : String(Math.round(line.tokens)),
    line.costPerMillionTokens === undefined ? '-' : money(line.costPerMillionTokens),
  ]);
}

const costPath = '/apis/strata.dev/v1alpha1/cost';

export function costPage(parent) {
  const heading = document.createElement('h2');
  heading.textContent = 'Cost';
  parent.appendChild(heading);
  const controls = document.createElement('div');
  controls.innerHTML = `window <select id="cost-window">${windows.map((w) =>
    `<option value="${w.window}">${w.label}</option>`).join('')}</select>
    table by <select id="cost-by"><option>team</option><option>project</option>
    <option>queue</option><option>job</option><option>service</option><option>pod</option></select>`;
  controls.querySelector('#cost-window').value = '24h';
  parent.appendChild(controls);
  const note = document.createElement('p');
  note.className = 'muted';
  parent.appendChild(note);
  const table = document.createElement('table');
  table.className = 'cost-totals';
  parent.appendChild(table);
  const charts = document.createElement('div');
  charts.className = 'charts';
  parent.appendChild(charts);
  const spend = new Map(chartedDimensions.map((d) => [d, new SeriesChart(charts, `spend by ${d}`, '')]));
  const perMillion = new SeriesChart(charts, 'cost per million tokens, by service', '');

  const refresh = async () => {
    const choice = windows.find((w) => w.window === controls.querySelector('#cost-window').value);
    const by = controls.querySelector('#cost-by').value;
    const query = (dimension) => `${costPath}?by=${dimension}&window=${choice.window}&step=${choice.step}`;
    try {
      const reports = new Map(await Promise.all(chartedDimensions.map(async (d) => [d, await getJson(query(d))])));
      const totals = reports.get(by) || await getJson(query(by));
      table.innerHTML = '<tr><th>' + by + '</th><th>pods</th><th>GPU-hours</th><th>GPU</th><th>CPU</th>' +
        '<th>memory</th><th>total</th><th>per hour now</th><th>tokens</th><th>per 1M tokens</th></tr>';
      for (const row of tableRows(totals)) {
        const tr = document.createElement('tr');
        tr.dataset.name = row[0];
        for (const value of row) {
          const td = document.createElement('td');
          td.textContent = value;
          tr.appendChild(td);
        }
        table.appendChild(tr);
      }
      const unit = totals.currency;
      note.textContent = `${unit}, ${choice.step} steps from ${totals.windowStart} to ` +
        `${totals.windowEnd}; requests x price x time held, kept after pods are deleted`;
      for (const [dimension, chart] of spend) {
        const data = seriesData(reports.get(dimension));
        chart.unit = `${unit} per ${choice.step}`;
        await chart.set(data.times, data.series, data.from, data.to);
      }
      const tokens = seriesData(reports.get('service'), 'costPerMillionTokens');
      perMillion.unit = `${unit} / 1M tokens`;
      await perMillion.set(tokens.times, tokens.series, tokens.from, tokens.to);
      // Shown once a service served tokens in the window.
      perMillion.box.hidden = tokens.series.size === 0;
    } catch (error) {
      note.textContent = String(error.message || error);
    }
  };
  controls.addEventListener('change', refresh);
  refresh();
  const timer = setInterval(refresh, 30000);
  return () => clearInterval(timer);
}
