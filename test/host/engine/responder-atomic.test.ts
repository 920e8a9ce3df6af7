import { describe, expect, it } from 'vitest';
import { ALL_ONES_64, makeAtomicRequest, makeReadRequest } from '../../../src/codec/iwarp/build.js';
import type { AtomicResponse, RdmapMessage } from '../../../src/codec/iwarp/messages.js';
import { decodeRdmapMessage, encodeRdmapMessage } from '../../../src/codec/iwarp/rdmap.js';
import { Responder } from '../../../src/engine/responder/responder.js';
import { accessMask } from '../../../src/ibverbs/access-flags.js';
import { BASE_TO, STAG, setup } from './helpers.js';

const ORIGINAL = 0x0123456789abcdefn;
const ADD = 0x0000000100000011n;

function fetchAdd(msn: number, offset: bigint, add: bigint, mask = 0n, id = 0x51525354) {
  return makeAtomicRequest({
    operation: 'fetch-add',
    messageSequenceNumber: msn,
    requestIdentifier: id,
    remoteSTag: STAG,
    remoteTaggedOffset: BASE_TO + offset,
    addOrSwapData: add,
    addOrSwapMask: mask,
  });
}

function onlyResponse(sent: readonly RdmapMessage[]): AtomicResponse {
  expect(sent).toHaveLength(1);
  const r = sent[0]!;
  if (r.kind !== 'atomic-response') throw new Error(`expected atomic-response, got ${r.kind}`);
  return r;
}

