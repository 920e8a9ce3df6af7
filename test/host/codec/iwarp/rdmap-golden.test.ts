import { describe, expect, it } from 'vitest';
import {
  decodeRdmapMessage,
  encodeRdmapMessage,
  makeAtomicRequest,
  makeAtomicResponse,
  makeImmediateData,
  makeRdmaWrite,
  makeReadRequest,
  makeTerminate,
  type RdmapMessage,
  terminatedHeadersOf,
} from '../../../../src/codec/iwarp/index.js';
import { hex, toHex } from './hex.js';

function decodeOk(b: Uint8Array, profile?: 'rfc7306' | 'draft-01' | 'v2-draft'): RdmapMessage {
  const r = decodeRdmapMessage(b, profile === undefined ? {} : { profile });
  if (!r.ok) throw r.error;
  return r.value;
}

describe('RDMAP golden vectors (bytes written out field by field)', () => {
  it('Atomic Request FetchAdd (RFC 7306 §5.2.1 Figure 4, QN 1, opcode 0xA)', () => {
    const m = makeAtomicRequest({
      operation: 'fetch-add',
      messageSequenceNumber: 0x00000007,
      requestIdentifier: 0x01020304,
      remoteSTag: 0x1a2b3c4d,
      remoteTaggedOffset: 0x0123456789abcdefn,
      addOrSwapData: 0x1111111122222222n,
      addOrSwapMask: 0x8000000000008000n, // not symmetric under a byte or 32-bit-half swap (issue 38)
    });
    const expected = hex(
      [
        '41', // DDP control: T=0 L=1 Resrv=0 DV=01
        '4a', // RDMAP control: RV=01 Rsv=00 Opcode=1010
        '00000000', // Invalidate STag (zero, RFC 7306 §4.1)
        '00000001', // QN 1
        '00000007', // MSN
        '00000000', // MO
        '00000000', // Reserved (28 bits) + AOpCode 0 (FetchAdd)
        '01020304', // Request Identifier
        '1a2b3c4d', // Remote STag
        '0123456789abcdef', // Remote Tagged Offset
        '1111111122222222', // Add Data
        '8000000000008000', // Add Mask
        '0000000000000000', // Compare Data (zero for FetchAdd)
        'ffffffffffffffff', // Compare Mask (all ones for FetchAdd)
      ].join(''),
    );
    const bytes = encodeRdmapMessage(m);
    expect(toHex(bytes)).toBe(toHex(expected));
    expect(bytes.length).toBe(18 + 52);
    expect(decodeOk(expected)).toEqual(m);
  });

  it('Atomic Request CmpSwap uses AOpCode 2 (RFC 7306 §10.2)', () => {
    const m = makeAtomicRequest({
      operation: 'cmp-swap',
      messageSequenceNumber: 1,
      requestIdentifier: 0xdeadbeef,
      remoteSTag: 0x00abcdef,
      remoteTaggedOffset: 0x10n,
      addOrSwapData: 0x0102030405060708n,
      addOrSwapMask: 0x00000000ffffffffn,
      compareData: 0x1122334455667788n,
      compareMask: 0xffffffff00000000n,
    });
    const b = encodeRdmapMessage(m);
    expect(toHex(b.subarray(18, 22))).toBe('00000002');
    expect(toHex(b.subarray(38))).toBe(
      '0102030405060708' + '00000000ffffffff' + '1122334455667788' + 'ffffffff00000000',
    );
  });

  it('Atomic Response (QN 3, opcode 0xB, RFC 7306 §5.2.2)', () => {
    const m = makeAtomicResponse({
      messageSequenceNumber: 0x0a0b0c0d,
      originalRequestIdentifier: 0x01020304,
      originalRemoteDataValue: 0xfedcba9876543210n,
    });
    const expected = hex('41 4b 00000000 00000003 0a0b0c0d 00000000 01020304 fedcba9876543210');
    expect(toHex(encodeRdmapMessage(m))).toBe(toHex(expected));
    expect(decodeOk(expected)).toEqual(m);
  });

  it('Immediate Data 0x8 and with SE 0x9 carry exactly 8 bytes on QN 0 (RFC 7306 §6.3)', () => {
    const m = makeImmediateData({ messageSequenceNumber: 2, immediateData: 0x0123456789abcdefn });
    expect(toHex(encodeRdmapMessage(m))).toBe(
      '414800000000000000000000000200000000' + '0123456789abcdef',
    );
    const se = makeImmediateData({
      messageSequenceNumber: 2,
      immediateData: 5n,
      solicitedEvent: true,
    });
    expect(encodeRdmapMessage(se)[1]).toBe(0x49);
    // Seven or nine bytes of immediate data are refused.
    const short = hex('4148 00000000 00000000 00000002 00000000 01234567 89abcd');
    const r = decodeRdmapMessage(short);
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.error.reason).toBe('truncated');
      expect(r.error.offset).toBe(18);
    }
    const long = hex('4148 00000000 00000000 00000002 00000000 0123456789abcdef 00');
    const r2 = decodeRdmapMessage(long);
    expect(r2.ok ? 'ok' : r2.error.reason).toBe('bad-length');
  });

  it('RDMA Write: tagged header STag + TO (RFC 5041 §4.2)', () => {
    const m = makeRdmaWrite({
      stag: 0x11223344,
      taggedOffset: 0x0102030405060708n,
      payload: hex('cafe'),
    });
    const expected = hex('c1 40 11223344 0102030405060708 cafe');
    expect(toHex(encodeRdmapMessage(m))).toBe(toHex(expected));
    expect(decodeOk(expected)).toEqual(m);
  });

  it('RDMA Read Request: Sink STag/TO, RDMARDSZ, Src STag/TO (RFC 5040 §4.4)', () => {
    const m = makeReadRequest({
      messageSequenceNumber: 1,
      sinkSTag: 0xa1a2a3a4,
      sinkTaggedOffset: 0x0001020304050607n,
      readSize: 0x00010000,
      sourceSTag: 0xb1b2b3b4,
      sourceTaggedOffset: 0x1011121314151617n,
    });
    const expected = hex(
      '41 41 00000000 00000001 00000001 00000000 a1a2a3a4 0001020304050607 00010000 b1b2b3b4 1011121314151617',
    );
    expect(toHex(encodeRdmapMessage(m))).toBe(toHex(expected));
    expect(decodeOk(expected)).toEqual(m);
  });

  it('Terminate with copied DDP header and M/D bits (RFC 5040 §4.8, RFC 7306 §8.1 item 2)', () => {
    const offending = encodeRdmapMessage(
      makeImmediateData({ messageSequenceNumber: 9, immediateData: 0x0123456789abcdefn }),
    );
    const headers = terminatedHeadersOf(offending)!;
    expect(headers.ddpSegmentLength).toBe(26);
    expect(headers.terminatedRdmaHeader).toBeUndefined();
    // Remote Operation Error / Unexpected OpCode.
    const t = makeTerminate({
      messageSequenceNumber: 1,
      layer: 0,
      errorType: 2,
      errorCode: 0x06,
      headers,
    });
    const expected = hex(
      '41 47 00000000 00000002 00000001 00000000' + // untagged DDP header, QN 2
        '0206c000' + // Layer 0, EType 2, Code 0x06, M=1 D=1 R=0
        '001a' + // DDP Segment Length 26
        '4148 00000000 00000000 00000009 00000000', // copied untagged DDP header (18 bytes)
    );
    expect(toHex(encodeRdmapMessage(t))).toBe(toHex(expected));
    expect(decodeOk(expected)).toEqual(t);
  });

  it('Terminate for a Read Request copies the 28-byte RDMA header (R bit)', () => {
    const rr = encodeRdmapMessage(
      makeReadRequest({
        messageSequenceNumber: 3,
        sinkSTag: 1,
        sinkTaggedOffset: 2n,
        readSize: 3,
        sourceSTag: 4,
        sourceTaggedOffset: 5n,
      }),
    );
    const t = makeTerminate({
      messageSequenceNumber: 2,
      layer: 0,
      errorType: 1,
      errorCode: 0x00,
      headers: terminatedHeadersOf(rr)!,
    });
    const b = encodeRdmapMessage(t);
    expect(toHex(b.subarray(18, 22))).toBe('0100e000');
    expect(b.length).toBe(18 + 4 + 2 + 18 + 28);
    expect(decodeOk(b)).toEqual(t);
  });
});

