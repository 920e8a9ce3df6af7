/**
 * Reading and writing the 64-bit atomic target in the byte order of the target memory.
 * RFC 7306 §5.1.1/§5.1.2: "The FetchAdd operation is performed in the endian format of
 * the target memory ... The fields are in big endian format on the wire."
 */

/** Byte order of the Responder's memory (little-endian is the default, as on x86). */
export type MemoryByteOrder = 'little-endian' | 'big-endian';

/** Reads the 64-bit value at `offset` of `view` in `order`. The caller checks bounds. */
export function readU64(view: DataView, offset: number, order: MemoryByteOrder): bigint {
  return view.getBigUint64(offset, order === 'little-endian');
}

/** Writes the 64-bit `value` at `offset` of `view` in `order`. The caller checks bounds. */
export function writeU64(
  view: DataView,
  offset: number,
  value: bigint,
  order: MemoryByteOrder,
): void {
  view.setBigUint64(offset, value, order === 'little-endian');
}
