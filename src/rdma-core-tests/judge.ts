/**
 * The judgement of rdma-core's own tests (issue 36), with the one record model
 * (judge/record.ts `BehaviourRecord`): a pass is a pass and a skip keeps rdma-core's own
 * reason; a failure or error that a record in scope explains (its `scope` the test id, its
 * `observed` the `outcome` and, where it says, the `message`) is `known`; one no record
 * explains is a `finding`. A record in scope whose test then passed is `stale` and fails
 * the run, as in every other runner, so the table cannot outlive the behaviour.
 */
import { appliesIn, type BehaviourRecord, coversScenario, explainsField } from '../judge/record.js';
import { RDMA_CORE_TEST_RECORDS } from './records.js';
import type { Outcome, RdmaCoreTestResult } from './result.js';

/** Our verdict on one test. */
export const TEST_VERDICTS = ['pass', 'skip', 'known', 'finding', 'stale'] as const;
export type TestVerdict = (typeof TEST_VERDICTS)[number];

/** Where a device's tests ran, for the records' ranges. */
export interface TestEnvironment {
  /** `rxe` or `siw` (the device's provider). */
  readonly provider: string;
  /** `uname -r` of the guest. */
  readonly kernel: string;
  /** The rdma-core whose tests, pyverbs and libraries ran. */
  readonly rdmaCore: string;
}

export interface JudgedTest extends RdmaCoreTestResult {
  readonly provider: string;
  readonly kernel: string;
  readonly verdict: TestVerdict;
  /** The record that explains a failure, or that said it would fail (stale). */
  readonly explainedBy?: string;
}

/** The provider behind a device name of the guest (rxe0, siw0). */
export function providerOf(device: string): string {
  return device.replace(/\d+$/, '');
}

function failed(outcome: Outcome): boolean {
  return outcome === 'fail' || outcome === 'error';
}

/** The record that explains `result` in `env`, if any (table order). */
export function explainingRecord(
  result: RdmaCoreTestResult,
  env: TestEnvironment,
  records: readonly BehaviourRecord[] = RDMA_CORE_TEST_RECORDS,
): BehaviourRecord | undefined {
  return records.find(
    (k) =>
      appliesIn(k, env) &&
      coversScenario(k, result.id) &&
      explainsField(k, 'outcome', result.outcome) &&
      (k.observed?.message === undefined || explainsField(k, 'message', result.message ?? '')),
  );
}

/** Our verdict on each result. */
export function judgeTests(
  results: readonly RdmaCoreTestResult[],
  env: TestEnvironment,
  records: readonly BehaviourRecord[] = RDMA_CORE_TEST_RECORDS,
): JudgedTest[] {
  return results.map((r): JudgedTest => {
    const base = { ...r, provider: env.provider, kernel: env.kernel };
    if (failed(r.outcome)) {
      const k = explainingRecord(r, env, records);
      return k === undefined
        ? { ...base, verdict: 'finding' }
        : { ...base, verdict: 'known', explainedBy: k.id };
    }
    const stale = records.find(
      (k) => appliesIn(k, env) && coversScenario(k, r.id) && r.outcome === 'pass',
    );
    if (stale !== undefined) return { ...base, verdict: 'stale', explainedBy: stale.id };
    return { ...base, verdict: r.outcome === 'skip' ? 'skip' : 'pass' };
  });
}

/** True when the verdict does not fail the run. */
export function testPassed(verdict: TestVerdict): boolean {
  return verdict === 'pass' || verdict === 'skip' || verdict === 'known';
}
