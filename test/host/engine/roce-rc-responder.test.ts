import { describe, expect, it } from 'vitest';
import { noAnswerOutcome } from '../../../src/engine/roce/rc-requester-retry.js';
import { psnAdd, psnDistance, RoceRcResponder } from '../../../src/engine/roce/rc-responder.js';
import type { AccessFlag } from '../../../src/ibverbs/access-flags.js';
import { build } from '../../../src/probe/roce-packets.js';
import { ROCE_RESPONDER_ASSERTIONS } from '../../../src/probe/roce-responder-assertions.js';

const target = { qpn: 0x000017, va: 0x0000_7f00_1234_0000n, rKey: 0x00a1b2 };
const PSN = 0xfffffe; // wraps: PSN arithmetic is modulo 2^24

function responder(
  options: { receives?: number[]; atomicWrite?: boolean; qpAccess?: readonly AccessFlag[] } = {},
) {
  const contents = new Uint8Array(4096);
  contents.set([0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11], 8);
  return new RoceRcResponder({
    qpn: target.qpn,
    requesterQpn: 0x0c0ffe,
    expectedPsn: PSN,
    mtu: 1024,
    minRnrTimer: 14,
    maxDestRdAtomic: 4,
    region: { virtualAddress: target.va, rKey: target.rKey, contents },
    receives: options.receives ?? [],
    atomicWrite: options.atomicWrite ?? true,
    ...(options.qpAccess === undefined ? {} : { qpAccess: options.qpAccess }),
  });
}

const DATA = Uint8Array.from([0xde, 0xad, 0xbe, 0xef, 0x01, 0x23, 0x45, 0x67]);

