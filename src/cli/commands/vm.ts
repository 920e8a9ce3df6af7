import { type Command, InvalidArgumentError, Option } from 'commander';
import {
  abortOnSignals,
  DEFAULT_KERNEL_LINE,
  GuestRuntimeError,
  KERNEL_LINES,
  runInGuest,
  SIW_VARIANTS,
  type SiwVariant,
  useCacheDir,
} from '../../runtime/index.js';
import { reportGuestFailure } from '../devices-or-guest.js';

function positiveInteger(value: string): number {
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed <= 0) {
    throw new InvalidArgumentError('must be a positive whole number');
  }
  return parsed;
}

/**
 * `rdma-interop vm [options] -- <command...>`: run a command in the throwaway guest. Its
 * stdout and stderr arrive here byte for byte on stdout and stderr; the runtime's own
 * lines go to stderr only, prefixed `[vm]`.
 */
export function registerVm(program: Command): void {
  program
    .command('vm')
    .description(
      'boot a throwaway QEMU guest (Debian kernel, rxe0 + siw0), run a command in it as root, exit with its status',
    )
    .option(
      '--kernel <line|dir>',
      `kernel line (${KERNEL_LINES.map((l) => l.line).join(', ')}; set up on first use), a bzImage (with --modules), a kernel build tree, or a guest assets directory (default: ${DEFAULT_KERNEL_LINE})`,
    )
    .option(
      '--modules <dir>',
      "with --kernel <bzImage|build tree>: its 'make modules_install INSTALL_MOD_PATH=<dir>' tree (docs/kernel-developers.md)",
    )
    .option(
      '--rdma-core <which>',
      "userspace: 'line' (the kernel line's own: host 44 for 6.1, 56.1 built from source for 6.12 and 7.3), 'host', or a version built by scripts/setup/rdma-core.sh",
      'line',
    )
    .option('--timeout <seconds>', 'limit for boot + command', positiveInteger, 600)
    .option('--memory <MiB>', 'guest memory', positiveInteger, 2048)
    .option('--cpus <n>', 'guest CPUs', positiveInteger, 2)
    .addOption(
      new Option('--accel <accel>', 'accelerator').choices(['auto', 'kvm', 'tcg']).default('auto'),
    )
    .addOption(
      new Option(
        '--siw <variant>',
        "which siw siw0 runs on, for any program: 'stock', or 'rfc7306' (the project's patched siw.ko and its libsiw on the command's LD_LIBRARY_PATH; docs/siw-rfc7306.md)",
      ).choices(SIW_VARIANTS),
    )
    .option('--share <dir>', 'writable directory shared with the guest at the same path')
    .option(
      '--cache-dir <dir>',
      'guest assets and run directories (default: $RDMA_INTEROP_CACHE, else the user cache)',
    )
    .argument('<command...>', 'the command to run (put it after --)')
    .action(async (command: string[], opts: Record<string, unknown>) => {
      if (typeof opts.cacheDir === 'string') useCacheDir(opts.cacheDir);
      const interrupt = abortOnSignals();
      // A reader that goes away (`vm -- cat big | head -1`) is not a crash: the rest of the
      // output is dropped, the guest finishes, and its status is passed through.
      let stdoutOpen = true;
      process.stdout.on('error', () => {
        stdoutOpen = false;
      });
      try {
        const result = await runInGuest({
          command,
          timeoutSeconds: opts.timeout as number,
          memoryMiB: opts.memory as number,
          cpus: opts.cpus as number,
          accel: opts.accel as 'auto' | 'kvm' | 'tcg',
          ...(typeof opts.kernel === 'string' ? { kernel: opts.kernel } : {}),
          ...(typeof opts.modules === 'string' ? { modules: opts.modules } : {}),
          rdmaCore: opts.rdmaCore as string,
          ...(typeof opts.share === 'string' ? { shareDir: opts.share } : {}),
          ...(typeof opts.siw === 'string' ? { siw: opts.siw as SiwVariant } : {}),
          onOutput: (chunk) => {
            if (stdoutOpen) process.stdout.write(chunk);
          },
          onProgress: (line) => process.stderr.write(`[vm] ${line}\n`),
          signal: interrupt.signal,
          setup: 'if-missing',
        });
        process.exitCode = result.exitCode;
      } catch (error) {
        if (!(error instanceof GuestRuntimeError)) throw error;
        process.exitCode = reportGuestFailure(error, interrupt.received());
      } finally {
        interrupt.dispose();
      }
    });
}
