/**
 * `vm --fixes`: the guest's rxe0 and siw0 on the fixed modules (patches/rxe-fixes,
 * patches/siw-fixes; issue 33), loaded at device set-up when `RDMA_INTEROP_FIXES=1`
 * (scripts/rdma-devices.sh -> scripts/guest/fixed-module.sh), and the command's
 * `LD_LIBRARY_PATH` on rdma-core 56.1 built with patches/rdma-core-fixes (the fixed librxe
 * and libsiw). All three live next to the kernel's guest assets as links that
 * scripts/setup/fixes.sh makes (`rdma_rxe-fixes.ko`, `siw-fixes.ko`, `fixes-rdma-core`).
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { GuestAssets } from './assets.js';
import { GuestRuntimeError } from './errors.js';

/** Set to `1` in the command's environment on the fixed build (and read by rdma-devices.sh). */
export const FIXES_ENV = 'RDMA_INTEROP_FIXES';

/** True when this process runs on the fixed build: its guest was set up with fixesEnv. */
export function onFixedBuild(env: NodeJS.ProcessEnv = process.env): boolean {
  return env[FIXES_ENV] === '1';
}

/** The environment that puts rxe0, siw0 and their providers on the fixed build. */
export function fixesEnv(assets: GuestAssets): Record<string, string> {
  // modulesRoot is <assets dir>/root (assets.ts); the links sit in <assets dir>.
  const dir = dirname(assets.modulesRoot);
  const lib = join(dir, 'fixes-rdma-core', 'lib');
  const wanted = [join(dir, 'rdma_rxe-fixes.ko'), join(dir, 'siw-fixes.ko'), lib];
  const missing = wanted.filter((p) => !existsSync(p));
  if (missing.length > 0)
    throw new GuestRuntimeError(
      'assets-missing',
      `no fixed build for kernel ${assets.kernelRelease} (${missing.join(', ')} missing): build it with 'bash scripts/setup/fixes.sh <line>'`,
    );
  return { [FIXES_ENV]: '1', LD_LIBRARY_PATH: lib };
}

/**
 * `run --fixes --siw rfc7306`: siw0 on the RFC 7306 series with the fixes on top and the
 * command on rdma-core 56.1 built with patches/rdma-core/ then patches/rdma-core-fixes/
 * (scripts/setup/fixes.sh), next to the guest's modules root (`MODULES_ROOT`, in the guest)
 * as `siw-rfc7306-fixes.ko` and `siw-rfc7306-fixes-rdma-core`. The module is loaded by
 * scripts/guest/fixed-module.sh `siw rfc7306-fixed`; this is the library's path.
 */
export function combinedLibraryPath(modulesRoot = process.env.MODULES_ROOT ?? ''): string {
  return join(modulesRoot, '..', 'siw-rfc7306-fixes-rdma-core', 'lib');
}

/**
 * Puts siw0 on the fixed siw (`fixed`) or on the RFC 7306 series with the fixes on top
 * (`rfc7306-fixed`): scripts/guest/fixed-module.sh. Root in the guest only; no siw QP may
 * be open.
 */
export function switchFixedSiw(kind: 'fixed' | 'rfc7306-fixed'): void {
  const root = process.env.RDMA_INTEROP_ROOT ?? join(import.meta.dirname, '..', '..');
  execFileSync('bash', [join(root, 'scripts/guest/fixed-module.sh'), 'siw', kind], {
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}