describe('terminatedHeadersOf', () => {
  it('copies the 16-byte Read V2 Request header and nothing for an Atomic Request', () => {
    const v2 = hex('41 91 00000000 00000001 00000005 00000000 00001000 a0b0c0d0 0102030405060708');
    const h = terminatedHeadersOf(v2)!;
    expect(toHex(h.terminatedDdpHeader)).toBe(toHex(v2.subarray(0, 18)));
    expect(toHex(h.terminatedRdmaHeader!)).toBe(toHex(v2.subarray(18)));
    const atomic = encodeRdmapMessage(
      makeAtomicRequest({
        operation: 'fetch-add',
        messageSequenceNumber: 1,
        requestIdentifier: 1,
        remoteSTag: 2,
        remoteTaggedOffset: 8n,
        addOrSwapData: 1n,
      }),
    );
    // RFC 7306 §8.1 item 2: DDP header only.
    expect(terminatedHeadersOf(atomic)!.terminatedRdmaHeader).toBeUndefined();
    expect(terminatedHeadersOf(atomic)!.ddpSegmentLength).toBe(70);
    const tagged = encodeRdmapMessage(
      makeRdmaWrite({ stag: 1, taggedOffset: 2n, payload: hex('00') }),
    );
    expect(terminatedHeadersOf(tagged)!.terminatedDdpHeader.length).toBe(14);
  });
});

