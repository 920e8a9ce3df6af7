/**
 * Function coverage on a stock kernel (issue 32), where the devices are (root in the guest):
 * the ftrace function tracer, filtered to the RDMA modules with `:mod:<name>`
 * (Documentation/trace/ftrace.rst, "Filter commands"), records every entry into one of
 * their traceable functions, in softirq too (where rxe's and siw's receive paths run, and
 * where KCOV records nothing). A reader process drains `trace_pipe` through awk, which keeps
 * each (phase, function) once and takes the function out of the filter (`!name`) as soon as
 * it has been seen: only first entries are traced, so the ring buffer does not overrun
 * (without this, the 6.1 suite lost 724,855 events: the reader under TCG cannot keep up with
 * every call). A never-called sentinel stays in the filter, since an empty filter would
 * trace every kernel function. Phases are `trace_marker` writes (`markCoveragePhase`): the
 * reader puts the modules back into the filter and acknowledges in its output, and the
 * writer waits for that before the phase runs.
 *
 * Debian's 6.1, 6.12 and 7.3 kernels have the function tracer and dynamic ftrace (7.3's
 * config says so; 6.1's and 6.12's tracefs list `function` in available_tracers, measured);
 * none has the function profiler, KCOV or GCOV.
 */
import { spawn, spawnSync } from 'node:child_process';
import { appendFileSync, existsSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { release } from 'node:os';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { snapshotBlocks } from './blocks.js';

/** Set to `1` in the processes of a run that records coverage (the phase markers). */
export const COVERAGE_ENV = 'RDMA_INTEROP_COVERAGE';
/** The reader's output file, for the phase handshake and the guided fuzz's feedback. */
export const FUNCTIONS_FILE_ENV = 'RDMA_INTEROP_COVERAGE_FUNCTIONS_FILE';

import { COVERED_MODULES, type CoveredModule } from './ftrace-modules.js';
import { moduleFilterLines, PHASE_MARK, REMAP_MARK, SYNC_MARK } from './ftrace-reader.js';

export { COVERED_MODULES, type CoveredModule } from './ftrace-modules.js';

/** What a run was doing when a function was entered. */
export const COVERAGE_PHASES = ['setup', 'suite', 'tester', 'fuzz', 'guided'] as const;

/** What `--coverage` records: functions (ftrace, stock modules) or blocks (trace-pc builds). */
export const COVERAGE_KINDS = ['functions', 'blocks'] as const;
export type CoverageKind = (typeof COVERAGE_KINDS)[number];
export type CoveragePhase = (typeof COVERAGE_PHASES)[number];

const TRACEFS = '/sys/kernel/tracing';
const MARK = PHASE_MARK;

/** What the guest measured: per module its traceable functions, per phase those entered. */
export interface RawFunctionCoverage {
  readonly kernel: string;
  readonly method: 'ftrace-function';
  /** module -> every function of it ftrace can trace (available_filter_functions). */
  readonly traceable: Readonly<Record<string, readonly string[]>>;
  /** phase -> functions entered during it (of the covered modules). */
  readonly entered: Readonly<Record<string, readonly string[]>>;
  /** Events the ring buffer dropped before the reader drained them (0: nothing lost). */
  readonly lost: number;
  /** Seconds between start and stop. */
  readonly seconds: number;
}

/** A running recording. */
export interface FunctionRecording {
  /**
   * After a module of them was unloaded and loaded again: the reader reads the function
   * indexes again and puts the modules back into the filter (acknowledged, at most 60 s).
   */
  refilter(): void;
  /** Stops tracing, drains the reader and returns what was entered. */
  stop(): Promise<RawFunctionCoverage>;
}

function tracefs(file: string): string {
  return `${TRACEFS}/${file}`;
}

function write(file: string, text: string, append = false): void {
  if (append) appendFileSync(tracefs(file), text);
  else writeFileSync(tracefs(file), text);
}

/**
 * Writes a marker for the reader and waits for its acknowledgement (`#ack <token>` in the
 * reader's output, written once everything traced before the marker is in the output),
 * polling every `pollMs`, at most `limitMs`. False: no acknowledgement in time (or this
 * process records nothing).
 */
function markAndWait(
  mark: string,
  words: readonly string[],
  pollMs: number,
  limitMs: number,
): boolean {
  if (process.env[COVERAGE_ENV] !== '1') return false;
  markCount += 1;
  const token = `${process.pid}.${Date.now()}.${markCount}`;
  try {
    write('trace_marker', `${[mark, ...words, token].join(' ')}\n`, true);
  } catch {
    // A marker that cannot be written: the reader goes on as before.
    return false;
  }
  const file = process.env[FUNCTIONS_FILE_ENV];
  if (file === undefined) return false;
  const nap = new Int32Array(new SharedArrayBuffer(4));
  for (const end = Date.now() + limitMs; Date.now() < end; Atomics.wait(nap, 0, 0, pollMs))
    if (readOutput(file).includes(`#ack ${token}\n`)) return true;
  return false;
}

/**
 * The reader's output as far as it is written ('' while it cannot be read). The file is
 * read while the reader appends to it: on a 9p share 7.3's client failed such a read with
 * ENODATA (which ended a guided campaign), so the output lives in the guest's own /tmp and
 * a failed read counts as not yet written.
 */
export function readOutput(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}
let markCount = 0;

/**
 * Marks the start of a phase: a trace marker when this run records functions, a snapshot of
 * the collector when it records blocks (blocks.ts); nothing otherwise. The phase begins once
 * the reader has put the modules back into the filter. That wait was up to 60 s because the
 * reader first wrote the previous phase's removals by name (70 ms each under TCG:
 * ftrace-reader.ts); by index, the hand-over takes well under a second.
 */
export function markCoveragePhase(phase: CoveragePhase): void {
  snapshotBlocks(phase);
  const recording = process.env[COVERAGE_ENV] === '1';
  if (recording && !markAndWait(MARK, [phase], 20, 60_000))
    process.stderr.write(
      `coverage: the ftrace reader did not acknowledge phase ${phase} within 60 s: its first entries may be credited to the phase before\n`,
    );
}

/**
 * The guided fuzz's feedback point: returns once the reader has written every function
 * entered before this call (at most 10 s; false if it did not answer). Without it the
 * reader, which lags behind trace_pipe under TCG, credited an input's new functions to a
 * later input.
 */
export function syncFunctionFeedback(): boolean {
  return markAndWait(SYNC_MARK, [], 5, 10_000);
}

/** Functions that run never enters: one stays in the filter (see the header). */
const SENTINELS = ['__x64_sys_swapon', '__x64_sys_acct', '__x64_sys_kexec_load'];

/**
 * module -> its traceable functions, from `available_filter_functions` ("name [module]"),
 * for `modules` (every covered module by default).
 */
export function parseFilterFunctions(
  text: string,
  modules: readonly string[] = COVERED_MODULES,
): Record<string, string[]> {
  const out: Record<string, Set<string>> = {};
  for (const line of text.split('\n')) {
    const m = /^(\S+) \[(\S+)\]$/.exec(line.trim());
    if (m === null) continue;
    const [, name, mod] = m as unknown as [string, string, string];
    if (!modules.includes(mod)) continue;
    const set = out[mod] ?? new Set<string>();
    set.add(name);
    out[mod] = set;
  }
  return Object.fromEntries(Object.entries(out).map(([k, v]) => [k, [...v].sort()]));
}

/** phase -> functions, from the reader's output lines ("phase function"). */
export function parseEntered(text: string): Record<string, string[]> {
  const out: Record<string, Set<string>> = {};
  for (const line of text.split('\n')) {
    if (line.startsWith('#')) continue;
    const [phase, fn] = line.trim().split(' ');
    // `end`: the stop mark (at most a call or two before tracing went off).
    if (phase === 'end') continue;
    if (phase === undefined || fn === undefined || fn === '') continue;
    const set = out[phase] ?? new Set<string>();
    set.add(fn);
    out[phase] = set;
  }
  return Object.fromEntries(Object.entries(out).map(([k, v]) => [k, [...v].sort()]));
}

function lostEvents(): { overrun: number; entries: number } {
  let overrun = 0;
  let entries = 0;
  for (let cpu = 0; existsSync(tracefs(`per_cpu/cpu${cpu}`)); cpu++) {
    const stats = readFileSync(tracefs(`per_cpu/cpu${cpu}/stats`), 'utf8');
    overrun += Number(/^overrun: (\d+)/m.exec(stats)?.[1] ?? 0);
    entries += Number(/^entries: (\d+)/m.exec(stats)?.[1] ?? 0);
  }
  return { overrun, entries };
}

/** What a recording covers and the phase it starts in. */
export interface FunctionRecordingOptions {
  /** The modules whose functions are recorded (COVERED_MODULES by default). */
  readonly modules?: readonly CoveredModule[];
  /** The phase of the first entries, before any mark ('setup' by default). */
  readonly phase?: CoveragePhase;
}

/**
 * Starts recording the functions of `options.modules` that run enters, into `outFile` (the
 * reader's output). Throws when this kernel has no function tracer.
 */
export function startFunctionCoverage(
  outFile: string,
  options: FunctionRecordingOptions = {},
): FunctionRecording {
  const modules = options.modules ?? COVERED_MODULES;
  if (!existsSync(tracefs('trace'))) {
    spawnSync('mount', ['-t', 'tracefs', 'nodev', TRACEFS], { stdio: 'ignore' });
  }
  const tracers = readFileSync(tracefs('available_tracers'), 'utf8').split(/\s+/);
  if (!tracers.includes('function'))
    throw new Error(`kernel ${release()} has no function tracer (available: ${tracers.join(' ')})`);
  const began = Date.now();
  write('tracing_on', '0');
  write('current_tracer', 'nop');
  const available = readFileSync(tracefs('available_filter_functions'), 'utf8');
  const sentinel = SENTINELS.find((f) => new RegExp(`^${f}$`, 'm').test(available));
  if (sentinel === undefined)
    throw new Error(`kernel ${release()} traces none of ${SENTINELS.join(', ')} (the sentinel)`);
  write('set_ftrace_filter', [...moduleFilterLines(modules), sentinel].join('\n'));
  for (const option of ['noprint-parent', 'norecord-cmd', 'noirq-info'])
    try {
      write('trace_options', option);
    } catch {
      // An option this kernel lacks only costs a wider line.
    }
  write('buffer_size_kb', '4096');
  write('trace', '');
  // The tracer is set before the reader opens trace_pipe: 6.12 and later refuse a tracer
  // change while it is open (EBUSY); tracing_on stays 0 until the reader reads.
  write('current_tracer', 'function');
  writeFileSync(outFile, '');
  const reader = spawn(
    process.execPath,
    [
      join(dirname(fileURLToPath(import.meta.url)), 'ftrace-reader.js'),
      outFile,
      sentinel,
      modules.join(','),
      options.phase ?? 'setup',
    ],
    { stdio: ['ignore', 'ignore', openSync(`${outFile}.log`, 'w')], detached: true },
  );
  reader.unref();
  // Tracing starts once the reader reads (node starts in 1.5 s under TCG; at most 20 s).
  const nap = new Int32Array(new SharedArrayBuffer(4));
  for (let i = 0; i < 400 && !readOutput(outFile).includes('#ready\n'); i++)
    Atomics.wait(nap, 0, 0, 50);
  write('tracing_on', '1');
  // This process's children (probe's passes) mark their phases and read the feedback.
  process.env[COVERAGE_ENV] = '1';
  process.env[FUNCTIONS_FILE_ENV] = outFile;
  return {
    refilter() {
      markAndWait(REMAP_MARK, [], 20, 60_000);
    },
    async stop() {
      // A last mark, then tracing off: once the reader acknowledges the mark it has written
      // every entry before it (it lags behind trace_pipe under TCG: without this, a short
      // run lost the tail of its last phase). At most 60 s.
      const token = `${process.pid}.end.${Date.now()}`;
      write('trace_marker', `${MARK} end ${token}\n`, true);
      write('tracing_on', '0');
      for (let i = 0; i < 3000; i++) {
        if (readOutput(outFile).includes(`#ack ${token}\n`)) break;
        await sleep(20);
      }
      const { overrun } = lostEvents();
      if (reader.pid !== undefined)
        try {
          process.kill(reader.pid, 'SIGTERM');
          // trace_pipe must be closed before the tracer can change (at most 5 s).
          for (let i = 0; i < 50; i++) {
            process.kill(reader.pid, 0);
            await sleep(100);
          }
        } catch {
          // gone
        }
      try {
        write('current_tracer', 'nop');
        write('set_ftrace_filter', '');
      } catch {
        // Left tracing nothing (tracing_on is 0): the guest is thrown away after the run.
      }
      // Later phase marks of this process record nothing.
      delete process.env[COVERAGE_ENV];
      delete process.env[FUNCTIONS_FILE_ENV];
      return {
        kernel: release(),
        method: 'ftrace-function',
        traceable: parseFilterFunctions(
          readFileSync(tracefs('available_filter_functions'), 'utf8'),
          modules,
        ),
        entered: parseEntered(readOutput(outFile)),
        lost: overrun,
        seconds: (Date.now() - began) / 1000,
      };
    },
  };
}
