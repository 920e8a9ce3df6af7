/**
 * The engine gaps issue 10 closed: the requester's local SGE of an atomic (where the
 * original value lands, checked when the response arrives), the solicited flag of a
 * Send / Write with Immediate, and RNR before placement of a RoCE Write with Immediate.
 */
import { describe, expect, it } from 'vitest';
import { BthOpcode } from '../../../src/codec/roce/opcodes.js';
import type { TaggedBufferRegistration } from '../../../src/engine/memory/tagged-buffer.js';
import {
  projectIwarp,
  projectRoce,
  projectVerbs,
  type VerbsScenario,
} from '../../../src/engine/projection/project.js';
import type { LocalSge, WorkRequest } from '../../../src/engine/requester/work-request.js';
import { accessMask } from '../../../src/ibverbs/access-flags.js';

const RKEY = 0x00c0ffee;
const VA = 0x00007f0012345000n;
const LKEY = 0x00a1b2c3;
const LOCAL_VA = 0x00007f0099990000n;
const ORIGINAL = 0x0123456789abcdefn;
const ADD = 0x1111111122222222n;

function remote(): TaggedBufferRegistration {
  const contents = new Uint8Array(32);
  new DataView(contents.buffer).setBigUint64(0, ORIGINAL, true);
  return {
    stag: RKEY,
    baseTaggedOffset: VA,
    length: 32,
    access: accessMask(['LOCAL_WRITE', 'REMOTE_WRITE', 'REMOTE_READ', 'REMOTE_ATOMIC']),
    protectionDomain: 1,
    contents,
  };
}

function local(): TaggedBufferRegistration {
  return {
    stag: LKEY,
    baseTaggedOffset: LOCAL_VA,
    length: 16,
    access: accessMask(['LOCAL_WRITE']),
    protectionDomain: 1,
  };
}

/** A FetchAdd whose original value lands in `sge`, then a second FetchAdd. */
function fetchAdds(sge: LocalSge | null): VerbsScenario {
  const first: WorkRequest = {
    wrId: 1n,
    opcode: 'ATOMIC_FETCH_AND_ADD',
    remoteAddr: VA,
    rkey: RKEY,
    add: ADD,
    local: sge,
  };
  return {
    responder: { buffers: [remote()] },
    requester: { localBuffers: [local()] },
    workRequests: [
      first,
      { ...first, wrId: 2n, local: { lkey: LKEY, addr: LOCAL_VA + 8n, length: 8 } },
    ],
  };
}

const word = (memory: Uint8Array | undefined) =>
  new DataView(memory!.buffer, memory!.byteOffset).getBigUint64(0, true);

describe('the requester local SGE of an atomic', () => {
  it('a valid SGE: both FetchAdds succeed, each fetching the value before it', () => {
    for (const outcome of Object.values(
      projectVerbs(fetchAdds({ lkey: LKEY, addr: LOCAL_VA, length: 8 })),
    )) {
      expect(
        outcome.requester.completions.map((c) => [c.wrId, c.status, c.atomicOriginal]),
      ).toEqual([
        [1n, 'SUCCESS', ORIGINAL],
        [2n, 'SUCCESS', ORIGINAL + ADD],
      ]);
      expect(outcome.requester.qpState).toBe('RTS');
    }
  });

  for (const [name, sge, status] of [
    ['no SGE', null, 'LOC_LEN_ERR'],
    ['a 4-byte SGE', { lkey: LKEY, addr: LOCAL_VA, length: 4 }, 'LOC_LEN_ERR'],
    ['an lkey never issued', { lkey: LKEY ^ 0xff, addr: LOCAL_VA, length: 8 }, 'LOC_PROT_ERR'],
    ['an SGE outside the buffer', { lkey: LKEY, addr: LOCAL_VA + 12n, length: 8 }, 'LOC_PROT_ERR'],
  ] as const) {
    it(`${name}: the responder executed it, the requester fails it (${status}), flushes the next, goes to ERR`, () => {
      const roce = projectRoce(fetchAdds(sge));
      const iwarp = projectIwarp(fetchAdds(sge));
      for (const outcome of [roce, iwarp]) {
        expect(outcome.requester.completions.map((c) => [c.wrId, c.status])).toEqual([
          [1n, status],
          [2n, 'WR_FLUSH_ERR'],
        ]);
        expect(outcome.requester.qpState).toBe('ERR');
        // IBTA 10.7.3: the error is local; the remote word changed once.
        expect(word(outcome.memory.get(RKEY))).toBe(ORIGINAL + ADD);
      }
      // RoCE: nothing goes to the responder, which stays in RTS. iWARP: the requester's
      // Terminate (RFC 7306 §8.1: the Local Peer MUST send one; item 1, no header copied)
      // ends the stream, so the responder leaves RTS too (RFC 5040 §7).
      expect(roce.responder.qpState).toBe('RTS');
      expect(iwarp.responder.qpState).toBe('ERR');
      expect(iwarp.failure).toBeUndefined();
      const last = iwarp.iwarpWire.at(-1);
      expect(last?.from).toBe('requester');
      expect(last?.message).toMatchObject({
        kind: 'terminate',
        layer: 0,
        errorType: 0,
        ddpHeaderIncluded: false,
        rdmaHeaderIncluded: false,
      });
    });
  }
});

