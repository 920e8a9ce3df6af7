/**
 * `qp.query()` with every attribute of ibv_query_qp (issue 23): a by-hand rxe0 QP reads
 * back what connectPairByHand set, an rdma_cm rxe0 QP the access ib_cm gave it, a siw0 QP
 * its type and capacities.
 */
import { release } from 'node:os';
import { afterAll, describe, expect, it } from 'vitest';
import { cmPair, rxeLoopback } from './fixtures.js';
import { NONE, ownResources } from './resources.js';

/** The running kernel as [major, minor]. */
function kernel(): [number, number] {
  const [major = 0, minor = 0] = release().split(/[.-]/).map(Number);
  return [major, minor];
}
const atLeast = (major: number, minor: number): boolean => {
  const [a, b] = kernel();
  return a > major || (a === major && b >= minor);
};

describe('qp.query(): every ibv_qp_attr field', () => {
  afterAll(() => expect(ownResources()).toEqual(NONE));

  it('rxe0 by hand: the attributes connectPairByHand set, named', () => {
    const lo = rxeLoopback();
    try {
      const q = lo.a.query();
      expect([q.state, q.type, q.pathMtuBytes]).toEqual(['RTS', 'RC', 1024]);
      // rxe leaves cur_qp_state 0 (RESET) in what ibv_query_qp returns (measured on 6.1).
      expect(q.curState).toBe('RESET');
      // fixtures.ts: a sends from 0x12a5c3, b from 0x03c5a1.
      expect([q.destQpNum, q.sqPsn, q.rqPsn]).toEqual([lo.b.qpNum, 0x12a5c3, 0x03c5a1]);
      expect(q.access).toEqual(['LOCAL_WRITE', 'REMOTE_WRITE', 'REMOTE_READ', 'REMOTE_ATOMIC']);
      expect(q.qpAccessFlags).toBe(0x0f);
      expect([q.timeout, q.retryCnt, q.rnrRetry, q.minRnrTimer]).toEqual([14, 7, 7, 12]);
      expect([q.portNum, q.pkeyIndex, q.sqSigAll, q.hasSrq]).toEqual([1, 0, false, false]);
      expect(q.maxRdAtomic).toBeGreaterThan(0);
      expect(q.maxDestRdAtomic).toBeGreaterThan(0);
      expect(q.cap.maxSendWr).toBeGreaterThanOrEqual(128);
      expect(q.cap.maxRecvSge).toBeGreaterThanOrEqual(2);
      expect(q.av.port).toBe(1);
      expect(q.av.grh?.dgid).toEqual(lo.gid.gid);
      expect(q.av.grh?.sgidIndex).toBe(lo.gid.index);
      expect(lo.b.query().destQpNum).toBe(lo.a.qpNum);
    } finally {
      lo.close();
    }
  });

  it('rxe0 through rdma_cm: ib_cm grants the remote rights (and the Flush ones from 6.2)', async () => {
    const p = await cmPair('192.0.2.1');
    try {
      const q = p.serverQp.query();
      expect([q.state, q.type, q.destQpNum]).toEqual(['RTS', 'RC', p.clientQp.qpNum]);
      expect(q.access).toEqual(
        expect.arrayContaining(['REMOTE_WRITE', 'REMOTE_READ', 'REMOTE_ATOMIC']),
      );
      // ib_cm's cm_init_qp_init_attr: REMOTE_WRITE, with responder resources READ and
      // ATOMIC, and since the rxe FLUSH series (6.2) FLUSH_GLOBAL and FLUSH_PERSISTENT:
      // 0x30e as the issue measured on 7.3.
      expect(q.qpAccessFlags).toBe(atLeast(6, 2) ? 0x30e : 0x0e);
    } finally {
      await p.close();
    }
  });

  it('siw0 through rdma_cm: type, capacities and the state as siw_query_qp reports it', async () => {
    const p = await cmPair('198.51.100.1');
    try {
      const q = p.clientQp.query();
      // sq_sig_all reads true although the QP was created without it: siw_query_qp never
      // sets qp_init_attr->sq_sig_type, and 0 is IB_SIGNAL_ALL_WR (include/rdma/ib_verbs.h
      // enum ib_sig_type), which ib_uverbs reports as sq_sig_all = 1 (measured on 6.1).
      expect([q.type, q.sqSigAll, q.hasSrq]).toEqual(['RC', true, false]);
      expect(q.cap.maxSendWr).toBeGreaterThanOrEqual(64);
      // siw_query_qp set no qp_state before "RDMA/siw: Set qp_state in siw_query_qp" (6.8):
      // known-behaviour.ts siw-query-qp-state.
      expect(q.state).toBe(atLeast(6, 8) ? 'RTS' : 'RESET');
    } finally {
      await p.close();
    }
  });
});
