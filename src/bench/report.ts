/**
 * What every benchmark suite reports: figures, each a ratio against an anchor measured in
 * the same run, with latency percentiles (median, p99) as perftest prints them and an
 * optional target ratio that the output marks PASS or FAIL. `bench --report <file>` writes
 * the figures the suites recorded (src/cli/commands/bench.ts).
 */

/** A target on `ratio` (ours / anchor): at most (latency) or at least (rates). */
export interface Target {
  readonly op: '<=' | '>=' | '<';
  readonly ratio: number;
}

export interface Figure {
  readonly suite: string;
  readonly name: string;
  readonly unit: string;
  /** The typical value (median for latencies). */
  readonly value: number;
  readonly p99?: number;
  readonly anchorName: string;
  readonly anchor: number;
  readonly anchorP99?: number;
  /** value / anchor. */
  readonly ratio: number;
  /**
   * Measured in this many alternating rounds (ours and the anchor back to back, the order
   * swapped every round): `ratio` is the median of the per-round ratios, value and anchor
   * are those of the median round.
   */
  readonly rounds?: number;
  /** The smallest and largest per-round ratio. */
  readonly ratioSpread?: readonly [number, number];
  readonly target?: Target;
  /** undefined without a target or when a figure is not a number. */
  readonly pass?: boolean;
}

const recorded: Figure[] = [];

/** The p-th percentile (0-100) of `samples` (nearest rank). */
export function percentile(samples: ArrayLike<number>, p: number): number {
  const s = Array.from(samples).sort((x, y) => x - y);
  if (s.length === 0) return Number.NaN;
  const rank = Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1));
  return s[rank] ?? Number.NaN;
}

/** A figure with its ratio and verdict computed. */
export function figure(f: Omit<Figure, 'ratio' | 'pass'>): Figure {
  const ratio = f.value / f.anchor;
  let pass: boolean | undefined;
  if (f.target !== undefined && Number.isFinite(ratio)) {
    const t = f.target;
    pass = t.op === '<=' ? ratio <= t.ratio : t.op === '<' ? ratio < t.ratio : ratio >= t.ratio;
  }
  return { ...f, ratio, ...(pass === undefined ? {} : { pass }) };
}

const fmt = (v: number | undefined, digits = 3): string =>
  v === undefined ? '' : Number.isFinite(v) ? v.toFixed(digits) : String(v);
/** A ratio: two decimals, or two significant digits below 0.1 (0.0052, not 0.01). */
const fmtRatio = (v: number): string =>
  Number.isFinite(v) && v !== 0 && Math.abs(v) < 0.1 ? v.toPrecision(2) : fmt(v, 2);

/** Prints figures as a table (value, p99, anchor, anchor p99, ratio, target) and records them. */
export function printFigures(title: string, figures: readonly Figure[]): void {
  recorded.push(...figures);
  const rows = figures.map((f) => [
    `${f.name} (${f.unit})`,
    fmt(f.value),
    fmt(f.p99),
    f.anchorName,
    fmt(f.anchor),
    fmt(f.anchorP99),
    f.ratioSpread === undefined
      ? fmtRatio(f.ratio)
      : `${fmtRatio(f.ratio)} [${fmtRatio(f.ratioSpread[0])}-${fmtRatio(f.ratioSpread[1])}]`,
    f.target === undefined
      ? ''
      : `${f.target.op} ${f.target.ratio} ${f.pass === undefined ? 'N/A' : f.pass ? 'PASS' : 'FAIL'}`,
  ]);
  const header = ['figure', 'median', 'p99', 'anchor', 'median', 'p99', 'ratio', 'target'];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) =>
    `  ${cells.map((c, i) => (i === 0 || i === 3 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0))).join('  ')}\n`;
  process.stdout.write(`${title}\n`);
  process.stdout.write(line(header));
  for (const r of rows) process.stdout.write(line(r));
}

/** Every figure printed so far in this process. */
export function recordedFigures(): readonly Figure[] {
  return recorded;
}
