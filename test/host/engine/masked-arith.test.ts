import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  maskedCompareSwap,
  maskedFetchAdd,
  maskedFetchAddBitwise,
  swap,
  U64_MASK,
} from '../../../src/engine/atomic/masked-arith.js';

const u64 = fc.bigInt({ min: 0n, max: U64_MASK });

/** Independent oracle: split into fields by the mask's set bits and add each field alone. */
function perFieldAdd(original: bigint, addData: bigint, addMask: bigint): bigint {
  let result = 0n;
  let low = 0n;
  for (let bit = 0n; bit < 64n; bit++) {
    const isTop = (addMask & (1n << bit)) !== 0n || bit === 63n;
    if (!isTop) continue;
    const width = bit - low + 1n;
    const fieldMask = ((1n << width) - 1n) << low;
    const sum = ((original & fieldMask) >> low) + ((addData & fieldMask) >> low);
    result |= (sum & ((1n << width) - 1n)) << low;
    low = bit + 1n;
  }
  return result;
}

describe('masked FetchAdd (RFC 7306 §5.1.1)', () => {
  it('[R7306-5.1.1-4] Add Mask 0 is a plain 64-bit add wrapping at 2^64', () => {
    expect(maskedFetchAdd(0x0123456789abcdefn, 0x1000000000000001n, 0n)).toBe(0x1123456789abcdf0n);
    expect(maskedFetchAdd(0xfedcba9876543210n, 0x0123456789abcdf0n, 0n)).toBe(0x0000000000000000n);
    expect(maskedFetchAdd(0xfffffffffffffffen, 0x3n, 0n)).toBe(0x1n);
  });

  it('discards the carry at each Add Mask boundary bit', () => {
    // Two 32-bit fields: top bits at 31 and 63. The low field overflows, the high does not see it.
    const mask = 0x8000000080000000n;
    expect(maskedFetchAdd(0x00000001ffffffffn, 0x0000000200000001n, mask)).toBe(
      0x0000000300000000n,
    );
    // Fields of 16 and 48 bits (boundaries at bits 15 and 63), worked by hand from RFC 7306
    // §5.1.1's rule (a set mask bit i drops the carry out of bit i), not from the module:
    //   low 16:  0xffff + 0x0001 = 0x1_0000 -> 0x0000, the carry dropped at bit 15;
    //   high 48: 0x0123456789ab + 0x000000000001 = 0x0123456789ac.
    // A mask stored with its bytes or 32-bit halves swapped (0x0080000000000080,
    // 0x0000800080000000) gives 0x0123456789acff00 or 0x0123456789ad0000 (issue 38).
    expect(maskedFetchAdd(0x0123456789abffffn, 0x0000000000010001n, 0x8000000000008000n)).toBe(
      0x0123456789ac0000n,
    );
    expect(maskedFetchAdd(0x0123456789abffffn, 0x0000000000010001n, 0x0080000000000080n)).toBe(
      0x0123456789acff00n,
    );
    expect(maskedFetchAdd(0x0123456789abffffn, 0x0000000000010001n, 0x0000800080000000n)).toBe(
      0x0123456789ad0000n,
    );
    // Eight byte fields.
    expect(maskedFetchAdd(0x01ff02fe03fd04fcn, 0x0101010101010104n, 0x8080808080808080n)).toBe(
      0x020003ff04fe0500n,
    );
  });

  it('property: the fast form equals the RFC bit-by-bit pseudocode', () => {
    fc.assert(
      fc.property(u64, u64, u64, (a, b, m) => {
        expect(maskedFetchAdd(a, b, m)).toBe(maskedFetchAddBitwise(a, b, m));
      }),
      { numRuns: 300 },
    );
  });

  it('property: masked FetchAdd equals independent per-field additions', () => {
    fc.assert(
      fc.property(u64, u64, u64, (a, b, m) => {
        expect(maskedFetchAdd(a, b, m)).toBe(perFieldAdd(a, b, m));
      }),
      { numRuns: 500 },
    );
  });

  it('property: Add Mask 0 equals plain wrapping addition', () => {
    fc.assert(
      fc.property(u64, u64, (a, b) => {
        expect(maskedFetchAdd(a, b, 0n)).toBe((a + b) % (1n << 64n));
      }),
    );
  });

  it('[R7306-1.1-probe] Add Data 0 leaves every mask value unchanged (capability probe)', () => {
    fc.assert(
      fc.property(u64, u64, (a, m) => {
        expect(maskedFetchAdd(a, 0n, m)).toBe(a);
      }),
    );
  });
});

describe('masked CmpSwap (RFC 7306 §5.1.2)', () => {
  it('[R7306-5.1.2-1] swaps the masked bits when the masked compare matches, else keeps the original', () => {
    const original = 0x0123456789abcdefn;
    const hit = maskedCompareSwap(
      original,
      0x0000456700000000n,
      0x0000ffff00000000n,
      0xfedcba9876543210n,
      0x00000000ffff0000n,
    );
    expect(hit).toEqual({ value: 0x0123456776540000n | 0xcdefn, swapped: true });
    const miss = maskedCompareSwap(
      original,
      0x0000456800000000n,
      0x0000ffff00000000n,
      0xfedcba9876543210n,
      U64_MASK,
    );
    expect(miss).toEqual({ value: original, swapped: false });
  });

  it('property: all-ones masks equal plain compare-and-swap', () => {
    fc.assert(
      fc.property(u64, u64, u64, fc.boolean(), (orig, cmp, sw, equal) => {
        const compare = equal ? orig : cmp;
        const r = maskedCompareSwap(orig, compare, U64_MASK, sw, U64_MASK);
        expect(r.value).toBe(orig === compare ? sw : orig);
        expect(r.swapped).toBe(orig === compare);
      }),
    );
  });

  it('property: a zero Compare Mask always swaps', () => {
    fc.assert(
      fc.property(u64, u64, u64, u64, (orig, cmp, sw, sm) => {
        const r = maskedCompareSwap(orig, cmp, 0n, sw, sm);
        expect(r.swapped).toBe(true);
        expect(r.value).toBe((orig & ~sm & U64_MASK) | (sw & sm));
      }),
    );
  });

  it('property: a failed compare never changes the value', () => {
    fc.assert(
      fc.property(u64, u64, u64, u64, u64, (orig, cmp, cm, sw, sm) => {
        const r = maskedCompareSwap(orig, cmp, cm, sw, sm);
        if (!r.swapped) expect(r.value).toBe(orig);
        expect(r.swapped).toBe(((cmp ^ orig) & cm) === 0n);
      }),
    );
  });
});

describe('Swap (draft-ietf-storm-rdmap-ext-01 §5.1.2)', () => {
  it('stores the Swap Data unconditionally', () => {
    expect(swap(0x0123456789abcdefn, 0xfedcba9876543210n)).toBe(0xfedcba9876543210n);
  });
});
