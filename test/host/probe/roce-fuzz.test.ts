import { describe, expect, it } from 'vitest';
import { decodeRocePacket } from '../../../src/codec/roce/packet.js';
import { roceFuzzPacket } from '../../../src/probe/roce-fuzz.js';

// The RoCE side of probe's wire fuzz (issue 21): seeded, field-aware mutations of the
// tester's own requests. The packets themselves go to rxe in the guest
// (test/host/interop/probe-kernels.test.ts).
const TARGET = { qpn: 0x000123, va: 0x00007f3a_12c45000n, rKey: 0x1a2b3c4d };
const bytes = (seed: number, i: number) =>
  Buffer.from(roceFuzzPacket(seed, i).datagram(TARGET)).toString('hex');

describe('the RoCE wire fuzz', () => {
  it('makes the same packets from the same seed and different ones from another', () => {
    expect(bytes(7, 3)).toBe(bytes(7, 3));
    const a = Array.from({ length: 40 }, (_, i) => bytes(7, i));
    const b = Array.from({ length: 40 }, (_, i) => bytes(8, i));
    expect(a).not.toEqual(b);
    expect(new Set(a).size).toBeGreaterThan(30);
  });

  it('mutates one field of a well-formed request and keeps the ICRC right', () => {
    const kinds = new Map<string, number>();
    for (let i = 0; i < 200; i++) {
      const packet = roceFuzzPacket(1, i);
      const kind = packet.mutation.split(' ')[2]!;
      kinds.set(kind, (kinds.get(kind) ?? 0) + 1);
      const datagram = packet.datagram(TARGET);
      const decoded = decodeRocePacket(datagram);
      // A header field set to a value is still a packet of the same shape, which the codec
      // reads back (a BTH PadCnt may not fit the payload; opcode, truncate and extend
      // change the shape: those need not decode).
      if (kind === 'header') {
        expect(decoded.ok, packet.mutation).toBe(true);
        if (decoded.ok) expect(decoded.value.bth.destinationQp).toBe(TARGET.qpn);
      }
    }
    expect([...kinds.keys()].sort()).toEqual(['bth', 'extend', 'header', 'opcode', 'truncate']);
  });
});
