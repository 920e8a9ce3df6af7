/**
 * Commands that need real RDMA devices run where the devices are: on this host when it
 * has some (or when told to), else by running the same CLI command again inside the
 * throwaway QEMU guest, which has rxe0 and siw0.
 */
import { GuestRuntimeError, hostRdmaDevices, runInGuest } from '../runtime/index.js';

/** `auto`: this host if it has devices, else the guest. */
export type Where = 'auto' | 'host' | 'guest';

export interface DevicesOrGuestOptions {
  readonly where?: Where;
  /** CLI arguments that make the guest run the command on its own devices. */
  readonly guestArgs: readonly string[];
  readonly timeoutSeconds?: number;
  readonly shareDir?: string;
}

/** Runs `here()` or the guest command; resolves with the exit code to use. */
export async function onDevicesOrGuest(
  options: DevicesOrGuestOptions,
  here: () => Promise<number>,
): Promise<number> {
  const where = options.where ?? 'auto';
  if (where === 'host' || (where === 'auto' && hostRdmaDevices().length > 0)) return here();
  process.stderr.write('this host has no RDMA devices: running in the QEMU guest\n');
  try {
    const result = await runInGuest({
      command: [process.execPath, process.argv[1] ?? '', ...options.guestArgs],
      onProgress: (line) => process.stderr.write(`[vm] ${line}\n`),
      ...(options.timeoutSeconds === undefined ? {} : { timeoutSeconds: options.timeoutSeconds }),
      ...(options.shareDir === undefined ? {} : { shareDir: options.shareDir }),
    });
    return result.exitCode;
  } catch (error) {
    if (!(error instanceof GuestRuntimeError)) throw error;
    process.stderr.write(`[vm] error (${error.failure}): ${error.message}\n`);
    return 125;
  }
}
