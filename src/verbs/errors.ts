import { ArgumentError, RdmaInteropError } from '../errors.js';

/**
 * The one error class of the verbs layer. libibverbs reports failures three ways
 * (a positive errno return, a NEGATIVE errno return as libsiw's `ibv_post_send` does,
 * or NULL/-1 with `errno` set); the addon normalises all three into this class.
 * Argument mistakes caught before any native call are {@link VerbsArgumentError}.
 *
 * Fields, never to be parsed out of `message`: `code` / `errno`, the C `call`, the
 * `device`, and for a post call the index of the refused request (`badWrIndex`: the
 * requests before it were posted, the verbs contract).
 */
export class VerbsError extends RdmaInteropError {
  override readonly name: string = 'VerbsError';
  readonly origin = 'verbs';
  /**
   * @param code - the errno name, e.g. `'EINVAL'` (`'E<n>'` when the name is unknown)
   * @param errno - the positive errno number
   * @param call - the C call that failed, e.g. `'ibv_post_send'`
   * @param device - the device name, when one is involved
   * @param message - a readable summary
   * @param badWrIndex - post calls: the index of the refused request in the list given
   */
  constructor(
    readonly code: string,
    readonly errno: number,
    readonly call: string,
    readonly device: string | undefined,
    message: string,
    readonly badWrIndex?: number,
  ) {
    super(message);
  }
}

/** True when `e` is a VerbsError with errno name `code`. */
export function isVerbsError(e: unknown, code?: string): e is VerbsError {
  return e instanceof VerbsError && (code === undefined || e.code === code);
}

/**
 * A wrong argument caught by the wrapper before any native call (a wrong type, a value
 * out of range, an unknown name). `field` names the argument or property, as the
 * caller wrote it (`'sgList[1].length'`, `'access'`).
 */
export class VerbsArgumentError extends ArgumentError {
  override readonly name: string = 'VerbsArgumentError';
  constructor(field: string, message: string) {
    super('verbs', field, message);
  }
}
