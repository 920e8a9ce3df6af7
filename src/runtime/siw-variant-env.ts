/**
 * `vm --siw stock|rfc7306`: which siw a guest's siw0 runs on, for any program. The
 * patched module (patches/siw/, RFC 7306) is loaded at device set-up when
 * `RDMA_INTEROP_SIW=rfc7306` (scripts/rdma-devices.sh -> scripts/guest/siw-module.sh), and
 * a program reaches its provider only through the patched libsiw, which the command's
 * `LD_LIBRARY_PATH` points at. Both live next to the kernel's guest assets as links that
 * scripts/setup/siw-patched.sh makes (`siw-rfc7306.ko`, `siw-rfc7306-rdma-core`).
 */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { GuestAssets } from './assets.js';
import { GuestRuntimeError } from './errors.js';

export const SIW_VARIANTS = ['stock', 'rfc7306'] as const;
export type SiwVariant = (typeof SIW_VARIANTS)[number];

/** The environment that puts siw0 and its provider on `variant` in the guest. */
export function siwVariantEnv(variant: SiwVariant, assets: GuestAssets): Record<string, string> {
  if (variant === 'stock') return { RDMA_INTEROP_SIW: 'stock' };
  // modulesRoot is <assets dir>/root (assets.ts); the links sit in <assets dir>.
  const dir = dirname(assets.modulesRoot);
  const module = join(dir, 'siw-rfc7306.ko');
  const lib = join(dir, 'siw-rfc7306-rdma-core', 'lib');
  const missing = [module, lib].filter((p) => !existsSync(p));
  if (missing.length > 0)
    throw new GuestRuntimeError(
      'assets-missing',
      `no patched siw for kernel ${assets.kernelRelease} (${missing.join(', ')} missing): build it with 'bash scripts/setup/siw-patched.sh <line>' (the set-up builds it for every kernel line; a kernel of one's own has none)`,
    );
  return { RDMA_INTEROP_SIW: 'rfc7306', LD_LIBRARY_PATH: lib };
}
