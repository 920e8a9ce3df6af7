import { type Command, Option } from 'commander';
import {
  abortOnSignals,
  GuestRuntimeError,
  runInGuest,
  SIW_VARIANTS,
  type SiwVariant,
} from '../../runtime/index.js';
import { reportGuestFailure } from '../devices-or-guest.js';
import {
  cacheDirOption,
  kernelOption,
  modulesOption,
  positiveInteger,
  rdmaCoreChoice,
  timeoutOption,
} from '../options.js';

interface VmOptions {
  readonly kernel?: string;
  readonly rdmaCore: string;
  readonly timeout: number;
  readonly memory: number;
  readonly cpus: number;
  readonly accel: 'auto' | 'kvm' | 'tcg';
  readonly share?: string;
  readonly modules?: string;
  readonly siw?: SiwVariant;
  readonly fixes?: boolean;
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
    .addOption(kernelOption())
    .addOption(modulesOption())
    .addOption(
      new Option(
        '--rdma-core <which>',
        "userspace: 'line' (the kernel line's own: host 44 for 6.1, 56.1 built from source for 6.12 and 7.3), 'host', or a version built by scripts/setup/rdma-core.sh",
      )
        .argParser(rdmaCoreChoice)
        .default('line'),
    )
    .addOption(timeoutOption('limit for boot + command', 600))
    .addOption(
      new Option('--memory <MiB>', 'guest memory').argParser(positiveInteger).default(2048),
    )
    .addOption(new Option('--cpus <n>', 'guest CPUs').argParser(positiveInteger).default(2))
    .addOption(
      new Option('--accel <accel>', 'accelerator').choices(['auto', 'kvm', 'tcg']).default('auto'),
    )
    .addOption(
      new Option(
        '--siw <variant>',
        "which siw siw0 runs on, for any program: 'stock', or 'rfc7306' (the project's patched siw.ko and its libsiw on the command's LD_LIBRARY_PATH; docs/siw-rfc7306.md)",
      ).choices(SIW_VARIANTS),
    )
    .option(
      '--fixes',
      "rxe0 and siw0 on the project's fixed modules and the command on the fixed librxe/libsiw (patches/*-fixes, repro/README.md; built by scripts/setup/fixes.sh); not with --siw rfc7306",
    )
    .option(
      '--share <dir>',
      'writable directory shared with the guest at the same path (created if missing)',
    )
    .addOption(cacheDirOption())
    .argument('<command...>', 'the command to run (put it after --)')
    .action(async (command: string[], opts: VmOptions) => {
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
          timeoutSeconds: opts.timeout,
          memoryMiB: opts.memory,
          cpus: opts.cpus,
          accel: opts.accel,
          ...(opts.kernel === undefined ? {} : { kernel: opts.kernel }),
          ...(opts.modules === undefined ? {} : { modules: opts.modules }),
          rdmaCore: opts.rdmaCore,
          ...(opts.share === undefined ? {} : { shareDir: opts.share }),
          ...(opts.siw === undefined ? {} : { siw: opts.siw }),
          ...(opts.fixes === true ? { fixes: true } : {}),
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
        process.exitCode = reportGuestFailure(error, interrupt.received(), 'rdma-interop vm');
      } finally {
        interrupt.dispose();
      }
    });
}
