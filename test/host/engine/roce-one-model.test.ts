import { describe, expect, it } from 'vitest';
import { bthOpcodeInfo } from '../../../src/codec/roce/opcodes.js';
import { FAILURE_TABLE } from '../../../src/engine/errors/failure-table.js';
import { projectRoce, type VerbsScenario } from '../../../src/engine/projection/project.js';
import {
  projectRoceExchange,
  ROCE_REQUEST_FAMILY,
} from '../../../src/engine/projection/roce-exchange.js';
import { workRequestToRoce } from '../../../src/engine/requester/to-roce.js';
import type { WorkRequest } from '../../../src/engine/requester/work-request.js';
import {
  nakCompletionStatus,
  RNR_RETRY_EXCEEDED_STATUS,
} from '../../../src/engine/roce/rc-requester.js';
import {
  type RcRefusal,
  type RcSemantics,
  RoceRcResponder,
} from '../../../src/engine/roce/rc-responder.js';
import { ArgumentError } from '../../../src/errors.js';
import { accessMask } from '../../../src/ibverbs/access-flags.js';
import { build } from '../../../src/probe/roce-packets.js';

// One RoCE RC model (issue 31): the transport rules in one RC responder and requester, the
// suite's packets and the tester's expectations both from them.

const REMOTE = { stag: 0x1a2b3c4d, base: 0x0000_7f3a_12c4_5000n };
const EXCHANGE = {
  requesterQp: 0x111,
  responderQp: 0x222,
  firstPsn: 0xfffffe,
  mtu: 1024,
  minRnrTimer: 12,
  remote: REMOTE,
};

function region(length: number): VerbsScenario['responder']['buffers'][number] {
  return {
    stag: REMOTE.stag,
    baseTaggedOffset: REMOTE.base,
    length,
    access: accessMask(['LOCAL_WRITE', 'REMOTE_READ', 'REMOTE_WRITE']),
    protectionDomain: 1,
    contents: Uint8Array.from({ length }, (_, i) => (i * 37 + 11) & 0xff),
  };
}

describe('the requester status of a failure is the RC requester rule for its NAK', () => {
  it("agrees with the failure table's RoCE column for every failure", () => {
    for (const row of FAILURE_TABLE) {
      const viaRequester =
        row.failure === 'no-receive-buffer'
          ? RNR_RETRY_EXCEEDED_STATUS
          : ((row.roceNak === undefined ? undefined : nakCompletionStatus(row.roceNak)) ??
            'REM_OP_ERR');
      expect([row.failure, viaRequester]).toEqual([
        row.failure,
        row.roceRequesterStatus ?? 'REM_OP_ERR',
      ]);
    }
  });

  it('a PSN Sequence Error ends no request (the requester sends again)', () => {
    expect(nakCompletionStatus('PSN_SEQUENCE_ERROR')).toBeUndefined();
    expect(nakCompletionStatus('REMOTE_ACCESS_ERROR')).toBe('REM_ACCESS_ERR');
  });
});

