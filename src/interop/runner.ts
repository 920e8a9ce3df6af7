/** Runs scenarios through the engine and the kernel and judges each comparison. */
import { requireArray } from '../arguments.js';
import { ArgumentError } from '../errors.js';
import { judgeFields, verdictOf } from '../judge/judge.js';
import { tryParseField } from '../judge/observation.js';
import {
  appliesIn,
  type BehaviourRecord,
  coversScenario,
  type Environment,
  explainsField,
  hasRecordsFor,
  requireEnvironment,
} from '../judge/record.js';
import { KNOWN_BEHAVIOUR } from '../judge/records/index.js';
import type { Verdict } from '../judge/verdict.js';
import { requireOutcome, requireScenario } from './arguments.js';
import { compareOutcomes, type FieldDifference } from './compare.js';
import { formatValue } from './compare-format.js';
import { expectedOutcome } from './expected.js';
import { runOnKernel } from './kernel/execute.js';
import type { LinkPair } from './link/sides.js';
import { ABSENT, initialBuffer, type Outcome, type Scenario, wordAt } from './scenario.js';

/** One difference and what explains it. */
export interface JudgedDifference extends FieldDifference {
  /** The recorded behaviour it is, or `consequence` of a recorded refused post. */
  readonly explainedBy: BehaviourRecord | 'consequence' | undefined;
}

export interface ScenarioResult {
  readonly scenario: Scenario;
  readonly verdict: Verdict;
  readonly engine: Outcome;
  readonly kernel: Outcome | undefined;
  readonly differences: readonly JudgedDifference[];
  /** Recorded behaviour that explains differences. */
  readonly findings: readonly BehaviourRecord[];
  /** Recorded behaviour for this scenario that did not occur. */
  readonly stale: readonly BehaviourRecord[];
  readonly error?: string;
  readonly seconds: number;
  /** A link result: the sides it ran on (link/sides.ts), requester and responder. */
  readonly pair?: LinkPair;
  /** Verdict `not-applicable`: what the device lacks (requirements.ts), e.g. `atomics`. */
  readonly notApplicable?: readonly string[];
}

/**
 * Passed: matched, or differed only as recorded (or, without `strict`, on an unrecorded
 * device), or not applicable on the device (reported with what it lacks, not run).
 */
export function passed(verdict: Verdict, strict = false): boolean {
  return (
    verdict === 'match' ||
    verdict === 'known' ||
    verdict === 'not-applicable' ||
    (verdict === 'finding' && !strict)
  );
}

/**
 * A field a refused post explains: no completion arrived (absent / `none`), nothing was
 * captured, memory kept its initial value.
 */
function consequenceOfRefusal(scenario: Scenario, d: FieldDifference): boolean {
  if (d.kernel === ABSENT || d.kernel === 'none' || d.kernel === '') return true;
  const key = tryParseField(d.field);
  return (
    key?.kind === 'memory' && d.kernel === formatValue(wordAt(initialBuffer(scenario), key.offset))
  );
}

