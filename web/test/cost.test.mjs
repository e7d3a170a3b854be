// The Cost page's data under Node's test runner: the cost endpoint's series as chart data, the
// table's rows and how amounts read (run by ctest as dashboard_js).
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { money, seriesData, tableRows, windows } from '../cost.js';

const report = {
  by: 'service', currency: 'USD',
  windowStart: '2026-03-04T00:00:00Z', windowEnd: '2026-03-04T02:30:00Z',
  lines: [{ name: 'llm', pods: 2, gpuHours: 5, gpuCost: 12.5, cpuCost: 0.1, memoryCost: 0.01,
    total: 12.61, hourlyRate: 5.04, tokens: 2000000, costPerMillionTokens: 6.305 }],
  total: { name: 'total', pods: 2, gpuHours: 5, gpuCost: 12.5, cpuCost: 0.1, memoryCost: 0.01,
    total: 12.61, hourlyRate: 5.04 },
  series: {
    step: 3600,
    starts: ['2026-03-04T00:00:00Z', '2026-03-04T01:00:00Z', '2026-03-04T02:00:00Z'],
    lines: [{ name: 'llm', cost: [5.04, 5.04, 2.53], tokens: [1e6, 1e6, 0],
      costPerMillionTokens: [5.04, 5.04, null] }],
  },
};

test('the series become chart data on the window\'s time range, in seconds', () => {
  const data = seriesData(report);
  assert.deepEqual(data.times, [1772582400, 1772586000, 1772589600]);
  assert.deepEqual(data.series.get('llm'), [5.04, 5.04, 2.53]);
  assert.equal(data.from, 1772582400);
  assert.equal(data.to, 1772591400);
  // Cost per million tokens, with no value for a step that served nothing.
  assert.deepEqual(seriesData(report, 'costPerMillionTokens').series.get('llm'), [5.04, 5.04, null]);
});

test('the table has each group, then the total, with tokens and cost per million tokens', () => {
  const rows = tableRows(report);
  assert.equal(rows.length, 2);
  assert.deepEqual(rows[0], ['llm', '2', '5.00', '12.50', '0.100', '0.0100', '12.61', '5.04',
    '2000000', '6.30']);
  assert.equal(rows[1][0], 'total');
  assert.equal(rows[1][9], '-');
});

test('small amounts keep three significant digits; every window has a step', () => {
  assert.equal(money(0.0013888), '0.00139');
  assert.equal(money(0), '0');
  assert.equal(money(undefined), '-');
  assert.equal(money(1234.5), '1234.50');
  assert.deepEqual(windows.map((w) => w.step), ['5m', '1h', '1d', '1d']);
});
