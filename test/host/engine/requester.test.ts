import { describe, expect, it } from 'vitest';
import { makeAtomicResponse, makeTerminate } from '../../../src/codec/iwarp/build.js';
import { encodeRdmapMessage } from '../../../src/codec/iwarp/rdmap.js';
import { buildTerminate } from '../../../src/engine/errors/terminate.js';
import { TaggedBufferTable } from '../../../src/engine/memory/tagged-buffer.js';
import { Requester } from '../../../src/engine/requester/requester.js';
import type { WorkRequest } from '../../../src/engine/requester/work-request.js';
import { makeReadV2Response } from '../../../src/engine/wire/build.js';
import { accessMask } from '../../../src/ibverbs/access-flags.js';

const fetchAdd = (wrId: bigint, add: bigint): WorkRequest => ({
  opcode: 'ATOMIC_FETCH_AND_ADD',
  wrId,
  remoteAddr: 0x7f0000001000n,
  rkey: 0x1234,
  add: add,
});

function posted(requester: Requester, wr: WorkRequest) {
  const r = requester.post(wr);
  if (!r.ok) throw new Error(r.error.reason);
  return r.result;
}

describe('Requester (RFC 7306 §5.2)', () => {
  it('[R7306-4.1-1] [R7306-5.2-1] [R7306-5.2.1-3] [R7306-5.2.1-4] [R7306-5.2.1-9] [R7306-5.2.1-10] [R7306-5.2.1-11] Atomic Requests go untagged on QN 1, RV 01b, in the order submitted', () => {
    const requester = new Requester({ ord: 8 });
    const sent = [1n, 2n, 3n].flatMap((id) => posted(requester, fetchAdd(id, id * 0x100n)).sent);
    expect(
      sent.map((m) => [
        m.kind,
        m.ddp.tagged,
        !m.ddp.tagged && m.ddp.queueNumber,
        !m.ddp.tagged && m.ddp.messageSequenceNumber,
        m.control.rdmaVersion,
      ]),
    ).toEqual([
      ['atomic-request', false, 1, 1, 1],
      ['atomic-request', false, 1, 2, 1],
      ['atomic-request', false, 1, 3, 1],
    ]);
    expect(sent.map((m) => m.kind === 'atomic-request' && m.addOrSwapData)).toEqual([
      0x100n,
      0x200n,
      0x300n,
    ]);
    for (const m of sent) expect(encodeRdmapMessage(m)[1]! >> 6).toBe(1);
  });

  it('[R7306-5.2.2-6] ORD: requests beyond ORD wait (no failure) and go out as responses free slots', () => {
    const requester = new Requester({ ord: 1 });
    expect(posted(requester, fetchAdd(1n, 1n)).sent).toHaveLength(1);
    expect(posted(requester, fetchAdd(2n, 2n)).sent).toEqual([]);
    expect(requester.outstanding).toBe(1);
    const r = requester.receive(
      makeAtomicResponse({
        messageSequenceNumber: 1,
        originalRequestIdentifier: 1,
        originalRemoteDataValue: 0x0102030405060708n,
      }),
    );
    expect(r.completions).toMatchObject([
      {
        wrId: 1n,
        status: 'SUCCESS',
        opcode: 'FETCH_ADD',
        atomicOriginal: 0x0102030405060708n,
      },
    ]);
    expect(r.sent).toHaveLength(1);
    expect(r.sent[0]).toMatchObject({ kind: 'atomic-request', requestIdentifier: 2 });
  });

  it('an Atomic Response whose local SGE is refused ends the stream with a Terminate (RFC 7306 §8.1 item 1)', () => {
    const local = new TaggedBufferTable();
    local.register({
      stag: 0x42,
      baseTaggedOffset: 0x1000n,
      length: 16,
      access: accessMask(['LOCAL_WRITE']),
      protectionDomain: 1,
    });
    const response = makeAtomicResponse({
      messageSequenceNumber: 1,
      originalRequestIdentifier: 1,
      originalRemoteDataValue: 0x0102030405060708n,
    });
    const withLkey = (localErrorTerminates?: boolean) => {
      const requester = new Requester({
        ord: 2,
        localBuffers: local,
        stream: { streamId: 1, protectionDomain: 1 },
        ...(localErrorTerminates === undefined ? {} : { localErrorTerminates }),
      });
      posted(requester, {
        opcode: 'ATOMIC_FETCH_AND_ADD',
        wrId: 1n,
        remoteAddr: 0x7f0000001000n,
        rkey: 0x1234,
        add: 1n,
        local: { lkey: 0x43, addr: 0x1000n, length: 8 },
      });
      posted(requester, fetchAdd(2n, 2n));
      return { requester, r: requester.receive(response) };
    };
    const { requester, r } = withLkey();
    expect(r.completions).toMatchObject([
      { wrId: 1n, status: 'LOC_PROT_ERR' },
      { wrId: 2n, status: 'WR_FLUSH_ERR' },
    ]);
    expect(requester.qpState).toBe('ERR');
    // RDMAP / Local Catastrophic Error, on QN 2, no header copied: the Atomic Response is
    // valid, the fault is the local work request's.
    expect(r.sent).toEqual([buildTerminate('rfc7306', 1, 'requester-local-error', undefined)]);
    expect(r.sent[0]).toMatchObject({
      kind: 'terminate',
      layer: 0,
      errorType: 0,
      errorCode: 0,
      ddpHeaderIncluded: false,
      rdmaHeaderIncluded: false,
      ddp: { queueNumber: 2, messageSequenceNumber: 1 },
    });
    expect(r.failure).toBeUndefined();
    // The RoCE projection's requester: a local error sends nothing (IBTA 10.7.3).
    const roce = withLkey(false).r;
    expect(roce.sent).toEqual([]);
    expect(roce.completions).toMatchObject([{ wrId: 1n, status: 'LOC_PROT_ERR' }, { wrId: 2n }]);
  });

  it('[R7306-5.1-1] [R7306-5.2.2-7] [R7306-5.4-5] matches Atomic Responses on QN 3 by MSN and delivers the original value to the ULP', () => {
    const requester = new Requester({ ord: 4 });
    posted(requester, fetchAdd(10n, 1n));
    posted(requester, fetchAdd(11n, 1n));
    // Nothing completes before its response is delivered.
    expect(requester.outstanding).toBe(2);
    const first = requester.receive(
      makeAtomicResponse({
        messageSequenceNumber: 1,
        originalRequestIdentifier: 1,
        originalRemoteDataValue: 0x1111222233334444n,
      }),
    );
    const second = requester.receive(
      makeAtomicResponse({
        messageSequenceNumber: 2,
        originalRequestIdentifier: 2,
        originalRemoteDataValue: 0x1111222233334445n,
      }),
    );
    expect(
      [...first.completions, ...second.completions].map((c) => [c.wrId, c.atomicOriginal]),
    ).toEqual([
      [10n, 0x1111222233334444n],
      [11n, 0x1111222233334445n],
    ]);
  });

  it('[R7306-8.1-1] an Atomic Response with an unexpected MSN or Request Identifier surfaces an error: Terminate with the DDP header, WRs in error', () => {
    const requester = new Requester({ ord: 4 });
    posted(requester, fetchAdd(10n, 1n));
    const r = requester.receive(
      makeAtomicResponse({
        messageSequenceNumber: 2,
        originalRequestIdentifier: 1,
        originalRemoteDataValue: 0n,
      }),
    );
    expect(r.failure).toBe('unexpected-response');
    expect(r.sent[0]).toMatchObject({
      kind: 'terminate',
      ddpHeaderIncluded: true,
      rdmaHeaderIncluded: false,
    });
    expect(r.completions).toMatchObject([{ wrId: 10n, status: 'BAD_RESP_ERR' }]);
    expect(requester.qpState).toBe('ERR');
    expect(posted(requester, fetchAdd(12n, 1n)).completions).toMatchObject([
      { wrId: 12n, status: 'WR_FLUSH_ERR' },
    ]);
  });

  it('[R7306-8.1-1] an error not tied to an incoming message gives a Terminate with both headers zero (RFC 7306 §8.1 item 1)', () => {
    const t = buildTerminate('rfc7306', 1, 'misaligned-atomic', undefined);
    expect(t).toMatchObject({
      layer: 0,
      errorType: 2,
      errorCode: 7,
      ddpHeaderIncluded: false,
      rdmaHeaderIncluded: false,
      segmentLengthValid: false,
      terminatedDdpHeader: undefined,
      terminatedRdmaHeader: undefined,
    });
  });

  it('a received Terminate completes the outstanding WR with the model status and flushes the rest', () => {
    const requester = new Requester({ ord: 1, terminateStatus: () => 'REM_ACCESS_ERR' });
    posted(requester, fetchAdd(1n, 1n));
    posted(requester, fetchAdd(2n, 1n));
    const r = requester.receive(
      makeTerminate({ messageSequenceNumber: 1, layer: 0, errorType: 1, errorCode: 2 }),
    );
    expect(r.completions.map((c) => [c.wrId, c.status])).toEqual([
      [1n, 'REM_ACCESS_ERR'],
      [2n, 'WR_FLUSH_ERR'],
    ]);
  });

  it('[RV2-6-2] [RV2-6-3] Read V2: tracked on QN 3, located by MSN, data placed locally', () => {
    const local = new TaggedBufferTable();
    const sink = local.register({
      stag: 0x42,
      baseTaggedOffset: 0x1000n,
      length: 8,
      access: accessMask(['LOCAL_WRITE']),
      protectionDomain: 1,
    });
    const requester = new Requester({
      profile: 'v2-draft',
      ord: 2,
      localBuffers: local,
      stream: { streamId: 1, protectionDomain: 1 },
    });
    const sent = posted(requester, {
      opcode: 'RDMA_READ',
      wrId: 3n,
      remoteAddr: 0x9000n,
      rkey: 7,
      length: 4,
      localSTag: 0x42,
      localAddr: 0x1002n,
      readV2: true,
    }).sent;
    expect(sent[0]).toMatchObject({
      kind: 'read-v2-request',
      readSize: 4,
      sourceSTag: 7,
      ddp: { queueNumber: 1 },
    });
    expect(sent[0]?.control.rdmaVersion).toBe(2);
    const r = requester.receive(makeReadV2Response(1, new Uint8Array([0xa1, 0xb2, 0xc3, 0xd4])));
    expect(r.completions).toMatchObject([
      { wrId: 3n, status: 'SUCCESS', opcode: 'RDMA_READ', byteLen: 4 },
    ]);
    expect([...sink.memory]).toEqual([0, 0, 0xa1, 0xb2, 0xc3, 0xd4, 0, 0]);
    const rfc = new Requester({ ord: 2 }).post({
      opcode: 'RDMA_READ',
      wrId: 3n,
      remoteAddr: 0n,
      rkey: 7,
      length: 4,
      localSTag: 1,
      localAddr: 0n,
      readV2: true,
    });
    expect(rfc.ok === false && rfc.error.reason).toBe('not-expressible');
  });

  it('[RV2-4.1-1] [RV2-4.1-2] [RV2-4.1-3] [RV2-4.1-5] [RV2-4.1-8] [RV2-4.1-4] [RV2-4.1-9] [RV2-4.2-1] V2 messages carry RV 2, the 5-bit opcode in the RDMAP control octet, DV 1 and their table queue', () => {
    const requester = new Requester({ profile: 'v2-draft', ord: 2 });
    const send = posted(requester, {
      opcode: 'SEND_WITH_IMM',
      wrId: 1n,
      payload: new Uint8Array(0),
      immData: 0xabcdef01,
    }).sent;
    const read = posted(requester, {
      opcode: 'RDMA_READ',
      wrId: 2n,
      remoteAddr: 0n,
      rkey: 1,
      length: 8,
      localSTag: 2,
      localAddr: 0n,
      readV2: true,
    }).sent;
    const bytes = [...send, ...read].map((m) => encodeRdmapMessage(m, { profile: 'v2-draft' }));
    expect(bytes.map((b) => [b[0]! & 0x3, b[1]! >> 6, b[1]! & 0x1f])).toEqual([
      [1, 2, 0x13],
      [1, 2, 0x11],
    ]);
    expect([...send, ...read].map((m) => !m.ddp.tagged && m.ddp.queueNumber)).toEqual([0, 1]);
    // Send with Immediate header: 8 bytes of immediate after the 18-byte DDP header.
    expect(bytes[0]).toHaveLength(26);
  });

  it('invalid work requests are typed errors and change nothing', () => {
    const requester = new Requester({ ord: 2 });
    const r = requester.post({
      opcode: 'SEND_WITH_IMM',
      wrId: 1n,
      payload: new Uint8Array(0),
      immData: 0x1_0000_0000,
    });
    expect(r).toMatchObject({
      ok: false,
      error: { reason: 'invalid-work-request', field: 'immData' },
    });
    expect(posted(requester, fetchAdd(2n, 1n)).sent[0]).toMatchObject({
      ddp: { messageSequenceNumber: 1 },
      requestIdentifier: 1,
    });
  });
});
