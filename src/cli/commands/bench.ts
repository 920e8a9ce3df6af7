import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Argument, type Command, Option } from 'commander';
import { type Figure, recordedFigures } from '../../bench/report.js';
import { onDevicesOrGuest, resolveRuntime } from '../devices-or-guest.js';
import { usageError } from '../errors.js';
import { cacheDirOption, renamedOption } from '../options.js';
import { CACHE_DIR_STAYS, type Forwarding, requestArgs } from '../request.js';

/**
 * Benchmarks, one module per layer under `src/bench/`. Each prints its figures as ratios
 * against an anchor measured in the same run (never absolute speed targets in tests).
 */
const suites = {
  codec: () => import('../../bench/codec.js'),
  engine: () => import('../../bench/engine.js'),
  verbs: () => import('../../bench/verbs.js'),
  runtime: () => import('../../bench/runtime.js'),
} as const;

type SuiteName = keyof typeof suites;

function isSuiteName(name: string): name is SuiteName {
  return Object.hasOwn(suites, name);
}

interface BenchOptions {
  readonly report?: string;
  readonly json?: string;
  readonly cacheDir?: string;
  readonly summary: boolean;
}

/**
 * Every option of `bench`: none goes along as given to the guest's `bench verbs`, which
 * is asked for its figures in a file this process names and reads (cli/request.ts;
 * test/host/cli/options-request.test.ts checks each).
 */
export const BENCH_FORWARDING = {
  report: { stays: "this process writes <file>, every suite's figures: the guest's go to a share" },
  json: { stays: 'renamed to --report: refused whatever the value' },
  cacheDir: CACHE_DIR_STAYS,
  summary: { stays: "this process prints the one summary: the guest's run prints none" },
} as const satisfies Readonly<Record<keyof BenchOptions, Forwarding>>;

/** The guest's `bench verbs`: its figures into `file`, no summary (`command`: bench's). */
export function benchGuestArgs(command: Command, file: string): string[] {
  return ['bench', 'verbs', ...requestArgs(command, { report: file, summary: false })];
}

export function registerBench(program: Command): void {
  program
    .command('bench')
    .description(`run benchmarks: ${Object.keys(suites).join(', ')} (default: all)`)
    .addArgument(
      // commander checks the names (a usage error, exit 2) before any suite starts.
      new Argument('[suites...]', 'which benchmark suites to run').choices(Object.keys(suites)),
    )
    .option(
      '--report <file>',
      'also write every figure (value, p99, anchor, ratio, target) into <file> as JSON',
    )
    // `--json` means JSON on stdout everywhere else (devices, decode, run): renamed.
    .addOption(
      renamedOption(
        '--json <file>',
        "'--json <file>' is now '--report <file>' (the figures as JSON)",
      ),
    )
    .addOption(cacheDirOption())
    // The guest run of a host `bench` leaves the summary to the host (it has every figure).
    .addOption(new Option('--no-summary', 'do not print the targets summary').hideHelp())
    .action(async (names: string[], options: BenchOptions, command: Command) => {
      const chosen = (names.length > 0 ? names : Object.keys(suites)).filter(isSuiteName);
      // The cache is only the guest's, which only verbs uses, on a host without devices.
      if (
        command.getOptionValueSource('cacheDir') === 'cli' &&
        (!chosen.includes('verbs') || resolveRuntime('auto') === 'host')
      )
        usageError(
          command,
          `--cache-dir holds the guest that bench verbs runs in on a host without RDMA devices; ${chosen.includes('verbs') ? 'this host has devices' : `${chosen.join(', ')} run here`}`,
        );
      const fromGuest: Figure[] = [];
      for (const name of chosen) {
        const run = async () => {
          const suite = await suites[name]();
          await suite.runBenchmark();
          return 0;
        };
        // verbs measures real devices against perftest: where there are none, in the guest,
        // whose figures come back through a shared directory (mounted at the same path).
        let code: number;
        if (name === 'verbs') {
          const share = mkdtempSync(join(tmpdir(), 'rdma-interop-bench-'));
          const file = join(share, 'verbs.json');
          try {
            code = await onDevicesOrGuest(
              {
                command: 'rdma-interop bench',
                guestArgs: benchGuestArgs(command, file),
                shareDir: share,
              },
              run,
            );
            fromGuest.push(...readFigures(file));
          } finally {
            rmSync(share, { recursive: true, force: true });
          }
        } else {
          code = await run();
        }
        if (code !== 0) process.exitCode = code;
      }
      const figures = [...recordedFigures(), ...fromGuest];
      const targets = figures.filter((f) => f.target !== undefined);
      if (targets.length > 0 && options.summary)
        process.stdout.write(
          `targets: ${targets.filter((f) => f.pass === true).length} of ${targets.length} passed${
            targets.some((f) => f.pass !== true)
              ? ` (not passed: ${targets
                  .filter((f) => f.pass !== true)
                  .map((f) => `${f.suite}: ${f.name}`)
                  .join('; ')})`
              : ''
          }\n`,
        );
      if (options.report !== undefined)
        writeFileSync(resolve(options.report), `${JSON.stringify({ figures }, null, 2)}\n`);
    });
}

/** The figures a guest run wrote (none when it wrote nothing). */
function readFigures(file: string): Figure[] {
  try {
    return (JSON.parse(readFileSync(file, 'utf8')) as { figures: Figure[] }).figures;
  } catch {
    return [];
  }
}
