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

/** `auto`: this host if it has devices, else the guest. */
export type Where = 'auto' | 'host' | 'guest';

export interface DevicesOrGuestOptions {
  readonly where?: Where;
  /** CLI arguments that make the guest run the command on its own devices. */
  readonly guestArgs: readonly string[];
  readonly timeoutSeconds?: number;
  readonly shareDir?: string;
  /** The guest's kernel line or assets directory (runtime/assets.ts); default 6.1. */
  readonly kernel?: string;
  /** With `kernel` a bzImage or build tree: its modules_install tree (runtime/own-kernel.ts). */
  readonly modules?: string;
  /**
   * Stops the guest when aborted. SIGINT and SIGTERM always do (exit status 130, 143);
   * this is for a caller's own reasons on top of them.
   */
  readonly signal?: AbortSignal;
}

/** The status a command exits with when the guest could not run it (as `env` does). */
export const GUEST_FAILURE_STATUS = 125;

/**
 * Reports a runtime failure on stderr as one line (plus the guest console tail where there
 * is one) and gives the exit status to use: 128 + signal for an interruption, else 125.
 */
export function reportGuestFailure(
  error: GuestRuntimeError,
  interruptedBy: NodeJS.Signals | undefined,
  prefix = '[vm]',
): number {
  if (error.failure === 'aborted' && interruptedBy !== undefined) {
    process.stderr.write(`${prefix} interrupted by ${interruptedBy}: stopped and cleaned up\n`);
    return signalExitCode(interruptedBy);
  }
  process.stderr.write(`${prefix} error (${error.failure}): ${error.message}\n`);
  return GUEST_FAILURE_STATUS;
}

/** Runs `here()` or the guest command; resolves with the exit code to use. */
export async function onDevicesOrGuest(
  options: DevicesOrGuestOptions,
  here: () => Promise<number>,
): Promise<number> {
  const where = options.where ?? 'auto';
  if (where === 'host' || (where === 'auto' && hostRdmaDevices().length > 0)) return here();
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
    });
    return result.exitCode;
  } catch (error) {
    if (!(error instanceof GuestRuntimeError)) throw error;
    return reportGuestFailure(error, interrupt.received());
  } finally {
    interrupt.dispose();
  }
}