describe('the engine RoCE RC responder rules', () => {
  it('PSN arithmetic wraps at 2^24', () => {
    expect(psnAdd(0xffffff, 2)).toBe(1);
    expect(psnDistance(1, 0xffffff)).toBe(2);
  });

  it('a duplicate FetchAdd is answered from the saved result and not executed again', () => {
    const r = responder();
    const first = r.receive(build.fetchAdd(target, PSN, 8, 0x0102_0304_0506_0708n).decoded, true);
    expect(first.answers[0]?.originalRemoteData).toBe(0x1122_3344_5566_7788n);
    const after = r.memory.slice(8, 16);
    const again = r.receive(build.fetchAdd(target, PSN, 8, 0x0102_0304_0506_0708n).decoded, true);
    expect(again.rule).toBe('duplicate-atomic-replayed');
    expect(again.answers[0]?.originalRemoteData).toBe(0x1122_3344_5566_7788n);
    expect(r.memory.slice(8, 16)).toEqual(after);
    expect(new DataView(after.buffer).getBigUint64(0, true)).toBe(0x1224_3648_5a6c_7e90n);
  });

  it('a duplicate Write is acknowledged at the last executed PSN and not placed again', () => {
    const r = responder();
    r.receive(build.write(target, PSN, 0, DATA).decoded, true);
    const dup = r.receive(build.write(target, PSN, 0, DATA.slice().reverse()).decoded, true);
    expect(dup).toMatchObject({
      outcome: 'duplicate',
      answers: [{ psn: PSN, syndrome: { kind: 'ACK' } }],
    });
    expect(r.memory.slice(0, 8)).toEqual(DATA);
  });

  it('PSNs ahead get one PSN Sequence Error NAK carrying the expected PSN, then silence', () => {
    const r = responder();
    const a = r.receive(build.write(target, psnAdd(PSN, 3), 0, DATA).decoded, true);
    const b = r.receive(build.write(target, psnAdd(PSN, 4), 0, DATA).decoded, true);
    expect(a.answers).toEqual([
      { opcode: 'RC_ACKNOWLEDGE', psn: PSN, syndrome: { kind: 'NAK', code: 'PSN_SEQUENCE_ERROR' } },
    ]);
    expect(b).toMatchObject({ outcome: 'dropped', answers: [] });
    expect(r.expectedPsn).toBe(PSN);
  });

  it('a zero-length ATOMIC WRITE is an Invalid Request (oA19-28) and leaves memory as it was', () => {
    const r = responder();
    const before = r.memory;
    const step = r.receive(build.atomicWrite(target, PSN, 8, new Uint8Array(0), 0).decoded, true);
    expect(step.rule).toBe('atomic-write-length');
    expect(step.answers[0]?.syndrome).toEqual({ kind: 'NAK', code: 'INVALID_REQUEST' });
    expect(r.memory).toEqual(before);
    expect(r.state).toBe('ERR');
  });

  it('a request the QP does not enable is an Invalid Request, before the R_Key (rxe check_op_valid)', () => {
    const bad = { ...target, rKey: 0x00dead };
    for (const [packet, qpAccess] of [
      [build.fetchAdd(bad, PSN, 8, 1n), ['REMOTE_READ', 'REMOTE_WRITE']],
      [build.write(bad, PSN, 0, DATA), ['REMOTE_READ', 'REMOTE_ATOMIC']],
      [build.atomicWrite(bad, PSN, 8, DATA, 8), ['REMOTE_READ', 'REMOTE_ATOMIC']],
    ] as const) {
      const r = responder({ qpAccess });
      const before = r.memory;
      const step = r.receive(packet.decoded, true);
      expect(step.rule).toBe('qp-access-disabled');
      expect(step.answers[0]?.syndrome).toEqual({ kind: 'NAK', code: 'INVALID_REQUEST' });
      expect(r.memory).toEqual(before);
      expect(r.state).toBe('ERR');
    }
    // With the enables, the unknown R_Key is the region's Remote Access Error.
    const step = responder().receive(build.fetchAdd(bad, PSN, 8, 1n).decoded, true);
    expect(step.answers[0]?.syndrome).toEqual({ kind: 'NAK', code: 'REMOTE_ACCESS_ERROR' });
  });

  it('a Send with no receive gets an RNR NAK with min_rnr_timer and does not consume the PSN', () => {
    const r = responder();
    const step = r.receive(build.send(target, PSN, DATA).decoded, true);
    expect(step.answers[0]?.syndrome).toEqual({ kind: 'RNR_NAK', timer: 14 });
    expect(r.expectedPsn).toBe(PSN);
  });

  it('a bad ICRC and an undecodable packet are dropped without changing anything', () => {
    const r = responder();
    expect(r.receive(build.write(target, PSN, 0, DATA, { icrcXor: 1 }).decoded, false).rule).toBe(
      'icrc-mismatch',
    );
    expect(r.receive(undefined, true).rule).toBe('undecodable');
    expect(r.expectedPsn).toBe(PSN);
    expect(r.memory.slice(0, 8)).toEqual(new Uint8Array(8));
  });

  it('every RoCE responder assertion gets a prediction with a rule for each packet', () => {
    for (const a of ROCE_RESPONDER_ASSERTIONS) {
      const r = responder({ receives: [...(a.setup?.receives ?? [])] });
      const rules = a
        .steps({ ...target, psn: PSN })
        .flatMap((packets) => packets.map((p) => r.receive(p.decoded, p.icrcValid).rule));
      expect(rules.length, a.id).toBeGreaterThan(0);
    }
  });

  it('max_dest_rd_atomic 1: a duplicate of an Atomic whose result is no longer kept is dropped', () => {
    const a = ROCE_RESPONDER_ASSERTIONS.find(
      (x) => x.id === 'roce-responder-atomic-beyond-max-dest-rd-atomic',
    );
    const r = new RoceRcResponder({
      qpn: target.qpn,
      requesterQpn: 0x0c0ffe,
      expectedPsn: PSN,
      mtu: 1024,
      minRnrTimer: 14,
      maxDestRdAtomic: a?.setup?.maxDestRdAtomic ?? 16,
      region: { virtualAddress: target.va, rKey: target.rKey, contents: new Uint8Array(64) },
      atomicWrite: true,
    });
    const rules = (a?.steps({ ...target, psn: PSN }) ?? []).flatMap((packets) =>
      packets.map((p) => r.receive(p.decoded, p.icrcValid).rule),
    );
    expect(rules).toEqual([
      'atomic',
      'atomic',
      'duplicate-atomic-replayed',
      'duplicate-atomic-not-saved',
    ]);
  });

  it('no answer: 1 + retry_cnt transmissions, then RETRY_EXC_ERR (retry_cnt 7 is 7 retries)', () => {
    expect(noAnswerOutcome(1).transmissions).toBe(2);
    expect(noAnswerOutcome(7)).toEqual({
      transmissions: 8,
      status: 'RETRY_EXC_ERR',
      qpState: 'ERR',
    });
    expect(() => noAnswerOutcome(8)).toThrow(RangeError);
  });
});
