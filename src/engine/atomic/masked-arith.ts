/**
 * The 64-bit arithmetic of RFC 7306 Atomic Operations, as pure functions on bigint.
 * Values are already in host (numeric) form here: byte order is handled by the
 * memory model, never by these functions.
 */
import { requireBigint } from '../../arguments.js';

/**
 * 2^64 - 1: every 64-bit value is reduced with this mask. The operands are checked to be
 * 64-bit bigints first (RFC 7306 §4.1), or ArgumentError: a number would be a raw
 * TypeError in the arithmetic.
 */
export const U64_MASK = 0xffff_ffff_ffff_ffffn;

/**
 * Masked FetchAdd (RFC 7306 §5.1.1): each field of `addMask` is added independently;
 * a bit set in the Add Mask marks the most significant bit of a field, and the carry
 * out of that bit is discarded. Add Mask 0 is a plain 64-bit add wrapping at 2^64.
 *
 * Computed without a bit loop: clearing the field-top bits of both operands stops a
 * carry from leaving any field (a carry can reach the cleared top bit but not pass it),
 * and the top bits are then added back without carry (XOR). Equivalent to the RFC's
 * bit-by-bit pseudocode, which the tests use as the oracle.
 */
export function maskedFetchAdd(original: bigint, addData: bigint, addMask: bigint): bigint {
  requireBigint('engine', 'original', original, 0n, U64_MASK);
  requireBigint('engine', 'addData', addData, 0n, U64_MASK);
  requireBigint('engine', 'addMask', addMask, 0n, U64_MASK);
  // Add Mask 0: one 64-bit field (the verbs FETCH_AND_ADD case).
  if (addMask === 0n) return BigInt.asUintN(64, original + addData);
  const notTop = U64_MASK ^ addMask;
  const low = (original & notTop) + (addData & notTop);
  return BigInt.asUintN(64, low ^ ((original ^ addData) & addMask));
}

/**
 * The RFC 7306 §5.1.1 pseudocode, one bit at a time (carry cleared after a bit that is
 * set in the Add Mask). Kept as the reading of the RFC that the fast form is checked
 * against; not used on the hot path.
 */
export function maskedFetchAddBitwise(original: bigint, addData: bigint, addMask: bigint): bigint {
  requireBigint('engine', 'original', original, 0n, U64_MASK);
  requireBigint('engine', 'addData', addData, 0n, U64_MASK);
  requireBigint('engine', 'addMask', addMask, 0n, U64_MASK);
  let result = 0n;
  let carry = 0n;
  for (let bit = 0n; bit < 64n; bit++) {
    const location = 1n << bit;
    const val1 = (original & location) !== 0n ? 1n : 0n;
    const val2 = (addData & location) !== 0n ? 1n : 0n;
    const sum = carry + val1 + val2;
    carry = (sum & 2n) >> 1n;
    if ((sum & 1n) !== 0n) result |= location;
    if ((addMask & location) !== 0n) carry = 0n;
  }
  return result;
}

/**
 * Masked CmpSwap (RFC 7306 §5.1.2): if `(compareData ^ original) & compareMask` is zero,
 * the bits selected by `swapMask` take the Swap Data; otherwise memory keeps the
 * original. Returns the new memory value and whether the comparison matched.
 */
export function maskedCompareSwap(
  original: bigint,
  compareData: bigint,
  compareMask: bigint,
  swapData: bigint,
  swapMask: bigint,
): { readonly value: bigint; readonly swapped: boolean } {
  requireBigint('engine', 'original', original, 0n, U64_MASK);
  requireBigint('engine', 'compareData', compareData, 0n, U64_MASK);
  requireBigint('engine', 'compareMask', compareMask, 0n, U64_MASK);
  requireBigint('engine', 'swapData', swapData, 0n, U64_MASK);
  requireBigint('engine', 'swapMask', swapMask, 0n, U64_MASK);
  if (((compareData ^ original) & compareMask) !== 0n) return { value: original, swapped: false };
  const value = ((original & ~swapMask) | (swapData & swapMask)) & U64_MASK;
  return { value, swapped: true };
}

/**
 * Swap (draft-ietf-storm-rdmap-ext-01 §5.1.2, AOpCode 0001b; Reserved in RFC 7306 §10):
 * memory takes the Swap Data unconditionally; the mask fields are ignored.
 */
export function swap(_original: bigint, swapData: bigint): bigint {
  requireBigint('engine', 'original', _original, 0n, U64_MASK);
  requireBigint('engine', 'swapData', swapData, 0n, U64_MASK);
  return swapData & U64_MASK;
}
