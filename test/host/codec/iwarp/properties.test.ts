import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DecodeError } from '../../../../src/codec/errors.js';
import {
  decodeFpdu,
  decodeMpaFrame,
  decodeMpaStream,
  decodeRdmapMessage,
  encodeFpdu,
  encodeMpaFrame,
  encodeRdmapMessage,
  IWARP_PROFILES,
} from '../../../../src/codec/iwarp/index.js';
import { mpaFrame, rdmapMessage } from './arbitraries.js';

const runs = { numRuns: 300 };

/** A byte array with a few bytes replaced (positions and values chosen by fast-check). */
function mutated(base: fc.Arbitrary<Uint8Array>): fc.Arbitrary<Uint8Array> {
  return base.chain((b) =>
    fc
      .array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { minLength: 1, maxLength: 4 })
      .chain((edits) =>
        fc.integer({ min: 0, max: b.length }).map((cut) => {
          const out = b.slice();
          if (out.length === 0) return out;
          for (const [at, v] of edits) out[at % out.length] = v;
          return out.subarray(0, Math.max(cut, 1));
        }),
      ),
  );
}

function isDecodeResult(r: { ok: boolean; error?: unknown }): boolean {
  return r.ok || r.error instanceof DecodeError;
}

describe.each(IWARP_PROFILES)('RDMAP properties, profile %s', (profile) => {
  it('decode(encode(m)) deep-equals m', () => {
    fc.assert(
      fc.property(rdmapMessage(profile), (m) => {
        const r = decodeRdmapMessage(encodeRdmapMessage(m, { profile }), { profile });
        if (!r.ok) throw r.error;
        expect(r.value).toEqual(m);
      }),
      runs,
    );
  });

  it('encode(decode(b)) equals b whenever b decodes (valid and mutated encodings)', () => {
    const valid = rdmapMessage(profile).map((m) => encodeRdmapMessage(m, { profile }));
    fc.assert(
      fc.property(fc.oneof(valid, mutated(valid)), (b) => {
        const r = decodeRdmapMessage(b, { profile });
        if (r.ok) expect(encodeRdmapMessage(r.value, { profile })).toEqual(b);
      }),
      runs,
    );
  });

  it('random and mutated bytes give a value or a DecodeError, never an exception', () => {
    const valid = rdmapMessage(profile).map((m) => encodeRdmapMessage(m, { profile }));
    fc.assert(
      fc.property(fc.oneof(fc.uint8Array({ maxLength: 120 }), mutated(valid)), (b) => {
        const r = decodeRdmapMessage(b, { profile });
        expect(isDecodeResult(r)).toBe(true);
        if (!r.ok) {
          expect(r.error.offset).toBeGreaterThanOrEqual(0);
          expect(r.error.offset).toBeLessThanOrEqual(b.length);
        }
      }),
      runs,
    );
  });
});

describe('MPA properties', () => {
  it('frames: decode(encode(f)) deep-equals f and encode(decode(b)) equals b', () => {
    fc.assert(
      fc.property(mpaFrame, (f) => {
        const b = encodeMpaFrame(f);
        const r = decodeMpaFrame(b);
        if (!r.ok) throw r.error;
        expect(r.value.frame).toEqual(f);
        expect(r.value.length).toBe(b.length);
        expect(encodeMpaFrame(r.value.frame)).toEqual(b);
      }),
      { numRuns: 200 },
    );
  });

  it('FPDUs round-trip at any position, markers and CRC on or off', () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ maxLength: 1500 }),
        // Any position, not only the 4-aligned ones a conformant stream uses (issue 8: a
        // marker inside the ULPDU Length or the CRC field).
        fc.oneof(
          fc.integer({ min: 0, max: 4095 }).map((p) => p * 4),
          fc.integer({ min: 0, max: 16383 }),
          fc.integer({ min: 0, max: 31 }).map((k) => k * 512 + 511),
        ),
        fc.boolean(),
        fc.boolean(),
        (ulpdu, position, markers, crc) => {
          const o = { markers, crc, position };
          const f = encodeFpdu(ulpdu, o);
          const r = decodeFpdu(f, 0, o);
          if (!r.ok) throw r.error;
          expect(r.value.fpdu.ulpdu).toEqual(ulpdu);
          expect(r.value.length).toBe(f.length);
          expect(r.value.crcState).toBe(crc ? 'valid' : 'not-in-use');
          // encode(decode(b)) reproduces the FPDU, markers and CRC included.
          expect(encodeFpdu(r.value.fpdu.ulpdu, o)).toEqual(f);
          const expectedMarkers = markers
            ? Array.from({ length: f.length }, (_, i) => i).filter(
                (i) => (position + i) % 512 === 0,
              ).length
            : 0;
          expect(r.value.markers.length).toBe(expectedMarkers);
          expect(f.length).toBe(
            2 + ulpdu.length + ((4 - ((ulpdu.length + 2) % 4)) % 4) + 4 + 4 * expectedMarkers,
          );
        },
      ),
      { numRuns: 200 },
    );
  });

  it('random and mutated streams never throw', () => {
    const frameBytes = mpaFrame.map((f) => encodeMpaFrame(f));
    fc.assert(
      fc.property(
        fc.oneof(fc.uint8Array({ maxLength: 200 }), mutated(frameBytes)),
        fc.boolean(),
        fc.boolean(),
        u32sequence(),
        (b, markers, crc, startSequence) => {
          const r1 = decodeMpaFrame(b);
          expect(isDecodeResult(r1)).toBe(true);
          const r2 = decodeFpdu(b, 0, { markers, crc, position: startSequence % 2048 });
          expect(isDecodeResult(r2)).toBe(true);
          const r3 = decodeMpaStream(b, { startSequence });
          expect(isDecodeResult(r3)).toBe(true);
          const r4 = decodeMpaStream(b, { startSequence, negotiated: { markers, crc } });
          expect(isDecodeResult(r4)).toBe(true);
          if (r4.ok) {
            for (const f of r4.value.fpdus) expect(isDecodeResult(f.message)).toBe(true);
            if (r4.value.error !== undefined) expect(r4.value.error).toBeInstanceOf(DecodeError);
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});

function u32sequence(): fc.Arbitrary<number> {
  return fc.integer({ min: 0, max: 0xffffffff });
}
