import { UnknownNameError } from '../../errors.js';

/**
 * The benchmark's bugs (issue 32): each 2026 receive-path fix of rxe and siw the project
 * can name from public sources, taken back out by patches/reverted-2026/<line>/<id>.patch
 * (written by patches/reverted-2026/revert.py, built by scripts/setup/benchmark-modules.sh).
 * `detects` names the assertion written as its reproducer; the benchmark reports whatever
 * assertion or fuzz input detected it.
 */
export interface BenchmarkBug {
  /** The patch's name, rxe-* or siw-*. */
  readonly id: string;
  readonly driver: 'rxe' | 'siw';
  readonly title: string;
  readonly cve?: string;
  /** The reproducer assertion. */
  readonly detects: string;
}

export const BENCHMARK_BUGS: readonly BenchmarkBug[] = [
  {
    id: 'siw-null-rx-fpdu',
    driver: 'siw',
    title: 'siw: NULL dereference on a bad first header',
    cve: 'CVE-2026-23242',
    detects: 'siw-rdmap-unknown-opcode-first',
  },
  {
    id: 'siw-mpa-underflow',
    driver: 'siw',
    title: 'siw: MPA FPDU length underflow',
    detects: 'siw-mpa-length-underflow',
  },
  {
    id: 'siw-header-split',
    driver: 'siw',
    title: 'siw: fragmented header copies',
    detects: 'siw-mpa-header-split',
  },
  {
    id: 'rxe-unknown-opcode-icrc',
    driver: 'rxe',
    title: 'rxe: unknown opcodes before ICRC processing',
    detects: 'roce-responder-unknown-opcode-multicast',
  },
  {
    id: 'rxe-atomic-write-zero-length',
    driver: 'rxe',
    title: 'rxe: zero-length ATOMIC WRITE',
    cve: 'CVE-2026-46114',
    detects: 'roce-responder-atomic-write-zero-length',
  },
  {
    id: 'rxe-mr-check-range',
    driver: 'rxe',
    title: 'rxe: mr_check_range() overflow',
    detects: 'roce-responder-va-wrap-write',
  },
];

/** The device the benchmark probes for a driver. */
export function benchmarkDevice(driver: BenchmarkBug['driver']): 'rxe0' | 'siw0' {
  return driver === 'rxe' ? 'rxe0' : 'siw0';
}

/** The guest environment variable naming the module variant to load: `<driver>:<bug id>`. */
export const BENCHMARK_MODULE_ENV = 'RDMA_INTEROP_BENCHMARK_MODULE';

/** `RDMA_INTEROP_BENCHMARK_BUGS=<id,...>`: only these variants (to measure one again). */
export const BENCHMARK_BUGS_ENV = 'RDMA_INTEROP_BENCHMARK_BUGS';

/**
 * The bugs a run measures: those of `devices` (all when undefined), narrowed to the ids the
 * environment names. An id that names no bug is refused, before any guest boots.
 */
export function selectBenchmarkBugs(
  devices: readonly string[] | undefined,
  env: NodeJS.ProcessEnv = process.env,
): BenchmarkBug[] {
  const chosen = (env[BENCHMARK_BUGS_ENV] ?? '').split(',').filter((x) => x !== '');
  for (const id of chosen)
    if (!BENCHMARK_BUGS.some((b) => b.id === id))
      throw new UnknownNameError(
        'cli',
        'benchmark bug',
        id,
        BENCHMARK_BUGS.map((b) => b.id),
        BENCHMARK_BUGS_ENV,
      );
  return BENCHMARK_BUGS.filter(
    (b) =>
      (devices === undefined || devices.includes(benchmarkDevice(b.driver))) &&
      (chosen.length === 0 || chosen.includes(b.id)),
  );
}
