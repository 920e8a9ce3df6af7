/**
 * Whether a perftest result line is internally consistent, so that a garbage figure (under
 * TCG perftest's cycle-counter calibration sometimes goes wrong: one round reported a
 * t_typical that made the ratio 0.02) is rejected and its round re-run instead of deciding
 * a ratio. The floor comes from the same run: a median can be neither below the run's
 * minimum nor above its 99th percentile or maximum (perftest's print_report_lat computes
 * all of them from the same sorted deltas).
 */

/** The first column whose header starts with `prefix` (NaN when absent). */
export function column(cols: ReadonlyMap<string, number>, prefix: string): number {
  for (const [name, v] of cols) if (name.startsWith(prefix)) return v;
  return Number.NaN;
}

/**
 * Why a latency result (ib_*_lat columns) is implausible, or undefined when it is not:
 * every figure must be a positive finite number and t_min <= t_typical <= 99% <= t_max.
 */
export function implausibleLatency(cols: ReadonlyMap<string, number>): string | undefined {
  const min = column(cols, 't_min');
  const typical = column(cols, 't_typical');
  const max = column(cols, 't_max');
  const p99 = column(cols, '99%');
  for (const [name, v] of [
    ['t_min', min],
    ['t_typical', typical],
    ['t_max', max],
  ] as const)
    if (!(Number.isFinite(v) && v > 0)) return `${name} is ${v}, not a positive number`;
  if (typical < min) return `t_typical ${typical} us is below the same run's t_min ${min} us`;
  if (typical > max) return `t_typical ${typical} us is above the same run's t_max ${max} us`;
  if (Number.isFinite(p99) && (p99 < typical || p99 > max))
    return `99% percentile ${p99} us is outside [t_typical ${typical}, t_max ${max}] us`;
  return undefined;
}

/** Why a rate result (ib_*_bw columns) is implausible: MsgRate must be positive and finite. */
export function implausibleRate(cols: ReadonlyMap<string, number>): string | undefined {
  const rate = column(cols, 'MsgRate');
  if (!(Number.isFinite(rate) && rate > 0)) return `MsgRate is ${rate}, not a positive number`;
  return undefined;
}
