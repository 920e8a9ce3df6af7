import { RdmaInteropError } from '../errors.js';

/**
 * The one error class of the verbs layer. libibverbs reports failures three ways
 * (a positive errno return, a NEGATIVE errno return as libsiw's `ibv_post_send` does,
 * or NULL/-1 with `errno` set); the addon normalises all three into this class.
 * Argument mistakes caught before any native call are `TypeError` / `RangeError`.
 */
export class VerbsError extends RdmaInteropError {
  override readonly name = 'VerbsError';
  readonly origin = 'verbs';
  /**
   * @param code - the errno name, e.g. `'EINVAL'` (`'E<n>'` when the name is unknown)
   * @param errno - the positive errno number
   * @param call - the C call that failed, e.g. `'ibv_post_send'`
   * @param device - the device name, when one is involved
   * @param message - a readable summary
   */
  constructor(
    readonly code: string,
    readonly errno: number,
    readonly call: string,
    readonly device: string | undefined,
    message: string,
  ) {
    super(message);
  }
}

/** True when `e` is a VerbsError with errno name `code`. */
export function isVerbsError(e: unknown, code?: string): e is VerbsError {
  return e instanceof VerbsError && (code === undefined || e.code === code);
}
