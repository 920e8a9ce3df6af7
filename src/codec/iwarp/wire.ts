/**
 * Field range checks for encoders (throwing `EncodeError` before anything is written) and
 * bounds-checked big-endian reads for decoders. Network byte order throughout (RFC 5040
 * §4, RFC 5041 §4, RFC 5044 §4: all fields big-endian).
 */
import { type CodecLayer, EncodeError } from '../errors.js';

/** Throws unless `value` is an integer in 0..2^bits-1 (bits <= 32). */
export function checkUint(layer: CodecLayer, field: string, value: unknown, bits: number): void {
  const max = bits === 32 ? 0xffffffff : (1 << bits) - 1;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > max) {
    throw new EncodeError(layer, field, `${String(value)} is not an unsigned ${bits}-bit integer`);
  }
}

/** Throws unless `value` is a boolean. */
export function checkBool(layer: CodecLayer, field: string, value: unknown): void {
  if (typeof value !== 'boolean') {
    throw new EncodeError(layer, field, `${String(value)} is not a boolean`);
  }
}

/** Throws unless `value` is a Uint8Array. */
export function checkBytes(
  layer: CodecLayer,
  field: string,
  value: unknown,
): asserts value is Uint8Array {
  if (!(value instanceof Uint8Array)) {
    throw new EncodeError(layer, field, 'is not a Uint8Array');
  }
}

/** Big-endian 16-bit read; caller has checked the bounds. */
export function readU16(b: Uint8Array, at: number): number {
  return (b[at]! << 8) | b[at + 1]!;
}

/** Big-endian 32-bit read; caller has checked the bounds. */
export function readU32(b: Uint8Array, at: number): number {
  return ((b[at]! << 24) | (b[at + 1]! << 16) | (b[at + 2]! << 8) | b[at + 3]!) >>> 0;
}

/** Big-endian 16-bit write. */
export function writeU16(b: Uint8Array, at: number, v: number): void {
  b[at] = (v >>> 8) & 0xff;
  b[at + 1] = v & 0xff;
}
