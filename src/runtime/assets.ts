import { existsSync, readFileSync, realpathSync } from 'node:fs';
import { basename, join } from 'node:path';
import { GuestRuntimeError } from './errors.js';
import { cacheRoot } from './paths.js';

/** The files a guest boots from, built by scripts/setup/guest-assets.sh. */
export interface GuestAssets {
  /** Kernel release, e.g. `6.1.0-56-amd64` (the modules directory name). */
  readonly kernelRelease: string;
  /** Debian package version the kernel came from, e.g. `6.1.192-2`. */
  readonly packageVersion: string;
  readonly kernel: string;
  readonly initramfs: string;
  /** Root holding `lib/modules/<release>` (extracted Debian modules plus siw.ko). */
  readonly modulesRoot: string;
}

/**
 * Finds the cached guest assets: `kernelDir` (a directory with vmlinuz, initramfs and
 * root/) or, by default, the one `guest/current` points at.
 */
export function findGuestAssets(kernelDir?: string): GuestAssets {
  const dir = kernelDir ?? join(cacheRoot(), 'guest', 'current');
  const stamp = join(dir, '.complete');
  if (!existsSync(stamp)) {
    throw new GuestRuntimeError(
      'assets-missing',
      `no guest kernel at ${dir}: run 'rdma-interop setup' first (in a checkout: npm run setup)`,
    );
  }
  const real = realpathSync(dir);
  return {
    kernelRelease: basename(real),
    packageVersion: readFileSync(stamp, 'utf8').trim().split(' ')[0] ?? '',
    // The ELF vmlinux boots through its PVH entry, about twice as fast under TCG; the
    // bzImage is the fallback when no ELF payload could be extracted.
    kernel: existsSync(join(real, 'vmlinux')) ? join(real, 'vmlinux') : join(real, 'vmlinuz'),
    initramfs: join(real, 'initramfs.cpio.gz'),
    modulesRoot: join(real, 'root'),
  };
}