describe('Responder: Atomic Requests (RFC 7306 §5)', () => {
  for (const order of ['little-endian', 'big-endian'] as const) {
    it(`[R7306-5.1.1-1] [R7306-5.1-1] [R7306-5.2-2] [R7306-5.2.2-1] [R7306-5.2.2-2] [R7306-5.2.2-3] [R7306-5.2.2-4] [R7306-5.2.1-13] FetchAdd in ${order} memory returns the original and stores the sum`, () => {
      const { responder, word, buffer } = setup({ order, words: [0n, ORIGINAL] });
      const result = responder.receive(fetchAdd(1, 8n, ADD));
      expect(result.outcome).toBe('accepted');
      const response = onlyResponse(result.sent);
      expect(response.originalRemoteDataValue).toBe(ORIGINAL);
      expect(response.originalRequestIdentifier).toBe(0x51525354);
      expect(response.ddp).toMatchObject({
        tagged: false,
        queueNumber: 3,
        messageSequenceNumber: 1,
      });
      expect(word(1)).toBe(0x0123456889abce00n);
      // The byte order of memory is the configured one.
      const first = order === 'little-endian' ? 0x00 : 0x01;
      expect(buffer.memory[8]).toBe(first);
    });
  }

  it('[R7306-5.1.2-1] CmpSwap with a match swaps the masked bits; a mismatch leaves memory', () => {
    const { responder, word } = setup({ words: [ORIGINAL] });
    const hit = makeAtomicRequest({
      operation: 'cmp-swap',
      messageSequenceNumber: 1,
      requestIdentifier: 1,
      remoteSTag: STAG,
      remoteTaggedOffset: BASE_TO,
      addOrSwapData: 0xfedcba9876543210n,
      addOrSwapMask: 0xffffffff00000000n,
      compareData: 0x0123456700000000n,
      compareMask: 0xffffffff00000000n,
    });
    expect(onlyResponse(responder.receive(hit).sent).originalRemoteDataValue).toBe(ORIGINAL);
    expect(word(0)).toBe(0xfedcba9889abcdefn);
    const miss = { ...hit, ddp: { ...hit.ddp, messageSequenceNumber: 2 }, compareData: 0n };
    const r = onlyResponse(responder.receive(miss).sent);
    expect(r.originalRemoteDataValue).toBe(0xfedcba9889abcdefn);
    expect(r.ddp).toMatchObject({ messageSequenceNumber: 2 });
    expect(word(0)).toBe(0xfedcba9889abcdefn);
  });

  it('[R7306-5-2] [R7306-5.2.1-1] implements every AOpCode of the profile (FetchAdd, CmpSwap; Swap in draft-01)', () => {
    const { responder, word } = setup({ profile: 'draft-01', words: [ORIGINAL] });
    const swap = makeAtomicRequest(
      {
        operation: 'swap',
        messageSequenceNumber: 1,
        requestIdentifier: 9,
        remoteSTag: STAG,
        remoteTaggedOffset: BASE_TO,
        addOrSwapData: 0x0f1e2d3c4b5a6978n,
      },
      'draft-01',
    );
    expect(onlyResponse(responder.receive(swap).sent).originalRemoteDataValue).toBe(ORIGINAL);
    expect(word(0)).toBe(0x0f1e2d3c4b5a6978n);
  });

  it('[R7306-5.2.1-8] rejects AOpCode 0x1 (Reserved) in the rfc7306 profile with Unexpected OpCode; memory untouched', () => {
    const { responder, word } = setup({ words: [ORIGINAL] });
    const request = { ...fetchAdd(1, 0n, ADD), aOpCode: 0x1 };
    const result = responder.receive(request);
    expect(result.outcome).toBe('terminated');
    expect(result.failure).toBe('unsupported-atomic-opcode');
    expect(result.terminate).toMatchObject({ layer: 0, errorType: 2, errorCode: 0x06 });
    expect(word(0)).toBe(ORIGINAL);
    for (const reserved of [0x3, 0x7, 0xf]) {
      const r = setup({ words: [ORIGINAL] }).responder.receive({ ...request, aOpCode: reserved });
      expect(r.failure).toBe('unsupported-atomic-opcode');
    }
  });

  for (const [label, misalign] of [
    ['FetchAdd', 'fetch-add'],
    ['CmpSwap', 'cmp-swap'],
  ] as const) {
    it(`[R7306-5.1.1-2] [R7306-5.1.1-3] [R7306-5.1.2-2] [R7306-5.1.2-3] [R7306-5.1.2-4] [R7306-5.2.1-2] [R7306-8.2-5] [R7306-8.2-6] ${label} at a misaligned address: Terminate RDMAP / Remote Operation / Catastrophic localized, memory untouched`, () => {
      for (const offset of [1n, 4n, 7n, 12n]) {
        const { responder, buffer } = setup({ words: [ORIGINAL, ORIGINAL, ORIGINAL] });
        const before = buffer.memory.slice();
        const request = makeAtomicRequest({
          operation: misalign,
          messageSequenceNumber: 1,
          requestIdentifier: 2,
          remoteSTag: STAG,
          remoteTaggedOffset: BASE_TO + offset,
          addOrSwapData: ADD,
          compareData: 0n,
          compareMask: 0n,
        });
        const result = responder.receive(request);
        expect(result.failure).toBe('misaligned-atomic');
        expect(result.sent).toEqual([result.terminate]);
        expect(result.terminate).toMatchObject({
          layer: 0,
          errorType: 2,
          errorCode: 0x07,
          ddp: { queueNumber: 2, messageSequenceNumber: 1 },
          // RFC 7306 §8.1 item 2: DDP header copied, RDMA header not.
          ddpHeaderIncluded: true,
          rdmaHeaderIncluded: false,
          segmentLengthValid: true,
          ddpSegmentLength: 18 + 52,
        });
        expect(buffer.memory).toEqual(before);
        expect(responder.terminated).toBe(true);
      }
    });
  }

  it('[R7306-5.2.1-2] the Remote Tagged Offset may start anywhere in the buffer if the address is aligned', () => {
    const { buffers, responder } = setup();
    // A zero-based registration whose first byte sits at an address ending in 8.
    buffers.register({
      stag: 0x99,
      baseTaggedOffset: 0n,
      length: 16,
      access: accessMask(['REMOTE_ATOMIC']),
      protectionDomain: 3,
      baseAddress: 0x7000_0000_0008n,
    });
    const request = { ...fetchAdd(1, 0n, 1n), remoteSTag: 0x99, remoteTaggedOffset: 8n };
    expect(responder.receive(request).outcome).toBe('accepted');
    const misaligned = setup();
    misaligned.buffers.register({
      stag: 0x99,
      baseTaggedOffset: 0n,
      length: 16,
      access: accessMask(['REMOTE_ATOMIC']),
      protectionDomain: 3,
      baseAddress: 0x7000_0000_0004n,
    });
    expect(misaligned.responder.receive(request).failure).toBe('misaligned-atomic');
  });

  it('protection failures become RFC 5040 §4.8 Remote Protection Errors, memory untouched', () => {
    const cases = [
      { failure: 'invalid-stag', code: 0x00, patch: { remoteSTag: 0x0badbad0 } },
      { failure: 'base-bounds', code: 0x01, patch: { remoteTaggedOffset: BASE_TO + 64n } },
      { failure: 'base-bounds', code: 0x01, patch: { remoteTaggedOffset: BASE_TO - 8n } },
      { failure: 'to-wrap', code: 0x04, patch: { remoteTaggedOffset: 0xfffffffffffffffcn } },
    ] as const;
    for (const c of cases) {
      const { responder, buffer } = setup({ words: [ORIGINAL] });
      const before = buffer.memory.slice();
      const r = responder.receive({ ...fetchAdd(1, 0n, ADD), ...c.patch });
      expect(r.failure).toBe(c.failure);
      expect(r.terminate).toMatchObject({ layer: 0, errorType: 1, errorCode: c.code });
      expect(buffer.memory).toEqual(before);
    }
    const noAtomic = setup({ access: accessMask(['REMOTE_READ']), words: [ORIGINAL] });
    const r = noAtomic.responder.receive(fetchAdd(1, 0n, ADD));
    expect(r.failure).toBe('access-rights');
    expect(r.terminate).toMatchObject({ layer: 0, errorType: 1, errorCode: 0x02 });
    expect(noAtomic.word(0)).toBe(ORIGINAL);
  });

  it('a QP without the remote enable refuses before the STag is looked at (qp-access-disabled), memory untouched', () => {
    // iWARP has no QP enable of its own: the Terminate is the access-rights one.
    const noAtomic = setup({
      qpAccess: accessMask(['REMOTE_READ', 'REMOTE_WRITE']),
      words: [ORIGINAL],
    });
    const r = noAtomic.responder.receive({ ...fetchAdd(1, 0n, ADD), remoteSTag: 0x0badbad0 });
    expect(r.failure).toBe('qp-access-disabled');
    expect(r.terminate).toMatchObject({ layer: 0, errorType: 1, errorCode: 0x02 });
    expect(noAtomic.word(0)).toBe(ORIGINAL);
    const noRead = setup({ qpAccess: accessMask(['REMOTE_ATOMIC']), words: [ORIGINAL] });
    const read = noRead.responder.receive(
      makeReadRequest({
        messageSequenceNumber: 1,
        sinkSTag: 0x99,
        sinkTaggedOffset: 0n,
        readSize: 8,
        sourceSTag: STAG,
        sourceTaggedOffset: BASE_TO,
      }),
    );
    expect(read.failure).toBe('qp-access-disabled');
    expect(read.sent.map((m) => m.kind)).toEqual(['terminate']);
    // The enable given, the same atomic executes.
    const enabled = setup({ qpAccess: accessMask(['REMOTE_ATOMIC']), words: [ORIGINAL] });
    expect(enabled.responder.receive(fetchAdd(1, 0n, ADD)).outcome).toBe('accepted');
  });

  it('TO wrap is detected on a buffer that ends at 2^64', () => {
    const { buffers, responder } = setup();
    buffers.register({
      stag: 0x77,
      baseTaggedOffset: 0xfffffffffffffff0n,
      length: 16,
      access: accessMask(['REMOTE_ATOMIC']),
      protectionDomain: 3,
    });
    const ok = responder.receive({
      ...fetchAdd(1, 0n, 5n),
      remoteSTag: 0x77,
      remoteTaggedOffset: 0xfffffffffffffff8n,
    });
    expect(ok.outcome).toBe('accepted');
    const wrap = setup();
    wrap.buffers.register({
      stag: 0x77,
      baseTaggedOffset: 0xfffffffffffffff0n,
      length: 16,
      access: accessMask(['REMOTE_ATOMIC']),
      protectionDomain: 3,
    });
    const r = wrap.responder.receive({
      ...fetchAdd(1, 0n, 5n),
      remoteSTag: 0x77,
      remoteTaggedOffset: 0xfffffffffffffffcn,
    });
    expect(r.failure).toBe('to-wrap');
  });

  it('an STag of another protection domain or bound to another stream is not associated', () => {
    const { buffers, responder } = setup();
    buffers.register({
      stag: 0x55,
      baseTaggedOffset: 0n,
      length: 8,
      access: accessMask(['REMOTE_ATOMIC']),
      protectionDomain: 4,
    });
    const r = responder.receive({
      ...fetchAdd(1, 0n, 5n),
      remoteSTag: 0x55,
      remoteTaggedOffset: 0n,
    });
    expect(r.failure).toBe('stag-not-associated');
    expect(r.terminate).toMatchObject({ layer: 0, errorType: 1, errorCode: 0x03 });
    const other = setup();
    other.buffers.register({
      stag: 0x56,
      baseTaggedOffset: 0n,
      length: 8,
      access: accessMask(['REMOTE_ATOMIC']),
      protectionDomain: 3,
      streamId: 99,
    });
    expect(
      other.responder.receive({ ...fetchAdd(1, 0n, 5n), remoteSTag: 0x56, remoteTaggedOffset: 0n })
        .failure,
    ).toBe('stag-not-associated');
  });

  it('[R7306-5.2.1-5] [R7306-5.2.2-5] [R7306-5.2-1] IRD: Read and Atomic Requests share the QN 1 buffers; one more is a DDP no-buffer error', () => {
    const { responder, word } = setup({ ird: 2, processOnDelivery: false, words: [ORIGINAL] });
    const read = makeReadRequest({
      messageSequenceNumber: 1,
      sinkSTag: 0x42,
      sinkTaggedOffset: 0n,
      readSize: 8,
      sourceSTag: STAG,
      sourceTaggedOffset: BASE_TO,
    });
    expect(responder.receive(read).outcome).toBe('accepted');
    expect(responder.receive(fetchAdd(2, 0n, 1n)).outcome).toBe('accepted');
    expect(responder.pendingRequests).toBe(2);
    const third = responder.receive(fetchAdd(3, 0n, 1n));
    expect(third.failure).toBe('ird-exceeded');
    expect(third.terminate).toMatchObject({
      layer: 1,
      errorType: 2,
      errorCode: 0x02,
      ddpHeaderIncluded: true,
    });
    // Nothing executed: the stream terminated before its queued requests ran.
    expect(word(0)).toBe(ORIGINAL);
    const again = setup({ ird: 2, processOnDelivery: false });
    again.responder.receive(fetchAdd(1, 0n, 1n));
    again.responder.receive(fetchAdd(2, 8n, 1n));
    const processed = again.responder.processRequests();
    expect(processed.sent.map((m) => m.kind)).toEqual(['atomic-response', 'atomic-response']);
    expect(again.responder.pendingRequests).toBe(0);
    expect(again.responder.receive(fetchAdd(3, 0n, 1n)).outcome).toBe('accepted');
  });

  it('[R7306-5.2.1-12] [R7306-5.2.2-8] [R7306-5.4-6] [R7306-5.4-7] processes requests and sends responses in the order delivered', () => {
    const { responder, word } = setup({ ird: 8, processOnDelivery: false, words: [ORIGINAL] });
    const adds = [0x10n, 0x200n, 0x3000n, 0x40000n];
    for (const [i, add] of adds.entries()) responder.receive(fetchAdd(i + 1, 0n, add, 0n, 100 + i));
    const { sent } = responder.processRequests();
    const responses = sent as AtomicResponse[];
    expect(responses.map((r) => r.originalRequestIdentifier)).toEqual([100, 101, 102, 103]);
    expect(responses.map((r) => r.ddp.messageSequenceNumber)).toEqual([1, 2, 3, 4]);
    expect(responses.map((r) => r.originalRemoteDataValue)).toEqual([
      ORIGINAL,
      ORIGINAL + 0x10n,
      ORIGINAL + 0x210n,
      ORIGINAL + 0x3210n,
    ]);
    expect(word(0)).toBe(ORIGINAL + 0x43210n);
  });

  it('[R7306-5.2.1-6] [R7306-5.2.1-7] a valid Atomic Request is processed by RDMAP, never delivered to the ULP (no receive completion, no receive buffer used)', () => {
    const { responder } = setup({ words: [ORIGINAL] });
    responder.postReceive({ id: 1n, length: 64 });
    const result = responder.receive(fetchAdd(1, 0n, ADD));
    expect(result.completions).toEqual([]);
    expect(responder.postedReceives).toBe(1);
    expect(result.sent).toHaveLength(1);
  });

  it('[R7306-5-1] [R7306-5.3-1] [R7306-5.4-2] atomicity across streams: interleaved FetchAdds from two streams lose no update', () => {
    const { buffers, word } = setup({ words: [ORIGINAL] });
    const a = new Responder({ stream: { streamId: 1, protectionDomain: 3 }, buffers, ird: 4 });
    const b = new Responder({ stream: { streamId: 2, protectionDomain: 3 }, buffers, ird: 4 });
    const originals: bigint[] = [];
    for (let i = 0; i < 6; i++) {
      const r = (i % 2 === 0 ? a : b).receive(fetchAdd(Math.floor(i / 2) + 1, 0n, 0x0101n));
      originals.push((r.sent[0] as AtomicResponse).originalRemoteDataValue);
    }
    expect(new Set(originals).size).toBe(6);
    expect(word(0)).toBe(ORIGINAL + 6n * 0x0101n);
  });

  it('[R7306-1.1-probe] FetchAdd with Add Data 0 probes for atomics without modifying memory', () => {
    const { responder, word } = setup({ words: [ORIGINAL] });
    const r = responder.receive(fetchAdd(1, 0n, 0n, ALL_ONES_64));
    expect((r.sent[0] as AtomicResponse).originalRemoteDataValue).toBe(ORIGINAL);
    expect(word(0)).toBe(ORIGINAL);
  });

  it('[R7306-1.1-probe] [R7306-8.2-3] a peer without RFC 7306 answers Atomic Requests like siw: RDMAP / Remote Operation / Unexpected OpCode (0x06)', () => {
    const { responder, word } = setup({ supportsAtomics: false, words: [ORIGINAL] });
    const r = responder.receive(fetchAdd(1, 0n, ADD));
    expect(r.failure).toBe('unexpected-opcode');
    expect(r.terminate).toMatchObject({ layer: 0, errorType: 2, errorCode: 0x06 });
    expect(word(0)).toBe(ORIGINAL);
  });

  it("[R7306-8.2-4] an RDMAP version other than the profile's is Invalid RDMAP version", () => {
    const { responder } = setup();
    const request = fetchAdd(1, 0n, ADD);
    const r = responder.receive({ ...request, control: { ...request.control, rdmaVersion: 2 } });
    expect(r.failure).toBe('invalid-rdmap-version');
    expect(r.terminate).toMatchObject({ layer: 0, errorType: 2, errorCode: 0x05 });
  });

  it('[R7306-8.2-1] [R7306-8.2-2] DDP fields are validated first: DDP version, queue number, MSN', () => {
    const request = fetchAdd(1, 0n, ADD);
    const badDv = setup().responder.receive({
      ...request,
      control: { ...request.control, ddpVersion: 0 },
    });
    expect(badDv.failure).toBe('invalid-ddp-version');
    expect(badDv.terminate).toMatchObject({ layer: 1, errorType: 2, errorCode: 0x06 });
    const badQn = setup().responder.receive({
      ...request,
      ddp: { ...request.ddp, queueNumber: 0 },
    });
    expect(badQn.failure).toBe('invalid-qn');
    expect(badQn.terminate).toMatchObject({ layer: 1, errorType: 2, errorCode: 0x01 });
    const badMsn = setup().responder.receive({
      ...request,
      ddp: { ...request.ddp, messageSequenceNumber: 5 },
    });
    expect(badMsn.failure).toBe('msn-out-of-range');
    expect(badMsn.terminate).toMatchObject({ layer: 1, errorType: 2, errorCode: 0x03 });
  });

  it('after a Terminate the stream accepts nothing more', () => {
    const { responder } = setup();
    responder.receive({ ...fetchAdd(1, 1n, ADD) });
    const r = responder.receive(fetchAdd(2, 0n, ADD));
    expect(r.outcome).toBe('ignored');
    expect(r.ignoredReason).toBe('stream-terminated');
  });

  it('codec round trip: request bytes in, response and Terminate bytes out, all lossless', () => {
    const { responder } = setup({ words: [ORIGINAL] });
    const requestBytes = encodeRdmapMessage(fetchAdd(1, 0n, ADD));
    const decoded = decodeRdmapMessage(requestBytes);
    if (!decoded.ok) throw decoded.error;
    const r = responder.receive(decoded.value, requestBytes);
    const response = onlyResponse(r.sent);
    const back = decodeRdmapMessage(encodeRdmapMessage(response));
    expect(back).toEqual({ ok: true, value: response });
    // A Terminate for a misaligned request copies the exact received DDP header.
    const bad = setup();
    const badBytes = encodeRdmapMessage(fetchAdd(1, 4n, ADD));
    const badDecoded = decodeRdmapMessage(badBytes);
    if (!badDecoded.ok) throw badDecoded.error;
    const t = bad.responder.receive(badDecoded.value, badBytes).terminate!;
    expect(t.terminatedDdpHeader).toEqual(badBytes.slice(0, 18));
    expect(t.ddpSegmentLength).toBe(badBytes.length);
    const tBack = decodeRdmapMessage(encodeRdmapMessage(t));
    expect(tBack).toEqual({ ok: true, value: t });
  });
});
