/**
 * `rdma-interop rdma-core-tests` on the host (no guest boots): its usage errors (exit 2,
 * one line), the typed error of a cache without pyverbs (exit 1, one line, no stack
 * trace), and `--list` with `--filter` on the cache's pyverbs build (scripts/setup/pyverbs.sh).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { RDMA_CORE_TESTS_VERSION } from '../../../src/rdma-core-tests/index.js';
import { cacheRoot } from '../../../src/runtime/paths.js';
import { itUnless } from '../../helpers/not-run.js';

const CLI = join(process.cwd(), 'dist', 'cli', 'main.js');

function cli(args: readonly string[], env: NodeJS.ProcessEnv = {}) {
  const r = spawnSync(process.execPath, [CLI, 'rdma-core-tests', ...args], {
    encoding: 'utf8',
    env: { ...process.env, ...env },
    timeout: 60_000,
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

const lines = (text: string) => text.replace(/\n$/, '').split('\n');

describe('rdma-core-tests: usage errors, exit 2, one line, nothing started', () => {
  it.each([
    [
      ['--device', 'rxe0,mlx5_0'],
      /argument 'rxe0,mlx5_0' is invalid\. unknown device mlx5_0; the guest's devices are rxe0, siw0/,
    ],
    [['--device', ','], /unknown device \(none\)/],
    [
      ['--kernel', '5.10'],
      /option '--kernel <line>' argument '5\.10' is invalid\. Expected a kernel line/,
    ],
    [
      ['--kernels', '6.1,5.10'],
      /Unknown kernel line 5\.10; the lines are 6\.1, 6\.12, 7\.3 \(or 'all'\)\./,
    ],
    [
      ['--kernels', 'all', '--kernel', '6.1'],
      /'--kernels <lines>' cannot be used with option '--kernel/,
    ],
    [['--filter', ''], /option '--filter <glob>' argument '' is invalid\. Expected a test id glob/],
    [['--list', '--report', 'r'], /'--list' cannot be used with option '--report/],
    [['--timeout', 'soon'], /option '--timeout <seconds>' argument 'soon' is invalid/],
    [['--bogus'], /unknown option '--bogus'/],
  ])('%j', (args, message) => {
    const r = cli(args);
    expect(r.status, r.stderr).toBe(2);
    expect(r.stdout).toBe('');
    expect(lines(r.stderr)).toHaveLength(1);
    expect(r.stderr).toMatch(/^rdma-interop rdma-core-tests: error: /);
    expect(r.stderr).toMatch(message);
  });
});

describe('rdma-core-tests: a cache without pyverbs', () => {
  it('exits 1 with one line naming the set-up script, no stack trace', () => {
    const empty = mkdtempSync(join(tmpdir(), 'rdma-core-tests-cache-'));
    const r = cli(['--kernel', '6.12'], { RDMA_INTEROP_CACHE: empty });
    expect(r.status).toBe(1);
    expect(lines(r.stderr)).toEqual([
      `rdma-interop rdma-core-tests: error: ${join(empty, 'rdma-core', '56.1', 'pyverbs-build')}: pyverbs 56.1 is not built: run 'bash scripts/setup/pyverbs.sh 56.1'`,
    ]);
  });
});

const built = existsSync(
  join(cacheRoot(), 'rdma-core', RDMA_CORE_TESTS_VERSION, 'pyverbs-build', '.complete'),
);
const NOT_BUILT = 'pyverbs is not built in this cache (scripts/setup/pyverbs.sh 56.1)';

describe('rdma-core-tests --list (the cached pyverbs build, no device needed)', () => {
  itUnless(!built, NOT_BUILT)(
    'lists unittest ids; --filter selects, a filter matching nothing is refused',
    () => {
      const all = cli(['--list']);
      expect(all.status, all.stderr).toBe(0);
      const ids = lines(all.stdout);
      // rdma-core 56.1's tests/: 321 tests in 47 modules, the vendor modules among them.
      expect(ids.length).toBe(321);
      expect(ids).toContain('tests.test_cq.CQTest.test_resize_cq');
      expect(ids.some((id) => id.startsWith('tests.test_mlx5_'))).toBe(true);
      const cq = cli(['--list', '--filter', 'tests.test_cq.*', '--filter', '*.test_alloc_pd']);
      expect(lines(cq.stdout)).toEqual([
        'tests.test_cq.CQAPITest.test_create_cq',
        'tests.test_cq.CQAPITest.test_create_cq_bad_flow',
        'tests.test_cq.CQAPITest.test_create_cq_with_comp_channel',
        'tests.test_cq.CQTest.test_resize_cq',
        'tests.test_pd.PDTest.test_alloc_pd',
      ]);
      const none = cli(['--list', '--filter', 'tests.no_such_*']);
      expect(none.status).toBe(2);
      expect(none.stderr).toMatch(/no rdma-core test matches tests\.no_such_\*/);
    },
  );
});
