/**
 * Issue 9's "done means", end to end, as a user meets the package: the packed tarball
 * installed into a fresh project, `npx rdma-interop setup` building the guest assets into
 * the user's cache (XDG_CACHE_HOME, never node_modules, no lock file), then
 * `npx rdma-interop run` booting the guest and running FetchAdd scenarios on rxe0 from
 * that project. The steps are scripts/ci/installed-e2e.sh (also runnable by hand); this
 * test asserts what it printed. It boots a guest, so it is left out exactly when the
 * kernel tests are (RDMA_INTEROP_SKIP_KERNEL_TESTS=1, never in CI).
 */
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';

const skipGuest = process.env.RDMA_INTEROP_SKIP_KERNEL_TESTS === '1';

describe('the installed package', () => {
  it.skipIf(skipGuest)(
    'npm install <tarball>, npx rdma-interop setup, npx rdma-interop run: guest assets in the user cache, scenarios pass',
    () => {
      const result = spawnSync('bash', ['scripts/ci/installed-e2e.sh'], {
        encoding: 'utf8',
        env: { ...process.env, CI: 'true' },
        timeout: 20 * 60_000,
      });
      const output = `${result.stdout}\n${result.stderr}`;
      expect(result.status, output).toBe(0);
      // setup built the assets in the fresh XDG cache, not in node_modules
      expect(output).toMatch(/guest assets for [^\n]+ ready in \S+\/cache\/rdma-interop\//);
      // run ran the selected scenarios on the device and all of them passed
      expect(output).toMatch(/installed-e2e: \d+ scenario results, all passed/);
    },
    20 * 60_000,
  );
});
