/**
 * probe --benchmark stops a variant at its first detection (issue 32): the host names, in
 * the guest's environment, the assertions the line's baseline passed; the guest's passes
 * end at the first of them that does not pass on the variant (the rest of the pass and its
 * fuzz are skipped), so a detected bug costs its guest only the inputs up to it.
 */
import type { AssertionResult } from '../assertion.js';

/** Comma-separated ids of the assertions the baseline passed (match or known). */
export const BENCHMARK_STOP_ENV = 'RDMA_INTEROP_BENCHMARK_STOP';

/** The environment entry for a baseline's passing ids. */
export function benchmarkStopEnv(passed: Iterable<string>): Record<string, string> {
  return { [BENCHMARK_STOP_ENV]: [...passed].join(',') };
}

/**
 * Whether a result ends the variant's run: it did not pass (and ran) where the baseline
 * passed. Undefined outside a benchmark variant (the environment names nothing).
 */
export function benchmarkStop(
  env: NodeJS.ProcessEnv = process.env,
): ((r: AssertionResult) => boolean) | undefined {
  const listed = env[BENCHMARK_STOP_ENV];
  if (listed === undefined || listed === '') return undefined;
  const passed = new Set(listed.split(','));
  return (r) =>
    r.verdict !== 'match' && r.verdict !== 'known' && r.verdict !== 'not-run' && passed.has(r.id);
}
