import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { crc32c, crc32cPortable, nativeCrc32c } from '../../../../src/codec/crc32c.js';
import { itUnless } from '../../../helpers/not-run.js';

const ascii = (s: string): Uint8Array => new TextEncoder().encode(s);

describe('crc32c', () => {
  it('matches the standard check value for "123456789"', () => {
    expect(crc32cPortable(ascii('123456789'))).toBe(0xe3069283);
    expect(crc32c(ascii('123456789'))).toBe(0xe3069283);
  });

  // RFC 3720 Appendix B.4 (the RFC prints the CRC bytes in wire order, little-endian
  // for these tables: "aa 36 91 8a" is 0x8a9136aa).
  it('matches the RFC 3720 B.4 vectors', () => {
    expect(crc32cPortable(new Uint8Array(32))).toBe(0x8a9136aa);
    expect(crc32cPortable(new Uint8Array(32).fill(0xff))).toBe(0x62a8ab43);
    expect(crc32cPortable(Uint8Array.from({ length: 32 }, (_, i) => i))).toBe(0x46dd794e);
    expect(crc32cPortable(Uint8Array.from({ length: 32 }, (_, i) => 31 - i))).toBe(0x113fdb5c);
  });

  it('gives 0 for empty input', () => {
    expect(crc32cPortable(new Uint8Array(0))).toBe(0);
  });

  it('continues from a seed: crc(b, crc(a)) === crc(a ++ b)', () => {
    fc.assert(
      fc.property(fc.uint8Array(), fc.uint8Array(), (a, b) => {
        const joined = new Uint8Array(a.length + b.length);
        joined.set(a);
        joined.set(b, a.length);
        expect(crc32cPortable(b, crc32cPortable(a))).toBe(crc32cPortable(joined));
      }),
    );
  });

  it('agrees with a bitwise reference on random input (all slicing paths)', () => {
    const bitwise = (d: Uint8Array): number => {
      let c = 0xffffffff;
      for (const byte of d) {
        c ^= byte;
        for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ 0x82f63b78 : c >>> 1;
      }
      return ~c >>> 0;
    };
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), fc.integer({ min: 0, max: 7 }), (d, skip) => {
        expect(crc32cPortable(d)).toBe(bitwise(d));
        // Views at unaligned byte offsets take the alignment prologue of the word path.
        const view = d.subarray(Math.min(skip, d.length));
        expect(crc32cPortable(view)).toBe(bitwise(view));
      }),
    );
  });

  it('the native path, when the addon is built, agrees with the portable one', () => {
    const native = nativeCrc32c();
    if (native === undefined) {
      // The addon is optional: crc32c() must then be the portable function's value.
      const big = Uint8Array.from({ length: 4096 }, (_, i) => (i * 31 + 7) & 0xff);
      expect(crc32c(big)).toBe(crc32cPortable(big));
      return;
    }
    fc.assert(
      fc.property(
        fc.uint8Array({ maxLength: 5000 }),
        fc.integer({ min: 0, max: 0xffffffff }),
        (d, s) => {
          expect(native(d, s) >>> 0).toBe(crc32cPortable(d, s));
        },
      ),
    );
  });

  // Without the native addon (a checkout that has not built it) this is a visible skip,
  // which npm test never takes (set-up builds the addon).
  itUnless(nativeCrc32c() === undefined, 'the native addon is not built')(
    'the native path agrees on long inputs: its three-stream blocks (3 x 4 KiB), their boundaries and tails',
    () => {
      const native = nativeCrc32c()!;
      const lengths = [12_287, 12_288, 12_289, 12_295, 24_576, 24_583, 65_536, 65_537, 200_003];
      for (const length of lengths)
        for (const offset of [0, 1, 7]) {
          const bytes = Uint8Array.from(
            { length: length + offset },
            (_, i) => (i * 131 + 17 + (i >> 7)) & 0xff,
          ).subarray(offset);
          for (const seed of [0, 0x12345678, 0xffffffff])
            expect(native(bytes, seed) >>> 0, `${length} bytes at +${offset}, seed ${seed}`).toBe(
              crc32cPortable(bytes, seed),
            );
        }
    },
  );

  it('the native addon, when built, throws typed errors for bad arguments', () => {
    const native = nativeCrc32c() as unknown as ((...args: unknown[]) => number) | undefined;
    if (native === undefined) {
      expect(crc32c(new Uint8Array(300))).toBe(crc32cPortable(new Uint8Array(300)));
      return;
    }
    expect(() => native('123456789')).toThrow(TypeError);
    expect(() => native(new Uint16Array(4))).toThrow(TypeError);
    expect(() => native(new Uint8Array(4), 'seed')).toThrow(TypeError);
    expect(() => native(new Uint8Array(4), -1)).toThrow(RangeError);
    expect(() => native(new Uint8Array(4), 2 ** 32)).toThrow(RangeError);
    expect(native(new TextEncoder().encode('123456789'))).toBe(0xe3069283);
  });
});
