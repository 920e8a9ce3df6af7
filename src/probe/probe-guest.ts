/**
 * `probe` where the devices are (root in the guest): runs the selected assertions in
 * passes, the RoCE tester against rxe first, then siw0 on each siw variant asked for, and
 * the fuzz, appending JSON lines to the results file. siw0 is switched between the stock
 * and the patched module between variants, and each pass runs in a child process of its
 * own: the patched libsiw must be loaded from a process's start, and siw0 cannot be
 * reloaded while a process holds a verbs context on it (run-siw.ts says why).
 */

import { spawnSync } from 'node:child_process';
import { appendFileSync, existsSync, mkdirSync } from 'node:fs';
import { release, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import picomatch from 'picomatch';
import {
  BLOCKS_ENV,
  type BlockSnapshot,
  dumpBlocks,
  loadCoverageModules,
  readSnapshots,
} from '../coverage/blocks.js';
import {
  COVERAGE_ENV,
  type CoverageKind,
  type CoveredModule,
  FUNCTIONS_FILE_ENV,
  type FunctionRecording,
  markCoveragePhase,
  startFunctionCoverage,
} from '../coverage/ftrace.js';
import { guidedFuzzRxe } from '../coverage/guided-roce.js';
import { guidedFuzzSiw } from '../coverage/guided-siw.js';
import { type Shard, selectShard } from '../judge/shard.js';
import {
  loadedSiwVariant,
  PATCHED_PASS_ENV,
  patchedLibraryPath,
  switchSiwModule,
} from '../runtime/siw-module.js';
import type { SiwVariant } from '../runtime/siw-variant-env.js';
import type { AssertionResult, ProbePass } from './assertion.js';
import { loadBenchmarkModule } from './benchmark/guest-module.js';
import { benchmarkStop } from './benchmark/stop.js';
import type { FuzzLoopOptions, FuzzSummary } from './fuzz-loop.js';
import { runAssertions } from './guest-runner.js';
import { IWARP_ASSERTIONS } from './iwarp-assertions.js';
import { fuzzSiw } from './iwarp-fuzz.js';
import { IWARP_RESPONDER_ASSERTIONS } from './iwarp-responder-peer.js';
import { type AnyIwarpAssertion, type ResultLine, runIwarpAssertions } from './iwarp-run.js';
import { startResourceCheck } from './oracles/resource-count.js';
import { fuzzRxe } from './roce-fuzz.js';
import { ROCE_TESTBED } from './roce-testbed.js';
import { openRoceTester, ROCE_ASSERTIONS } from './roce-tester.js';
import { siwPcapName, startSiwCapture } from './siw-capture.js';

export const SIW_CHOICES = ['stock', 'rfc7306', 'both'] as const;
export type SiwChoice = (typeof SIW_CHOICES)[number];

/** An assertion of either tester. */
export type ProbeAssertion = AnyIwarpAssertion | (typeof ROCE_ASSERTIONS)[number];

/** siw0's assertions, in run order. */
const SIW_ASSERTIONS: readonly AnyIwarpAssertion[] = [
  ...IWARP_ASSERTIONS,
  ...IWARP_RESPONDER_ASSERTIONS,
];

/** Every assertion `probe` knows, in run order (rxe's, then siw's). */
export const ALL_ASSERTIONS: readonly ProbeAssertion[] = [...ROCE_ASSERTIONS, ...SIW_ASSERTIONS];

/** The device a provider's assertions are listed under (`--device`). */
export const PROBE_DEVICE_OF = { rxe: 'rxe0', siw: 'siw0' } as const;

/** What a `probe` run selects. */
export interface ProbeSelection {
  readonly devices?: readonly string[];
  readonly assertion?: string;
  readonly siw: SiwChoice;
  /** `--shard k/n`: that part of the pairs, in run order (judge/shard.ts). */
  readonly shard?: Shard;
}

/** The variants `--siw` names, in run order. */
export function variantsOf(choice: SiwChoice): SiwVariant[] {
  return choice === 'both' ? ['stock', 'rfc7306'] : [choice];
}

/** The passes a selection runs, in order: rxe, then each siw variant. */
export function passesOf(selection: ProbeSelection): ProbePass[] {
  const wants = (device: string) =>
    selection.devices === undefined || selection.devices.includes(device);
  return [
    ...(wants(PROBE_DEVICE_OF.rxe) ? (['rxe'] as const) : []),
    ...(wants(PROBE_DEVICE_OF.siw) ? variantsOf(selection.siw) : []),
  ];
}

/** A selected assertion and the pass it runs in. */
export interface SelectedAssertion {
  readonly assertion: ProbeAssertion;
  readonly variant: ProbePass;
}

/** The (assertion, pass) pairs the selection runs, in order. */
export function selectAssertions(selection: ProbeSelection): SelectedAssertion[] {
  const match = selection.assertion === undefined ? () => true : picomatch(selection.assertion);
  const pairs = passesOf(selection).flatMap((variant) =>
    ALL_ASSERTIONS.filter(
      (a) =>
        match(a.id) &&
        (variant === 'rxe'
          ? a.provider === 'rxe'
          : a.provider === 'siw' &&
            (a.siwVariants === undefined || a.siwVariants.includes(variant))),
    ).map((assertion) => ({ assertion, variant })),
  );
  return selectShard(pairs, selection.shard);
}

/** `variant/id`: where a run resumes after a crash (`--after`). */
export const resumeKey = (variant: ProbePass, id: string): string => `${variant}/${id}`;

/** Where the guest writes the pcaps of a run: beside its results file. */
export const pcapDirOf = (results: string): string => join(dirname(results), 'pcaps');

/** Options of the in-guest run. */
export interface GuestProbeOptions extends ProbeSelection {
  /** The JSON-lines file results are appended to. */
  readonly results: string;
  /** Skip every pair up to and including this `variant/id` (resuming after a crash). */
  readonly after?: string;
  readonly fuzz?: number;
  readonly seed: number;
  /** `--coverage`: record the functions of rxe, siw and the core each phase entered. */
  readonly coverage?: CoverageKind;
  /** `--guided <n>`: that many coverage-guided sequences to rxe (coverage/guided-roce.ts). */
  readonly guided?: number;
  /** `--minimize <calls>`: replays per fuzz finding for its minimizing (probe/minimize.ts). */
  readonly minimize?: number;
  /** The CLI's own path and the args that select (for the child processes). */
  readonly childArgs: readonly string[];
}

const CHILD_ENV = 'RDMA_INTEROP_PROBE_VARIANT';

/** The fuzz loops' minimizing option from `--minimize`. */
const minimizeOptions = (o: GuestProbeOptions): FuzzLoopOptions =>
  o.minimize === undefined ? {} : { minimizeBudget: o.minimize };

function notRun(pairs: readonly SelectedAssertion[], note: string): AssertionResult[] {
  return pairs.map(({ assertion, variant }) => ({
    id: assertion.id,
    spec: assertion.spec,
    device: 'siw0',
    provider: 'siw',
    ...(variant === 'rxe' ? {} : { siwVariant: variant }),
    kernel: release(),
    topology: assertion.testerRole,
    verdict: 'not-run',
    expected: null,
    observed: null,
    note,
  }));
}

/**
 * `--guided` without `--coverage` (CI's form): the campaign's feedback is the function
 * coverage of `modules` recorded for the guided phase alone, so nothing else of the run is
 * traced (the tester and the one-field fuzz run untraced, the filter holds one module).
 * Resolves with the function that stops it and appends its coverage line (a no-op when the
 * kernel has no function tracer: the campaign then keeps nothing, and says so).
 */
function startGuidedFeedback(
  options: GuestProbeOptions,
  modules: readonly CoveredModule[],
  onLine: (line: string) => void,
): () => Promise<void> {
  if (options.coverage !== undefined) return async () => {};
  let recording: FunctionRecording;
  try {
    // In the guest's own /tmp, not the 9p share (ftrace.ts readOutput says why).
    recording = startFunctionCoverage(
      join(tmpdir(), `rdma-interop-guided-${modules.join('-')}-${process.pid}.txt`),
      { modules, phase: 'guided' },
    );
  } catch (error) {
    onLine(
      `probe: no function feedback for the guided fuzz (${error instanceof Error ? error.message : String(error)})`,
    );
    return async () => {};
  }
  return async () => {
    const line: ResultLine = { kind: 'coverage', coverage: await recording.stop() };
    appendFileSync(options.results, `${JSON.stringify(line)}\n`);
  };
}

/**
 * One guided campaign in its own `guided` phase, on its module's function feedback: its
 * summary appended as a `fuzz` line; a campaign that throws becomes a `harness` finding, so
 * that the run fails with the reason instead of losing the summary and the pass's resource
 * counts. Resolves with the findings it adds.
 */
async function runGuidedPhase(
  options: GuestProbeOptions,
  module: CoveredModule,
  device: string,
  onLine: (line: string) => void,
  campaign: () => Promise<FuzzSummary>,
): Promise<number> {
  markCoveragePhase('guided');
  const stopFeedback = startGuidedFeedback(options, [module], onLine);
  let summary: FuzzSummary;
  try {
    summary = await campaign();
  } catch (error) {
    summary = harnessFailure(device, options, error);
    onLine(`probe: guided fuzz of ${device} failed: ${summary.findings[0]?.why ?? ''}`);
  } finally {
    await stopFeedback();
  }
  const line: ResultLine = { kind: 'fuzz', summary };
  appendFileSync(options.results, `${JSON.stringify(line)}\n`);
  return summary.findings.length;
}

/** A campaign that threw, as a summary with one `harness` finding carrying the error. */
function harnessFailure(device: string, options: GuestProbeOptions, error: unknown): FuzzSummary {
  const why =
    error instanceof Error
      ? (error.stack ?? error.message).split('\n').slice(0, 6).join(' | ')
      : String(error);
  return {
    kernel: release(),
    device,
    seed: options.seed,
    packets: 0,
    batches: 0,
    findings: [
      {
        seed: options.seed,
        index: 0,
        mutation: 'the campaign',
        why: `the campaign failed: ${why}`,
        oracles: ['harness'],
        bytes: '',
        minimized: '',
      },
    ],
  };
}

/**
 * The RoCE pass: the RoCE tester's testbed (veth, namespace, rxe_t) and its selected
 * assertions, each result a line of the results file; every packet the tester sent and
 * received goes into `pcaps/rxe_t.pcap` beside it.
 */
async function runRocePass(
  options: GuestProbeOptions,
  ids: ReadonlySet<string>,
  onLine: (line: string) => void,
): Promise<{ results: AssertionResult[]; findings: number }> {
  const tester = await openRoceTester();
  const stop = benchmarkStop();
  // The resource-count oracle: rxe_t's objects and the slabs, before and after (the tester's
  // context, PD and CQ open at both ends).
  const recount = startResourceCheck('rxe');
  try {
    markCoveragePhase('tester');
    const results = await runAssertions(
      tester.assertions.filter((a) => ids.has(a.id)),
      {
        resultsFile: options.results,
        variant: 'rxe',
        onResult: (r) => onLine(`probe: ${r.id} (rxe): ${r.verdict}`),
        ...(stop === undefined ? {} : { stopWhen: stop }),
      },
    );
    // probe --benchmark: a variant detected by an assertion needs no fuzz.
    if (stop !== undefined && results.some(stop)) return { results, findings: 0 };
    let findings = 0;
    if (options.fuzz !== undefined) {
      markCoveragePhase('fuzz');
      const summary = await fuzzRxe(
        tester.env,
        options.fuzz,
        options.seed,
        25,
        onLine,
        minimizeOptions(options),
      );
      const line: ResultLine = { kind: 'fuzz', summary };
      appendFileSync(options.results, `${JSON.stringify(line)}\n`);
      findings += summary.findings.length;
    }
    if (options.guided !== undefined) {
      const guided = options.guided;
      findings += await runGuidedPhase(options, 'rdma_rxe', ROCE_TESTBED.device, onLine, () =>
        guidedFuzzRxe(tester.env, guided, options.seed, 25, onLine, minimizeOptions(options)),
      );
    }
    const check = recount();
    appendFileSync(
      options.results,
      `${JSON.stringify({ kind: 'resources', check } satisfies ResultLine)}\n`,
    );
    if (check.grew.length > 0) onLine(`probe: resource-count (rxe): ${check.grew.join('; ')}`);
    return { results, findings: findings + (check.grew.length > 0 ? 1 : 0) };
  } finally {
    const dir = pcapDirOf(options.results);
    mkdirSync(dir, { recursive: true });
    tester.close(join(dir, 'rxe_t.pcap'));
  }
}

/** The worker: one pass, in this process (siw0 already on that variant). */
export async function runVariantHere(
  options: GuestProbeOptions,
  variant: ProbePass,
  onLine: (line: string) => void,
): Promise<number> {
  let pairs = selectAssertions(options).filter((p) => p.variant === variant);
  if (options.after !== undefined) {
    const all = selectAssertions(options);
    const at = all.findIndex((p) => resumeKey(p.variant, p.assertion.id) === options.after);
    const skipped = new Set(all.slice(0, at + 1).map((p) => resumeKey(p.variant, p.assertion.id)));
    pairs = pairs.filter((p) => !skipped.has(resumeKey(p.variant, p.assertion.id)));
  }
  const ids = new Set(pairs.map((p) => p.assertion.id));
  if (variant === 'rxe') {
    const roce = await runRocePass(options, ids, onLine);
    const passed = roce.results.every((r) => r.verdict === 'match' || r.verdict === 'known');
    return passed && roce.findings === 0 ? 0 : 1;
  }
  // Every TCP segment of the pass (assertions, survival checks, fuzz) goes into its pcap.
  const dir = pcapDirOf(options.results);
  mkdirSync(dir, { recursive: true });
  const capture = await startSiwCapture(join(dir, siwPcapName(variant)), onLine);
  try {
    markCoveragePhase('tester');
    const stop = benchmarkStop();
    const recount = startResourceCheck(variant);
    const results = await runIwarpAssertions(
      SIW_ASSERTIONS.filter((a) => ids.has(a.id)),
      variant,
      options.results,
      (r) => onLine(`probe: ${r.id} (${variant}): ${r.verdict}`),
      stop,
    );
    let findings = 0;
    const detected = stop !== undefined && results.some(stop);
    if (options.fuzz !== undefined && variant === 'stock' && !detected) {
      markCoveragePhase('fuzz');
      const summary = await fuzzSiw(
        options.fuzz,
        options.seed,
        25,
        onLine,
        minimizeOptions(options),
      );
      const line: ResultLine = { kind: 'fuzz', summary };
      appendFileSync(options.results, `${JSON.stringify(line)}\n`);
      findings = summary.findings.length;
    }
    // The siw guided campaign (coverage/guided-siw.ts), on the stock siw after its fuzz,
    // with siw's function coverage as its feedback when --coverage is not on.
    if (options.guided !== undefined && variant === 'stock' && !detected) {
      const guided = options.guided;
      findings += await runGuidedPhase(options, 'siw', 'siw0', onLine, () =>
        guidedFuzzSiw(guided, options.seed, 25, onLine, minimizeOptions(options)),
      );
    }
    if (!detected) {
      const check = recount();
      appendFileSync(
        options.results,
        `${JSON.stringify({ kind: 'resources', check } satisfies ResultLine)}\n`,
      );
      if (check.grew.length > 0) {
        onLine(`probe: resource-count (${variant}): ${check.grew.join('; ')}`);
        findings += 1;
      }
    }
    const ok = results.every((r) => r.verdict === 'match' || r.verdict === 'known');
    return ok && findings === 0 ? 0 : 1;
  } finally {
    await capture?.stop();
  }
}

/**
 * The in-guest entry: each variant in a child process (or here, in the child). Resolves
 * with the exit status.
 */
export async function runProbeInGuest(
  options: GuestProbeOptions,
  onLine: (line: string) => void,
): Promise<number> {
  const child = process.env[CHILD_ENV] as ProbePass | undefined;
  if (child !== undefined) return runVariantHere(options, child, onLine);
  // probe --benchmark: the variant module first, before any QP is open (issue 32).
  const variantModule = loadBenchmarkModule();
  if (variantModule !== undefined) onLine(`probe: benchmark variant ${variantModule} loaded`);
  let status = 0;
  const before = loadedSiwVariant() ?? 'stock';
  // In the guest's own /tmp, not the 9p share (ftrace.ts readOutput says why).
  const functionsFile = join(tmpdir(), `rdma-interop-coverage-functions-${process.pid}.txt`);
  const recording: FunctionRecording | undefined =
    options.coverage === 'functions' ? startFunctionCoverage(functionsFile) : undefined;
  const snapshots =
    options.coverage === 'blocks'
      ? join(dirname(options.results), 'coverage-blocks.jsonl')
      : undefined;
  if (snapshots !== undefined) loadCoverageModules();
  for (const variant of passesOf(options)) {
    const pairs = selectAssertions(options).filter((p) => p.variant === variant);
    const fuzzes =
      (options.fuzz !== undefined && (variant === 'stock' || variant === 'rxe')) ||
      (options.guided !== undefined && (variant === 'stock' || variant === 'rxe'));
    if (pairs.length === 0 && !fuzzes) continue;
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      [CHILD_ENV]: variant,
      ...(recording === undefined
        ? {}
        : { [COVERAGE_ENV]: '1', [FUNCTIONS_FILE_ENV]: functionsFile }),
      ...(snapshots === undefined ? {} : { [BLOCKS_ENV]: snapshots }),
    };
    if (variant === 'rfc7306') {
      const lib = patchedLibraryPath();
      if (!existsSync(lib)) {
        for (const r of notRun(pairs, `no patched siw for kernel ${release()} (${lib} missing)`))
          appendFileSync(
            options.results,
            `${JSON.stringify({ kind: 'result', result: r } satisfies ResultLine)}\n`,
          );
        continue;
      }
      env.LD_LIBRARY_PATH = lib;
      env[PATCHED_PASS_ENV] = 'rfc7306';
    }
    if (variant !== 'rxe' && loadedSiwVariant() !== variant) {
      switchSiwModule(variant);
      recording?.refilter();
    }
    const run = spawnSync(process.execPath, [...options.childArgs], { env, stdio: 'inherit' });
    status = Math.max(status, run.status ?? 1);
  }
  if (recording !== undefined) {
    const line: ResultLine = { kind: 'coverage', coverage: await recording.stop() };
    appendFileSync(options.results, `${JSON.stringify(line)}\n`);
  }
  if (snapshots !== undefined) {
    const end: BlockSnapshot = { before: 'end', blocks: dumpBlocks() };
    const line: ResultLine = {
      kind: 'blocks',
      kernel: release(),
      snapshots: [...readSnapshots(snapshots), end],
    };
    appendFileSync(options.results, `${JSON.stringify(line)}\n`);
  }
  if (loadedSiwVariant() !== before) switchSiwModule(before);
  return status;
}
