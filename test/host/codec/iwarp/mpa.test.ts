import { describe, expect, it } from 'vitest';
import {
  decodeFpdu,
  decodeMpaFrame,
  decodeMpaStream,
  encodeFpdu,
  encodeMpaFrame,
  encodeMpaStream,
  encodeRdmapMessage,
  makeAtomicRequest,
  makeImmediateData,
  makeMpaFrame,
  makeSend,
  mpaPadLength,
  negotiateMpa,
} from '../../../../src/codec/iwarp/index.js';
import { hex, toHex } from './hex.js';

const immUlpdu = hex('4148 00000000 00000000 00000002 00000000 0123456789abcdef');

describe('MPA FPDU (RFC 5044 §4)', () => {
  it('length + ULPDU + no pad + CRC32c (CRC from an independent bitwise implementation)', () => {
    const f = encodeFpdu(immUlpdu, { crc: true, markers: false });
    // CRC32c 0x3da59a08, sent least significant byte first (RFC 3720 B.4 convention).
    expect(toHex(f)).toBe(`001a${toHex(immUlpdu)}089aa53d`);
    const d = decodeFpdu(f, 0, { crc: true, markers: false });
    expect(d.ok && d.value.crcState).toBe('valid');
    expect(d.ok && toHex(d.value.fpdu.ulpdu)).toBe(toHex(immUlpdu));
  });

  it('pads a 21-byte ULPDU with one zero byte', () => {
    const send = encodeRdmapMessage(makeSend({ messageSequenceNumber: 1, payload: hex('616263') }));
    expect(send.length).toBe(21);
    expect(mpaPadLength(21)).toBe(1);
    expect(toHex(encodeFpdu(send, { crc: true, markers: false }))).toBe(
      `0015${toHex(send)}00447065aa`,
    );
  });

  it('CRC off: the trailer is zero and the state is not-in-use', () => {
    const f = encodeFpdu(immUlpdu, { crc: false, markers: false });
    expect(toHex(f.subarray(28))).toBe('00000000');
    const d = decodeFpdu(f, 0, { crc: false, markers: false });
    expect(d.ok && d.value.crcState).toBe('not-in-use');
  });

  it('a flipped bit gives crcState invalid', () => {
    const f = encodeFpdu(immUlpdu, { crc: true, markers: false });
    f[10]! ^= 0x04;
    const d = decodeFpdu(f, 0, { crc: true, markers: false });
    expect(d.ok && d.value.crcState).toBe('invalid');
  });

  it('a length field larger than the input is truncated, before any allocation', () => {
    const d = decodeFpdu(hex('ffff 0000'), 0, { crc: true, markers: false });
    expect(d.ok ? 'ok' : `${d.error.reason}@${d.error.offset}`).toBe('truncated@2');
    // With markers the first 4 bytes at position 0 are a marker; the length field is then missing.
    const m = decodeFpdu(hex('0000 0000 ff'), 0, { crc: true, markers: true });
    expect(m.ok ? 'ok' : `${m.error.field} ${m.error.reason}@${m.error.offset}`).toBe(
      'ulpduLength truncated@4',
    );
  });
});

