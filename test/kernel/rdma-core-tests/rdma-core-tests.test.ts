/**
 * rdma-core's own tests as a second oracle (issue 36), in the kernel stage's guest (no
 * boot of its own): rdma-core 56.1's Python tests with the pyverbs scripts/setup/pyverbs.sh
 * builds, on rxe0 and on siw0, judged by src/rdma-core-tests/records.ts. Every failure
 * must be explained by a record (`known`); an unexplained one (`finding`) or a record whose
 * test passed (`stale`) fails. The bounded selection: every test but the vendor modules
 * (VENDOR_MODULES: mlx5, EFA, CUDA, which skip on rxe and siw for a vendor reason);
 * `npm run rdma-core-tests` runs the whole set on every kernel line.
 */
import { describe, expect, it } from 'vitest';
import {
  runTestsHere,
  testPassed,
  testPaths,
  VENDOR_MODULES,
  verdictCounts,
} from '../../../src/rdma-core-tests/index.js';

describe("rdma-core's own tests on this kernel", () => {
  for (const device of ['rxe0', 'siw0'] as const) {
    it(`${device}: every failure is explained by a record`, async () => {
      const started = performance.now();
      const run = await runTestsHere(testPaths(), [device], [], VENDOR_MODULES);
      const seconds = (performance.now() - started) / 1000;
      process.stderr.write(
        `rdma-core-tests ${device} on ${run.kernel}: ${run.results.length} tests, ${verdictCounts(run.results)} in ${seconds.toFixed(1)} s\n`,
      );
      expect(run.truncated, 'the runner stopped before its last test').toEqual([]);
      // The selection ran (a broken pyverbs or loader gives no tests or import errors).
      expect(run.results.length).toBeGreaterThan(100);
      expect(run.results.some((r) => r.id.startsWith('tests.test_mlx5_'))).toBe(false);
      // Resources every provider has: these pass on rxe and siw alike.
      for (const id of [
        'tests.test_pd.PDTest.test_alloc_pd',
        'tests.test_device.DeviceTest.test_query_device',
      ])
        expect(run.results.find((r) => r.id === id)?.verdict, id).toBe('pass');
      const unexplained = run.results
        .filter((r) => !testPassed(r.verdict))
        .map(
          (r) => `${r.verdict} ${r.id}: ${r.message?.split('\n').at(-1) ?? r.explainedBy ?? ''}`,
        );
      expect(unexplained).toEqual([]);
    }, 420_000);
  }
});
