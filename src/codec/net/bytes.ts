/** Small helpers shared by the network decoders. */

/** A DataView over exactly the bytes of `u8` (which may be a view into a larger buffer). */
export function viewOf(u8: Uint8Array): DataView {
  return new DataView(u8.buffer, u8.byteOffset, u8.byteLength);
}

/** Concatenates byte arrays into one new array. */
export function concatBytes(...parts: Uint8Array[]): Uint8Array {
  let length = 0;
  for (const p of parts) length += p.length;
  const out = new Uint8Array(length);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** True when `n` is an integer in `0..max`. */
export function inRange(n: number, max: number): boolean {
  return Number.isInteger(n) && n >= 0 && n <= max;
}
