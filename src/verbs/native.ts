/**
 * The addon, loaded once with {@link VerbsError} and {@link VerbsArgumentError} registered
 * as its error classes (a wrong argument a native class sees is a VerbsArgumentError).
 */
import type { NativeAddon } from '../native/bindings.js';
import { loadNative } from '../native/load.js';
import { VerbsArgumentError, VerbsError } from './errors.js';

/** The loaded addon (throws `AddonUnavailableError` when it is missing or cannot load). */
export function addon(): NativeAddon {
  return loadNative(VerbsError, VerbsArgumentError);
}
