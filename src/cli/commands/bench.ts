import { Argument, type Command } from 'commander';
import { onDevicesOrGuest } from '../devices-or-guest.js';

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

export function registerBench(program: Command): void {
  program
    .command('bench')
    .description(`run benchmarks: ${Object.keys(suites).join(', ')} (default: all)`)
    .addArgument(
      // commander checks the names (a usage error, exit 2) before any suite starts.
      new Argument('[suites...]', 'which benchmark suites to run').choices(Object.keys(suites)),
    )
    .action(async (names: string[]) => {
      const chosen = (names.length > 0 ? names : Object.keys(suites)).filter(isSuiteName);
      for (const name of chosen) {
        const run = async () => {
          const suite = await suites[name]();
          await suite.runBenchmark();
          return 0;
        };
        // verbs measures real devices against perftest: where there are none, in the guest.
        const code =
          name === 'verbs'
            ? await onDevicesOrGuest({ guestArgs: ['bench', 'verbs'] }, run)
            : await run();
        if (code !== 0) process.exitCode = code;
      }
    });
}
