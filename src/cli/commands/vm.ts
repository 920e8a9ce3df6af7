import { type Command, InvalidArgumentError, Option } from 'commander';
import { GuestRuntimeError, runInGuest } from '../../runtime/index.js';

function positiveInteger(value: string): number {
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed <= 0) {
    throw new InvalidArgumentError('must be a positive whole number');
  }
  return parsed;
}

/** `rdma-interop vm [options] -- <command...>`: run a command in the throwaway guest. */
export function registerVm(program: Command): void {
  program
    .command('vm')
    .description(
      'boot a throwaway QEMU guest (Debian kernel, rxe0 + siw0), run a command in it as root, exit with its status',
    )
    .option('--kernel <dir>', 'guest assets directory (default: .cache/guest/current)')
    .option('--timeout <seconds>', 'limit for boot + command', positiveInteger, 600)
    .option('--memory <MiB>', 'guest memory', positiveInteger, 2048)
    .option('--cpus <n>', 'guest CPUs', positiveInteger, 2)
    .addOption(
      new Option('--accel <accel>', 'accelerator').choices(['auto', 'kvm', 'tcg']).default('auto'),
    )
    .option('--share <dir>', 'writable directory shared with the guest at the same path')
    .argument('<command...>', 'the command to run (put it after --)')
    .action(async (command: string[], opts: Record<string, unknown>) => {
      try {
        const result = await runInGuest({
          command,
          timeoutSeconds: opts.timeout as number,
          memoryMiB: opts.memory as number,
          cpus: opts.cpus as number,
          accel: opts.accel as 'auto' | 'kvm' | 'tcg',
          ...(typeof opts.kernel === 'string' ? { kernelDir: opts.kernel } : {}),
          ...(typeof opts.share === 'string' ? { shareDir: opts.share } : {}),
          onProgress: (line) => process.stderr.write(`[vm] ${line}\n`),
        });
        process.exitCode = result.exitCode;
      } catch (error) {
        if (error instanceof GuestRuntimeError) {
          process.stderr.write(`[vm] error (${error.failure}): ${error.message}\n`);
          process.exitCode = 125;
          return;
        }
        throw error;
      }
    });
}