export function judge(
  scenario: Scenario,
  engine: Outcome,
  kernel: Outcome,
  env: Environment,
  known: readonly BehaviourRecord[] = KNOWN_BEHAVIOUR,
  /** The responder's side where it differs (a link pair): its records use it (`role`). */
  responderEnv: Environment = env,
): Pick<ScenarioResult, 'verdict' | 'differences' | 'findings' | 'stale'> {
  requireScenario(scenario);
  requireOutcome('engine', engine);
  requireOutcome('kernel', kernel);
  requireEnvironment(env);
  requireArray('interop', 'known', known);
  requireEnvironment(responderEnv, 'responderEnv');
  const raw = compareOutcomes(engine, kernel);
  // A link pair: each record holds on its own side, and some only against a given peer.
  const sideOf = (k: BehaviourRecord) => (k.role === 'responder' ? responderEnv : env);
  const peerOf = (k: BehaviourRecord) => (k.role === 'responder' ? env : responderEnv);
  const recorded = known.filter(
    (k) =>
      appliesIn(k, sideOf(k)) &&
      (k.peer === undefined || k.peer === peerOf(k).provider) &&
      coversScenario(k, scenario.id),
  );
  // Stale (judge/judge.ts): the field a record names was observed, with a value the record
  // does not name. (A record whose field was not observed at all, e.g. bad_wr after an
  // accepted post, is not stale; nor is one whose pattern names the engine's value too,
  // which records a behaviour that shows only when timing allows it: link-siw-mpa-crc's
  // active request.)
  const { explaining: findings, stale } = judgeFields(
    recorded,
    raw.map((d) => ({ field: d.field, device: d.kernel })),
    kernel.fields,
  );
  const refusal = findings.some((k) => k.nothingHappened === true);
  const differences: JudgedDifference[] = raw.map((d) => ({
    ...d,
    explainedBy:
      findings.find((k) => explainsField(k, d.field, d.kernel)) ??
      (refusal && consequenceOfRefusal(scenario, d) ? 'consequence' : undefined),
  }));
  const unexplained = differences.filter((d) => d.explainedBy === undefined);
  const verdict: Verdict = verdictOf({
    differences: differences.length,
    unexplained: unexplained.length,
    stale: stale.length,
    recorded: hasRecordsFor(env, known) || hasRecordsFor(responderEnv, known),
  });
  return { verdict, differences, findings, stale };
}

/** How a scenario runs on its device: kernel/execute.ts where the devices are. */
export type Executor = (scenario: Scenario) => Promise<Outcome>;

/**
 * The exit status of a run of `results`: 0 when every result passed (`strict`: findings
 * fail), else 1.
 */
export function runExitStatus(results: readonly ScenarioResult[], strict = false): 0 | 1 {
  return results.every((r) => passed(r.verdict, strict)) ? 0 : 1;
}

/** Runs one scenario on both sides (`execute`: the device side; tests give their own). */
export async function runScenario(
  scenario: Scenario,
  env: Environment,
  execute: Executor = runOnKernel,
): Promise<ScenarioResult> {
  requireScenario(scenario);
  requireEnvironment(env);
  if (typeof execute !== 'function')
    throw new ArgumentError('interop', 'execute', 'not a function');
  const started = performance.now();
  const engine = expectedOutcome(scenario);
  try {
    const kernel = await execute(scenario);
    return {
      scenario,
      engine,
      kernel,
      ...judge(scenario, engine, kernel, env),
      seconds: (performance.now() - started) / 1000,
    };
  } catch (error) {
    return {
      scenario,
      verdict: 'not-run',
      engine,
      kernel: undefined,
      differences: [],
      findings: [],
      stale: [],
      error: error instanceof Error ? `${error.name}: ${error.message}` : String(error),
      seconds: (performance.now() - started) / 1000,
    };
  }
}

/** Runs scenarios one after the other (rxe misbehaves under concurrency). */
export async function runScenarios(
  scenarios: readonly Scenario[],
  environmentOf: (scenario: Scenario) => Environment,
  onResult: (result: ScenarioResult, index: number) => void = () => {},
  onStart: (scenario: Scenario, index: number) => void = () => {},
  execute: Executor = runOnKernel,
): Promise<ScenarioResult[]> {
  // Every argument checked before the first scenario runs.
  requireArray('interop', 'scenarios', scenarios).forEach((s, i) => {
    requireScenario(s, `scenarios[${i}]`);
  });
  for (const [name, fn] of [
    ['environmentOf', environmentOf],
    ['onResult', onResult],
    ['onStart', onStart],
    ['execute', execute],
  ] as const) {
    if (typeof fn !== 'function') throw new ArgumentError('interop', name, 'not a function');
  }
  const results: ScenarioResult[] = [];
  for (const [index, scenario] of scenarios.entries()) {
    onStart(scenario, index);
    const result = await runScenario(scenario, environmentOf(scenario), execute);
    results.push(result);
    onResult(result, index);
  }
  return results;
}