describe('MPA markers (RFC 5044 §5)', () => {
  const ulpdu = Uint8Array.from({ length: 600 }, (_, i) => (i * 7 + 3) & 0xff);
  // Unmarked body: length 0x0258, 600 bytes, 2 pad bytes = 604 bytes.
  const body = new Uint8Array(604);
  body.set(hex('0258'), 0);
  body.set(ulpdu, 2);

  it('inserts a marker at position 0 (FPDUPTR 0) and at 512 (FPDUPTR 512), covered by the CRC', () => {
    const f = encodeFpdu(ulpdu, { crc: true, markers: true, position: 0 });
    expect(f.length).toBe(4 + 508 + 4 + 96 + 4);
    expect(toHex(f.subarray(0, 4))).toBe('00000000');
    expect(toHex(f.subarray(4, 512))).toBe(toHex(body.subarray(0, 508)));
    expect(toHex(f.subarray(512, 516))).toBe('00000200');
    expect(toHex(f.subarray(516, 612))).toBe(toHex(body.subarray(508)));
    const d = decodeFpdu(f, 0, { crc: true, markers: true, position: 0 });
    if (!d.ok) throw d.error;
    expect(d.value.crcState).toBe('valid');
    expect(d.value.markers.map((m) => [m.offset, m.fpduPointer])).toEqual([
      [0, 0],
      [512, 512],
    ]);
    expect(toHex(d.value.fpdu.ulpdu)).toBe(toHex(ulpdu));
    expect(d.value.length).toBe(616);
  });

  it('mid-grid: an FPDU at position 500 gets one marker after 12 bytes, FPDUPTR 12', () => {
    const small = hex('4148 00000000 00000000 00000002 00000000 0123456789abcdef');
    const f = encodeFpdu(small, { crc: true, markers: true, position: 500 });
    expect(f.length).toBe(32 + 4);
    expect(toHex(f.subarray(0, 12))).toBe(`001a${toHex(small.subarray(0, 10))}`);
    expect(toHex(f.subarray(12, 16))).toBe('0000000c');
    const d = decodeFpdu(f, 0, { crc: true, markers: true, position: 500 });
    expect(d.ok && toHex(d.value.fpdu.ulpdu)).toBe(toHex(small));
  });

  it('a marker right before the CRC (Wireshark pad_offset case)', () => {
    // Body of 24 bytes at position 488 ends exactly at 512: the marker precedes the CRC.
    const small = immUlpdu.subarray(0, 22);
    const f = encodeFpdu(small, { crc: true, markers: true, position: 488 });
    expect(f.length).toBe(24 + 4 + 4);
    expect(toHex(f.subarray(24, 28))).toBe('00000018');
    const d = decodeFpdu(f, 0, { crc: true, markers: true, position: 488 });
    expect(d.ok && d.value.crcState).toBe('valid');
  });

  // Issue 8: at 511 mod 512 the encoder split the ULPDU Length around the marker and the
  // decoder read the length straight through it (ok, with the wrong length).
  it('a marker inside the ULPDU Length (position 511 mod 512): split on encode, joined on decode', () => {
    for (const position of [511, 1023, 512 * 9 + 511]) {
      const f = encodeFpdu(immUlpdu, { crc: true, markers: true, position });
      // Length high byte, marker (FPDUPTR 1), length low byte, ULPDU, CRC.
      expect(toHex(f.subarray(0, 6))).toBe('00000000011a');
      expect(f.length).toBe(2 + 26 + 4 + 4);
      const d = decodeFpdu(f, 0, { crc: true, markers: true, position });
      if (!d.ok) throw d.error;
      expect(d.value.fpdu.ulpduLength).toBe(26);
      expect(toHex(d.value.fpdu.ulpdu)).toBe(toHex(immUlpdu));
      expect(d.value.markers.map((m) => [m.offset, m.fpduPointer])).toEqual([[1, 1]]);
      expect(d.value.crcState).toBe('valid');
      expect(d.value.length).toBe(f.length);
    }
  });

  it('a marker inside the CRC field: split on encode, joined on decode, not covered by the CRC', () => {
    // 28-byte body at position 482 ends at 510: the CRC occupies 510, 511, marker, 516, 517.
    const f = encodeFpdu(immUlpdu, { crc: true, markers: true, position: 482 });
    expect(f.length).toBe(28 + 4 + 4);
    expect(toHex(f.subarray(30, 34))).toBe('0000001e');
    const unmarked = encodeFpdu(immUlpdu, { crc: true, markers: false });
    expect(toHex(f.subarray(0, 30))).toBe(toHex(unmarked.subarray(0, 30)));
    expect(toHex(f.subarray(34))).toBe(toHex(unmarked.subarray(30)));
    const d = decodeFpdu(f, 0, { crc: true, markers: true, position: 482 });
    if (!d.ok) throw d.error;
    expect(d.value.crcState).toBe('valid');
    expect(d.value.fpdu.crc).toBe(0x089aa53d);
    expect(d.value.length).toBe(36);
  });

  it('a marker more than 0xffff octets into an FPDU cannot be encoded (16-bit FPDUPTR)', () => {
    const big = new Uint8Array(0xffff);
    expect(() => encodeFpdu(big, { crc: false, markers: true, position: 0 })).toThrow(
      expect.objectContaining({ name: 'EncodeError', field: 'marker.fpduptr' }),
    );
    // Without markers the same ULPDU is fine.
    expect(encodeFpdu(big, { crc: false, markers: false }).length).toBe(2 + 0xffff + 3 + 4);
  });

  it('a marker pointing elsewhere is a bad-value error naming marker.fpduptr', () => {
    const f = encodeFpdu(ulpdu, { crc: true, markers: true, position: 0 });
    f[515] = 0x01;
    const d = decodeFpdu(f, 0, { crc: true, markers: true, position: 0 });
    expect(d.ok ? 'ok' : `${d.error.field} ${d.error.reason} @${d.error.offset}`).toBe(
      'marker.fpduptr bad-value @514',
    );
  });
});

