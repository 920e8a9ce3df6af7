/**
 * `probe` from the host: boots a guest per kernel line, runs `probe --runtime host` in it
 * with a results file in the shared directory, and reads the JSON lines back. When the
 * guest dies under an assertion (a panic: QEMU exits; a hang: the time-out), the
 * assertion it had started and not finished gets verdict `kernel-crash` with the guest
 * console's tail, and the run goes on in a fresh guest from the next assertion.
 */

import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BlockSnapshot } from '../coverage/blocks.js';
import type { RawFunctionCoverage } from '../coverage/ftrace.js';
import { verdictFromFile } from '../judge/verdict.js';
import { GuestRuntimeError, runInGuest } from '../runtime/index.js';
import type { AssertionResult, ProbePass } from './assertion.js';
import type { FuzzSummary } from './fuzz-loop.js';
import type { ResultLine } from './iwarp-run.js';
import { KERNEL_TROUBLE, kernelLogOracles } from './oracles/kernel-log.js';
import type { ResourceCheck } from './oracles/resource-count.js';
import { ALL_ASSERTIONS, PROBE_DEVICE_OF, pcapDirOf, resumeKey } from './probe-guest.js';
import type { ProbeKernel } from './probe-report.js';
import { ROCE_TESTBED } from './roce-testbed.js';

/** What the lines of a results file hold. */
export interface ParsedResults {
  readonly results: AssertionResult[];
  readonly fuzz: FuzzSummary[];
  /** `--coverage`: what each guest recorded. */
  readonly coverage: RawFunctionCoverage[];
  /** `--coverage blocks`: each guest's snapshots. */
  readonly blocks: { kernel: string; snapshots: BlockSnapshot[] }[];
  /** The resource-count oracle's counts around each pass. */
  readonly resources: ResourceCheck[];
  /** The `variant/id` started last and never finished, if any. */
  readonly unfinished: { variant: ProbePass; id: string } | undefined;
}

/** Reads a results file's JSON lines (a torn last line, from a crash, is left out). */
export function parseResultLines(text: string): ParsedResults {
  const results: AssertionResult[] = [];
  const fuzz: FuzzSummary[] = [];
  const coverage: RawFunctionCoverage[] = [];
  const blocks: { kernel: string; snapshots: BlockSnapshot[] }[] = [];
  const resources: ResourceCheck[] = [];
  let open: { variant: ProbePass; id: string } | undefined;
  for (const raw of text.split('\n')) {
    if (raw.trim() === '') continue;
    let line: ResultLine;
    try {
      line = JSON.parse(raw) as ResultLine;
    } catch {
      continue;
    }
    switch (line.kind) {
      case 'starting':
        // A starting line without a pass comes from the RoCE runner alone (guest-runner.ts).
        open = { variant: line.variant ?? 'rxe', id: line.id };
        break;
      case 'result':
        // A results file written before issue 31 says `pass` where it now says `match`.
        results.push({
          ...line.result,
          verdict: verdictFromFile(line.result.verdict) as AssertionResult['verdict'],
        });
        if (open?.id === line.result.id) open = undefined;
        break;
      case 'fuzz':
        fuzz.push(line.summary);
        break;
      case 'coverage':
        coverage.push(line.coverage);
        break;
      case 'blocks':
        blocks.push({ kernel: line.kernel, snapshots: line.snapshots });
        break;
      case 'resources':
        resources.push(line.check);
        break;
    }
  }
  return { results, fuzz, coverage, blocks, resources, unfinished: open };
}

/** The `kernel-crash` record of an assertion that a guest died under. */
export function crashResult(
  id: string,
  variant: ProbePass,
  kernel: string,
  consoleTail: string,
  failure: string,
  /** probe --benchmark: the line ended here (no fresh guest). */
  stopped = false,
): AssertionResult {
  const assertion = ALL_ASSERTIONS.find((a) => a.id === id);
  const provider = variant === 'rxe' ? 'rxe' : 'siw';
  return {
    id,
    spec: assertion?.spec ?? '',
    device: variant === 'rxe' ? ROCE_TESTBED.device : PROBE_DEVICE_OF.siw,
    provider,
    ...(variant === 'rxe' ? {} : { siwVariant: variant }),
    kernel,
    topology: assertion?.testerRole ?? 'requester',
    verdict: 'kernel-crash',
    expected: null,
    observed: { consoleTail },
    survival: { dmesg: [], deviceWorks: false, guestUp: false },
    note: `the guest died during this assertion (${failure}); ${stopped ? 'the run stopped there' : 'the run went on in a fresh guest'}`,
  };
}