describe('RDMAP decode errors', () => {
  it('Swap (AOpCode 1) is wrong-profile in rfc7306 and valid in draft-01', () => {
    const swap = makeAtomicRequest(
      {
        operation: 'swap',
        messageSequenceNumber: 1,
        requestIdentifier: 7,
        remoteSTag: 8,
        remoteTaggedOffset: 0x40n,
        addOrSwapData: 0x0123456789abcdefn,
      },
      'draft-01',
    );
    const b = encodeRdmapMessage(swap, { profile: 'draft-01' });
    expect(toHex(b.subarray(18, 22))).toBe('00000001');
    const r = decodeRdmapMessage(b, { profile: 'rfc7306' });
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.error.reason).toBe('wrong-profile');
      expect(r.error.field).toBe('aOpCode');
      expect(r.error.message).toContain("'draft-01'");
    }
    expect(decodeOk(b, 'draft-01')).toEqual(swap);
    expect(() => encodeRdmapMessage(swap)).toThrow(/draft-01/);
  });

  it('draft-01 accepts its Figure 2 queue numbers; rfc7306 names draft-01', () => {
    const resp = hex('41 4b 00000000 00000001 00000001 00000000 01020304 fedcba9876543210');
    expect(decodeRdmapMessage(resp, { profile: 'draft-01' }).ok).toBe(true);
    const r = decodeRdmapMessage(resp);
    expect(r.ok ? 'ok' : `${r.error.reason} ${r.error.message}`).toMatch(
      /^wrong-profile .*draft-01/,
    );
    const bad = hex('41 4b 00000000 00000002 00000001 00000000 01020304 fedcba9876543210');
    const r2 = decodeRdmapMessage(bad, { profile: 'draft-01' });
    expect(r2.ok ? 'ok' : `${r2.error.reason}@${r2.error.offset}`).toBe('bad-value@6');
  });

  it('V2 opcodes need RV 2 and the v2-draft profile', () => {
    const readV2 = hex(
      '41 91 00000000 00000001 00000005 00000000 00001000 a0b0c0d0 0102030405060708',
    );
    const v = decodeOk(readV2, 'v2-draft');
    expect(v).toMatchObject({
      kind: 'read-v2-request',
      readSize: 0x1000,
      sourceSTag: 0xa0b0c0d0,
      sourceTaggedOffset: 0x0102030405060708n,
    });
    const r = decodeRdmapMessage(readV2, { profile: 'rfc7306' });
    expect(r.ok ? 'ok' : `${r.error.reason} ${r.error.message}`).toMatch(
      /^wrong-profile .*v2-draft/,
    );
    const v1InV2 = decodeRdmapMessage(hex('c1 40 11223344 0102030405060708'), {
      profile: 'v2-draft',
    });
    expect(v1InV2.ok ? 'ok' : v1InV2.error.reason).toBe('wrong-profile');
  });

  it('V2 Send with Immediate: L = 1 segment holds exactly the immediate data', () => {
    // 0x93 = RV 10, Rsv 0, opcode 10011 (Send with Immediate Data).
    const lastSeg = hex('41 93 00000000 00000000 00000004 00000010 0123456789abcdef');
    expect(decodeOk(lastSeg, 'v2-draft')).toMatchObject({
      kind: 'send-immediate',
      immediateData: 0x0123456789abcdefn,
    });
    const midSeg = hex('01 93 00000000 00000000 00000004 00000000 cafebabe');
    expect(decodeOk(midSeg, 'v2-draft')).toMatchObject({
      kind: 'send-immediate',
      immediateData: undefined,
    });
    const badLast = hex('41 93 00000000 00000000 00000004 00000010 0123456789abcdef 00');
    const r = decodeRdmapMessage(badLast, { profile: 'v2-draft' });
    expect(r.ok ? 'ok' : r.error.reason).toBe('bad-length');
  });

  it('names field and offset for truncation, bad DV, unknown opcode, wrong T bit', () => {
    const cases: [string, string, number, string][] = [
      ['41', 'truncated', 0, 'control'],
      ['42 43 00000000', 'bad-value', 0, 'dv'],
      ['41 4c 00000000 00000000 00000000 00000000', 'unknown-opcode', 1, 'opcode'],
      ['c1 43 00000000 0000000000000000', 'bad-value', 0, 't'],
      ['41 43 00000000 000000', 'truncated', 0, 'header'],
      ['41 c3 00000000 00000000 00000000 00000000', 'bad-value', 1, 'rv'],
    ];
    for (const [h, reason, offset, field] of cases) {
      const r = decodeRdmapMessage(hex(h));
      expect(r.ok).toBe(false);
      if (!r.ok)
        expect([r.error.reason, r.error.offset, r.error.field]).toEqual([reason, offset, field]);
    }
  });
});

