/**
 * The guest runtime's set-up from wherever the package is (a checkout or node_modules):
 * the Debian packages QEMU and the asset build need, then the guest kernel, modules, siw.ko
 * and initramfs into the cache directory (paths.ts), never into the package itself.
 * The work is done by the scripts under scripts/setup/ (the same ones `npm run setup`
 * uses in a checkout); this module runs them, streams their progress and maps failures
 * to typed errors.
 */
import { join } from 'node:path';
import { requireKnownOptions } from '../arguments.js';
import { ArgumentError } from '../errors.js';
import { findGuestAssets, type GuestAssets } from './assets.js';
import { GuestRuntimeError } from './errors.js';
import { DEFAULT_KERNEL_LINE, kernelLine } from './kernel-lines.js';
import { runLineChild } from './line-child.js';
import { cacheRoot, packageRoot } from './paths.js';

export interface SetupOptions {
  /** One line per step (`[setup] ...`), as the scripts print them. */
  readonly onProgress?: (line: string) => void;
  /** Aborting stops the set-up scripts (their whole process group). */
  readonly signal?: AbortSignal;
  /** The kernel line to set up (kernel-lines.ts); default 6.1. */
  readonly kernelLine?: string;
}

/** Every option of SetupOptions (the compiler checks the record is complete). */
const SETUP_OPTIONS: readonly string[] = Object.keys({
  onProgress: true,
  signal: true,
  kernelLine: true,
} satisfies Record<keyof SetupOptions, true>);

/** apt.sh's status for "packages missing and not root" (it prints the apt command). */
const PACKAGES_MISSING_STATUS = 3;
const TAIL_LINES = 20;

/** Runs one set-up script; resolves when it succeeds, rejects with a typed error. */
export function runScript(
  script: string,
  args: readonly string[],
  options: SetupOptions,
): Promise<void> {
  const progress = options.onProgress ?? (() => {});
  if (options.signal?.aborted)
    return Promise.reject(new GuestRuntimeError('aborted', 'set-up stopped before it started'));
  const tail: string[] = [];
  const onLine = (line: string) => {
    if (line === '') return;
    tail.push(line);
    if (tail.length > TAIL_LINES) tail.shift();
    progress(line);
  };
  return runLineChild('bash', [join(packageRoot(), 'scripts', 'setup', script), ...args], {
    env: { ...process.env, RDMA_INTEROP_CACHE: cacheRoot() },
    ...(options.signal === undefined ? {} : { signal: options.signal }),
    // The group: an abort stops the script and what it started (apt-get, make) together.
    killSignal: 'SIGTERM',
    lineBreak: /\n/,
    onLine,
  }).then(({ status, aborted, error }) => {
    if (error !== undefined)
      throw new GuestRuntimeError('setup-failed', `cannot run bash: ${error.message}`);
    if (aborted) throw new GuestRuntimeError('aborted', `set-up stopped during ${script}`);
    if (status === 0) return;
    if (status === PACKAGES_MISSING_STATUS)
      throw new GuestRuntimeError('packages-missing', tail.join('\n'));
    throw new GuestRuntimeError(
      'setup-failed',
      `${script} failed (status ${status}):\n${tail.join('\n')}`,
    );
  });
}

/**
 * Makes the guest runtime ready for one kernel line: Debian packages (installed when root, else a
 * `packages-missing` error naming the apt command), then the guest assets in the cache
 * (cached by kernel version: a second call only checks). Resolves with the assets.
 */
export async function setupGuestAssets(options: SetupOptions = {}): Promise<GuestAssets> {
  // Checked before any script runs: an unknown option or kernel line does nothing else.
  requireKnownOptions('runtime', 'options', options, SETUP_OPTIONS);
  if (options.onProgress !== undefined && typeof options.onProgress !== 'function')
    throw new ArgumentError('runtime', 'options.onProgress', 'not a function');
  if (options.signal !== undefined && !(options.signal instanceof AbortSignal))
    throw new ArgumentError('runtime', 'options.signal', 'not an AbortSignal');
  const line = options.kernelLine ?? DEFAULT_KERNEL_LINE;
  const known = kernelLine(line);
  await runScript('apt.sh', ['runtime'], options);
  await runScript('guest-assets.sh', [line], options);
  // The line's own rdma-core (built from source), when it runs with one.
  if (known.rdmaCore !== undefined) await runScript('rdma-core.sh', [known.rdmaCore], options);
  return findGuestAssets(line);
}
