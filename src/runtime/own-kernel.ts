/**
 * `--kernel <bzImage | kernel build tree> [--modules <dir>]`: a kernel of one's own, for
 * the people who change rxe and siw. The image's release is read from the image itself;
 * the modules come from `<dir>` (a `make modules_install INSTALL_MOD_PATH=<dir>` tree) or,
 * for a build tree without `--modules`, from the tree's own `.ko` files. From these the
 * runtime makes guest assets like a Debian line's (initramfs, modules root) in the cache,
 * keyed by the image and the modules, so the next run boots at once.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  closeSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { basename, join, relative, resolve } from 'node:path';
import { GuestRuntimeError } from './errors.js';
import { cacheRoot, packageRoot } from './paths.js';

/**
 * What the guest needs of a kernel, as modules or built in, with the option that builds
 * each (the runtime's 9p root and virtio-serial ports, the devices, the verbs uapi).
 */
export const REQUIRED_MODULES: readonly { readonly module: string; readonly config: string }[] = [
  { module: 'virtio_pci', config: 'CONFIG_VIRTIO_PCI' },
  { module: 'virtio_console', config: 'CONFIG_VIRTIO_CONSOLE' },
  { module: '9pnet_virtio', config: 'CONFIG_NET_9P_VIRTIO' },
  { module: '9p', config: 'CONFIG_9P_FS' },
  { module: 'overlay', config: 'CONFIG_OVERLAY_FS' },
  { module: 'dummy', config: 'CONFIG_DUMMY' },
  { module: 'ib_uverbs', config: 'CONFIG_INFINIBAND_USER_ACCESS' },
  {
    module: 'rdma_ucm',
    config: 'CONFIG_INFINIBAND_USER_ACCESS (with CONFIG_INFINIBAND_ADDR_TRANS)',
  },
  { module: 'rdma_rxe', config: 'CONFIG_RDMA_RXE' },
  { module: 'siw', config: 'CONFIG_RDMA_SIW' },
];

/** A kernel of one's own, as `--kernel` and `--modules` name it. */
export interface OwnKernel {
  /** The bzImage. */
  readonly image: string;
  /** A modules_install tree (holds lib/modules/<release>), or undefined: the build tree's. */
  readonly modules?: string;
  /** The build tree the image came from, when `--kernel` named one. */
  readonly tree?: string;
}

/** The bzImage of a build tree, or undefined when `path` is not one. */
function treeImage(path: string): string | undefined {
  const image = join(path, 'arch', 'x86', 'boot', 'bzImage');
  return existsSync(join(path, 'Makefile')) && existsSync(image) ? image : undefined;
}

/**
 * Reads what `--kernel` names as a kernel of one's own, or undefined when it is not one
 * (a kernel line, or a directory of prepared guest assets).
 */
export function ownKernelOf(kernel: string, modules: string | undefined): OwnKernel | undefined {
  const path = resolve(kernel);
  if (!existsSync(path)) return undefined;
  const stat = statSync(path);
  const withModules = modules === undefined ? {} : { modules: resolve(modules) };
  if (stat.isFile()) {
    if (modules === undefined)
      throw new GuestRuntimeError(
        'assets-missing',
        `--kernel ${kernel} is a kernel image: name its modules with --modules <dir> (a 'make modules_install INSTALL_MOD_PATH=<dir>' tree), or pass the build tree instead`,
      );
    return { image: path, ...withModules };
  }
  const image = treeImage(path);
  return image === undefined ? undefined : { image, tree: path, ...withModules };
}

/**
 * The release of a bzImage, from its real-mode header (Documentation/arch/x86/boot.rst):
 * "HdrS" at 0x202, and at 0x20E the offset (minus 0x200) of the version string, whose
 * first word is the release (`6.1.0-56-amd64 (debian-kernel@...) #1 SMP ...`).
 */
export function imageRelease(image: string): string {
  const fd = openSync(image, 'r');
  try {
    // The string lies in the real-mode setup code (setup_sects * 512 bytes, under 64 KiB).
    const header = Buffer.alloc(0x10000);
    const n = readSync(fd, header, 0, header.length, 0);
    if (n < 0x210 || header.toString('latin1', 0x202, 0x206) !== 'HdrS')
      throw new GuestRuntimeError(
        'assets-missing',
        `${image} is not an x86 bzImage (no HdrS header)`,
      );
    const at = header.readUInt16LE(0x20e) + 0x200;
    const end = header.indexOf(0, at);
    const version = header.toString('latin1', at, end < 0 ? n : end);
    const release = version.split(' ')[0] ?? '';
    if (release === '' || at >= n)
      throw new GuestRuntimeError(
        'assets-missing',
        `${image}: no kernel version string in its header`,
      );
    return release;
  } finally {
    closeSync(fd);
  }
}

