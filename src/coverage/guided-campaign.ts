/**
 * The loop both coverage-guided campaigns run (issue 32): guided-roce.ts against rxe_t and
 * guided-siw.ts against siw0. The seeds go first, each once; then corpus entries, mutated by
 * the campaign's seeded draw. An input joins the corpus when the coverage feedback grew with
 * it (`coverageFeedback`). The campaign's own `send` is the per-input oracle; after each
 * batch, the kernel log and the device's own check (`works`). A finding is minimized within
 * `options.minimizeBudget` replays (probe/minimize.ts) by the campaign's minimizers.
 */
import { existsSync, readFileSync } from 'node:fs';
import type { FindingSequence } from '../probe/finding-file.js';
import {
  type FindingMinimization,
  type FuzzFinding,
  type FuzzLoopOptions,
  minimizeLogBatch,
} from '../probe/fuzz-loop.js';
import { kernelLogOracles } from '../probe/oracles/kernel-log.js';
import type { KernelLog } from '../probe/survival.js';
import { FUNCTIONS_FILE_ENV, readOutput, syncFunctionFeedback } from './ftrace.js';

const COUNT_FILE = '/sys/kernel/debug/rdma_cov/count';

/** The feedback now: blocks, else functions, else undefined. */
export function coverageFeedback(): { kind: 'blocks' | 'functions'; value: number } | undefined {
  if (existsSync(COUNT_FILE))
    return { kind: 'blocks', value: Number(readFileSync(COUNT_FILE, 'utf8').trim()) };
  const file = process.env[FUNCTIONS_FILE_ENV];
  if (file === undefined || !existsSync(file)) return undefined;
  // The reader lags behind the trace under TCG: wait until it has written what came before.
  syncFunctionFeedback();
  return {
    kind: 'functions',
    value: readOutput(file)
      .split('\n')
      .filter((l) => l !== '' && !l.startsWith('#')).length,
  };
}

/** What a campaign brings to the loop: its device, inputs, oracles and minimizers. */
export interface GuidedTarget<I> {
  /** The device the progress lines and findings name. */
  readonly device: string;
  /** The finding files' sequence of these inputs (its kind names the campaign). */
  sequence(inputs: readonly I[]): FindingSequence;
  readonly seeds: readonly I[];
  /** Every mutation the draw may apply (the `kept` counts start at 0 for each). */
  readonly mutations: readonly string[];
  readonly log: KernelLog;
  /** A corpus entry, mutated (the campaign's seeded generator). */
  draw(corpus: readonly I[]): { input: I; applied: readonly string[] };
  /** Sends one input: what a per-input oracle saw wrong, else undefined. A throw is the tester failing. */
  send(input: I): Promise<string | undefined>;
  /** The message when `error` is a set-up the device refused (no input it saw), else undefined. */
  refusal?(error: unknown): string | undefined;
  /** The oracle a per-input message names. */
  oracle(wrong: string): string;
  /** An input that fired `oracle`, reduced (undefined: not reducible). */
  minimizeInput(input: I, oracle: string, budget: number): Promise<FindingMinimization | undefined>;
  /** After each batch: the device still does a well-formed operation. */
  works(): Promise<boolean>;
  /** The finding's words when it does not. */
  readonly broken: string;
}

/** What the loop did: the summary's fields that both campaigns report. */
export interface GuidedRun<I> {
  readonly findings: FuzzFinding[];
  readonly batches: number;
  readonly feedback: 'blocks' | 'functions' | 'none';
  readonly coverageStart: number;
  readonly coverageEnd: number;
  readonly corpus: number;
  readonly added: I[];
  /** Mutation name -> inputs with it that the corpus kept. */
  readonly kept: Record<string, number>;
  /** Inputs not sent because the device refused their set-up, and the first refusal. */
  readonly refused: number;
  readonly firstRefusal?: string;
}

/** The inputs a minimization kept, when it is of this campaign's kind. */
function minimizedInputs(
  m: FindingMinimization | undefined,
  kind: FindingSequence['kind'],
): readonly unknown[] | undefined {
  const sequence = m?.sequence;
  return sequence !== undefined && sequence.kind === kind && 'inputs' in sequence
    ? sequence.inputs
    : undefined;
}

