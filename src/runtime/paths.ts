import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { requireString } from '../arguments.js';

/** The package root (where package.json is), from the compiled file's location. */
export function packageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    if (existsSync(join(dir, 'package.json')) && existsSync(join(dir, 'scripts'))) return dir;
    dir = dirname(dir);
  }
  throw new Error(`rdma-interop: cannot find the package root above ${import.meta.url}`);
}

/** True in a git checkout of the project (a clone or a worktree), false where installed. */
export function isCheckout(root: string = packageRoot()): boolean {
  return existsSync(join(root, '.git'));
}

/**
 * Where set-up results live (guest kernel, initramfs, KVM probes, run directories), first
 * that applies:
 *   1. `RDMA_INTEROP_CACHE` (the CLI's `--cache-dir` sets it, so it also reaches the
 *      set-up scripts and the guest);
 *   2. in a git checkout of the project, its git-ignored `.cache/`;
 *   3. `$XDG_CACHE_HOME/rdma-interop` (XDG Base Directory spec: only an absolute path counts);
 *   4. `~/.cache/rdma-interop`.
 * Never inside `node_modules`: an installed package's directory is replaced by the next
 * `npm ci`, and the assets are hundreds of megabytes.
 */
export function cacheRoot(): string {
  return resolveCacheRoot(process.env, packageRoot(), homedir());
}

/** The rule of cacheRoot() on given inputs (testable without touching the process). */
export function resolveCacheRoot(
  env: Readonly<Record<string, string | undefined>>,
  root: string,
  home: string,
): string {
  const fromEnv = env.RDMA_INTEROP_CACHE;
  if (fromEnv !== undefined && fromEnv !== '') return resolve(fromEnv);
  if (isCheckout(root)) return join(root, '.cache');
  const xdg = env.XDG_CACHE_HOME;
  const base = xdg !== undefined && isAbsolute(xdg) ? xdg : join(home, '.cache');
  return join(base, 'rdma-interop');
}

/** Makes `dir` the cache for this process and every process it starts (`--cache-dir`). */
export function useCacheDir(dir: string): void {
  requireString('runtime', 'dir', dir);
  process.env.RDMA_INTEROP_CACHE = resolve(dir);
}
