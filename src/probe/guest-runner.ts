/**
 * Runs assertions in the guest and appends one JSON line per result to a file in the
 * shared directory as soon as each finishes, with a `starting <id>` line before it, so the
 * host can tell which assertion a guest that died was running (issue 21).
 */
import { appendFileSync } from 'node:fs';
import picomatch from 'picomatch';
import type { Assertion, AssertionResult, ProbePass } from './assertion.js';

/** An assertion with the code that runs it on one device. */
export interface RunnableAssertion extends Assertion {
  run(): Promise<AssertionResult>;
}

/** One line of the results file. */
export type RunnerLine =
  | {
      readonly kind: 'starting';
      readonly id: string;
      readonly at: string;
      /** The probe pass (rxe, or a siw build), when `probe` runs them. */
      readonly variant?: ProbePass;
    }
  | { readonly kind: 'result'; readonly result: AssertionResult };

export interface GuestRunOptions {
  /** The results file (JSON lines), appended to. */
  readonly resultsFile?: string;
  /** Globs over assertion ids; all when omitted. */
  readonly select?: readonly string[];
  /** The probe pass the `starting` lines name (probe-host.ts resumes after a crash there). */
  readonly variant?: ProbePass;
  /** Called after each result (progress). */
  readonly onResult?: (result: AssertionResult) => void;
  /** Ends the run after a result it returns true for (probe --benchmark, benchmark/stop.ts). */
  readonly stopWhen?: (result: AssertionResult) => boolean;
}

/** Runs `assertions` in order; a thrown error becomes a `fail` with the message as note. */
export async function runAssertions(
  assertions: readonly RunnableAssertion[],
  options: GuestRunOptions = {},
): Promise<AssertionResult[]> {
  const matches =
    options.select === undefined || options.select.length === 0
      ? () => true
      : picomatch([...options.select]);
  const write = (line: RunnerLine): void => {
    if (options.resultsFile !== undefined)
      appendFileSync(options.resultsFile, `${JSON.stringify(line, jsonBigint)}\n`);
  };
  const results: AssertionResult[] = [];
  for (const assertion of assertions) {
    if (!matches(assertion.id)) continue;
    write({
      kind: 'starting',
      id: assertion.id,
      at: new Date().toISOString(),
      ...(options.variant === undefined ? {} : { variant: options.variant }),
    });
    let result: AssertionResult;
    try {
      result = await assertion.run();
    } catch (error) {
      result = {
        id: assertion.id,
        spec: assertion.spec,
        device: 'unknown',
        provider: assertion.provider,
        kernel: 'unknown',
        topology: assertion.testerRole,
        verdict: 'fail',
        expected: null,
        observed: null,
        note: `the assertion threw: ${error instanceof Error ? error.message : String(error)}`,
      };
    }
    write({ kind: 'result', result });
    options.onResult?.(result);
    results.push(result);
    if (options.stopWhen?.(result) === true) break;
  }
  return results;
}

/** JSON replacer: bigint as a decimal string (results carry 64-bit values). */
export function jsonBigint(_key: string, value: unknown): unknown {
  return typeof value === 'bigint' ? value.toString() : value;
}
