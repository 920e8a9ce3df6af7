import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The package root (where package.json is), from the compiled file's location. */
export function packageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    if (existsSync(join(dir, 'package.json')) && existsSync(join(dir, 'scripts'))) return dir;
    dir = dirname(dir);
  }
  throw new Error(`rdma-interop: cannot find the package root above ${import.meta.url}`);
}

/** The git-ignored cache of set-up results (guest kernel, initramfs, probes). */
export function cacheRoot(): string {
  return resolve(process.env.RDMA_INTEROP_CACHE ?? join(packageRoot(), '.cache'));
}
