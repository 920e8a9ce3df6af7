/**
 * The rdma-core userspace a guest run uses: the host's own (what the guest sees of the
 * host's root), or one built from source in place by scripts/setup/rdma-core.sh, which
 * the guest loads through LD_LIBRARY_PATH. An in-place build has its provider directory
 * and driver files (`<build>/etc/libibverbs.d`, absolute paths into `<build>/lib`)
 * compiled in, so the library path is all it needs. The addon links `libibverbs.so.1`
 * by soname and so loads the built library unchanged.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { GuestRuntimeError } from './errors.js';
import { cacheRoot } from './paths.js';

/** Where rdma-core.sh builds `version` (no patches). */
export function rdmaCoreBuildDir(version: string): string {
  return join(cacheRoot(), 'rdma-core', version, 'build');
}

/**
 * The environment that makes a guest command use rdma-core `version` built by
 * rdma-core.sh; a typed error when it is not built yet.
 */
export function rdmaCoreEnv(version: string): Record<string, string> {
  const build = rdmaCoreBuildDir(version);
  if (!existsSync(join(build, '..', '.complete'))) {
    throw new GuestRuntimeError(
      'assets-missing',
      `rdma-core ${version} is not built: run 'bash scripts/setup/rdma-core.sh ${version}' (or 'rdma-interop setup --kernel <line>')`,
    );
  }
  return { LD_LIBRARY_PATH: join(build, 'lib') };
}
