/**
 * The minimizer of a fuzz finding (issue 32: "a finding is minimized to the shortest
 * sequence that still shows it"). Two phases over a sequence of items (packets, steps):
 *   1. drop items, ddmin-style (Zeller and Hildebrandt, "Simplifying and Isolating
 *      Failure-Inducing Input", TSE 2002): remove chunks of n equal parts, n doubling up to
 *      the length, so the result is 1-minimal (no single item can go) unless the budget ran out;
 *   2. reduce each remaining item through the caller's `reduceItem` (fewer changed fields or
 *      bytes), taking the first candidate that still shows the finding, until none does.
 * The predicate is the oracle ("does this still show the finding, by the same oracle");
 * every call counts against `budget`. No randomness: the same input and predicate give the
 * same calls, result and trace.
 */

/** A minimizer misused: a budget that is not a non-negative integer, or an empty input. */
export class MinimizeError extends Error {
  override readonly name = 'MinimizeError';
}

export interface MinimizeOptions<T> {
  /** Predicate calls at most [200]. */
  readonly budget?: number;
  /** Smaller versions of an item, the most reduced first (none: phase 2 is skipped). */
  readonly reduceItem?: (item: T) => readonly T[];
}

/** One predicate call: which phase, the candidate's length, whether it still showed the finding. */
export interface MinimizeStep {
  readonly phase: 'drop' | 'reduce';
  readonly length: number;
  /** For 'reduce': the item's index. For 'drop': the first dropped index. */
  readonly index: number;
  readonly reproduced: boolean;
  /** The predicate threw (counted as not reproduced): its message. */
  readonly error?: string;
}

export interface MinimizeResult<T> {
  readonly minimal: readonly T[];
  readonly originalLength: number;
  readonly calls: number;
  /** The budget ran out before both phases finished: `minimal` is the best so far. */
  readonly exhausted: boolean;
  readonly trace: readonly MinimizeStep[];
}

const DEFAULT_BUDGET = 200;

class BudgetSpent {}

/** Reduces `input` (which shows the finding) while `stillShows` holds. */
export async function minimizeSequence<T>(
  input: readonly T[],
  stillShows: (candidate: readonly T[]) => Promise<boolean>,
  options: MinimizeOptions<T> = {},
): Promise<MinimizeResult<T>> {
  const budget = options.budget ?? DEFAULT_BUDGET;
  if (!Number.isSafeInteger(budget) || budget < 0)
    throw new MinimizeError(`budget must be a non-negative integer, not ${String(budget)}`);
  if (input.length === 0) throw new MinimizeError('nothing to minimize: the input is empty');
  const trace: MinimizeStep[] = [];
  let calls = 0;
  let best: readonly T[] = [...input];
  const check = async (
    candidate: readonly T[],
    phase: MinimizeStep['phase'],
    index: number,
  ): Promise<boolean> => {
    if (calls >= budget) throw new BudgetSpent();
    calls++;
    let reproduced = false;
    let error: string | undefined;
    try {
      reproduced = (await stillShows(candidate)) === true;
    } catch (e) {
      error = e instanceof Error ? e.message : String(e);
    }
    trace.push({
      phase,
      length: candidate.length,
      index,
      reproduced,
      ...(error === undefined ? {} : { error }),
    });
    return reproduced;
  };
  try {
    // Phase 1: ddmin over complements.
    let n = 2;
    while (best.length >= 2) {
      const size = Math.ceil(best.length / n);
      let reduced = false;
      for (let start = 0; start < best.length; start += size) {
        const complement = [...best.slice(0, start), ...best.slice(start + size)];
        if (complement.length === 0) continue;
        if (await check(complement, 'drop', start)) {
          best = complement;
          n = Math.max(n - 1, 2);
          reduced = true;
          break;
        }
      }
      if (reduced) continue;
      if (n >= best.length) break;
      n = Math.min(best.length, 2 * n);
    }
    // Phase 2: each item reduced through its candidates.
    const reduceItem = options.reduceItem;
    if (reduceItem !== undefined)
      for (let i = 0; i < best.length; i++) {
        let progress = true;
        while (progress) {
          progress = false;
          for (const smaller of reduceItem(best[i] as T)) {
            const candidate = best.map((x, j) => (j === i ? smaller : x));
            if (await check(candidate, 'reduce', i)) {
              best = candidate;
              progress = true;
              break;
            }
          }
        }
      }
  } catch (e) {
    if (!(e instanceof BudgetSpent)) throw e;
    return { minimal: best, originalLength: input.length, calls, exhausted: true, trace };
  }
  return { minimal: best, originalLength: input.length, calls, exhausted: false, trace };
}
