/**
 * The addon, loaded once with {@link VerbsError} and {@link VerbsArgumentError} registered
 * as its error classes (a wrong argument a native class sees is a VerbsArgumentError), and
 * node:worker_threads' markAsUntransferable as what marks every ArrayBuffer V8 allocates
 * for it (native/js_memory.h: the memory path without external buffers).
 */
import { markAsUntransferable } from 'node:worker_threads';
import type { NativeAddon } from '../native/bindings.js';
import { loadNative } from '../native/load.js';
import { VerbsArgumentError, VerbsError } from './errors.js';

let marker: NativeAddon | undefined;

/** The loaded addon (throws `AddonUnavailableError` when it is missing or cannot load). */
export function addon(): NativeAddon {
  const loaded = loadNative(VerbsError, VerbsArgumentError);
  if (marker !== loaded) {
    loaded.setUntransferableMarker(markAsUntransferable);
    marker = loaded;
  }
  return loaded;
}