describe('the solicited flag', () => {
  const payload = new Uint8Array([0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88]);
  const scenario = (wr: WorkRequest): VerbsScenario => ({
    responder: { buffers: [remote()], receives: [{ id: 9n, length: 8 }] },
    workRequests: [wr],
  });

  it('iWARP: Send with Solicited Event (RFC 5040 §5.3), Immediate Data with SE (RFC 7306 §6)', () => {
    const send = projectIwarp(scenario({ wrId: 1n, opcode: 'SEND', payload, solicited: true }));
    expect(send.iwarpWire.map((w) => w.message.kind)).toEqual(['send-se']);
    const writeImm = projectIwarp(
      scenario({
        wrId: 1n,
        opcode: 'RDMA_WRITE_WITH_IMM',
        remoteAddr: VA,
        rkey: RKEY,
        payload,
        immData: 0x12345678,
        solicited: true,
      }),
    );
    expect(
      writeImm.iwarpWire.filter((w) => w.from === 'requester').map((w) => w.message.kind),
    ).toEqual(['rdma-write', 'immediate-data-se']);
    const plain = projectIwarp(scenario({ wrId: 1n, opcode: 'SEND', payload }));
    expect(plain.iwarpWire.map((w) => w.message.kind)).toEqual(['send']);
  });

  it('RoCE: the BTH SE bit on the last packet only (IBTA 9.2.3)', () => {
    const roce = projectRoce(
      scenario({
        wrId: 1n,
        opcode: 'SEND_WITH_IMM',
        payload: new Uint8Array(2500),
        immData: 0x12345678,
        solicited: true,
      }),
    );
    expect(roce.roceRequests.map((p) => [p.bth.opcode, p.bth.solicitedEvent ?? false])).toEqual([
      [BthOpcode.RC_SEND_FIRST, false],
      [BthOpcode.RC_SEND_MIDDLE, false],
      [BthOpcode.RC_SEND_LAST_WITH_IMMEDIATE, true],
    ]);
  });
});

describe('RNR and a Write with Immediate', () => {
  const writeImm: VerbsScenario = {
    responder: { buffers: [remote()] },
    workRequests: [
      {
        wrId: 1n,
        opcode: 'RDMA_WRITE_WITH_IMM',
        remoteAddr: VA,
        rkey: RKEY,
        payload: new Uint8Array([0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88]),
        immData: 0x12345678,
      },
    ],
  };

  it('RoCE: no receive means RNR before anything is placed (IBTA 9.7.5.2.8: not executed)', () => {
    const roce = projectRoce(writeImm);
    expect(roce.failure).toBe('no-receive-buffer');
    expect(roce.requester.completions.map((c) => c.status)).toEqual(['RNR_RETRY_EXC_ERR']);
    expect(word(roce.memory.get(RKEY))).toBe(ORIGINAL);
  });

  it('iWARP: the Write is its own message and is placed before the Immediate Data fails (RFC 7306 §6)', () => {
    const iwarp = projectIwarp(writeImm);
    expect(iwarp.failure).toBe('no-receive-buffer');
    expect(word(iwarp.memory.get(RKEY))).toBe(0x8877665544332211n);
  });
});
