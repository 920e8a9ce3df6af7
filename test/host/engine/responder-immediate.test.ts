import { describe, expect, it } from 'vitest';
import { makeImmediateData, makeSend } from '../../../src/codec/iwarp/build.js';
import { decodeRdmapMessage, encodeRdmapMessage } from '../../../src/codec/iwarp/rdmap.js';
import { makeReadV2Request, sendWithImmediateSegments } from '../../../src/engine/wire/build.js';
import { BASE_TO, STAG, setup } from './helpers.js';

const IMM = 0x0123456789abcdefn;

describe('Responder: Immediate Data (RFC 7306 §6)', () => {
  it('[R7306-6.3-3] [R7306-6.3-4] delivers Immediate Data in the order sent, one receive buffer each, 8 bytes placed big-endian', () => {
    const { responder } = setup();
    responder.postReceive({ id: 0x11n, length: 16 });
    responder.postReceive({ id: 0x22n, length: 8 });
    const first = responder.receive(
      makeImmediateData({ messageSequenceNumber: 1, immediateData: IMM }),
    );
    const second = responder.receive(
      makeImmediateData({
        messageSequenceNumber: 2,
        immediateData: 0xfedcba9876543210n,
        solicitedEvent: true,
      }),
    );
    expect(first.completions).toEqual([
      {
        receiveId: 0x11n,
        messageKind: 'immediate-data',
        byteLength: 8,
        data: new Uint8Array([0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef]),
        immediateData: IMM,
        invalidatedSTag: undefined,
        solicitedEvent: false,
      },
    ]);
    expect(second.completions[0]).toMatchObject({
      receiveId: 0x22n,
      messageKind: 'immediate-data-se',
      solicitedEvent: true,
      immediateData: 0xfedcba9876543210n,
    });
    expect(responder.postedReceives).toBe(0);
  });

  it('[R7306-6.3-4] an Immediate Data message out of MSN order is a DDP MSN range error, nothing delivered', () => {
    const { responder } = setup();
    responder.postReceive({ id: 1n, length: 8 });
    const r = responder.receive(
      makeImmediateData({ messageSequenceNumber: 2, immediateData: IMM }),
    );
    expect(r.completions).toEqual([]);
    expect(r.terminate).toMatchObject({ layer: 1, errorType: 2, errorCode: 3 });
  });

  it('[R7306-6.3-8] [R7306-8.2-2] the Remote Peer checks for exactly 8 bytes: a longer segment is a Terminate, nothing delivered', () => {
    const { responder } = setup();
    responder.postReceive({ id: 1n, length: 64 });
    const good = encodeRdmapMessage(
      makeImmediateData({ messageSequenceNumber: 1, immediateData: IMM }),
    );
    const long = new Uint8Array(good.length + 4);
    long.set(good);
    const decoded = decodeRdmapMessage(good);
    if (!decoded.ok) throw decoded.error;
    const r = responder.receive(decoded.value, long);
    expect(r.failure).toBe('immediate-data-length');
    expect(r.completions).toEqual([]);
    expect(r.terminate).toMatchObject({
      layer: 0,
      errorType: 2,
      ddpHeaderIncluded: true,
      rdmaHeaderIncluded: false,
      ddpSegmentLength: 30,
    });
    // The codec itself refuses a 7-byte Immediate Data segment (DecodeError, not a throw).
    expect(decodeRdmapMessage(good.slice(0, 25)).ok).toBe(false);
  });

  it('[R7306-6.3-3] [R7306-8.1-1] a missing receive buffer: DDP Untagged Buffer Error, no buffer available; D = 1, R = 0', () => {
    const { responder } = setup();
    const r = responder.receive(
      makeImmediateData({ messageSequenceNumber: 1, immediateData: IMM }),
    );
    expect(r.failure).toBe('no-receive-buffer');
    expect(r.terminate).toMatchObject({
      layer: 1,
      errorType: 2,
      errorCode: 2,
      ddpHeaderIncluded: true,
      rdmaHeaderIncluded: false,
      segmentLengthValid: true,
      ddpSegmentLength: 26,
    });
    expect(r.terminate?.terminatedDdpHeader?.[1]).toBe(0x48); // RV 1, opcode 0x8
  });

  it('a receive buffer shorter than 8 bytes: DDP message too long', () => {
    const { responder } = setup();
    responder.postReceive({ id: 1n, length: 4 });
    expect(
      responder.receive(makeImmediateData({ messageSequenceNumber: 1, immediateData: IMM }))
        .failure,
    ).toBe('message-too-long');
  });

  it('[R7306-8.2-3] a peer without Immediate Data (siw) answers Unexpected OpCode', () => {
    const { responder } = setup({ supportsImmediateData: false });
    responder.postReceive({ id: 1n, length: 8 });
    const r = responder.receive(
      makeImmediateData({ messageSequenceNumber: 1, immediateData: IMM }),
    );
    expect(r.terminate).toMatchObject({ layer: 0, errorType: 2, errorCode: 6 });
  });

  it('Send with Invalidate invalidates the STag; a later access to it is Invalid STag', () => {
    const { responder, buffers } = setup();
    responder.postReceive({ id: 1n, length: 8 });
    const r = responder.receive(
      makeSend({
        kind: 'send-invalidate',
        messageSequenceNumber: 1,
        payload: new Uint8Array([9]),
        invalidateSTag: STAG,
      }),
    );
    expect(r.completions[0]).toMatchObject({ invalidatedSTag: STAG, byteLength: 1 });
    expect(buffers.get(STAG)?.valid).toBe(false);
    const bad = setup();
    bad.responder.postReceive({ id: 1n, length: 8 });
    const r2 = bad.responder.receive(
      makeSend({
        kind: 'send-invalidate',
        messageSequenceNumber: 1,
        payload: new Uint8Array(0),
        invalidateSTag: 0x999,
      }),
    );
    expect(r2.terminate).toMatchObject({ layer: 0, errorType: 2, errorCode: 9 });
  });
});

