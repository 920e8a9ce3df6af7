import type { Command } from 'commander';
import {
  abortOnSignals,
  cacheRoot,
  GuestRuntimeError,
  setupGuestAssets,
  useCacheDir,
} from '../../runtime/index.js';
import { reportGuestFailure } from '../devices-or-guest.js';

/**
 * `rdma-interop setup`: makes the QEMU guest runtime ready from wherever the package is
 * installed: the Debian packages it needs (installed when root, else the apt command to
 * run), then Debian's kernel, modules, siw.ko and an initramfs in the cache directory.
 * Idempotent: a second run only checks. `vm` and `run` do the same on first use.
 */
export function registerSetup(program: Command): void {
  program
    .command('setup')
    .description('set up the QEMU guest runtime: Debian packages, then the guest kernel assets')
    .option(
      '--cache-dir <dir>',
      'where the guest assets go (default: $RDMA_INTEROP_CACHE, $XDG_CACHE_HOME/rdma-interop, ~/.cache/rdma-interop; .cache/ in a checkout)',
    )
    .action(async (opts: { cacheDir?: string }) => {
      if (opts.cacheDir !== undefined) useCacheDir(opts.cacheDir);
      const interrupt = abortOnSignals();
      process.stderr.write(`[setup] cache directory: ${cacheRoot()}\n`);
      try {
        const assets = await setupGuestAssets({
          onProgress: (line) => process.stderr.write(`${line}\n`),
          signal: interrupt.signal,
        });
        process.stdout.write(
          `guest kernel ${assets.kernelRelease} (${assets.packageVersion}) ready: ${assets.kernel}\n`,
        );
      } catch (error) {
        if (!(error instanceof GuestRuntimeError)) throw error;
        process.exitCode = reportGuestFailure(error, interrupt.received(), '[setup]');
      } finally {
        interrupt.dispose();
      }
    });
}
