/**
 * The one base class of every error this package throws or returns, whatever the layer:
 * `catch (e) { if (e instanceof RdmaInteropError) ... }` separates ours from bugs.
 * Each layer's class adds structured fields (a decode error's layer, field and offset; a
 * verbs error's errno, call and device; a runtime failure's kind) so that nobody has to
 * parse a message. `origin` says which part of the package raised it (not to be confused
 * with a decode error's `layer`, the protocol layer of the bad field).
 */
export type ErrorOrigin = 'codec' | 'engine' | 'verbs' | 'runtime' | 'interop' | 'cli';

export abstract class RdmaInteropError extends Error {
  /** The part of the package that raised the error. */
  abstract readonly origin: ErrorOrigin;
}

/** True when `e` is one of this package's errors (of any layer). */
export function isRdmaInteropError(e: unknown): e is RdmaInteropError {
  return e instanceof RdmaInteropError;
}