/** The guest's results file (JSON lines), named by the host's probe. */
export const PROBE_RESULTS_ENV = 'RDMA_INTEROP_PROBE_RESULTS';
/** Where the guest's probe resumes: skip up to and including this `variant/id`. */
export const PROBE_AFTER_ENV = 'RDMA_INTEROP_PROBE_AFTER';

/**
 * KFENCE sampled densely in the probe's guests (issue 32): one sampled allocation every
 * millisecond instead of Debian's default, so that an out-of-bounds access or a
 * use-after-free in rxe or siw lands in a guarded object more often and is reported
 * ("BUG: KFENCE:", the kernel-log/kfence oracle). Debian's 6.12 and 7.3 kernels have
 * CONFIG_KFENCE (measured: "kfence: initialized - using 2097152 bytes for 255 objects" on
 * 7.3.4); 6.1.0-57 has none, and ignores the parameter.
 * RDMA_INTEROP_PROBE_KFENCE=0 leaves the kernel's default (to measure the cost).
 */
export const PROBE_KERNEL_ARGS: readonly string[] = ['kfence.sample_interval=1'];

function probeKernelArgs(): readonly string[] {
  return process.env.RDMA_INTEROP_PROBE_KFENCE === '0' ? [] : PROBE_KERNEL_ARGS;
}

/** How many fresh guests one kernel line may take after crashes. */
const MAX_RESTARTS = 6;

export interface HostProbeOptions {
  readonly line: string;
  readonly timeoutSeconds: number;
  /** The CLI path and `probe --runtime host ...` args (without --results/--after). */
  readonly guestArgs: readonly string[];
  readonly onProgress: (line: string) => void;
  readonly signal: AbortSignal;
  /**
   * probe --benchmark: the first crash ends the line (its first detection is all it needs;
   * a variant that crashes every assertion would take a guest each). A crash outside an
   * assertion (in the fuzz) is then kept as a fuzz finding of device `guest`.
   */
  readonly stopAtFirstCrash?: boolean;
  /** More environment for the guest's probe (probe --benchmark: the module variant). */
  readonly env?: Readonly<Record<string, string>>;
  /** The guest's stderr (its progress lines); the terminal's stderr when omitted. */
  readonly onGuestStderr?: (chunk: Buffer) => void;
  /** Where the guest's pcaps go, each named `<line>-<attempt>-<file>`; dropped when omitted. */
  readonly pcapDir?: string;
  /** rxe and siw0 on the fixed build of issue 33 (runtime/fixes-env.ts): `probe --fixes`. */
  readonly fixes?: boolean;
}

/** Copies the pcaps a guest wrote beside its results file into `to`. */
function keepPcaps(results: string, to: string, prefix: string): void {
  const from = pcapDirOf(results);
  if (!existsSync(from)) return;
  mkdirSync(to, { recursive: true });
  for (const name of readdirSync(from))
    copyFileSync(join(from, name), join(to, `${prefix}-${name}`));
}

/** A guest that died after the assertions, in the fuzz, as a finding (probe --benchmark). */
function guestDiedInFuzz(tail: string): FuzzSummary {
  const lines = tail.split('\n');
  return {
    kernel: '',
    device: 'guest',
    seed: 0,
    packets: 0,
    batches: 0,
    findings: [
      {
        seed: 0,
        index: 0,
        mutation: 'the fuzz (the guest died before its summary)',
        why: lines
          .filter((l) => KERNEL_TROUBLE.test(l))
          .slice(0, 3)
          .join(' | '),
        oracles: ['guest-up', ...kernelLogOracles(lines)],
        bytes: '',
        minimized: '',
      },
    ],
  };
}

