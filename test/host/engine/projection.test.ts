import { describe, expect, it } from 'vitest';
import { decodeRdmapMessage, encodeRdmapMessage } from '../../../src/codec/iwarp/rdmap.js';
import { decodeRocePacket, encodeRocePacket } from '../../../src/codec/roce/packet.js';
import type { TaggedBufferRegistration } from '../../../src/engine/memory/tagged-buffer.js';
import {
  projectIwarp,
  projectRoce,
  projectVerbs,
  type VerbsScenario,
} from '../../../src/engine/projection/project.js';
import { immediateValue } from '../../../src/engine/projection/work-completion.js';
import { accessMask } from '../../../src/ibverbs/access-flags.js';

const RKEY = 0x00c0ffee;
const VA = 0x00007f0012345678n & ~7n;
const ORIGINAL = 0x0123456789abcdefn;

function target(
  access = accessMask(['LOCAL_WRITE', 'REMOTE_WRITE', 'REMOTE_READ', 'REMOTE_ATOMIC']),
): TaggedBufferRegistration {
  const contents = new Uint8Array(64);
  new DataView(contents.buffer).setBigUint64(0, ORIGINAL, true);
  return { stag: RKEY, baseTaggedOffset: VA, length: 64, access, protectionDomain: 1, contents };
}

const word = (memory: Uint8Array | undefined, index = 0) =>
  new DataView(memory!.buffer, memory!.byteOffset).getBigUint64(index * 8, true);

