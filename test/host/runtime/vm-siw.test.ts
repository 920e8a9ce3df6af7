/**
 * `vm --siw rfc7306` (issue 24): the patched siw.ko and its libsiw for any program, not
 * only the suite. One guest boot on the 6.1 line (the one the set-up builds the patched
 * siw for): an outside program (rdma-core's own ibv_devinfo) sees siw0 on the patched
 * module through the patched provider. `--siw` on a kernel without a patched build (a
 * kernel of one's own) is a clear error before any boot.
 */
import { spawnSync } from 'node:child_process';
import { realpathSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cacheRoot } from '../../../src/runtime/index.js';

const cli = (...args: string[]) =>
  spawnSync(process.execPath, ['dist/cli/main.js', 'vm', ...args], {
    encoding: 'utf8',
    timeout: 300_000,
  });

describe('vm --siw', () => {
  it('rfc7306: siw0 runs the patched module and programs load the patched libsiw', () => {
    const probe = [
      'cat /sys/module/siw/parameters/rfc7306',
      'ibv_devinfo -v -d siw0 | grep -m1 -o "atomic_cap:.*"',
      // which libsiw the dynamic linker gave ibv_devinfo
      'LD_DEBUG=libs ibv_devinfo -d siw0 2>&1 >/dev/null | grep -m1 -o "/[^ ]*libsiw[^ ]*"',
    ].join('; ');
    const r = cli('--timeout', '240', '--siw', 'rfc7306', '--', 'bash', '-c', probe);
    expect(r.status, r.stderr.slice(-3000)).toBe(0);
    const [param, atomic, lib] = r.stdout.trim().split('\n');
    expect(param).toBe('Y');
    // The patch's device attribute (0003: atomic_cap IB_ATOMIC_HCA with rfc7306=1).
    expect(atomic?.replace(/\s+/g, ' ')).toBe('atomic_cap: ATOMIC_HCA (1)');
    // The patched rdma-core build the assets link to (scripts/setup/siw-patched.sh).
    const patched = realpathSync(join(cacheRoot(), 'guest', 'current', 'siw-rfc7306-rdma-core'));
    expect(lib?.startsWith(`${patched}/lib/`), lib).toBe(true);
    expect(lib).toMatch(/libsiw-rdmav\d+\.so$/);
  }, 300_000);

  it('on a kernel without a patched build: one error line naming the set-up step', () => {
    // The set-up builds the patched siw for every kernel line, so the kernel without one
    // is a kernel of one's own (here Debian's 6.1 image and modules tree, as
    // own-kernel.test.ts uses them): its assets carry no siw-rfc7306 links.
    const debian = realpathSync(join(cacheRoot(), 'guest', 'current'));
    const r = cli(
      '--kernel',
      join(debian, 'vmlinuz'),
      '--modules',
      join(debian, 'root'),
      '--siw',
      'rfc7306',
      '--',
      'true',
    );
    expect(r.status, r.stderr).toBe(125);
    expect(r.stderr).toMatch(
      /^rdma-interop vm: error \(assets-missing\): no patched siw for kernel 6\.1\.[^ ]+ .*siw-patched\.sh/m,
    );
    expect(r.stderr).not.toMatch(/booting|at .*\.js:\d+/);
  });
});
