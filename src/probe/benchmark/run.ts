/**
 * `probe --benchmark` (issue 32): per kernel line, the tester's assertions and a fixed fuzz
 * budget against the unmodified modules (the baseline: every result there that fails is a
 * false alarm) and against each module variant with one 2026 fix taken back out. A bug is
 * detected when its variant gives a result the baseline did not: an assertion that fails
 * or crashes where the baseline's passed, or a fuzz finding.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { AssertionResult } from '../assertion.js';
import type { FuzzSummary } from '../fuzz-loop.js';
import { foreignWords } from '../oracles/foreign-bytes.js';
import { kernelLogOracles } from '../oracles/kernel-log.js';
import { type ResourceCheck, resourceGrowth } from '../oracles/resource-count.js';
import { oracleNote, survivalOracles } from '../oracles/survival-oracles.js';
import { assertionPassed, type ProbeKernel } from '../probe-report.js';
import {
  BENCHMARK_BUGS,
  BENCHMARK_MODULE_ENV,
  type BenchmarkBug,
  benchmarkDevice,
} from './bugs.js';
import { benchmarkStopEnv } from './stop.js';
import type { Timeline } from './timeline.js';

export const BENCHMARK_SCHEMA = 'rdma-interop/benchmark@1';

/** One line's run of one module set, as probeKernelLine returns it, with its wall time. */
export interface ModuleRun {
  readonly kernel: ProbeKernel;
  readonly results: readonly AssertionResult[];
  readonly fuzz: readonly FuzzSummary[];
  readonly seconds: number;
  /** The resource-count oracle's counts around each pass (absent: not counted). */
  readonly resources?: readonly ResourceCheck[];
  /** When each result came, after the variant loaded (timeline.ts); absent: not stamped. */
  readonly timeline?: Timeline;
}

/** How a variant showed its bug, or that it did not. */
export interface BenchmarkRow {
  readonly bug: string;
  readonly title: string;
  readonly cve?: string;
  readonly line: string;
  /** not-applicable: the fix is not in the line's source (patches/reverted-2026/<line>/not-applicable.txt). */
  readonly outcome: 'detected' | 'not detected' | 'not applicable' | 'not built';
  /** The assertion or fuzz input that detected it. */
  readonly by?: string;
  readonly oracle?: string;
  /** The detecting result's note (what differed), cut to 400 characters. */
  readonly note?: string;
  /** The detecting assertion's expected and observed answers, as JSON cut to 1500 characters each. */
  readonly answers?: { readonly expected: string; readonly observed: string };
  /** Assertions run (in order) plus fuzz packets sent until the detecting one, inclusive. */
  readonly inputsToDetection?: number;
  /**
   * Guest seconds from the variant's loading to the detecting result; for a fuzz
   * detection, to the run's last line (an upper bound: the fuzz reports at its end).
   */
  readonly secondsToDetection?: number;
  /** The variant's whole guest run, boot included (results carry no per-assertion time). */
  readonly guestSeconds?: number;
}

export interface BenchmarkDocument {
  readonly schema: typeof BENCHMARK_SCHEMA;
  readonly fuzz: number;
  readonly seed: number;
  /** The devices probed (both when absent). */
  readonly devices?: readonly string[];
  readonly rows: readonly BenchmarkRow[];
  /** Per line: the baseline's results that did not pass, and its fuzz findings. */
  readonly falseAlarms: Readonly<Record<string, readonly string[]>>;
  /** Per line: the baseline's guest run in seconds, boot included. */
  readonly baselineSeconds?: Readonly<Record<string, number>>;
  /** Per line: the resource-count oracle's growth lists per pass of the baseline. */
  readonly baselineCounts?: Readonly<Record<string, readonly ResourceCheck[]>>;
}

/** A pass's growth judged here from its two counts (the guest's list is what it judged then). */
function grewOf(c: ResourceCheck): string[] {
  return resourceGrowth(c.before, c.after);
}

