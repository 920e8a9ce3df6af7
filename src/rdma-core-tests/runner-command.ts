/**
 * Where rdma-core's tests and pyverbs are (scripts/setup/pyverbs.sh builds them into the
 * cache) and the command that runs them on one device (scripts/guest/rdma-core-tests.py).
 * The guest boots the host's root, so the same absolute paths hold in it; the interpreter
 * is Debian's /usr/bin/python3, the one pyverbs is built for.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { cacheRoot, packageRoot } from '../runtime/paths.js';
import { RdmaCoreTestsError } from './result.js';

/** The rdma-core whose tests run: the one the 6.12 and 7.3 lines are built with. */
export const RDMA_CORE_TESTS_VERSION = '56.1';

/** The devices the tests run on in the guest. */
export const TEST_DEVICES = ['rxe0', 'siw0'] as const;
export type TestDevice = (typeof TEST_DEVICES)[number];

/**
 * The vendor modules of rdma-core's tests (mlx5, EFA, CUDA): every test in them skips on
 * rxe and siw for a vendor reason ("Can not run the test over non MLX5 device"), and they
 * cost a quarter of rxe's time (54 of 195 s, 6.12 under TCG). The bounded CI pass leaves
 * them out; `npm run rdma-core-tests` and the command run them.
 */
export const VENDOR_MODULES: readonly string[] = [
  'tests.test_mlx5_*',
  'tests.test_efa*',
  'tests.test_cuda*',
];

/** Seconds one test may run before the runner stops it (an error). */
export const PER_TEST_TIMEOUT_SECONDS = 60;

export interface TestPaths {
  /** pyverbs.sh's build: `python/` (PYTHONPATH) and `lib/` (LD_LIBRARY_PATH). */
  readonly build: string;
  /** rdma-core's tests/ directory (the source's). */
  readonly tests: string;
  /** Our runner. */
  readonly runner: string;
}

/** The cached build of `version`'s pyverbs and tests; a typed error when not built. */
export function testPaths(version: string = RDMA_CORE_TESTS_VERSION): TestPaths {
  const dir = join(cacheRoot(), 'rdma-core', version);
  const build = join(dir, 'pyverbs-build');
  if (!existsSync(join(build, '.complete')))
    throw new RdmaCoreTestsError(
      build,
      `pyverbs ${version} is not built: run 'bash scripts/setup/pyverbs.sh ${version}'`,
    );
  return {
    build,
    tests: join(dir, 'src', 'tests'),
    runner: join(packageRoot(), 'scripts', 'guest', 'rdma-core-tests.py'),
  };
}

/** The environment the runner needs: pyverbs and the libraries it was built with. */
export function testEnvironment(paths: TestPaths): Record<string, string> {
  return { LD_LIBRARY_PATH: join(paths.build, 'lib'), PYTHONPATH: join(paths.build, 'python') };
}

/** The runner's arguments for one device (argv, without the environment). */
export function runnerArgs(
  paths: TestPaths,
  device: string,
  out: string,
  filters: readonly string[] = [],
  excludes: readonly string[] = [],
): string[] {
  return [
    '/usr/bin/python3',
    paths.runner,
    '--tests',
    paths.tests,
    '--dev',
    device,
    '--out',
    out,
    '--timeout',
    String(PER_TEST_TIMEOUT_SECONDS),
    ...filters.flatMap((f) => ['--filter', f]),
    ...excludes.flatMap((x) => ['--exclude', x]),
  ];
}

function shellWord(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

/**
 * One shell command that runs the tests on each device in turn, writing
 * `<outDir>/<device>.jsonl` (a device whose runner fails does not stop the next).
 */
export function guestScript(
  paths: TestPaths,
  devices: readonly string[],
  outDir: string,
  filters: readonly string[] = [],
): string {
  return devices
    .map(
      (d) =>
        `${runnerArgs(paths, d, join(outDir, `${d}.jsonl`), filters)
          .map(shellWord)
          .join(' ')} || echo "rdma-core-tests: the runner on ${d} exited $?" >&2`,
    )
    .join('\n');
}