describe('MPA Request/Reply (RFC 5044 §7.1, RFC 6581 §5)', () => {
  it('revision 1 Request with CRC, markers and private data', () => {
    const f = makeMpaFrame('mpa-request', { crc: true, markers: true, privateData: hex('0102') });
    const b = encodeMpaFrame(f);
    expect(new TextDecoder().decode(b.subarray(0, 16))).toBe('MPA ID Req Frame');
    expect(toHex(b.subarray(16))).toBe('c001' + '0002' + '0102');
    const d = decodeMpaFrame(b);
    expect(d.ok && d.value.frame).toEqual(f);
  });

  it('revision 2 Reply with enhanced IRD/ORD, peer-to-peer and RTR bits', () => {
    const f = makeMpaFrame('mpa-reply', {
      crc: true,
      enhancedParameters: {
        ird: 0x10,
        ord: 0x2a,
        peerToPeer: true,
        sendRtr: false,
        writeRtr: true,
        readRtr: true,
      },
      privateData: hex('aa'),
    });
    const b = encodeMpaFrame(f);
    expect(new TextDecoder().decode(b.subarray(0, 16))).toBe('MPA ID Rep Frame');
    // flags C + enhanced = 0x50, rev 2, PD_Length 5, IRD word 0x8010, ORD word 0xc02a.
    expect(toHex(b.subarray(16))).toBe('5002' + '0005' + '8010' + 'c02a' + 'aa');
    const d = decodeMpaFrame(b);
    expect(d.ok && d.value.frame).toEqual(f);
  });

  it('rejects bad keys, revisions and PD_Length over 512', () => {
    const good = encodeMpaFrame(makeMpaFrame('mpa-request'));
    const badKey = good.slice();
    badKey[4] = 0x21;
    const r1 = decodeMpaFrame(badKey);
    expect(r1.ok ? 'ok' : `${r1.error.field} ${r1.error.reason}`).toBe('key bad-value');
    const badRev = good.slice();
    badRev[17] = 3;
    const r2 = decodeMpaFrame(badRev);
    expect(r2.ok ? 'ok' : `${r2.error.field} ${r2.error.reason} ${r2.error.offset}`).toBe(
      'rev bad-value 17',
    );
    const big = good.slice();
    big[18] = 0x02;
    big[19] = 0x01;
    const r3 = decodeMpaFrame(big);
    expect(r3.ok ? 'ok' : `${r3.error.field} ${r3.error.reason}`).toBe('pdLength bad-length');
    expect(() =>
      encodeMpaFrame(makeMpaFrame('mpa-request', { privateData: new Uint8Array(513) })),
    ).toThrow(/512/);
  });
});

