/**
 * Rounds of a figure and its anchor measured back to back: the round with the median
 * ratio and the spread of the ratios.
 */

/** One round: ours and its anchor back to back, in the order given. */
export async function pair<T>(
  anchorFirst: boolean,
  ours: () => T | Promise<T>,
  measureAnchor: () => Promise<Map<string, number>>,
  ratioOf: (ours: T, cols: Map<string, number>) => number,
): Promise<Round<T>> {
  let value: T;
  let cols: Map<string, number>;
  if (anchorFirst) {
    cols = await measureAnchor();
    value = await ours();
  } else {
    value = await ours();
    cols = await measureAnchor();
  }
  return { ours: value, cols, ratio: ratioOf(value, cols) };
}

/** The smallest and largest finite per-round ratio. */
export function spreadOf<T>(rounds: readonly Round<T>[]): readonly [number, number] {
  const finite = rounds.map((r) => r.ratio).filter(Number.isFinite);
  return finite.length === 0
    ? [Number.NaN, Number.NaN]
    : [Math.min(...finite), Math.max(...finite)];
}

/** One figure measured with its anchor right after it. */
export interface Round<T> {
  readonly ours: T;
  readonly cols: Map<string, number>;
  readonly ratio: number;
}

/** The round with the median ratio (NaN ratios last). */
export function medianRound<T>(rounds: readonly Round<T>[]): Round<T> {
  const key = (r: Round<T>) => (Number.isFinite(r.ratio) ? r.ratio : Number.POSITIVE_INFINITY);
  const sorted = [...rounds].sort((x, y) => key(x) - key(y));
  const mid = sorted[Math.floor((sorted.length - 1) / 2)];
  if (mid === undefined) throw new Error('no round measured');
  return mid;
}
