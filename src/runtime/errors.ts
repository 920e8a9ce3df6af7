import { RdmaInteropError } from '../errors.js';

/** Why the guest runtime could not give a result. */
export type RuntimeFailure =
  | 'assets-missing'
  | 'packages-missing'
  | 'setup-failed'
  | 'qemu-missing'
  | 'boot-failed'
  | 'timeout'
  | 'aborted'
  | 'no-exit-code'
  | 'output-incomplete'
  /** One guest of a pair (pair.ts) exited non-zero and the other was stopped. */
  | 'partner-failed';

/**
 * The guest did not run the command to completion. `consoleTail` quotes the last lines
 * of the guest's console (kernel messages, panics) so the cause is visible.
 */
export class GuestRuntimeError extends RdmaInteropError {
  override readonly name = 'GuestRuntimeError';
  readonly origin = 'runtime';
  constructor(
    readonly failure: RuntimeFailure,
    message: string,
    readonly consoleTail: string = '',
  ) {
    super(consoleTail ? `${message}\n--- guest console (last lines) ---\n${consoleTail}` : message);
  }
}
