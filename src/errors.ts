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

/**
 * A wrong argument to an exported function, caught before anything is done: a wrong type,
 * a number out of range or not an integer, a value that is not of the kind asked for.
 * `field` names the argument or property as the caller wrote it (`'offset'`,
 * `'options.position'`, `'fields.psn'`). Every layer throws it (or a subclass: the verbs
 * layer's VerbsArgumentError, the lookups' UnknownNameError) instead of letting a raw
 * `TypeError`/`RangeError` escape.
 */
export class ArgumentError extends RdmaInteropError {
  override readonly name: string = 'ArgumentError';
  constructor(
    readonly origin: ErrorOrigin,
    readonly field: string,
    message: string,
  ) {
    super(`${field}: ${message}`);
  }
}

/**
 * The one convention of every exported lookup by name (an opcode, a Terminate code, an
 * access flag, a kernel line, a scenario, ...): a name the table lacks throws this, never
 * `undefined`, a plain `Error` or a `RangeError`. It names the unknown name (`unknown`),
 * what kind of name was looked up (`kind`) and the layer (`origin`); `known` lists the
 * names the table has, so the message can say what would have worked.
 */
export class UnknownNameError extends ArgumentError {
  override readonly name: string = 'UnknownNameError';
  constructor(
    origin: ErrorOrigin,
    /** What was looked up, e.g. `'BTH opcode name'`, `'access flag'`. */
    readonly kind: string,
    /** The name given, as text (`String(value)` of whatever was passed). */
    readonly unknown: string,
    /** The names the lookup knows. */
    readonly known: readonly string[] = [],
    field: string = kind,
  ) {
    super(
      origin,
      field,
      `unknown ${kind} '${unknown}'${known.length === 0 ? '' : ` (known: ${shortList(known)})`}`,
    );
  }
}

/** At most 12 names, then how many more: messages stay one readable line. */
function shortList(names: readonly string[]): string {
  const shown = names.slice(0, 12).join(', ');
  return names.length > 12 ? `${shown}, ... ${names.length - 12} more` : shown;
}