describe('verbs projection', () => {
  it('[R7306-5.4-1] [R7306-5.4-5] FETCH_AND_ADD: requester sees FETCH_ADD with the original on both transports', () => {
    const scenario: VerbsScenario = {
      responder: { buffers: [target()] },
      workRequests: [
        {
          opcode: 'ATOMIC_FETCH_AND_ADD',
          wrId: 0x1001n,
          remoteAddr: VA,
          rkey: RKEY,
          // Not symmetric under a byte or 32-bit-half swap (issue 38).
          add: 0x0000000300000002n,
        },
      ],
    };
    const { iwarp, roce } = projectVerbs(scenario);
    for (const outcome of [iwarp, roce]) {
      expect(outcome.requester.completions).toEqual([
        {
          wrId: 0x1001n,
          status: 'SUCCESS',
          opcode: 'FETCH_ADD',
          byteLen: 8,
          immData: undefined,
          flags: [],
          atomicOriginal: ORIGINAL,
        },
      ]);
      expect(outcome.requester.qpState).toBe('RTS');
      expect(outcome.responder.completions).toEqual([]);
      expect(word(outcome.memory.get(RKEY))).toBe(0x0123456a89abcdf1n); // ORIGINAL + add, by hand
    }
    // iWARP wire: FetchAdd with Add Mask 0 on QN 1, response on QN 3.
    const [req, resp] = iwarp.iwarpWire;
    expect(req?.message).toMatchObject({
      kind: 'atomic-request',
      aOpCode: 0,
      addOrSwapMask: 0n,
      ddp: { queueNumber: 1 },
    });
    expect(resp?.message).toMatchObject({
      kind: 'atomic-response',
      ddp: { queueNumber: 3 },
      originalRemoteDataValue: ORIGINAL,
    });
    // RoCE wire: RC_FETCH_ADD with the add value in AtomicETH; encodes and decodes losslessly.
    const packet = roce.roceRequests[0]!;
    const encoded = encodeRocePacket(packet);
    // Beside the round trip, an outside reference: the AtomicETH written out by hand from
    // IBTA 1.5 §9.3.4.1 (VA 8 bytes, R_Key 4, Swap/Add Data 8, Compare Data 8, big-endian),
    // right after the 12-byte BTH whose opcode is RC FETCH_ADD (0x14, Table 40).
    const hex = Buffer.from(encoded).toString('hex');
    expect(hex.slice(0, 2)).toBe('14');
    expect(hex.slice(24, 80)).toBe(
      ['00007f0012345678', '00c0ffee', '0000000300000002', '0000000000000000'].join(''),
    );
    const decoded = decodeRocePacket(encoded);
    if (!decoded.ok) throw decoded.error;
    expect(decoded.value.opcode.name).toBe('RC_FETCH_ADD');
    expect(decoded.value.headers.AtomicETH).toEqual({
      virtualAddress: VA,
      rKey: RKEY,
      swapOrAddData: 0x0000000300000002n,
      compareData: 0n,
    });
  });

  it('CMP_AND_SWP uses all-ones Compare and Swap Masks on iWARP', () => {
    const { iwarp, roce } = projectVerbs({
      responder: { buffers: [target()] },
      workRequests: [
        {
          opcode: 'ATOMIC_CMP_AND_SWP',
          wrId: 7n,
          remoteAddr: VA,
          rkey: RKEY,
          compare: ORIGINAL,
          swap: 0xfedcba9876543210n,
        },
      ],
    });
    expect(iwarp.iwarpWire[0]?.message).toMatchObject({
      aOpCode: 2,
      compareData: ORIGINAL,
      compareMask: 0xffffffffffffffffn,
      addOrSwapMask: 0xffffffffffffffffn,
      addOrSwapData: 0xfedcba9876543210n,
    });
    for (const o of [iwarp, roce]) {
      expect(o.requester.completions[0]).toMatchObject({
        status: 'SUCCESS',
        opcode: 'COMP_SWAP',
        atomicOriginal: ORIGINAL,
      });
      expect(word(o.memory.get(RKEY))).toBe(0xfedcba9876543210n);
    }
  });

  it('[R7306-8.2-6] misaligned atomic: iWARP Terminate RDMAP/2/0x07 and REM_INV_REQ_ERR (reference) or WR_FLUSH_ERR (siw model); RoCE NAK Invalid Request', () => {
    const scenario: VerbsScenario = {
      responder: { buffers: [target()], receives: [{ id: 0x77n, length: 16 }] },
      workRequests: [
        {
          opcode: 'ATOMIC_FETCH_AND_ADD',
          wrId: 1n,
          remoteAddr: VA + 4n,
          rkey: RKEY,
          add: 1n,
        },
        {
          opcode: 'ATOMIC_FETCH_AND_ADD',
          wrId: 2n,
          remoteAddr: VA,
          rkey: RKEY,
          add: 1n,
        },
      ],
    };
    const iwarp = projectIwarp(scenario);
    expect(iwarp.terminate).toMatchObject({ layer: 0, errorType: 2, errorCode: 7 });
    expect(iwarp.requester.completions.map((c) => [c.wrId, c.status])).toEqual([
      [1n, 'REM_INV_REQ_ERR'],
      [2n, 'WR_FLUSH_ERR'],
    ]);
    expect(iwarp.requester.qpState).toBe('ERR');
    expect(iwarp.responder).toEqual({
      completions: [
        {
          wrId: 0x77n,
          status: 'WR_FLUSH_ERR',
          opcode: undefined,
          byteLen: 0,
          immData: undefined,
          flags: [],
        },
      ],
      qpState: 'ERR',
    });
    expect(word(iwarp.memory.get(RKEY))).toBe(ORIGINAL);
    const siw = projectIwarp({ ...scenario, iwarpStatusModel: 'siw' });
    expect(siw.requester.completions.map((c) => c.status)).toEqual([
      'WR_FLUSH_ERR',
      'WR_FLUSH_ERR',
    ]);
    const roce = projectRoce(scenario);
    expect(roce.nak).toBe('INVALID_REQUEST');
    expect(roce.requester.completions.map((c) => c.status)).toEqual([
      'REM_INV_REQ_ERR',
      'WR_FLUSH_ERR',
    ]);
    expect(roce.responder.qpState).toBe('ERR');
  });

  it('no remote-atomic right: iWARP Remote Protection / access rights; RoCE NAK Remote Access Error -> REM_ACCESS_ERR', () => {
    const scenario: VerbsScenario = {
      responder: { buffers: [target(accessMask(['REMOTE_READ']))] },
      workRequests: [
        {
          opcode: 'ATOMIC_CMP_AND_SWP',
          wrId: 3n,
          remoteAddr: VA,
          rkey: RKEY,
          compare: ORIGINAL,
          swap: 5n,
        },
      ],
    };
    const { iwarp, roce } = projectVerbs(scenario);
    expect(iwarp.terminate).toMatchObject({ layer: 0, errorType: 1, errorCode: 2 });
    expect(iwarp.requester.completions[0]?.status).toBe('REM_ACCESS_ERR');
    expect(roce.nak).toBe('REMOTE_ACCESS_ERROR');
    expect(roce.requester.completions[0]?.status).toBe('REM_ACCESS_ERR');
    expect(word(roce.memory.get(RKEY))).toBe(ORIGINAL);
  });

  it('[R7306-1.1-probe] a peer without atomics (siw) answers with Unexpected OpCode: RDMAP layer 0, etype 2, ecode 0x06', () => {
    const iwarp = projectIwarp({
      responder: { buffers: [target()], supportsAtomics: false },
      workRequests: [
        {
          opcode: 'ATOMIC_FETCH_AND_ADD',
          wrId: 9n,
          remoteAddr: VA,
          rkey: RKEY,
          add: 0n,
        },
      ],
      iwarpStatusModel: 'siw',
    });
    expect(iwarp.terminate).toMatchObject({ layer: 0, errorType: 2, errorCode: 6 });
    expect(iwarp.requester.completions).toEqual([
      {
        wrId: 9n,
        status: 'WR_FLUSH_ERR',
        opcode: undefined,
        byteLen: 0,
        immData: undefined,
        flags: [],
      },
    ]);
  });

  it('[R7306-6.3-1] [R7306-6.3-2] [R7306-6.3-3] [R7306-6.3-5] [R7306-6.3-6] RDMA_WRITE_WITH_IMM: iWARP Write + Immediate Data on QN 0; receiver sees RECV_RDMA_WITH_IMM with imm in both orders', () => {
    const payload = new Uint8Array([0xde, 0xad, 0xbe, 0xef, 0x01, 0x02]);
    const scenario: VerbsScenario = {
      responder: { buffers: [target()], receives: [{ id: 0x500n, length: 32 }] },
      workRequests: [
        {
          opcode: 'RDMA_WRITE_WITH_IMM',
          wrId: 4n,
          remoteAddr: VA + 16n,
          rkey: RKEY,
          payload,
          immData: 0x12345678,
        },
      ],
    };
    const { iwarp, roce } = projectVerbs(scenario);
    const kinds = iwarp.iwarpWire.map((w) => w.message.kind);
    expect(kinds).toEqual(['rdma-write', 'immediate-data']);
    const imm = iwarp.iwarpWire[1]!.message;
    expect(imm).toMatchObject({
      ddp: { tagged: false, queueNumber: 0, messageSequenceNumber: 1 },
      immediateData: 0x12345678n,
    });
    // Exactly 8 bytes after the 18-byte DDP header on the wire.
    expect(encodeRdmapMessage(imm)).toHaveLength(26);
    for (const o of [iwarp, roce]) {
      expect(o.requester.completions).toEqual([
        {
          wrId: 4n,
          status: 'SUCCESS',
          opcode: 'RDMA_WRITE',
          byteLen: 6,
          immData: undefined,
          flags: [],
        },
      ]);
      expect(o.responder.completions).toEqual([
        {
          wrId: 0x500n,
          status: 'SUCCESS',
          opcode: 'RECV_RDMA_WITH_IMM',
          byteLen: 6,
          immData: { host: 0x12345678, network: 0x78563412 },
          flags: ['WITH_IMM'],
          // iWARP: the Immediate Data Message's 8 bytes land in the receive (RFC 7306
          // §6.3, the 32-bit imm_data zero-extended); RoCE's ImmDt places nothing.
          ...(o === iwarp ? { data: Uint8Array.of(0, 0, 0, 0, 0x12, 0x34, 0x56, 0x78) } : {}),
        },
      ]);
      expect(o.memory.get(RKEY)?.slice(16, 22)).toEqual(payload);
    }
    expect(roce.roceRequests[0]?.bth.opcode).toBe(0x0b);
    expect(roce.roceRequests[0]?.headers.ImmDt).toEqual({ immediateData: 0x12345678 });
    for (const w of iwarp.iwarpWire) {
      const back = decodeRdmapMessage(encodeRdmapMessage(w.message));
      expect(back).toEqual({ ok: true, value: w.message });
    }
  });

  it('[R7306-6.3-3] RDMA_WRITE_WITH_IMM without a posted receive: iWARP DDP no-buffer Terminate; RoCE RNR, requester RNR_RETRY_EXC_ERR', () => {
    const scenario: VerbsScenario = {
      responder: { buffers: [target()] },
      workRequests: [
        {
          opcode: 'RDMA_WRITE_WITH_IMM',
          wrId: 5n,
          remoteAddr: VA,
          rkey: RKEY,
          payload: new Uint8Array(8),
          immData: 1,
        },
      ],
    };
    const { iwarp, roce } = projectVerbs(scenario);
    expect(iwarp.failure).toBe('no-receive-buffer');
    expect(iwarp.terminate).toMatchObject({
      layer: 1,
      errorType: 2,
      errorCode: 2,
      ddpHeaderIncluded: true,
      rdmaHeaderIncluded: false,
    });
    // iWARP completes the Write on post; the Terminate then moves the QP to error.
    expect(iwarp.requester.completions[0]?.status).toBe('SUCCESS');
    expect(iwarp.requester.qpState).toBe('ERR');
    expect(roce.requester.completions[0]?.status).toBe('RNR_RETRY_EXC_ERR');
    expect(roce.responder.qpState).toBe('RTS');
  });

  it('SEND_WITH_IMM is not expressible in the rfc7306 profile, is a V2 Send with Immediate Data in v2-draft, and a RoCE SEND_ONLY_WITH_IMMEDIATE', () => {
    const payload = new Uint8Array([1, 2, 3, 4, 5]);
    const scenario: VerbsScenario = {
      responder: { buffers: [], receives: [{ id: 0x600n, length: 64 }] },
      workRequests: [{ opcode: 'SEND_WITH_IMM', wrId: 6n, payload, immData: 0x0a0b0c0d }],
    };
    const rfc = projectIwarp(scenario);
    expect(rfc.notExpressible).toHaveLength(1);
    expect(rfc.notExpressible[0]).toMatchObject({
      reason: 'not-expressible',
      wrId: 6n,
      opcode: 'SEND_WITH_IMM',
    });
    expect(rfc.notExpressible[0]?.detail).toContain('§6.3');
    expect(rfc.iwarpWire).toEqual([]);
    const v2 = projectIwarp({ ...scenario, profile: 'v2-draft' });
    expect(v2.iwarpWire.map((w) => [w.message.kind, w.message.ddp.last])).toEqual([
      ['send-immediate', false],
      ['send-immediate', true],
    ]);
    const expected = {
      wrId: 0x600n,
      status: 'SUCCESS',
      opcode: 'RECV',
      byteLen: 5,
      immData: immediateValue(0x0a0b0c0d),
      flags: ['WITH_IMM'],
      data: payload,
    };
    expect(v2.responder.completions).toEqual([expected]);
    for (const w of v2.iwarpWire) {
      const back = decodeRdmapMessage(encodeRdmapMessage(w.message, { profile: 'v2-draft' }), {
        profile: 'v2-draft',
      });
      expect(back).toEqual({ ok: true, value: w.message });
    }
    const roce = projectRoce(scenario);
    expect(roce.roceRequests[0]?.bth.opcode).toBe(0x05);
    expect(roce.responder.completions).toEqual([expected]);
  });

  it('[R7306-6.3-7] [R7306-6.3-4] two RDMA_WRITE_WITH_IMM: Immediate Data issued and delivered in the order submitted', () => {
    const iwarp = projectIwarp({
      responder: {
        buffers: [target()],
        receives: [
          { id: 0xa1n, length: 8 },
          { id: 0xa2n, length: 8 },
        ],
      },
      workRequests: [
        {
          opcode: 'RDMA_WRITE_WITH_IMM',
          wrId: 1n,
          remoteAddr: VA,
          rkey: RKEY,
          payload: new Uint8Array([1]),
          immData: 0x01020304,
        },
        {
          opcode: 'RDMA_WRITE_WITH_IMM',
          wrId: 2n,
          remoteAddr: VA,
          rkey: RKEY,
          payload: new Uint8Array([2]),
          immData: 0x05060708,
        },
      ],
    });
    const imms = iwarp.iwarpWire
      .filter((w) => w.message.kind === 'immediate-data')
      .map((w) => w.message);
    expect(
      imms.map((m) => [
        !m.ddp.tagged && m.ddp.messageSequenceNumber,
        'immediateData' in m && m.immediateData,
      ]),
    ).toEqual([
      [1, 0x01020304n],
      [2, 0x05060708n],
    ]);
    expect(iwarp.responder.completions.map((c) => [c.wrId, c.immData?.host])).toEqual([
      [0xa1n, 0x01020304],
      [0xa2n, 0x05060708],
    ]);
  });

  it('RDMA_READ: Read Request on QN 1, Read Response placed into the local buffer', () => {
    const { iwarp, roce } = projectVerbs({
      responder: { buffers: [target()] },
      requester: {
        localBuffers: [
          {
            stag: 0x42,
            baseTaggedOffset: 0x1000n,
            length: 16,
            access: accessMask(['LOCAL_WRITE']),
            protectionDomain: 1,
          },
        ],
      },
      workRequests: [
        {
          opcode: 'RDMA_READ',
          wrId: 8n,
          remoteAddr: VA,
          rkey: RKEY,
          length: 8,
          localSTag: 0x42,
          localAddr: 0x1000n,
        },
      ],
    });
    expect(iwarp.iwarpWire.map((w) => w.message.kind)).toEqual([
      'rdma-read-request',
      'rdma-read-response',
    ]);
    for (const o of [iwarp, roce])
      expect(o.requester.completions[0]).toMatchObject({
        status: 'SUCCESS',
        opcode: 'RDMA_READ',
        byteLen: 8,
      });
  });

  it('SEND larger than the receive buffer: iWARP DDP message too long; RoCE NAK Invalid Request', () => {
    const scenario: VerbsScenario = {
      responder: { buffers: [], receives: [{ id: 1n, length: 4 }] },
      workRequests: [{ opcode: 'SEND', wrId: 2n, payload: new Uint8Array(9) }],
    };
    const { iwarp, roce } = projectVerbs(scenario);
    expect(iwarp.terminate).toMatchObject({ layer: 1, errorType: 2, errorCode: 5 });
    expect(roce.requester.completions[0]?.status).toBe('REM_INV_REQ_ERR');
  });

  it('RoCE write larger than the MTU is split into FIRST / MIDDLE / LAST with consecutive PSNs', () => {
    const roce = projectRoce({
      responder: { buffers: [{ ...target(), length: 4096, contents: new Uint8Array(4096) }] },
      workRequests: [
        {
          opcode: 'RDMA_WRITE_WITH_IMM',
          wrId: 1n,
          remoteAddr: VA,
          rkey: RKEY,
          payload: new Uint8Array(2500),
          immData: 3,
        },
      ],
    });
    expect(roce.roceRequests.map((p) => [p.bth.opcode, p.bth.psn])).toEqual([
      [0x06, 0],
      [0x07, 1],
      [0x09, 2],
    ]);
    for (const p of roce.roceRequests) expect(decodeRocePacket(encodeRocePacket(p)).ok).toBe(true);
  });
});
