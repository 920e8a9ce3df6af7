import { describe, expect, it } from 'vitest';
import type { IwarpProfile } from '../../../src/codec/iwarp/profiles.js';
import { decodeRdmapMessage, encodeRdmapMessage } from '../../../src/codec/iwarp/rdmap.js';
import { buildRoceFrame } from '../../../src/codec/roce/frame.js';
import { decodeRocePacket, encodeRocePacket } from '../../../src/codec/roce/packet.js';
import {
  projectIwarp,
  projectRoce,
  type VerbsScenario,
} from '../../../src/engine/projection/project.js';
import type { WorkRequest } from '../../../src/engine/requester/work-request.js';
import { accessMask } from '../../../src/ibverbs/access-flags.js';
import { writeTempPcap } from '../../helpers/pcap.js';
import {
  INFINIBAND_PAYLOAD_PROTOCOLS,
  TSHARK_AVAILABLE,
  tsharkColumns,
} from '../../helpers/tshark.js';

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

  // Beside the round trips, outside references (issue 38): the first request written out
  // by hand from RFC 7306 §5.2.1 Figure 4, and tshark's decoding of every RoCE request.
  it('iWARP rfc7306: the FetchAdd request is the RFC 7306 Figure 4 layout, byte for byte (by hand)', () => {
    const first = projectIwarp(scenario('rfc7306')).iwarpWire[0]!;
    const expected = [
      '41', // DDP control: T=0 L=1 Rsvd=0 DV=01 (RFC 5041 §4.3)
      '4a', // RDMAP control: RV=01 Rsv=00 Opcode=1010 (Atomic Request, RFC 7306 §10.1)
      '00000000', // Invalidate STag: zero (RFC 7306 §4.1)
      '00000001', // QN 1: the Atomic Request queue (RFC 7306 §4.2)
      '00000001', // MSN 1: the first message on QN 1
      '00000000', // MO 0
      '00000000', // Reserved (28 bits) + AOpCode 0: FetchAdd (RFC 7306 §5.2.1)
      '00000001', // Request Identifier: the first request
      '2468ace0', // Remote STag: the scenario's RKEY
      '00007ffe00001000', // Remote Tagged Offset: VA
      '0102030405060708', // Add Data: the work request's add
      '0000000000000000', // Add Mask 0: a plain 64-bit add (RFC 7306 §5.1.1)
      '0000000000000000', // Compare Data: zero for FetchAdd
      'ffffffffffffffff', // Compare Mask: all ones for FetchAdd
    ].join('');
    expect(
      Buffer.from(encodeRdmapMessage(first.message, { profile: 'rfc7306' })).toString('hex'),
    ).toBe(expected);
  });

  it.skipIf(!TSHARK_AVAILABLE)(
    'RoCE: tshark decodes every request with the opcode, PSN and atomic data it was built with',
    () => {
      const outcome = projectRoce(scenario('rfc7306'));
      const frames = outcome.roceRequests.map((p) =>
        buildRoceFrame({ sourceIp: '192.0.2.1', destinationIp: '192.0.2.2' }, p),
      );
      const rows = tsharkColumns(
        writeTempPcap(frames),
        [
          'infiniband.bth.opcode',
          'infiniband.bth.psn',
          'infiniband.atomiceth.swapdt',
          'infiniband.atomiceth.cmpdt',
        ],
        { disableProtocols: INFINIBAND_PAYLOAD_PROTOCOLS },
      );
      expect(rows.map((r) => Number(r['infiniband.bth.opcode']?.[0]))).toEqual([
        0x14, 0x13, 0x0a, 0x0b, 0x04, 0x0c, 0x05, 0x14,
      ]);
      expect(rows.map((r) => Number(r['infiniband.bth.psn']?.[0]))).toEqual(
        outcome.roceRequests.map((p) => p.bth.psn),
      );
      // FetchAdd: Swap/Add Data = the add; CmpSwap: the swap and the compare.
      expect(
        [rows[0], rows[1]].map((r) =>
          [r?.['infiniband.atomiceth.swapdt']?.[0], r?.['infiniband.atomiceth.cmpdt']?.[0]].map(
            (v) => BigInt(v ?? -1),
          ),
        ),
      ).toEqual([
        [0x0102030405060708n, 0n],
        [0x1122334455667788n, 0n],
      ]);
    },
  );

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
