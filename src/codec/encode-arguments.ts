/**
 * The encoders' argument checks (issue 25): a fields argument that is no object, or bytes
 * that are no Uint8Array, is an EncodeError naming the layer and the argument, thrown
 * before anything is written, like every out-of-range field.
 */
import { type CodecLayer, EncodeError } from './errors.js';

/** `value` is a non-null object, or EncodeError. */
export function requireFields(layer: CodecLayer, field: string, value: unknown): void {
  if (typeof value !== 'object' || value === null)
    throw new EncodeError(layer, field, 'not an object');
}

/** `value` is a Uint8Array (`undefined` too when `optional`), or EncodeError. */
export function requirePayload(
  layer: CodecLayer,
  field: string,
  value: unknown,
  optional = false,
): void {
  if (optional && value === undefined) return;
  if (!(value instanceof Uint8Array)) throw new EncodeError(layer, field, 'not a Uint8Array');
}