describe('the RC responder over other semantics (the suite)', () => {
  const t = { qpn: 0x222, va: REMOTE.base, rKey: REMOTE.stag };
  function responder(refusal: RcRefusal | undefined): RoceRcResponder {
    const semantics: RcSemantics = {
      memory: new Uint8Array(0),
      receiveReady: () => true,
      writeTarget: () => refusal,
      placeWrite: () => {},
      sendRefusal: () => refusal,
      consumeReceive: (c) => c,
      read: () => refusal ?? { data: new Uint8Array(0) },
      atomic: () => refusal ?? { original: 0x0123_4567_89ab_cdefn },
      atomicWriteSupported: () => true,
      atomicWrite: () => refusal,
      flush: () => refusal,
    };
    const transport = {
      qpn: 0x222,
      requesterQpn: 0x111,
      expectedPsn: 0x10,
      mtu: 1024,
      minRnrTimer: 12,
      maxDestRdAtomic: 4,
    };
    return new RoceRcResponder(transport, semantics);
  }

  it('a refusal with RNR: an RNR NAK with min_rnr_timer, the PSN not consumed, the QP in RTS', () => {
    const r = responder({ rule: 'no-receive-buffer', answer: 'rnr' });
    const step = r.receive(build.write(t, 0x10, 0, new Uint8Array(8)).decoded, true);
    expect(step.answers).toEqual([
      { opcode: 'RC_ACKNOWLEDGE', psn: 0x10, syndrome: { kind: 'RNR_NAK', timer: 12 } },
    ]);
    expect([r.expectedPsn, r.state, r.msn]).toEqual([0x10, 'RTS', 0]);
  });

  it('a refusal with no NAK: no answer, the QP in ERR; a NAK: its class', () => {
    const silent = responder({ rule: 'x', answer: 'none' });
    expect(silent.receive(build.fetchAdd(t, 0x10, 8, 1n).decoded, true).answers).toEqual([]);
    expect(silent.state).toBe('ERR');
    const nak = responder({ rule: 'x', answer: 'nak', code: 'REMOTE_OPERATIONAL_ERROR' });
    const step = nak.receive(build.read(t, 0x10, 0, 8).decoded, true);
    expect(step.answers[0]?.syndrome).toEqual({ kind: 'NAK', code: 'REMOTE_OPERATIONAL_ERROR' });
  });

  it("receives are the semantics' own: postReceive on it is an ArgumentError", () => {
    expect(() => responder(undefined).postReceive(64)).toThrow(ArgumentError);
  });

  it('the MSN counts the messages completed (§9.7.5.1.2)', () => {
    const r = responder(undefined);
    r.receive(build.write(t, 0x10, 0, new Uint8Array(8)).decoded, true);
    r.receive(build.fetchAdd(t, 0x11, 8, 1n).decoded, true);
    expect([r.msn, r.expectedPsn]).toEqual([2, 0x12]);
  });
});

describe("the suite's packets come from the RC responder", () => {
  it('a Read of 2.5 PMTU is answered FIRST, MIDDLE, LAST on consecutive PSNs across the wrap', () => {
    const { requests, responses } = projectRoceExchange(
      {
        responder: { buffers: [region(4096)] },
        requester: {
          localBuffers: [{ ...region(4096), stag: 0x42, baseTaggedOffset: 0x1000n }],
        },
        workRequests: [
          {
            opcode: 'RDMA_READ',
            wrId: 0x31n,
            remoteAddr: REMOTE.base + 8n,
            rkey: REMOTE.stag,
            length: 2560,
            localSTag: 0x42,
            localAddr: 0x1000n,
          },
        ],
      },
      EXCHANGE,
    );
    expect(requests.map((p) => p.psn)).toEqual([0xfffffe]);
    expect(responses.map((p) => [p.opcode, p.psn, p.payload.length, p.headers.AETH?.msn])).toEqual([
      [0x0d, 0xfffffe, 1024, 1],
      [0x0e, 0xffffff, 1024, 1],
      [0x0f, 0, 512, 1],
    ]);
    const expected = region(4096).contents?.subarray(8, 8 + 2560);
    const joined = Buffer.concat(responses.map((p) => p.payload));
    expect(Buffer.compare(joined, Buffer.from(expected ?? []))).toBe(0);
  });

  it('a 3-packet Write with Immediate and no receive: one RNR NAK, at its first PSN', () => {
    const { requests, responses } = projectRoceExchange(
      {
        responder: { buffers: [region(4096)], receives: [] },
        workRequests: [
          {
            opcode: 'RDMA_WRITE_WITH_IMM',
            wrId: 0x41n,
            remoteAddr: REMOTE.base,
            rkey: REMOTE.stag,
            payload: new Uint8Array(2500),
            immData: 0x0a0b_0c0d,
          },
        ],
      },
      EXCHANGE,
    );
    expect(requests.map((p) => p.psn)).toEqual([0xfffffe, 0xffffff, 0]);
    expect(responses.map((p) => [p.psn, p.aethSyndrome])).toEqual([
      [0xfffffe, { kind: 'RNR_NAK', timer: 12 }],
    ]);
  });

  it('an rkey never issued: NAK Remote Access Error at the request, nothing after it', () => {
    const write = (wrId: bigint, rkey: number) => ({
      opcode: 'RDMA_WRITE' as const,
      wrId,
      remoteAddr: REMOTE.base,
      rkey,
      payload: Uint8Array.of(1, 2, 3, 4, 5, 6, 7, 9),
    });
    const scenario: VerbsScenario = {
      responder: { buffers: [region(64)] },
      workRequests: [write(1n, REMOTE.stag), write(2n, 0x0bad), write(3n, REMOTE.stag)],
    };
    const { requests, responses } = projectRoceExchange(scenario, EXCHANGE);
    expect(requests.map((p) => p.psn)).toEqual([0xfffffe, 0xffffff]);
    expect(responses.map((p) => [p.psn, p.aethSyndrome, p.headers.AETH?.msn])).toEqual([
      [0xfffffe, { kind: 'ACK', creditCount: 31 }, 1],
      [0xffffff, { kind: 'NAK', code: 'REMOTE_ACCESS_ERROR' }, 1],
    ]);
    expect(projectRoce(scenario).requester.completions.map((c) => c.status)).toEqual([
      'SUCCESS',
      'REM_ACCESS_ERR',
      'WR_FLUSH_ERR',
    ]);
  });
});

