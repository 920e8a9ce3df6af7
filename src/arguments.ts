/**
 * Argument checks shared by the layers (issue 25: no raw TypeError/RangeError escapes an
 * exported function, no unknown name or out-of-range number is accepted). Each throws the
 * package's ArgumentError (or UnknownNameError) naming the layer and the argument, before
 * the caller has done anything, so nothing is half-applied.
 */
import { ArgumentError, type ErrorOrigin, UnknownNameError } from './errors.js';

/** How a value looks in a message: strings quoted, bigints with `n`, the rest by type. */
export function describeValue(value: unknown): string {
  if (typeof value === 'string') return `'${value.length > 40 ? `${value.slice(0, 40)}…` : value}'`;
  if (typeof value === 'bigint') return `${value}n`;
  if (typeof value === 'number' || typeof value === 'boolean' || value == null)
    return String(value);
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

/** `value` is an integer in [min, max] (safe integers only), or throws. */
export function requireInteger(
  origin: ErrorOrigin,
  field: string,
  value: unknown,
  min: number,
  max: number = Number.MAX_SAFE_INTEGER,
): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min || value > max) {
    throw new ArgumentError(
      origin,
      field,
      `${describeValue(value)} is not an integer in [${min}, ${max}]`,
    );
  }
  return value;
}

/** `value` is a bigint in [min, max], or throws (a number is refused: no silent rounding). */
export function requireBigint(
  origin: ErrorOrigin,
  field: string,
  value: unknown,
  min: bigint,
  max: bigint,
): bigint {
  if (typeof value !== 'bigint' || value < min || value > max) {
    throw new ArgumentError(
      origin,
      field,
      `${describeValue(value)} is not a bigint in [${min}, ${max}]`,
    );
  }
  return value;
}

/** `value` is a Uint8Array (a Buffer is one), or throws. */
export function requireBytes(origin: ErrorOrigin, field: string, value: unknown): Uint8Array {
  if (!(value instanceof Uint8Array)) {
    throw new ArgumentError(origin, field, `${describeValue(value)} is not a Uint8Array`);
  }
  return value;
}

/** `value` is a non-null object (options, fields), or throws. */
export function requireObject(origin: ErrorOrigin, field: string, value: unknown): object {
  if (typeof value !== 'object' || value === null) {
    throw new ArgumentError(origin, field, `${describeValue(value)} is not an object`);
  }
  return value;
}

/** `value` is a boolean, or throws. */
export function requireBoolean(origin: ErrorOrigin, field: string, value: unknown): boolean {
  if (typeof value !== 'boolean') {
    throw new ArgumentError(origin, field, `${describeValue(value)} is not a boolean`);
  }
  return value;
}

/** `value` is an array, or throws. */
export function requireArray(
  origin: ErrorOrigin,
  field: string,
  value: unknown,
): readonly unknown[] {
  if (!Array.isArray(value)) {
    throw new ArgumentError(origin, field, `${describeValue(value)} is not an array`);
  }
  return value;
}

/**
 * `name` is a key of `table` (own keys only: `'toString'` is no access flag), or throws
 * UnknownNameError: the one lookup convention.
 */
export function requireName<K extends string>(
  origin: ErrorOrigin,
  kind: string,
  table: Readonly<Record<K, unknown>>,
  name: unknown,
  field: string = kind,
): K {
  if (typeof name !== 'string' || !Object.hasOwn(table, name)) {
    throw new UnknownNameError(origin, kind, nameText(name), Object.keys(table), field);
  }
  return name as K;
}

/**
 * The value `map` holds under `name`, or UnknownNameError naming `kind` and listing the
 * map's keys: the lookup convention for tables indexed by name.
 */
export function requireKey<K extends string, V>(
  origin: ErrorOrigin,
  kind: string,
  map: ReadonlyMap<K, V>,
  name: K,
): V {
  const value = map.get(name);
  if (value === undefined)
    throw new UnknownNameError(origin, kind, nameText(name), [...map.keys()]);
  return value;
}

/** An options argument: `undefined` (the defaults) or a non-array object, or throws. */
export function requireOptions(origin: ErrorOrigin, field: string, value: unknown): void {
  if (value === undefined) return;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new ArgumentError(origin, field, `${describeValue(value)} is not an options object`);
  }
}

/** A name as UnknownNameError reports it: a string as it is, anything else described. */
export function nameText(value: unknown): string {
  return typeof value === 'string' ? value : describeValue(value);
}

/**
 * An options object whose keys are all among `known` (a misspelt option would otherwise
 * do nothing, silently), or throws: UnknownNameError for a key, ArgumentError for a value
 * that is no options object.
 */
export function requireKnownOptions(
  origin: ErrorOrigin,
  field: string,
  value: unknown,
  known: readonly string[],
): void {
  requireOptions(origin, field, value);
  if (value === undefined) return;
  // for-in, not Object.keys: no array per call (decoders check their options per message).
  for (const key in value as object) {
    if (Object.hasOwn(value as object, key) && !known.includes(key)) {
      throw new UnknownNameError(origin, 'option', key, known, `${field}.${key}`);
    }
  }
}

/** `value` is a string (non-empty unless `allowEmpty`), or throws. */
export function requireString(
  origin: ErrorOrigin,
  field: string,
  value: unknown,
  allowEmpty = false,
): string {
  if (typeof value !== 'string' || (!allowEmpty && value === '')) {
    throw new ArgumentError(origin, field, `${describeValue(value)} is not a non-empty string`);
  }
  return value;
}

/**
 * A code read from the wire (an opcode, a Terminate field, a NAK code) given to an
 * identifying lookup: a number, or ArgumentError. A number the table lacks identifies
 * nothing (`undefined`: a reserved value is data); a string or an object is a mistake.
 */
export function requireCode(origin: ErrorOrigin, field: string, value: unknown): void {
  if (typeof value !== 'number')
    throw new ArgumentError(origin, field, `${describeValue(value)} is not a number`);
}
