/**
 * The one judge (issue 31): every runner (the suite, the link and the faulty wire, the
 * RoCE and the iWARP tester) compares the device's observation with the engine's, asks
 * the records that hold there and scope the result which differences they explain, and
 * gets its verdict here, by one rule:
 *
 * - no difference and no stale record: `match`;
 * - every difference explained and no stale record: `known`;
 * - otherwise `fail` on a recorded device, `finding` where no record covers the provider
 *   and kernel (the suite only; the tester always judges against its records).
 *
 * Stale: a record that holds and scopes the result, whose explained values did not occur.
 * It fails the run whatever else happened, so a record that stops happening is reported
 * by every runner alike.
 */
import {
  appliesIn,
  type BehaviourRecord,
  coversScenario,
  type Environment,
  explainsField,
  namesField,
} from './record.js';
import type { Verdict } from './verdict.js';

/** What a comparison found, in the counts the verdict needs. */
export interface Judged {
  /** Differences between the device and the engine. */
  readonly differences: number;
  /** Differences no record explains. */
  readonly unexplained: number;
  /** Records in scope whose explained values did not occur. */
  readonly stale: number;
  /** The records know this device (provider and kernel) at all: else a difference is a finding. */
  readonly recorded: boolean;
}

/** The verdict of one judged result. */
export function verdictOf(j: Judged): Extract<Verdict, 'match' | 'known' | 'finding' | 'fail'> {
  if (j.unexplained === 0 && j.stale === 0) return j.differences > 0 ? 'known' : 'match';
  return j.recorded ? 'fail' : 'finding';
}

/** The records that hold in `env` and scope the result `id`, in table order. */
export function recordsInScope(
  records: readonly BehaviourRecord[],
  id: string,
  env: Environment,
): BehaviourRecord[] {
  return records.filter((k) => appliesIn(k, env) && coversScenario(k, id));
}

/**
 * Field-glob records over flattened observations (`field` -> value): the records that
 * explain a difference, and the stale ones (a field a record names was observed with a
 * value it does not name; a record whose field was not observed at all is not stale).
 */
export function judgeFields(
  recorded: readonly BehaviourRecord[],
  differences: readonly { readonly field: string; readonly device: string }[],
  observed: Readonly<Record<string, string>>,
): { explaining: BehaviourRecord[]; stale: BehaviourRecord[] } {
  const explaining = recorded.filter((k) =>
    differences.some((d) => explainsField(k, d.field, d.device)),
  );
  const stale = recorded.filter(
    (k) =>
      !explaining.includes(k) &&
      Object.entries(observed).some(
        ([f, value]) => namesField(k, f) && !explainsField(k, f, value),
      ),
  );
  return { explaining, stale };
}

/** The tester's verdict: it always judges against its records, so a difference is never a finding. */
export function testerVerdictOf(j: Omit<Judged, 'recorded'>): 'match' | 'known' | 'fail' {
  const verdict = verdictOf({ ...j, recorded: true });
  return verdict === 'finding' ? 'fail' : verdict;
}
