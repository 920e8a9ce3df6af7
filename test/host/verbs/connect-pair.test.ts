import { describe, expect, it } from 'vitest';
import { connectPairByHand } from '../../../src/verbs/connect.js';
import type { Qp } from '../../../src/verbs/qp.js';

/** A QP stand-in that records the attributes each ibv_modify_qp would get. */
function fakeQp(qpNum: number): { qp: Qp; calls: Record<string, unknown>[] } {
  const calls: Record<string, unknown>[] = [];
  const qp = { qpNum, modify: (attrs: Record<string, unknown>) => calls.push(attrs) };
  return { qp: qp as unknown as Qp, calls };
}

describe('connectPairByHand', () => {
  const gid = { index: 1, gid: Buffer.from('00000000000000000000ffffc0000201', 'hex') };

  it('moves both QPs to RTS, each facing the other with the other side’s PSN', () => {
    const a = fakeQp(0x11);
    const b = fakeQp(0x22);
    connectPairByHand(a.qp, b.qp, gid, { aPsn: 0x1234, bPsn: 0x5678, maxRdAtomic: 4 });
    expect(a.calls.map((c) => c.state)).toEqual(['INIT', 'RTR', 'RTS']);
    expect(b.calls.map((c) => c.state)).toEqual(['INIT', 'RTR', 'RTS']);
    expect(a.calls[1]).toMatchObject({ destQpNum: 0x22, rqPsn: 0x5678 });
    expect(a.calls[2]).toMatchObject({ sqPsn: 0x1234, maxRdAtomic: 4 });
    expect(b.calls[1]).toMatchObject({ destQpNum: 0x11, rqPsn: 0x1234 });
    expect(b.calls[2]).toMatchObject({ sqPsn: 0x5678, maxRdAtomic: 4 });
  });

  it('applies per-side settings to that side only', () => {
    const a = fakeQp(1);
    const b = fakeQp(2);
    connectPairByHand(a.qp, b.qp, gid, {
      a: { rnrRetry: 0, timeout: 20 },
      b: { access: ['LOCAL_WRITE', 'REMOTE_READ'], minRnrTimer: 27 },
    });
    expect(a.calls[2]).toMatchObject({ rnrRetry: 0, timeout: 20 });
    expect(b.calls[2]).toMatchObject({ rnrRetry: 7, timeout: 14 });
    expect(a.calls[0]?.access).toEqual([
      'LOCAL_WRITE',
      'REMOTE_WRITE',
      'REMOTE_READ',
      'REMOTE_ATOMIC',
    ]);
    expect(b.calls[0]?.access).toEqual(['LOCAL_WRITE', 'REMOTE_READ']);
    expect(b.calls[1]).toMatchObject({ minRnrTimer: 27 });
    expect(a.calls[1]).toMatchObject({ minRnrTimer: 12 });
  });
});