describe('RDMAP encode errors', () => {
  it('refuses out-of-range fields before writing', () => {
    const base = makeAtomicRequest({
      operation: 'fetch-add',
      messageSequenceNumber: 1,
      requestIdentifier: 1,
      remoteSTag: 1,
      remoteTaggedOffset: 0n,
      addOrSwapData: 1n,
    });
    expect(() => encodeRdmapMessage({ ...base, aOpCode: 16 }, { strict: false })).toThrow(
      /aOpCode/,
    );
    expect(() => encodeRdmapMessage({ ...base, requestIdentifier: 2 ** 32 })).toThrow(
      /requestIdentifier/,
    );
    expect(() => encodeRdmapMessage({ ...base, remoteTaggedOffset: 1n << 64n })).toThrow(
      /remoteTaggedOffset/,
    );
    expect(() => encodeRdmapMessage({ ...base, compareMask: -1n })).toThrow(/compareMask/);
    expect(() => encodeRdmapMessage({ ...base, aOpCode: 5 })).toThrow(/not defined/);
    expect(() => encodeRdmapMessage({ ...base, ddp: { ...base.ddp, queueNumber: 0 } })).toThrow(
      /QN 1/,
    );
    // Non-strict mode builds a deliberately wrong queue number for negative tests.
    const wrongQn = encodeRdmapMessage(
      { ...base, ddp: { ...base.ddp, queueNumber: 0 } },
      { strict: false },
    );
    expect(toHex(wrongQn.subarray(6, 10))).toBe('00000000');
  });

  it('refuses a 5-bit opcode with RV 1', () => {
    const m = {
      kind: 'read-v2-request' as const,
      ddp: {
        tagged: false as const,
        last: true,
        queueNumber: 1,
        messageSequenceNumber: 1,
        messageOffset: 0,
      },
      control: { ddpReserved: 0, ddpVersion: 1, rdmaVersion: 1, rdmapReserved: 0 },
      invalidateSTag: 0,
      readSize: 1,
      sourceSTag: 1,
      sourceTaggedOffset: 1n,
    };
    expect(() => encodeRdmapMessage(m, { profile: 'v2-draft', strict: false })).toThrow(/5-bit/);
    expect(() =>
      encodeRdmapMessage(
        { ...m, control: { ...m.control, rdmaVersion: 2 } },
        { profile: 'rfc7306' },
      ),
    ).toThrow(/v2-draft/);
  });
});
