import { type Command, Option } from 'commander';
import {
  abortOnSignals,
  cacheRoot,
  DEFAULT_KERNEL_LINE,
  GuestRuntimeError,
  setupGuestAssets,
} from '../../runtime/index.js';
import { reportGuestFailure } from '../devices-or-guest.js';
import { cacheDirOption, kernelLineName } from '../options.js';

/**
 * `rdma-interop setup`: makes the QEMU guest runtime ready from wherever the package is
 * installed: the Debian packages it needs (installed when root, else the apt command to
 * run), then Debian's kernel, modules, siw.ko and an initramfs in the cache directory (and
 * the kernel line's own rdma-core build). Idempotent: a second run only checks. `vm` and
 * `run` do the same on first use.
 */
export function registerSetup(program: Command): void {
  program
    .command('setup')
    .description('set up the QEMU guest runtime: Debian packages, then the guest kernel assets')
    .addOption(
      new Option(
        '--kernel <line>',
        `the kernel line to set up (with its rdma-core, if it runs with one built from source)`,
      )
        .argParser(kernelLineName)
        .default(DEFAULT_KERNEL_LINE),
    )
    .addOption(cacheDirOption())
    .action(async (opts: { kernel: string }) => {
      const interrupt = abortOnSignals();
      process.stderr.write(`[setup] cache directory: ${cacheRoot()}; kernel line ${opts.kernel}\n`);
      try {
        const assets = await setupGuestAssets({
          onProgress: (line) => process.stderr.write(`${line}\n`),
          signal: interrupt.signal,
          kernelLine: opts.kernel,
        });
        process.stdout.write(
          `guest kernel ${assets.kernelRelease} (${assets.packageVersion}) ready: ${assets.kernel}\n`,
        );
      } catch (error) {
        if (!(error instanceof GuestRuntimeError)) throw error;
        process.exitCode = reportGuestFailure(
          error,
          interrupt.received(),
          'rdma-interop setup',
          '[setup]',
        );
      } finally {
        interrupt.dispose();
      }
    });
}