describe('Responder: V2 draft (draft-wood-storm-rdmap-ext-v2-00)', () => {
  it('[RV2-5.3-1] [RV2-5.3-2] [RV2-5.3-3] Send with Immediate Data: payload segment L = 0, immediate-only segment L = 1, 8 bytes passed to the ULP', () => {
    const { responder } = setup({ profile: 'v2-draft' });
    responder.postReceive({ id: 5n, length: 16 });
    const segments = sendWithImmediateSegments(1, 'send-immediate', new Uint8Array([1, 2, 3]), IMM);
    expect(segments.map((s) => [s.ddp.last, s.payload.length, s.immediateData])).toEqual([
      [false, 3, undefined],
      [true, 0, IMM],
    ]);
    expect(responder.receive(segments[0]!).completions).toEqual([]);
    const done = responder.receive(segments[1]!);
    expect(done.completions[0]).toMatchObject({
      receiveId: 5n,
      byteLength: 3,
      immediateData: IMM,
      data: new Uint8Array([1, 2, 3]),
    });
  });

  it('[RV2-5.3-2] [RV2-8.1-1] a last segment carrying payload besides the immediate data is refused with a Terminate', () => {
    const { responder } = setup({ profile: 'v2-draft' });
    responder.postReceive({ id: 5n, length: 16 });
    const [last] = sendWithImmediateSegments(1, 'send-immediate', new Uint8Array(0), IMM);
    const r = responder.receive({ ...last!, payload: new Uint8Array([7]) });
    expect(r.outcome).toBe('terminated');
    expect(r.terminate?.control.rdmaVersion).toBe(2);
  });

  it('[RV2-5.3-4] a zero-length Send with Immediate Data is one segment with L = 1', () => {
    const segments = sendWithImmediateSegments(4, 'send-se-immediate', new Uint8Array(0), IMM);
    expect(segments).toHaveLength(1);
    expect(segments[0]?.ddp).toMatchObject({
      last: true,
      messageOffset: 0,
      messageSequenceNumber: 4,
    });
  });

  it('[RV2-4.1-7] Send with Invalidate and Immediate Data carries the STag in RsvdULP octets 2-5 and invalidates it', () => {
    const { responder, buffers } = setup({ profile: 'v2-draft' });
    responder.postReceive({ id: 5n, length: 16 });
    const [seg] = sendWithImmediateSegments(
      1,
      'send-invalidate-immediate',
      new Uint8Array(0),
      IMM,
      STAG,
    );
    const bytes = encodeRdmapMessage(seg!, { profile: 'v2-draft' });
    expect(new DataView(bytes.buffer, bytes.byteOffset).getUint32(2, false)).toBe(STAG);
    const r = responder.receive(seg!);
    expect(r.completions[0]?.invalidatedSTag).toBe(STAG);
    expect(buffers.get(STAG)?.valid).toBe(false);
  });

  it('[RV2-6-1] [RV2-6.3-1] [RV2-6.1-1] Read V2 Request is answered by an untagged Read V2 Response on QN 3', () => {
    const { responder } = setup({ profile: 'v2-draft', words: [IMM] });
    const request = makeReadV2Request(1, {
      readSize: 8,
      sourceSTag: STAG,
      sourceTaggedOffset: BASE_TO,
    });
    const back = decodeRdmapMessage(encodeRdmapMessage(request, { profile: 'v2-draft' }), {
      profile: 'v2-draft',
    });
    expect(back).toEqual({ ok: true, value: request });
    const r = responder.receive(request);
    expect(r.sent).toHaveLength(1);
    expect(r.sent[0]).toMatchObject({
      kind: 'read-v2-response',
      ddp: { tagged: false, queueNumber: 3, messageSequenceNumber: 1 },
    });
  });

  it('[RV2-4.1-6] a v2-draft RNIC also implements RFC 7306 (Immediate Data with RV 2)', () => {
    const { responder } = setup({ profile: 'v2-draft' });
    responder.postReceive({ id: 1n, length: 8 });
    const r = responder.receive(
      makeImmediateData({ messageSequenceNumber: 1, immediateData: IMM }, 'v2-draft'),
    );
    expect(r.completions[0]?.immediateData).toBe(IMM);
    // And refuses RV 1 messages once RV 2 is negotiated.
    const old = setup({ profile: 'v2-draft' });
    old.responder.postReceive({ id: 1n, length: 8 });
    expect(
      old.responder.receive(makeImmediateData({ messageSequenceNumber: 1, immediateData: IMM }))
        .failure,
    ).toBe('invalid-rdmap-version');
  });

  it('V2 opcodes are Unexpected OpCode in the rfc7306 profile', () => {
    const { responder } = setup();
    const request = makeReadV2Request(1, {
      readSize: 8,
      sourceSTag: STAG,
      sourceTaggedOffset: BASE_TO,
    });
    expect(responder.receive(request).terminate).toMatchObject({
      layer: 0,
      errorType: 2,
      errorCode: 6,
    });
  });
});