/** `name` of `<moddir>/modules.dep` or `modules.builtin`, either as module or built in. */
function hasModule(moddir: string, name: string): boolean {
  const pattern = new RegExp(
    `(^|/)${name.replace(/[-_]/g, '[-_]')}\\.ko(\\.[a-z]+)?:?(\\s|$)`,
    'm',
  );
  for (const file of ['modules.dep', 'modules.builtin']) {
    const path = join(moddir, file);
    if (existsSync(path) && pattern.test(readFileSync(path, 'utf8'))) return true;
  }
  return false;
}

/** Copies the `.ko` files of a build tree into `<root>/lib/modules/<release>/kernel/`. */
function treeModules(tree: string, root: string, release: string): void {
  const dest = join(root, 'lib', 'modules', release, 'kernel');
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (entry.name.startsWith('.')) continue;
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.ko')) {
        const target = join(dest, relative(tree, path));
        mkdirSync(join(target, '..'), { recursive: true });
        copyFileSync(path, target);
      }
    }
  };
  walk(tree);
  for (const file of ['modules.builtin', 'modules.builtin.modinfo', 'modules.order'])
    if (existsSync(join(tree, file))) copyFileSync(join(tree, file), join(dest, '..', file));
}

/**
 * The guest assets for `own` (made on first use, cached by the image's and the modules'
 * identity): checks that the kernel has what the guest needs and says which options
 * are missing when it does not.
 */
export function prepareOwnKernel(own: OwnKernel, progress: (line: string) => void): string {
  const release = imageRelease(own.image);
  const modulesSource = own.modules ?? own.tree ?? '';
  const identity = [
    own.image,
    statSync(own.image).mtimeMs,
    statSync(own.image).size,
    modulesSource,
  ];
  if (own.modules !== undefined) {
    const dep = join(own.modules, 'lib', 'modules', release, 'modules.dep');
    identity.push(existsSync(dep) ? statSync(dep).mtimeMs : 0);
  }
  const key = createHash('sha256').update(identity.join('\0')).digest('hex').slice(0, 12);
  const dir = join(cacheRoot(), 'guest', `own-${release}-${key}`);
  // The assets proper sit in a subdirectory named after the release, which is what
  // findGuestAssets reports as the kernel release.
  const named = join(dir, release);
  if (existsSync(join(dir, '.complete'))) return named;

  progress(`own kernel ${release} (${own.image}): preparing guest assets in ${dir}`);
  try {
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    const root = join(dir, 'root');
    if (own.modules !== undefined) {
      const moddir = join(own.modules, 'lib', 'modules', release);
      if (!existsSync(moddir))
        throw new GuestRuntimeError(
          'assets-missing',
          `--modules ${own.modules} has no lib/modules/${release} (the image's release): run 'make modules_install INSTALL_MOD_PATH=<dir>' for this kernel`,
        );
      symlinkSync(own.modules, root);
    } else if (own.tree !== undefined) {
      treeModules(own.tree, root, release);
    }
    const moddir = join(root, 'lib', 'modules', release);
    if (!existsSync(join(moddir, 'modules.dep')) || own.modules === undefined)
      execFileSync('depmod', ['-b', root, release], { stdio: 'ignore' });
    const missing = REQUIRED_MODULES.filter((m) => !hasModule(moddir, m.module));
    if (missing.length > 0) {
      rmSync(dir, { recursive: true, force: true });
      throw new GuestRuntimeError(
        'assets-missing',
        `kernel ${release} lacks ${missing.map((m) => m.module).join(', ')}: build it with ${[...new Set(missing.map((m) => `${m.config}=m`))].join(', ')} (docs/kernel-developers.md)`,
      );
    }
    execFileSync(
      join(packageRoot(), 'scripts', 'guest', 'make-initramfs.sh'),
      [root, release, join(dir, 'initramfs.cpio.gz')],
      { stdio: 'ignore' },
    );
    copyFileSync(own.image, join(dir, 'vmlinuz'));
    mkdirSync(named);
    for (const f of ['vmlinuz', 'initramfs.cpio.gz']) symlinkSync(join(dir, f), join(named, f));
    symlinkSync(root, join(named, 'root'));
    writeFileSync(join(named, '.complete'), `own ${basename(own.image)}\n`);
    writeFileSync(join(dir, '.complete'), `own ${basename(own.image)}\n`);
  } catch (error) {
    // Nothing half-made stays in the cache: the next run starts over.
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  return named;
}