/** Why a result hurt: the oracle names (probe/oracles). */
export function oracleOf(r: AssertionResult): string {
  if (r.verdict === 'kernel-crash') {
    // The console's last lines say what the kernel reported before the guest died or hung.
    const tail = (r.observed as { consoleTail?: string } | null)?.consoleTail ?? '';
    return ['guest-up', ...kernelLogOracles(tail.split('\n'))].join(', ');
  }
  const fired = r.survival === undefined ? [] : survivalOracles(r.survival);
  const guards = (r.observed as { guardsIntact?: boolean } | null)?.guardsIntact === false;
  const all = [...(guards ? ['guard-words'] : []), ...fired];
  if (all.length > 0) return all.join(', ');
  // rxe's comparison carries the request and the region (roce-responder-run.ts names the
  // same oracle); siw's answers echo the tester's own headers in a Terminate, which the
  // engine's answer to a well-formed stream never holds: there the words prove nothing.
  return r.provider === 'rxe' && foreignWords(r.expected, r.observed).length > 0
    ? 'engine-expectation, kernel-memory'
    : 'engine-expectation';
}

/** A line's false alarms: every baseline result that did not pass, every fuzz finding. */
export function falseAlarmsOf(baseline: ModuleRun): string[] {
  return [
    ...baseline.results
      .filter((r) => !assertionPassed(r) && r.verdict !== 'not-run')
      .map((r) => oracleNote(`${r.id}: ${r.verdict}`, [oracleOf(r)])),
    ...baseline.fuzz.flatMap((f) =>
      f.findings.map((x) => `fuzz ${f.device} #${x.index}: ${x.why}`),
    ),
    ...(baseline.resources ?? [])
      .map((c) => ({ pass: c.pass, grew: grewOf(c) }))
      .filter((c) => c.grew.length > 0)
      .map((c) => `${c.pass}: ${c.grew.join(', ')} (oracle: resource-count)`),
  ];
}

/** The row of `bug` on `line` from its variant's run, judged against the baseline's. */
export function judgeVariant(
  bug: BenchmarkBug,
  line: string,
  baseline: ModuleRun,
  variant: ModuleRun,
): BenchmarkRow {
  const head = {
    bug: bug.id,
    title: bug.title,
    ...(bug.cve === undefined ? {} : { cve: bug.cve }),
    line,
    guestSeconds: Math.round(variant.seconds),
  };
  const passedBefore = new Set(baseline.results.filter(assertionPassed).map((r) => r.id));
  const results = variant.results.filter((r) => r.verdict !== 'not-run');
  const at = results.findIndex((r) => !assertionPassed(r) && passedBefore.has(r.id));
  const hit = results[at];
  const seconds = (s: number | undefined) => (s === undefined ? {} : { secondsToDetection: s });
  if (hit !== undefined)
    return {
      ...head,
      outcome: 'detected',
      by: hit.id,
      oracle: oracleOf(hit),
      ...(hit.note === undefined ? {} : { note: hit.note.slice(0, 400) }),
      ...(hit.verdict === 'kernel-crash'
        ? {}
        : {
            answers: {
              expected: JSON.stringify(hit.expected).slice(0, 1500),
              observed: JSON.stringify(hit.observed).slice(0, 1500),
            },
          }),
      inputsToDetection: at + 1,
      // A crash has no result line of its own: the guest's end is when it showed.
      ...seconds(variant.timeline?.results[hit.id] ?? variant.timeline?.end),
    };
  const device = benchmarkDevice(bug.driver) === 'rxe0' ? 'rxe_t' : 'siw0';
  const fuzz = variant.fuzz.find(
    (f) => (f.device === device || f.device === 'guest') && f.findings.length > 0,
  );
  const first = fuzz?.findings[0];
  if (fuzz !== undefined && first !== undefined)
    return {
      ...head,
      outcome: 'detected',
      by: `fuzz #${first.index} (${first.mutation}, seed ${first.seed})`,
      oracle: (first.oracles ?? []).join(', ') || 'fuzz',
      note: `${first.why}`.slice(0, 400),
      inputsToDetection: results.length + first.index + 1,
      ...seconds(variant.timeline?.end),
    };
  // A leak that logged nothing: counted after the assertions and the fuzz, so every input
  // of the pass came before it.
  const leak = (variant.resources ?? []).map(grewOf).find((g) => g.length > 0);
  if (leak !== undefined)
    return {
      ...head,
      outcome: 'detected',
      by: `the pass's counts (${leak.join(', ')})`,
      oracle: 'resource-count',
      inputsToDetection: results.length + variant.fuzz.reduce((n, f) => n + f.packets, 0),
      ...seconds(variant.timeline?.end),
    };
  return { ...head, outcome: 'not detected' };
}

