import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DecodeError, EncodeError } from '../../../../src/codec/errors.js';
import {
  type AethSyndrome,
  decodeAethSyndrome,
  encodeAethSyndrome,
} from '../../../../src/codec/roce/aeth.js';
import { type Bth, decodeBth, encodeBth } from '../../../../src/codec/roce/bth.js';
import {
  EXTENSION_HEADER_LAYOUT,
  type ExtensionHeaders,
  type FieldLayout,
} from '../../../../src/codec/roce/headers.js';
import { BTH_OPCODES, type ExtensionHeader } from '../../../../src/codec/roce/opcodes.js';
import { decodeRocePacket, encodeRocePacket } from '../../../../src/codec/roce/packet.js';

const bthArb: fc.Arbitrary<Bth> = fc.record({
  opcode: fc.integer({ min: 0, max: 0xff }),
  solicitedEvent: fc.boolean(),
  migrationRequest: fc.boolean(),
  padCount: fc.integer({ min: 0, max: 3 }),
  transportVersion: fc.integer({ min: 0, max: 15 }),
  partitionKey: fc.integer({ min: 0, max: 0xffff }),
  fecn: fc.boolean(),
  becn: fc.boolean(),
  reserved6: fc.integer({ min: 0, max: 0x3f }),
  destinationQp: fc.integer({ min: 0, max: 0xffffff }),
  ackRequest: fc.boolean(),
  reserved7: fc.integer({ min: 0, max: 0x7f }),
  psn: fc.integer({ min: 0, max: 0xffffff }),
});

const syndromeArb: fc.Arbitrary<AethSyndrome> = fc.oneof(
  fc.integer({ min: 0, max: 31 }).map((creditCount) => ({ kind: 'ACK' as const, creditCount })),
  fc.integer({ min: 0, max: 31 }).map((timer) => ({ kind: 'RNR_NAK' as const, timer })),
  fc
    .constantFrom(
      'PSN_SEQUENCE_ERROR',
      'INVALID_REQUEST',
      'REMOTE_ACCESS_ERROR',
      'REMOTE_OPERATIONAL_ERROR',
      'INVALID_RD_REQUEST',
    )
    .map((code) => ({ kind: 'NAK' as const, code })),
);

function headerArb(h: ExtensionHeader): fc.Arbitrary<Record<string, number | bigint>> {
  const fields: Record<string, fc.Arbitrary<number | bigint>> = {};
  for (const f of EXTENSION_HEADER_LAYOUT[h] as readonly FieldLayout[])
    fields[f.name] =
      f.width === 8
        ? fc.bigInt({ min: 0n, max: (1n << 64n) - 1n })
        : fc.integer({ min: 0, max: 2 ** (8 * f.width) - 1 });
  if (h === 'AETH') fields.syndrome = syndromeArb.map(encodeAethSyndrome);
  return fc.record(fields);
}

const opcodes = [...BTH_OPCODES.values()];
const packetArb = fc
  .constantFrom(...opcodes)
  .chain((info) =>
    fc.record({
      bth: bthArb.map((b) => ({ ...b, opcode: info.value })),
      headers: fc
        .tuple(...info.headers.map((h) => headerArb(h).map((v) => [h, v] as const)))
        .map((pairs) => Object.fromEntries(pairs) as ExtensionHeaders),
      payload: info.hasPayload ? fc.uint8Array({ maxLength: 64 }) : fc.constant(new Uint8Array(0)),
      icrc: fc.integer({ min: 0, max: 0xffffffff }),
    }),
  )
  .map((p) => ({ ...p, bth: { ...p.bth, padCount: (4 - (p.payload.length % 4)) % 4 } }));

