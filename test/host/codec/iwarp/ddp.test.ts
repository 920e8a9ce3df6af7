import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type DdpSegment,
  decodeDdpSegment,
  encodeDdpSegment,
} from '../../../../src/codec/iwarp/index.js';
import { u32, u64 } from './arbitraries.js';
import { hex, toHex } from './hex.js';

describe('DDP segments (RFC 5041 §4)', () => {
  it('tagged header: control, RsvdULP, STag, TO (14 bytes)', () => {
    const seg: DdpSegment = {
      header: {
        tagged: true,
        last: false,
        ddpReserved: 0,
        ddpVersion: 1,
        rsvdUlp: 0x40,
        stag: 0x0a0b0c0d,
        taggedOffset: 0x0102030405060708n,
      },
      payload: hex('beef'),
    };
    expect(toHex(encodeDdpSegment(seg))).toBe(
      '81' + '40' + '0a0b0c0d' + '0102030405060708' + 'beef',
    );
  });

  it('untagged header: control, 40-bit RsvdULP, QN, MSN, MO (18 bytes)', () => {
    const b = hex('45 4a 01020304 00000001 00000007 00000010 ff');
    const r = decodeDdpSegment(b);
    if (!r.ok) throw r.error;
    expect(r.value.header).toEqual({
      tagged: false,
      last: true,
      ddpReserved: 1,
      ddpVersion: 1,
      rsvdUlp: 0x4a01020304,
      queueNumber: 1,
      messageSequenceNumber: 7,
      messageOffset: 16,
    });
    expect(toHex(encodeDdpSegment(r.value))).toBe(toHex(b));
  });

  it('refuses DV other than 1 and short headers', () => {
    const dv = decodeDdpSegment(hex('82 00 00000000 0000000000000000'));
    expect(dv.ok ? 'ok' : `${dv.error.field} ${dv.error.reason}`).toBe('dv bad-value');
    const short = decodeDdpSegment(hex('41 00 0000'));
    expect(short.ok ? 'ok' : `${short.error.field} ${short.error.reason}`).toBe('header truncated');
  });

  it('round-trips any segment', () => {
    const header = fc.oneof(
      fc.record({
        tagged: fc.constant(true as const),
        last: fc.boolean(),
        ddpReserved: fc.integer({ min: 0, max: 15 }),
        ddpVersion: fc.constant(1),
        rsvdUlp: fc.integer({ min: 0, max: 255 }),
        stag: u32,
        taggedOffset: u64,
      }),
      fc.record({
        tagged: fc.constant(false as const),
        last: fc.boolean(),
        ddpReserved: fc.integer({ min: 0, max: 15 }),
        ddpVersion: fc.constant(1),
        rsvdUlp: fc.integer({ min: 0, max: 0xff_ffff_ffff }),
        queueNumber: u32,
        messageSequenceNumber: u32,
        messageOffset: u32,
      }),
    );
    fc.assert(
      fc.property(header, fc.uint8Array({ maxLength: 40 }), (h, payload) => {
        const r = decodeDdpSegment(encodeDdpSegment({ header: h, payload }));
        if (!r.ok) throw r.error;
        expect(r.value).toEqual({ header: h, payload });
      }),
    );
  });

  it('encoder range checks', () => {
    const h = {
      tagged: false as const,
      last: true,
      ddpReserved: 0,
      ddpVersion: 1,
      rsvdUlp: 2 ** 40,
      queueNumber: 0,
      messageSequenceNumber: 0,
      messageOffset: 0,
    };
    expect(() => encodeDdpSegment({ header: h, payload: new Uint8Array(0) })).toThrow(/40-bit/);
    expect(() =>
      encodeDdpSegment({
        header: { ...h, rsvdUlp: 0, queueNumber: -1 },
        payload: new Uint8Array(0),
      }),
    ).toThrow(/queueNumber/);
  });
});