describe('MPA stream decoder', () => {
  const atomic = makeAtomicRequest({
    operation: 'fetch-add',
    messageSequenceNumber: 1,
    requestIdentifier: 0x01020304,
    remoteSTag: 0x1a2b3c4d,
    remoteTaggedOffset: 0x0123456789abcdefn,
    addOrSwapData: 0x0000000000000005n,
  });
  const imm = makeImmediateData({ messageSequenceNumber: 1, immediateData: 0x0123456789abcdefn });

  for (const markers of [false, true]) {
    for (const crc of [false, true]) {
      it(`frame then FPDUs, markers=${markers} crc=${crc}, sequence wraps`, () => {
        const request = makeMpaFrame('mpa-request', { markers, crc });
        const reply = makeMpaFrame('mpa-reply', { markers, crc });
        const enc = encodeMpaStream(request, [atomic, imm, atomic], { peerFrame: reply });
        const bytes = new Uint8Array(
          enc.frame.length + enc.fpdus.reduce((n, f) => n + f.length, 0),
        );
        bytes.set(enc.frame);
        let o = enc.frame.length;
        for (const f of enc.fpdus) {
          bytes.set(f, o);
          o += f.length;
        }
        const startSequence = 0xffffffe0;
        const r = decodeMpaStream(bytes, { startSequence, peerFrame: reply });
        if (!r.ok) throw r.error;
        expect(r.value.error).toBeUndefined();
        expect(r.value.negotiated).toEqual({ markers, crc });
        expect(r.value.fpdus.map((f) => f.crcState)).toEqual(
          Array(3).fill(crc ? 'valid' : 'not-in-use'),
        );
        expect(
          r.value.fpdus.map((f) => (f.message.ok ? f.message.value : f.message.error)),
        ).toEqual([atomic, imm, atomic]);
        expect(r.value.fpdus[0]!.sequence).toBe((startSequence + 20) >>> 0);
        expect(r.value.fpdus[0]!.markers.length).toBe(markers ? 1 : 0);
      });
    }
  }

  it('reports a truncated last FPDU with its offset and keeps the ones before', () => {
    const enc = encodeMpaStream(makeMpaFrame('mpa-request', { crc: true }), [imm, imm]);
    const bytes = new Uint8Array([
      ...enc.frame,
      ...enc.fpdus[0]!,
      ...enc.fpdus[1]!.subarray(0, 10),
    ]);
    const r = decodeMpaStream(bytes);
    if (!r.ok) throw r.error;
    expect(r.value.fpdus.length).toBe(1);
    expect(r.value.error?.reason).toBe('truncated');
    expect(r.value.error?.offset).toBe(20 + 32 + 2);
  });

  it('without a frame needs negotiated settings', () => {
    const f = encodeFpdu(immUlpdu, { crc: true, markers: false });
    const r = decodeMpaStream(f, { negotiated: { crc: true, markers: false } });
    expect(r.ok && r.value.fpdus[0]?.crcState).toBe('valid');
    const r2 = decodeMpaStream(f);
    expect(r2.ok ? 'ok' : `${r2.error.field} ${r2.error.reason}`).toBe('key bad-value');
  });
});

describe('MPA negotiation (RFC 5044 §7.1)', () => {
  const frame = (kind: 'mpa-request' | 'mpa-reply', markers: boolean, crc: boolean) =>
    makeMpaFrame(kind, { markers, crc });

  it('CRC if either side sets C; markers towards a receiver that set M', () => {
    // Initiator asks for markers (to be sent to it) and no CRC; Responder asks for CRC only.
    const req = frame('mpa-request', true, false);
    const rep = frame('mpa-reply', false, true);
    expect(negotiateMpa(req, rep)).toEqual({ crc: true, markers: false });
    expect(negotiateMpa(rep, req)).toEqual({ crc: true, markers: true });
    // Without the peer's frame a direction falls back to its own bits.
    expect(negotiateMpa(req, undefined)).toEqual({ crc: false, markers: true });
  });

  it('a rejecting Reply ends the direction: no FPDUs are decoded after it', () => {
    const rep = makeMpaFrame('mpa-reply', { reject: true, privateData: Uint8Array.of(1, 2) });
    const bytes = new Uint8Array([
      ...encodeMpaFrame(rep),
      ...encodeFpdu(immUlpdu, { crc: false, markers: false }),
    ]);
    const r = decodeMpaStream(bytes);
    if (!r.ok) throw r.error;
    expect(r.value.frame?.reject).toBe(true);
    expect(r.value.fpdus.length).toBe(0);
  });
});
