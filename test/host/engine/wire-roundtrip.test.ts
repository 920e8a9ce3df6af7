import { describe, expect, it } from 'vitest';
import type { IwarpProfile } from '../../../src/codec/iwarp/profiles.js';
import { decodeRdmapMessage, encodeRdmapMessage } from '../../../src/codec/iwarp/rdmap.js';
import { decodeRocePacket, encodeRocePacket } from '../../../src/codec/roce/packet.js';
import {
  projectIwarp,
  projectRoce,
  type VerbsScenario,
} from '../../../src/engine/projection/project.js';
import type { WorkRequest } from '../../../src/engine/requester/work-request.js';
import { accessMask } from '../../../src/ibverbs/access-flags.js';

const RKEY = 0x2468ace0;
const VA = 0x00007ffe00001000n;
const buffer = {
  stag: RKEY,
  baseTaggedOffset: VA,
  length: 256,
  access: accessMask(['REMOTE_WRITE', 'REMOTE_READ', 'REMOTE_ATOMIC']),
  protectionDomain: 1,
};
const local = {
  stag: 0x99,
  baseTaggedOffset: 0x5000n,
  length: 64,
  access: accessMask(['LOCAL_WRITE']),
  protectionDomain: 1,
};

const everyWr: WorkRequest[] = [
  {
    opcode: 'ATOMIC_FETCH_AND_ADD',
    wrId: 1n,
    remoteAddr: VA,
    rkey: RKEY,
    add: 0x0102030405060708n,
  },
  {
    opcode: 'ATOMIC_CMP_AND_SWP',
    wrId: 2n,
    remoteAddr: VA + 8n,
    rkey: RKEY,
    compare: 0n,
    swap: 0x1122334455667788n,
  },
  {
    opcode: 'RDMA_WRITE',
    wrId: 3n,
    remoteAddr: VA + 16n,
    rkey: RKEY,
    payload: new Uint8Array([1, 2, 3]),
  },
  {
    opcode: 'RDMA_WRITE_WITH_IMM',
    wrId: 4n,
    remoteAddr: VA + 32n,
    rkey: RKEY,
    payload: new Uint8Array([4, 5]),
    immData: 0xcafef00d,
  },
  { opcode: 'SEND', wrId: 5n, payload: new Uint8Array([6, 7, 8, 9]) },
  {
    opcode: 'RDMA_READ',
    wrId: 6n,
    remoteAddr: VA,
    rkey: RKEY,
    length: 16,
    localSTag: 0x99,
    localAddr: 0x5000n,
  },
  { opcode: 'SEND_WITH_IMM', wrId: 7n, payload: new Uint8Array([10]), immData: 0x0badf00d },
  // Misaligned: ends the stream with a Terminate (also round-tripped).
  {
    opcode: 'ATOMIC_FETCH_AND_ADD',
    wrId: 8n,
    remoteAddr: VA + 4n,
    rkey: RKEY,
    add: 1n,
  },
];

const scenario = (profile: IwarpProfile): VerbsScenario => ({
  profile,
  responder: { buffers: [buffer], receives: [1n, 2n, 3n, 4n].map((id) => ({ id, length: 32 })) },
  requester: { localBuffers: [local] },
  workRequests: everyWr,
});

describe('everything the engine emits survives the codec', () => {
  for (const profile of ['rfc7306', 'draft-01', 'v2-draft'] as const) {
    it(`iWARP ${profile}: every message both ways encodes and decodes to the same value`, () => {
      const outcome = projectIwarp(scenario(profile));
      const kinds = new Set(outcome.iwarpWire.map((w) => w.message.kind));
      for (const k of [
        'atomic-request',
        'atomic-response',
        'rdma-write',
        'immediate-data',
        'send',
        'rdma-read-request',
        'rdma-read-response',
        'terminate',
      ])
        expect(kinds.has(k as never), k).toBe(true);
      for (const w of outcome.iwarpWire) {
        const bytes = encodeRdmapMessage(w.message, { profile });
        expect(decodeRdmapMessage(bytes, { profile })).toEqual({ ok: true, value: w.message });
      }
      expect(outcome.terminate).toMatchObject({ layer: 0, errorType: 2, errorCode: 7 });
    });
  }

  it('RoCE: every request packet encodes and decodes with the opcode and headers it was built with', () => {
    const outcome = projectRoce(scenario('rfc7306'));
    expect(outcome.roceRequests.map((p) => p.bth.opcode)).toEqual([
      0x14, 0x13, 0x0a, 0x0b, 0x04, 0x0c, 0x05, 0x14,
    ]);
    for (const p of outcome.roceRequests) {
      const decoded = decodeRocePacket(encodeRocePacket(p));
      if (!decoded.ok) throw decoded.error;
      expect(decoded.value.headers).toEqual(p.headers);
      expect(decoded.value.bth.psn).toBe(p.bth.psn);
    }
  });

  it('rxe model: receive completions carry GRH besides WITH_IMM (rxe_resp.c do_complete)', () => {
    const outcome = projectRoce({ ...scenario('rfc7306'), roceModel: 'rxe' });
    expect(
      outcome.responder.completions.find((c) => c.opcode === 'RECV_RDMA_WITH_IMM')?.flags,
    ).toEqual(['GRH', 'WITH_IMM']);
  });

  it('work requests with out-of-range fields are reported, not sent', () => {
    const outcome = projectIwarp({
      responder: { buffers: [buffer] },
      workRequests: [
        {
          opcode: 'ATOMIC_FETCH_AND_ADD',
          wrId: 1n,
          remoteAddr: 1n << 64n,
          rkey: RKEY,
          add: 1n,
        },
      ],
    });
    expect(outcome.invalid).toMatchObject([
      { reason: 'invalid-work-request', wrId: 1n, field: 'remoteAddr' },
    ]);
    expect(outcome.iwarpWire).toEqual([]);
  });
});
