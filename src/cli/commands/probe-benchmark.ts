/**
 * `rdma-interop probe --benchmark` (issue 32): the tester against rxe and siw module variants
 * with one 2026 receive-path fix each taken back out (src/probe/benchmark/), a guest per
 * variant and a baseline guest per line. Writes benchmark.json and benchmark.md into
 * --report <dir> (default out/benchmark) and prints the table.
 */
import { mkdirSync, readlinkSync, writeFileSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { selectBenchmarkBugs } from '../../probe/benchmark/bugs.js';
import { runBenchmark } from '../../probe/benchmark/run.js';
import { benchmarkTable, CI_BUDGET } from '../../probe/benchmark/table.js';
import { TimelineRecorder } from '../../probe/benchmark/timeline.js';
import { probeKernelLine } from '../../probe/probe-host.js';
import { cacheRoot, packageRoot } from '../../runtime/paths.js';

/** The fuzz budget per variant when --fuzz is not given (the CI host test's, per device). */
export const BENCHMARK_DEFAULT_FUZZ = CI_BUDGET.fuzz;

export interface BenchmarkCliOptions {
  readonly lines: readonly string[];
  /** Only the bugs of these devices (rxe0, siw0); the baseline probes these alone. */
  readonly devices?: readonly string[];
  readonly fuzz: number;
  readonly seed: number;
  readonly timeoutSeconds: number;
  readonly report: string;
  /** The guest probe's argv for a device selection (undefined: every device). */
  readonly guestArgs: (device: 'rxe0' | 'siw0' | undefined) => string[];
  readonly signal: AbortSignal;
}

/** Runs the benchmark; resolves with the exit status (1 when the baseline had false alarms). */
export async function runBenchmarkCommand(o: BenchmarkCliOptions): Promise<number> {
  const cache = cacheRoot();
  const progress = (l: string) => process.stderr.write(`${l}\n`);
  const devices = o.devices;
  const bugs = selectBenchmarkBugs(devices);
  const only = devices?.length === 1 ? (devices[0] as 'rxe0' | 'siw0') : undefined;
  const doc = await runBenchmark(
    o.lines,
    o.fuzz,
    o.seed,
    {
      cache,
      root: packageRoot(),
      progress,
      kver: (line) => {
        try {
          return basename(readlinkSync(join(cache, 'guest', `line-${line}`)));
        } catch {
          return undefined;
        }
      },
      run: async (line, device, env, timeoutSeconds) => {
        const now = () => performance.now() / 1000;
        const started = now();
        const timeline = new TimelineRecorder(started);
        const run = await probeKernelLine({
          line,
          timeoutSeconds: Math.min(o.timeoutSeconds, timeoutSeconds ?? o.timeoutSeconds),
          guestArgs: o.guestArgs(device ?? only),
          signal: o.signal,
          env,
          // A variant (device set) ends at its first crash; the baseline goes on (every
          // crash there is a false alarm to count).
          ...(device === undefined ? {} : { stopAtFirstCrash: true }),
          onProgress: progress,
          onGuestStderr: (chunk) => {
            process.stderr.write(chunk);
            timeline.chunk(chunk.toString(), now());
          },
        });
        timeline.finish(now());
        return { ...run, seconds: now() - started, timeline: timeline.timeline() };
      },
    },
    bugs,
    devices,
  );
  const dir = resolve(o.report);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'benchmark.json'), `${JSON.stringify(doc, null, 1)}\n`);
  const table = benchmarkTable([doc]);
  writeFileSync(join(dir, 'benchmark.md'), `${table}\n`);
  process.stdout.write(`${table}\n`);
  return Object.values(doc.falseAlarms).some((a) => a.length > 0) ? 1 : 0;
}