/**
 * A variant's guest limit: twice the line's baseline run (which ran every assertion of both
 * devices and both fuzz budgets), at least 180 s. A variant still running then is hung: on
 * 7.3, rxe-mr-check-range's general protection fault in rxe_mr_copy (a work item) left the
 * tester waiting until the guest's 900 s limit.
 */
export function variantTimeout(baselineSeconds: number): number {
  return Math.max(180, Math.ceil(2 * baselineSeconds));
}

/** Where the set-up left a line's variant of `bug` (scripts/setup/benchmark-modules.sh). */
export function variantModulePath(cache: string, kver: string, bug: BenchmarkBug): string {
  return join(cache, 'guest', kver, 'benchmark', `${bug.id}.ko`);
}

/** Whether the line's source has the fix at all (a patch was written for it). */
export function revertPatchExists(root: string, line: string, bug: BenchmarkBug): boolean {
  return existsSync(join(root, 'patches', 'reverted-2026', line, `${bug.id}.patch`));
}

/** What a benchmark needs from its caller: one guest run per module set. */
export interface BenchmarkRunner {
  /** The kernel version directory of a line's guest (`6.1.0-57-amd64`), if set up. */
  kver(line: string): string | undefined;
  /**
   * Runs the probe on `line` for `device` (all devices when undefined), with `env`; a guest
   * still running after `timeoutSeconds` (when given) is stopped (a hang: a crash record).
   */
  run(
    line: string,
    device: 'rxe0' | 'siw0' | undefined,
    env: Readonly<Record<string, string>>,
    timeoutSeconds?: number,
  ): Promise<ModuleRun>;
  readonly cache: string;
  readonly root: string;
  progress(line: string): void;
}

/** The benchmark over `lines` (every bug, every line). */
export async function runBenchmark(
  lines: readonly string[],
  fuzz: number,
  seed: number,
  runner: BenchmarkRunner,
  bugs: readonly BenchmarkBug[] = BENCHMARK_BUGS,
  devices?: readonly string[],
): Promise<BenchmarkDocument> {
  const rows: BenchmarkRow[] = [];
  const falseAlarms: Record<string, string[]> = {};
  const baselineSeconds: Record<string, number> = {};
  const baselineCounts: Record<string, readonly ResourceCheck[]> = {};
  for (const line of lines) {
    const kver = runner.kver(line);
    runner.progress(`benchmark ${line}: the unmodified modules (baseline)`);
    const baseline = await runner.run(line, undefined, {});
    falseAlarms[line] = falseAlarmsOf(baseline);
    baselineSeconds[line] = Math.round(baseline.seconds);
    if (baseline.resources !== undefined) baselineCounts[line] = baseline.resources;
    const stop = benchmarkStopEnv(baseline.results.filter(assertionPassed).map((r) => r.id));
    for (const bug of bugs) {
      const head = {
        bug: bug.id,
        title: bug.title,
        ...(bug.cve === undefined ? {} : { cve: bug.cve }),
        line,
      };
      if (!revertPatchExists(runner.root, line, bug)) {
        rows.push({ ...head, outcome: 'not applicable' });
        continue;
      }
      if (kver === undefined || !existsSync(variantModulePath(runner.cache, kver, bug))) {
        rows.push({ ...head, outcome: 'not built' });
        continue;
      }
      runner.progress(`benchmark ${line}: ${bug.id}`);
      const variant = await runner.run(
        line,
        benchmarkDevice(bug.driver),
        {
          [BENCHMARK_MODULE_ENV]: `${bug.driver}:${bug.id}`,
          ...stop,
        },
        variantTimeout(baseline.seconds),
      );
      const row = judgeVariant(bug, line, baseline, variant);
      runner.progress(
        `benchmark ${line}: ${bug.id} ${row.outcome}${row.by === undefined ? '' : ` by ${row.by} (${row.oracle})`}`,
      );
      rows.push(row);
    }
  }
  return {
    schema: BENCHMARK_SCHEMA,
    fuzz,
    seed,
    ...(devices === undefined ? {} : { devices }),
    rows,
    falseAlarms,
    baselineSeconds,
    ...(Object.keys(baselineCounts).length === 0 ? {} : { baselineCounts }),
  };
}
