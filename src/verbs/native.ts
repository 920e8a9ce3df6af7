/** The addon, loaded once with {@link VerbsError} registered as its error class. */
import { loadNative, type NativeAddon } from '../native/bindings.js';
import { VerbsError } from './errors.js';

/** The loaded addon (throws `AddonNotBuiltError` if it was never built). */
export function addon(): NativeAddon {
  return loadNative(VerbsError);
}