/** A batch that fired a kernel-log `oracle`, reduced to the inputs that still fire it. */
async function minimizeGuidedBatch<I>(
  t: GuidedTarget<I>,
  inputs: readonly I[],
  oracle: string,
  budget: number,
): Promise<FindingMinimization> {
  const r = await minimizeLogBatch(t.log, inputs, (input) => t.send(input), oracle, budget);
  return {
    oracle,
    originalLength: inputs.length,
    sequence: t.sequence(r.minimal),
    calls: r.calls,
    exhausted: r.exhausted,
  };
}

/** Runs `count` inputs of `t` (seed `seed` for the findings), `batch` per kernel-log check. */
export async function runGuidedCampaign<I>(
  t: GuidedTarget<I>,
  count: number,
  seed: number,
  batch: number,
  onProgress: (line: string) => void,
  options: FuzzLoopOptions,
): Promise<GuidedRun<I>> {
  const kind = t.sequence([]).kind;
  const corpus: I[] = [...t.seeds];
  const added: I[] = [];
  const kept: Record<string, number> = Object.fromEntries(t.mutations.map((m) => [m, 0]));
  const findings: FuzzFinding[] = [];
  const start = coverageFeedback();
  let last = start?.value ?? 0;
  let batches = 0;
  let refused = 0;
  let firstRefusal: string | undefined;
  for (let from = 0; from < count; from += batch) {
    t.log.mark();
    const to = Math.min(count, from + batch);
    const inBatch: I[] = [];
    for (let index = from; index < to; index++) {
      let input: I;
      let applied: readonly string[] = [];
      if (index < t.seeds.length) input = t.seeds[index] as I;
      else ({ input, applied } = t.draw(corpus));
      inBatch.push(input);
      let wrong: string | undefined;
      try {
        wrong = await t.send(input);
      } catch (error) {
        const refusal = t.refusal?.(error);
        if (refusal !== undefined) {
          // Not an input the device saw: counted, never kept, never a finding.
          refused++;
          firstRefusal ??= refusal;
          continue;
        }
        wrong = `the tester failed: ${error instanceof Error ? error.message : String(error)}`;
      }
      // The feedback of this input alone, read before any minimizing replays add to it.
      const now = coverageFeedback()?.value ?? last;
      const grew = now > last && index >= t.seeds.length;
      last = Math.max(last, now);
      if (wrong !== undefined) {
        const oracle = t.oracle(wrong);
        const minimization =
          options.minimizeBudget === undefined
            ? undefined
            : await t.minimizeInput(input, oracle, options.minimizeBudget);
        findings.push({
          seed,
          index,
          mutation: applied.join('+') || 'seed',
          why: wrong,
          oracles: [oracle],
          bytes: JSON.stringify(input),
          minimized: JSON.stringify(minimizedInputs(minimization, kind)?.[0] ?? input),
          ...(minimization === undefined ? {} : { minimization }),
        });
        // What the replays reached is no later input's gain.
        last = Math.max(last, coverageFeedback()?.value ?? last);
      }
      if (grew) {
        corpus.push(input);
        added.push(input);
        for (const m of new Set(applied)) kept[m] = (kept[m] ?? 0) + 1;
      }
    }
    batches++;
    const problems = t.log.troubleSinceLastCheck();
    const works = await t.works().catch(() => false);
    if (problems.length > 0 || !works) {
      const oracles = [...kernelLogOracles(problems), ...(works ? [] : ['device-works'])];
      const oracle = oracles[0];
      // A broken device cannot replay; a kernel-log oracle can.
      const minimization =
        options.minimizeBudget !== undefined && works && oracle?.startsWith('kernel-log/')
          ? await minimizeGuidedBatch(t, inBatch, oracle, options.minimizeBudget)
          : undefined;
      findings.push({
        seed,
        index: to - 1,
        mutation: `batch ${from}-${to - 1}`,
        why: [...problems, ...(works ? [] : [t.broken])].join(' | '),
        oracles,
        bytes: JSON.stringify(inBatch),
        minimized: JSON.stringify(minimizedInputs(minimization, kind) ?? inBatch),
        ...(minimization === undefined ? {} : { minimization }),
      });
      last = Math.max(last, coverageFeedback()?.value ?? last);
      if (!works) break;
    }
    onProgress(
      `guided fuzz ${t.device}: ${to}/${count} inputs, corpus ${corpus.length}, coverage ${last}, ${findings.length} findings`,
    );
  }
  return {
    findings,
    batches,
    feedback: start?.kind ?? 'none',
    coverageStart: start?.value ?? 0,
    coverageEnd: last,
    corpus: corpus.length,
    added,
    kept,
    refused,
    ...(firstRefusal === undefined ? {} : { firstRefusal }),
  };
}
