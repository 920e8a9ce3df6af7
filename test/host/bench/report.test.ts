/** The shared benchmark output (src/bench/report.ts): percentiles and target verdicts. */
import { describe, expect, it } from 'vitest';
import { figure, percentile } from '../../../src/bench/report.js';

describe('benchmark figures', () => {
  it('percentiles are nearest-rank over the samples, whatever their order', () => {
    const samples = Array.from({ length: 100 }, (_, i) => 100 - i); // 100 .. 1
    expect(percentile(samples, 50)).toBe(50);
    expect(percentile(samples, 99)).toBe(99);
    expect(percentile(samples, 100)).toBe(100);
    expect(percentile([7], 99)).toBe(7);
    expect(percentile([], 50)).toBeNaN();
  });

  it('a figure carries its ratio and PASS/FAIL against its target', () => {
    const base = { suite: 's', name: 'n', unit: 'us', anchorName: 'a' };
    const lat = (value: number) =>
      figure({ ...base, value, anchor: 20, target: { op: '<=', ratio: 1.5 } });
    expect(lat(30).ratio).toBe(1.5);
    expect(lat(30).pass).toBe(true);
    expect(lat(31).pass).toBe(false);
    const rate = figure({ ...base, value: 0.9, anchor: 1, target: { op: '>=', ratio: 1 } });
    expect(rate.pass).toBe(false);
    const faster = figure({ ...base, value: 1, anchor: 1, target: { op: '<', ratio: 1 } });
    expect(faster.pass).toBe(false);
    // An anchor that was not measured gives no verdict rather than a false PASS.
    expect(
      figure({ ...base, value: 1, anchor: Number.NaN, target: { op: '<', ratio: 1 } }).pass,
    ).toBeUndefined();
    expect(figure({ ...base, value: 1, anchor: 2 }).pass).toBeUndefined();
  });
});
