/**
 * In the guest, before the probe's passes: load the module variant `probe --benchmark`
 * asked for (scripts/guest/benchmark-module.sh), from the link the set-up left beside the
 * guest's modules root (scripts/setup/benchmark-modules.sh).
 */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { BENCHMARK_BUGS, BENCHMARK_MODULE_ENV } from './bugs.js';

/** Loads the variant named in the environment; returns its bug id, or undefined. */
export function loadBenchmarkModule(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const wanted = env[BENCHMARK_MODULE_ENV];
  if (wanted === undefined || wanted === '') return undefined;
  const bug = BENCHMARK_BUGS.find((b) => `${b.driver}:${b.id}` === wanted);
  if (bug === undefined)
    throw new Error(`${BENCHMARK_MODULE_ENV}=${wanted} names no benchmark bug`);
  const root = env.RDMA_INTEROP_ROOT ?? join(import.meta.dirname, '..', '..', '..');
  const ko = join(env.MODULES_ROOT ?? '', '..', 'benchmark', `${bug.id}.ko`);
  execFileSync('bash', [join(root, 'scripts/guest/benchmark-module.sh'), bug.driver, ko], {
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  return bug.id;
}