describe('Responder: segments the codec refuses (RFC 7306 §8.2)', () => {
  const imm = () =>
    encodeRdmapMessage(makeImmediateData({ messageSequenceNumber: 1, immediateData: IMM }));

  it('[R7306-8.2-3] an undefined opcode (0xC) is Unexpected OpCode, with the DDP header copied', () => {
    const bytes = imm();
    bytes[1] = (bytes[1]! & 0xf0) | 0x0c;
    const { responder } = setup();
    const r = responder.receiveSegment(bytes);
    expect(r.failure).toBe('unexpected-opcode');
    expect(r.terminate).toMatchObject({
      layer: 0,
      errorType: 2,
      errorCode: 6,
      ddpHeaderIncluded: true,
      rdmaHeaderIncluded: false,
    });
    expect(r.terminate?.terminatedDdpHeader).toEqual(bytes.slice(0, 18));
  });

  it('[R7306-8.2-4] RV 2 in the rfc7306 profile is Invalid RDMAP version; DV 2 is a DDP version error', () => {
    const rv = imm();
    rv[1] = (rv[1]! & 0x3f) | 0x80;
    expect(setup().responder.receiveSegment(rv).terminate).toMatchObject({
      layer: 0,
      errorType: 2,
      errorCode: 5,
    });
    const dv = imm();
    dv[0] = (dv[0]! & 0xfc) | 0x2;
    expect(setup().responder.receiveSegment(dv).terminate).toMatchObject({
      layer: 1,
      errorType: 2,
      errorCode: 6,
    });
  });

  it('[R7306-6.3-8] Immediate Data with 9 bytes of data is refused without delivery', () => {
    const long = new Uint8Array(27);
    long.set(imm());
    const { responder } = setup();
    responder.postReceive({ id: 1n, length: 16 });
    const r = responder.receiveSegment(long);
    expect(r.failure).toBe('immediate-data-length');
    expect(r.completions).toEqual([]);
    expect(r.terminate?.ddpSegmentLength).toBe(27);
  });

  it('a truncated segment is a Terminate, never an exception', () => {
    const r = setup().responder.receiveSegment(imm().slice(0, 5));
    expect(r.failure).toBe('malformed-segment');
    expect(r.terminate).toMatchObject({ layer: 0, errorType: 2, errorCode: 0xff });
  });

  it('a decodable segment goes through receive()', () => {
    const { responder } = setup();
    responder.postReceive({ id: 1n, length: 8 });
    expect(responder.receiveSegment(imm()).completions[0]?.immediateData).toBe(IMM);
  });
});
