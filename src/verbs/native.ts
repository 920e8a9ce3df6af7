/** The addon, loaded once with {@link VerbsError} registered as its error class. */
import { loadNative, type NativeAddon } from '../native/bindings.js';
import { VerbsError } from './errors.js';

/** The loaded addon (throws `AddonUnavailableError` when it is missing or cannot load). */
export function addon(): NativeAddon {
  return loadNative(VerbsError);
}
