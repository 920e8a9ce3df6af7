/** Runs scenarios through the engine and the kernel and judges each comparison. */
import {
  COMPARED_FIELDS,
  type ComparedField,
  compareOutcomes,
  type FieldDifference,
  formatValue,
} from './compare.js';
import { expectedOutcome } from './expected.js';
import { runOnKernel } from './kernel/execute.js';
import { KNOWN_BEHAVIOUR, type KnownBehaviour } from './known-behaviour.js';
import type { Outcome, Scenario } from './scenario.js';

/**
 * `match`: every field equal. `known`: the differences are all recorded provider
 * behaviour. `divergence`: an unrecorded difference, or a recorded one that did not
 * happen. `error`: the scenario could not run (connection, resources).
 */
export type Verdict = 'match' | 'known' | 'divergence' | 'error';

export interface ScenarioResult {
  readonly scenario: Scenario;
  readonly verdict: Verdict;
  readonly engine: Outcome;
  readonly kernel: Outcome | undefined;
  readonly differences: readonly FieldDifference[];
  /** Recorded behaviour that explains differences. */
  readonly findings: readonly KnownBehaviour[];
  /** Recorded behaviour for this scenario that did not occur. */
  readonly stale: readonly KnownBehaviour[];
  readonly error?: string;
  readonly seconds: number;
}

/**
 * Fields that a refused post leaves absent (nothing reached the wire): everything but the
 * post result itself, the memory (checked against its initial value) and the QP state.
 */
const ABSENT_AFTER_REFUSED_POST: readonly ComparedField[] = COMPARED_FIELDS.filter(
  (f) => f !== 'post' && f !== 'memoryAfter' && f !== 'requesterQpState',
);

export function judge(
  scenario: Scenario,
  engine: Outcome,
  kernel: Outcome,
  known: readonly KnownBehaviour[] = KNOWN_BEHAVIOUR,
): Pick<ScenarioResult, 'verdict' | 'differences' | 'findings' | 'stale'> {
  const differences = compareOutcomes(engine, kernel);
  const recorded = known.filter((k) => k.scenarios.includes(scenario.id));
  const findings = recorded.filter((k) =>
    differences.some((d) => d.field === k.field && d.kernel === k.kernel),
  );
  const stale = recorded.filter((k) => !findings.includes(k));
  const refusedPost = findings.some((k) => k.field === 'post');
  const explained = (d: FieldDifference): boolean =>
    findings.some((k) => k.field === d.field && k.kernel === d.kernel) ||
    (refusedPost &&
      ((ABSENT_AFTER_REFUSED_POST.includes(d.field) &&
        (d.kernel === formatValue(undefined) || d.kernel === '')) ||
        (d.field === 'memoryAfter' && d.kernel === formatValue(scenario.initial))));
  const unexplained = differences.filter((d) => !explained(d));
  const verdict: Verdict =
    unexplained.length > 0 || stale.length > 0
      ? 'divergence'
      : differences.length > 0
        ? 'known'
        : 'match';
  return { verdict, differences, findings, stale };
}

/** Runs one scenario on both sides. */
export async function runScenario(scenario: Scenario): Promise<ScenarioResult> {
  const started = performance.now();
  const engine = expectedOutcome(scenario);
  try {
    const kernel = await runOnKernel(scenario);
    return {
      scenario,
      engine,
      kernel,
      ...judge(scenario, engine, kernel),
      seconds: (performance.now() - started) / 1000,
    };
  } catch (error) {
    return {
      scenario,
      verdict: 'error',
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
  onResult: (result: ScenarioResult, index: number) => void = () => {},
): Promise<ScenarioResult[]> {
  const results: ScenarioResult[] = [];
  for (const [index, scenario] of scenarios.entries()) {
    const result = await runScenario(scenario);
    results.push(result);
    onResult(result, index);
  }
  return results;
}