describe('every work request the engine encodes names the RC responder rule that answers it', () => {
  const at = { remoteAddr: REMOTE.base, rkey: REMOTE.stag };
  const data = Uint8Array.of(0x11, 0x22, 0x33);
  const samples: readonly WorkRequest[] = [
    { opcode: 'RDMA_WRITE', wrId: 1n, ...at, payload: data },
    { opcode: 'RDMA_WRITE_WITH_IMM', wrId: 2n, ...at, payload: data, immData: 0x1234_5678 },
    { opcode: 'SEND', wrId: 3n, payload: data },
    { opcode: 'SEND_WITH_IMM', wrId: 4n, payload: data, immData: 0x1234_5678 },
    { opcode: 'SEND_WITH_INV', wrId: 5n, payload: data, invalidateRkey: 0x0bad_cafe },
    { opcode: 'RDMA_READ', wrId: 6n, ...at, length: 8, localSTag: 0x42, localAddr: 0x1000n },
    { opcode: 'ATOMIC_FETCH_AND_ADD', wrId: 7n, ...at, add: 0x0102_0304_0506_0708n },
    { opcode: 'ATOMIC_CMP_AND_SWP', wrId: 8n, ...at, compare: 1n, swap: 0x0a0b_0c0d_0e0f_1011n },
    { opcode: 'ATOMIC_WRITE', wrId: 9n, ...at, atomicValue: 0x0123_4567_89ab_cdefn },
    { opcode: 'FLUSH', wrId: 10n, ...at, flush: { length: 8n } },
  ];

  it('the family of its packets is the row of ROCE_REQUEST_FAMILY', () => {
    expect(samples.map((wr) => wr.opcode).sort()).toEqual(Object.keys(ROCE_REQUEST_FAMILY).sort());
    for (const wr of samples) {
      const encoded = workRequestToRoce(wr, { destinationQp: 0x222, psn: 0, mtu: 1024 });
      if (!encoded.ok) throw new Error(`${wr.opcode} did not encode`);
      const families = encoded.packets.map((p) =>
        bthOpcodeInfo(p.bth.opcode)?.operation.replace(/_(FIRST|MIDDLE|LAST|ONLY)(_WITH_.*)?$/, ''),
      );
      expect([wr.opcode, ...families]).toEqual([wr.opcode, ROCE_REQUEST_FAMILY[wr.opcode]]);
    }
  });
});
