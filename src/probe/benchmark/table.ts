/** The benchmark's tables for docs/probe.md and the report, generated from its results. */
import { BENCHMARK_BUGS } from './bugs.js';
import type { BenchmarkDocument, BenchmarkRow } from './run.js';

/**
 * CI's bounded budget per kernel line and device: every assertion of the device, then this
 * many fuzz packets with this seed (test/host/interop/probe-kernels.test.ts, FUZZ_IN_CI).
 */
export const CI_BUDGET = { fuzz: 40, seed: 1 } as const;

function cost(r: BenchmarkRow): string {
  const run = r.guestSeconds === undefined ? '' : `run ${r.guestSeconds} s`;
  if (r.outcome !== 'detected') return run;
  const after = r.secondsToDetection === undefined ? '' : `, ${r.secondsToDetection} s`;
  const n = r.inputsToDetection ?? 0;
  return `${n} input${n === 1 ? '' : 's'}${after}; ${run}`;
}

/** One table over several runs (e.g. one per device), rows in run order. */
export function benchmarkTable(docs: readonly BenchmarkDocument[]): string {
  const rows = docs
    .flatMap((d) => d.rows)
    .map((r) => {
      const how =
        r.outcome === 'detected'
          ? `\`${r.by}\``
          : r.outcome === 'not applicable'
            ? "the fix is not in this line's source"
            : '';
      return `| ${r.title}${r.cve === undefined ? '' : ` (${r.cve})`} | ${r.line} | ${r.outcome} | ${how} | ${r.oracle ?? ''} | ${cost(r)} |`;
    });
  const alarms = docs.flatMap((doc) =>
    Object.entries(doc.falseAlarms).map(([at, list]) => {
      const line = doc.devices === undefined ? at : `${at} (${doc.devices.join(', ')})`;
      const took = doc.baselineSeconds?.[at];
      const run = took === undefined ? '' : `; baseline run ${took} s`;
      return `| false alarms on the unmodified modules | ${line} | ${list.length} | ${list.join('; ')} | | fuzz ${doc.fuzz} a device, seed ${doc.seed}${run} |`;
    }),
  );
  return [
    '| bug | line | detected? | by | oracle | inputs to detection, guest seconds after the variant loaded; variant run (boot included) |',
    '|---|---|---|---|---|---|',
    ...rows,
    ...alarms,
  ].join('\n');
}

/** Whether a run's budget is within CI's (the same seed, no more fuzz packets). */
export function withinCiBudget(doc: BenchmarkDocument): boolean {
  return doc.fuzz <= CI_BUDGET.fuzz && doc.seed === CI_BUDGET.seed;
}

/**
 * The issue's target per bug: detected within CI's bounded budget on at least one line.
 * Lines measured with a larger budget do not count; a bug never run says so.
 */
export function ciBudgetTable(docs: readonly BenchmarkDocument[]): string {
  const rows = BENCHMARK_BUGS.map((bug) => {
    const seen = docs.flatMap((d) =>
      d.rows.filter((r) => r.bug === bug.id).map((r) => ({ r, ci: withinCiBudget(d) })),
    );
    const ran = seen.filter(({ r }) => r.outcome === 'detected' || r.outcome === 'not detected');
    const caught = ran.filter(({ r, ci }) => ci && r.outcome === 'detected').map(({ r }) => r.line);
    const missed = ran.filter(({ r }) => r.outcome === 'not detected').map(({ r }) => r.line);
    const verdict = ran.length === 0 ? 'not measured' : caught.length > 0 ? 'yes' : 'no';
    return `| ${bug.title}${bug.cve === undefined ? '' : ` (${bug.cve})`} | ${verdict} | ${caught.join(', ')} | ${missed.join(', ')} |`;
  });
  return [
    `| bug | detected within CI's budget (the assertions + ${CI_BUDGET.fuzz} fuzz packets, seed ${CI_BUDGET.seed}) on a line? | detected on | not detected on |`,
    '|---|---|---|---|',
    ...rows,
  ].join('\n');
}

/** docs/probe.md's generated benchmark block: the target per bug, then every row. */
export function benchmarkDocs(docs: readonly BenchmarkDocument[]): string {
  return `${ciBudgetTable(docs)}\n\n${benchmarkTable(docs)}`;
}
