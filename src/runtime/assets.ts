import { existsSync, readFileSync, realpathSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { requireString } from '../arguments.js';
import { GuestRuntimeError } from './errors.js';
import { DEFAULT_KERNEL_LINE, findKernelLine, KERNEL_LINES } from './kernel-lines.js';
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
 * What `--kernel` names: a kernel line (`6.1`, `6.12`, `7.3`: the cached assets of that
 * line) or a directory of assets (vmlinuz, initramfs, root/). Anything else that is not
 * a directory is a usage error naming the lines.
 */
export type KernelSelection =
  | { readonly kind: 'line'; readonly line: string; readonly dir: string }
  | { readonly kind: 'dir'; readonly dir: string };

export function selectKernel(kernel: string | undefined): KernelSelection {
  if (kernel !== undefined) requireString('runtime', 'kernel', kernel);
  const name = kernel ?? DEFAULT_KERNEL_LINE;
  if (findKernelLine(name) !== undefined) {
    // The default line keeps its historical link `current`; the others have `line-<name>`.
    const link = name === DEFAULT_KERNEL_LINE ? 'current' : `line-${name}`;
    return { kind: 'line', line: name, dir: join(cacheRoot(), 'guest', link) };
  }
  if (existsSync(name)) return { kind: 'dir', dir: resolve(name) };
  throw new GuestRuntimeError(
    'assets-missing',
    `--kernel ${name}: neither a kernel line (${KERNEL_LINES.map((l) => l.line).join(', ')}) nor a directory of guest assets`,
  );
}

/**
 * Finds the cached guest assets: `kernel` is a kernel line or a directory with vmlinuz,
 * initramfs and root/; by default, the one `guest/current` points at (the 6.1 line).
 */
export function findGuestAssets(kernel?: string): GuestAssets {
  if (kernel !== undefined) requireString('runtime', 'kernel', kernel);
  const selected = selectKernel(kernel);
  const dir = selected.dir;
  const stamp = join(dir, '.complete');
  if (!existsSync(stamp)) {
    const how =
      selected.kind === 'line'
        ? `run 'rdma-interop setup --kernel ${selected.line}' first (in a checkout: bash scripts/setup/guest-assets.sh ${selected.line})`
        : `run 'rdma-interop setup' first (in a checkout: npm run setup)`;
    throw new GuestRuntimeError('assets-missing', `no guest kernel at ${dir}: ${how}`);
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
