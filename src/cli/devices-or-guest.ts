/**
 * Commands that need real RDMA devices run where the devices are: on this host when it
 * has some (or when told to), else by running the same CLI command again inside the
 * throwaway QEMU guest, which has rxe0 and siw0.
 */
import {
  abortOnSignals,
  GuestRuntimeError,
  hostRdmaDevices,
  runInGuest,
  signalExitCode,
} from '../runtime/index.js';
import { errorLine } from './errors.js';
import type { Runtime } from './options.js';

/** `auto`: this host if it has devices, else the guest (`--runtime`, options.ts). */
export type Where = Runtime;

export interface DevicesOrGuestOptions {
  readonly where?: Where;
  /** `rdma-interop run`: the command whose error line a runtime failure prints. */
  readonly command: string;
  /** CLI arguments that make the guest run the command on its own devices. */
  readonly guestArgs: readonly string[];
  readonly timeoutSeconds?: number;
  readonly shareDir?: string;
  /** The guest's kernel line or assets directory (runtime/assets.ts); default 6.1. */
  readonly kernel?: string;
  /** With `kernel` a bzImage or build tree: its modules_install tree (runtime/own-kernel.ts). */
  readonly modules?: string;
  /** rxe0 and siw0 on the fixed build, the command on the fixed providers (runtime/fixes-env.ts). */
  readonly fixes?: boolean;
  /**
   * Stops the guest when aborted. SIGINT and SIGTERM always do (exit status 130, 143);
   * this is for a caller's own reasons on top of them.
   */
  readonly signal?: AbortSignal;
}

/** The status a command exits with when the guest could not run it (as `env` does). */
export const GUEST_FAILURE_STATUS = 125;

/**
 * Reports a runtime failure on stderr as one line in the error form of every command
 * (`rdma-interop vm: error (boot-timeout): ...`, program.ts; plus the guest console tail
 * where there is one) and gives the exit status to use: 128 + signal for an interruption,
 * else 125. `prefix`: the progress prefix of the interruption line.
 */
export function reportGuestFailure(
  error: GuestRuntimeError,
  interruptedBy: NodeJS.Signals | undefined,
  command: string,
  prefix = '[vm]',
): number {
  if (error.failure === 'aborted' && interruptedBy !== undefined) {
    process.stderr.write(`${prefix} interrupted by ${interruptedBy}: stopped and cleaned up\n`);
    return signalExitCode(interruptedBy);
  }
  process.stderr.write(errorLine(command, error.message, error.failure));
  return GUEST_FAILURE_STATUS;
}

/** Where a run goes: `auto` is this host when it has RDMA devices, else the guest. */
export function resolveRuntime(where: Where): 'host' | 'guest' {
  if (where !== 'auto') return where;
  return hostRdmaDevices().length > 0 ? 'host' : 'guest';
}

/** Runs `here()` or the guest command; resolves with the exit code to use. */
export async function onDevicesOrGuest(
  options: DevicesOrGuestOptions,
  here: () => Promise<number>,
): Promise<number> {
  if (resolveRuntime(options.where ?? 'auto') === 'host') return here();
  process.stderr.write('this host has no RDMA devices: running in the QEMU guest\n');
  const interrupt = abortOnSignals();
  const signal =
    options.signal === undefined
      ? interrupt.signal
      : AbortSignal.any([interrupt.signal, options.signal]);
  try {
    const result = await runInGuest({
      command: [process.execPath, process.argv[1] ?? '', ...options.guestArgs],
      onProgress: (line) => process.stderr.write(`[vm] ${line}\n`),
      signal,
      setup: 'if-missing',
      ...(options.timeoutSeconds === undefined ? {} : { timeoutSeconds: options.timeoutSeconds }),
      ...(options.shareDir === undefined ? {} : { shareDir: options.shareDir }),
      ...(options.kernel === undefined ? {} : { kernel: options.kernel }),
      ...(options.modules === undefined ? {} : { modules: options.modules }),
      ...(options.fixes === true ? { fixes: true } : {}),
    });
    return result.exitCode;
  } catch (error) {
    if (!(error instanceof GuestRuntimeError)) throw error;
    return reportGuestFailure(error, interrupt.received(), options.command);
  } finally {
    interrupt.dispose();
  }
}
