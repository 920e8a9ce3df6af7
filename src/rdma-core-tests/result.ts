/**
 * One rdma-core test's outcome on one device, as scripts/guest/rdma-core-tests.py writes
 * it: a JSON-lines file whose first line says where it ran (`{"environment": {kernel,
 * device, python, tests}}`) and whose every further line is one test (`id`, `outcome`,
 * `reason` for a skip, `message` for a failure, `seconds`). Parsing checks every line: a
 * runner that died half-way gives fewer tests than its header announced, and says so.
 */
import { RdmaInteropError } from '../errors.js';

/** unittest's outcomes as the runner names them. */
export const OUTCOMES = ['pass', 'fail', 'error', 'skip'] as const;
export type Outcome = (typeof OUTCOMES)[number];

/** One test on one device. */
export interface RdmaCoreTestResult {
  /** unittest's id: `tests.test_qp.QPTest.test_create_rc_qp`. */
  readonly id: string;
  readonly device: string;
  readonly outcome: Outcome;
  /** rdma-core's own skip reason (`unittest.SkipTest`'s text). */
  readonly reason?: string;
  /** A failure's or error's last traceback lines. */
  readonly message?: string;
  readonly seconds: number;
}

/** Where a device's tests ran (the runner's first line). */
export interface RunnerEnvironment {
  readonly kernel: string;
  readonly device: string;
  readonly python: string;
  /** How many tests the runner selected: fewer lines mean it stopped early. */
  readonly tests: number;
}

/** A device's results file. */
export interface RunnerOutput {
  readonly environment: RunnerEnvironment;
  readonly results: readonly RdmaCoreTestResult[];
  /** True when fewer tests than announced were written (the runner or the guest died). */
  readonly truncated: boolean;
}

/** rdma-core-tests' own failures: a results file that is not the runner's, bad input. */
export class RdmaCoreTestsError extends RdmaInteropError {
  override readonly name = 'RdmaCoreTestsError';
  readonly origin = 'interop';
  constructor(
    /** What failed: the file or argument. */
    readonly source: string,
    message: string,
  ) {
    super(`${source}: ${message}`);
  }
}

function isOutcome(v: unknown): v is Outcome {
  return typeof v === 'string' && (OUTCOMES as readonly string[]).includes(v);
}

/** Parses one device's results file (`source` names it in errors). */
export function parseRunnerOutput(source: string, text: string): RunnerOutput {
  if (typeof source !== 'string' || typeof text !== 'string')
    throw new RdmaCoreTestsError('rdma-core-tests', 'parseRunnerOutput takes two strings');
  const lines = text.split('\n').filter((l) => l.trim() !== '');
  const parsed = lines.map((line, i): Record<string, unknown> => {
    let v: unknown;
    try {
      v = JSON.parse(line);
    } catch {
      throw new RdmaCoreTestsError(source, `line ${i + 1} is not JSON`);
    }
    if (typeof v !== 'object' || v === null || Array.isArray(v))
      throw new RdmaCoreTestsError(source, `line ${i + 1} is not an object`);
    return v as Record<string, unknown>;
  });
  const head = parsed[0]?.environment as Record<string, unknown> | undefined;
  if (
    typeof head !== 'object' ||
    head === null ||
    typeof head.kernel !== 'string' ||
    typeof head.device !== 'string' ||
    typeof head.tests !== 'number'
  )
    throw new RdmaCoreTestsError(source, 'the first line is not the runner\'s {"environment"}');
  const environment: RunnerEnvironment = {
    kernel: head.kernel,
    device: head.device,
    python: typeof head.python === 'string' ? head.python : 'unknown',
    tests: head.tests,
  };
  const results = parsed.slice(1).map((r, i): RdmaCoreTestResult => {
    const at = `line ${i + 2}`;
    if (typeof r.id !== 'string' || r.id === '')
      throw new RdmaCoreTestsError(source, `${at} has no test id`);
    if (!isOutcome(r.outcome))
      throw new RdmaCoreTestsError(
        source,
        `${at}: outcome ${JSON.stringify(r.outcome)} is not one of ${OUTCOMES.join(', ')}`,
      );
    if (typeof r.seconds !== 'number' || !(r.seconds >= 0))
      throw new RdmaCoreTestsError(source, `${at} has no seconds`);
    return {
      id: r.id,
      device: environment.device,
      outcome: r.outcome,
      ...(typeof r.reason === 'string' ? { reason: r.reason } : {}),
      ...(typeof r.message === 'string' ? { message: r.message } : {}),
      seconds: r.seconds,
    };
  });
  return { environment, results, truncated: results.length < environment.tests };
}