describe('RoCEv2 codec properties', () => {
  it('BTH: decode(encode(b)) == b and encode(decode(bytes)) == bytes', () => {
    fc.assert(
      fc.property(bthArb, (b) => {
        const bytes = encodeBth(b);
        expect(decodeBth(bytes)).toEqual({ ok: true, value: b });
      }),
    );
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 12, maxLength: 12 }), (bytes) => {
        const r = decodeBth(bytes);
        expect(r.ok && encodeBth(r.value)).toEqual(bytes);
      }),
    );
  });

  it('AETH syndrome: decode(encode(s)) == s', () => {
    fc.assert(
      fc.property(syndromeArb, (s) => {
        expect(decodeAethSyndrome(encodeAethSyndrome(s))).toEqual({ ok: true, value: s });
      }),
    );
  });

  it('packets of every opcode: decode(encode(m)) == m, encode(decode(b)) == b', () => {
    fc.assert(
      fc.property(packetArb, (m) => {
        const bytes = encodeRocePacket(m);
        const r = decodeRocePacket(bytes);
        if (!r.ok) throw r.error;
        expect(r.value.bth).toEqual(m.bth);
        expect(r.value.headers).toEqual(m.headers);
        expect(r.value.payload).toEqual(m.payload);
        expect(r.value.icrc).toBe(m.icrc);
        const again = encodeRocePacket({
          bth: r.value.bth,
          headers: r.value.headers,
          payload: r.value.payload,
          pad: r.value.pad,
          icrc: r.value.icrc,
        });
        expect(again).toEqual(bytes);
      }),
      { numRuns: 300 },
    );
  });

  it('random and mutated bytes give values or DecodeErrors, nothing else', () => {
    const check = (bytes: Uint8Array) => {
      const r = decodeRocePacket(bytes);
      if (r.ok) {
        expect(r.value.payload.length + r.value.pad.length).toBeLessThanOrEqual(bytes.length);
      } else {
        expect(r.error).toBeInstanceOf(DecodeError);
        expect(r.error.offset).toBeGreaterThanOrEqual(0);
        expect(r.error.offset).toBeLessThanOrEqual(bytes.length);
      }
    };
    fc.assert(fc.property(fc.uint8Array({ maxLength: 80 }), check), { numRuns: 500 });
    fc.assert(
      fc.property(
        packetArb,
        fc.nat(),
        fc.integer({ min: 0, max: 255 }),
        fc.nat(),
        (m, at, value, cut) => {
          const bytes = encodeRocePacket(m);
          bytes[at % bytes.length] = value;
          check(bytes);
          check(bytes.subarray(0, cut % (bytes.length + 1)));
        },
      ),
      { numRuns: 300 },
    );
  });

  it('encoders reject out-of-range fields before writing', () => {
    const base = { opcode: 0x04, destinationQp: 1, psn: 1 };
    expect(() => encodeRocePacket({ bth: { ...base, psn: 0x1000000 }, headers: {} })).toThrow(
      EncodeError,
    );
    expect(() => encodeRocePacket({ bth: { ...base, destinationQp: -1 }, headers: {} })).toThrow(
      /destinationQp/,
    );
    expect(() => encodeRocePacket({ bth: { ...base, opcode: 0x15 }, headers: {} })).toThrow(
      /reserved/,
    );
    expect(() =>
      encodeRocePacket({
        bth: { ...base, opcode: 0x0c },
        headers: { RETH: { virtualAddress: 1n << 64n, rKey: 0, dmaLength: 0 } },
      }),
    ).toThrow(/RETH.virtualAddress/);
    expect(() => encodeRocePacket({ bth: { ...base, opcode: 0x0c }, headers: {} })).toThrow(
      /needs RETH/,
    );
    expect(() => encodeRocePacket({ bth: base, headers: { ImmDt: { immediateData: 1 } } })).toThrow(
      /does not carry ImmDt/,
    );
    expect(() =>
      encodeRocePacket({
        bth: { ...base, opcode: 0x11 },
        headers: { AETH: { syndrome: 0, msn: 0 } },
        payload: Uint8Array.of(1),
      }),
    ).toThrow(/no payload/);
    expect(() => encodeAethSyndrome({ kind: 'ACK', creditCount: 32 })).toThrow(EncodeError);
  });
});