/** One kernel line: results (crashes included), fuzz summaries, and the kernel release. */
export async function probeKernelLine(options: HostProbeOptions): Promise<{
  kernel: ProbeKernel;
  results: AssertionResult[];
  fuzz: FuzzSummary[];
  coverage: RawFunctionCoverage[];
  blocks: { kernel: string; snapshots: BlockSnapshot[] }[];
  resources: ResourceCheck[];
}> {
  const results: AssertionResult[] = [];
  const fuzz: FuzzSummary[] = [];
  const coverage: RawFunctionCoverage[] = [];
  const blocks: { kernel: string; snapshots: BlockSnapshot[] }[] = [];
  const resources: ResourceCheck[] = [];
  let after: string | undefined;
  let kernelRelease = options.line;
  for (let attempt = 0; attempt <= MAX_RESTARTS; attempt++) {
    const share = mkdtempSync(join(tmpdir(), 'rdma-interop-probe-'));
    const file = join(share, 'results.jsonl');
    const command = [process.execPath, ...options.guestArgs];
    let crash: { tail: string; failure: string; error: GuestRuntimeError } | undefined;
    try {
      await runInGuest({
        command,
        shareDir: share,
        kernel: options.line,
        timeoutSeconds: options.timeoutSeconds,
        setup: 'if-missing',
        signal: options.signal,
        ...(options.fixes === true ? { fixes: true } : {}),
        extraKernelArgs: probeKernelArgs(),
        ...(options.onGuestStderr === undefined ? {} : { onErrorOutput: options.onGuestStderr }),
        env: { ...options.env, [PROBE_RESULTS_ENV]: file, [PROBE_AFTER_ENV]: after ?? '' },
        onProgress: (l) => options.onProgress(`[vm ${options.line}] ${l}`),
      });
    } catch (error) {
      if (!(error instanceof GuestRuntimeError) || error.failure === 'aborted') throw error;
      crash = { tail: error.consoleTail, failure: error.failure, error };
    }
    const parsed = existsSync(file)
      ? parseResultLines(readFileSync(file, 'utf8'))
      : { results: [], fuzz: [], coverage: [], blocks: [], resources: [], unfinished: undefined };
    if (options.pcapDir !== undefined)
      keepPcaps(file, options.pcapDir, attempt === 0 ? options.line : `${options.line}-${attempt}`);
    rmSync(share, { recursive: true, force: true });
    results.push(...parsed.results);
    fuzz.push(...parsed.fuzz);
    coverage.push(...parsed.coverage);
    blocks.push(...parsed.blocks);
    resources.push(...parsed.resources);
    const seen = parsed.results.find((r) => r.kernel !== '');
    if (seen !== undefined) kernelRelease = seen.kernel;
    else if (parsed.coverage[0] !== undefined) kernelRelease = parsed.coverage[0].kernel;
    if (crash === undefined) break;
    if (options.stopAtFirstCrash === true && parsed.unfinished === undefined) {
      fuzz.push(guestDiedInFuzz(crash.tail));
      break;
    }
    // The guest failed outside any assertion (assets, boot, set-up, the fuzz): the
    // runtime's own error, for the command to report.
    if (parsed.unfinished === undefined) throw crash.error;
    results.push(
      crashResult(
        parsed.unfinished.id,
        parsed.unfinished.variant,
        kernelRelease,
        crash.tail,
        crash.failure,
        options.stopAtFirstCrash === true,
      ),
    );
    if (options.stopAtFirstCrash === true) {
      options.onProgress(
        `probe: kernel-crash in ${parsed.unfinished.id} on ${options.line}: stopping there`,
      );
      break;
    }
    options.onProgress(
      `probe: kernel-crash in ${parsed.unfinished.id} on ${options.line}: going on in a fresh guest`,
    );
    after = resumeKey(parsed.unfinished.variant, parsed.unfinished.id);
  }
  // Crash records carry the line name until a result tells the release.
  const fixed = results.map((r) =>
    r.kernel === options.line ? { ...r, kernel: kernelRelease } : r,
  );
  return {
    kernel: { line: options.line, release: kernelRelease },
    results: fixed,
    fuzz,
    coverage,
    blocks,
    resources,
  };
}
