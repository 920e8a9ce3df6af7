/** Rejection of implausible perftest anchor runs (src/bench/perftest-plausibility.ts). */
import { describe, expect, it } from 'vitest';
import { implausibleLatency, implausibleRate } from '../../../src/bench/perftest-plausibility.js';
import { perftestColumns } from '../../../src/bench/verbs.js';

const latency = (row: string) =>
  perftestColumns(
    [
      ' #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]    t_stdev[usec]   99% percentile[usec]   99.9% percentile[usec] ',
      ` ${row}`,
    ].join('\n'),
  );

describe('perftest anchor plausibility', () => {
  it('accepts a consistent ib_write_lat line', () => {
    expect(
      implausibleLatency(
        latency(
          '2       1000          20.31          412.50       25.93          27.80        9.12            61.40                  300.2',
        ),
      ),
    ).toBeUndefined();
  });

  it("rejects a t_typical below the same run's t_min (the 0.02-ratio round)", () => {
    expect(
      implausibleLatency(
        latency(
          '2       1000          20.31          412.50       0.52          27.80        9.12            61.40                  300.2',
        ),
      ),
    ).toMatch(/t_typical 0.52 us is below the same run's t_min 20.31 us/);
  });

  it('rejects inf, a missing column and a p99 outside [t_typical, t_max]', () => {
    expect(
      implausibleLatency(
        latency(
          '2       1000          20.31          inf       25.93          27.80        9.12            61.40                  300.2',
        ),
      ),
    ).toMatch(/t_max is NaN/);
    expect(implausibleLatency(new Map([['t_min[usec]', 1]]))).toMatch(/t_typical is NaN/);
    expect(
      implausibleLatency(
        latency(
          '2       1000          20.31          412.50       25.93          27.80        9.12            21.00                  300.2',
        ),
      ),
    ).toMatch(/99% percentile 21 us/);
  });

  it('rejects a MsgRate that is not a positive number', () => {
    expect(implausibleRate(new Map([['MsgRate[Mpps]', 0.071234]]))).toBeUndefined();
    expect(implausibleRate(new Map([['MsgRate[Mpps]', 0]]))).toMatch(/MsgRate is 0/);
    expect(implausibleRate(new Map())).toMatch(/MsgRate is NaN/);
  });
});
