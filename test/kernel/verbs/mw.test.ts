/**
 * Memory windows on real devices (issue 23, IBTA 1.5 section 10.6.7): type 1 bound by
 * ibv_bind_mw, type 2 bound by a BIND_MW request on both post paths, local invalidation
 * (LOCAL_INV) and remote invalidation (SEND_WITH_INV) on rxe0 (windows since Linux 5.13);
 * siw0 has none, and says so with a typed error.
 */
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import {
  incRkey,
  type Mr,
  type PostPath,
  VerbsError,
  type WorkCompletion,
} from '../../../src/verbs/index.js';
import { cmPair, type Loopback, rxeLoopback } from './fixtures.js';
import { NONE, ownResources } from './resources.js';

const WINDOW_ACCESS = ['LOCAL_WRITE', 'REMOTE_WRITE', 'REMOTE_READ', 'MW_BIND'] as const;

/** Writes `text` from a fresh MR to `remote` over a -> b; the requester's completion. */
function write(lo: Loopback, text: string, remote: { addr: bigint; rkey: number }): WorkCompletion {
  const src = lo.pd.allocMr(text.length, ['LOCAL_WRITE']);
  src.buffer.write(text, 'latin1');
  lo.a.postSend({ opcode: 'RDMA_WRITE', sgList: [src.sge()], remote });
  const [wc] = lo.cq.pollUntil(1, 200_000_000);
  return wc as WorkCompletion;
}

describe('memory windows on rxe0', () => {
  let lo: Loopback | undefined;
  afterEach(() => {
    lo?.close();
    lo = undefined;
  });
  afterAll(() => expect(ownResources()).toEqual(NONE));

  it('type 1: bindMw gives the next rkey; Write and Read through it; outside the window is REM_ACCESS_ERR', () => {
    lo = rxeLoopback();
    const target: Mr = lo.pd.allocMr(64, [...WINDOW_ACCESS]);
    const mw = lo.pd.allocMw(1);
    expect(mw.type).toBe(1);
    const before = mw.rkey;
    const rkey = lo.b.bindMw(mw, {
      mr: target,
      addr: target.addr + 16n,
      length: 32,
      access: ['REMOTE_WRITE', 'REMOTE_READ'],
    });
    expect(rkey).toBe(incRkey(before));
    expect(mw.rkey).toBe(rkey);
    const [bound] = lo.cq.pollUntil(1, 200_000_000);
    expect([bound?.status, bound?.opcode, bound?.qpNum]).toEqual([
      'SUCCESS',
      'BIND_MW',
      lo.b.qpNum,
    ]);

    expect(write(lo, 'through a window', { addr: target.addr + 16n, rkey }).status).toBe('SUCCESS');
    expect(target.buffer.toString('latin1', 16, 32)).toBe('through a window');
    const back = lo.pd.allocMr(16, ['LOCAL_WRITE']);
    lo.a.postSend({
      opcode: 'RDMA_READ',
      sgList: [back.sge()],
      remote: { addr: target.addr + 16n, rkey },
    });
    expect(lo.cq.pollUntil(1, 200_000_000)[0]?.status).toBe('SUCCESS');
    expect(back.buffer.toString('latin1')).toBe('through a window');
    // Outside the window but inside its MR: rxe lets it through. rxe_resp.c check_rkey
    // takes the window's MR and checks the range against the MR (mr_check_range), not
    // against the window's addr and length (Linux 6.1; IBTA 1.5 10.6.7.2 bounds an access
    // by the window): a recorded rxe behaviour, not the wrapper's.
    expect(write(lo, 'x', { addr: target.addr, rkey }).status).toBe('SUCCESS');
    expect(target.buffer.toString('latin1', 0, 1)).toBe('x');
    // Past the MR it is refused.
    expect(write(lo, 'y', { addr: target.addr + 64n, rkey }).status).toBe('REM_ACCESS_ERR');
  });

  for (const path of ['legacy', 'ex'] as const satisfies readonly PostPath[]) {
    it(`type 2 (${path}): BIND_MW binds to the QP that posts it; LOCAL_INV ends remote access`, () => {
      lo = rxeLoopback({ extended: path === 'ex', memoryWindowOps: true });
      const target = lo.pd.allocMr(32, [...WINDOW_ACCESS]);
      const mw = lo.pd.allocMw(2);
      const first = mw.rkey;
      lo.b.postSend(
        { opcode: 'BIND_MW', bind: { mw, mr: target, access: ['REMOTE_WRITE'] } },
        path,
      );
      const [bound] = lo.cq.pollUntil(1, 200_000_000);
      expect([bound?.status, bound?.opcode]).toEqual(['SUCCESS', 'BIND_MW']);
      expect(mw.rkey).toBe(incRkey(first));
      expect(write(lo, 'type 2', { addr: target.addr, rkey: mw.rkey }).status).toBe('SUCCESS');
      expect(target.buffer.toString('latin1', 0, 6)).toBe('type 2');

      lo.b.postSend({ opcode: 'LOCAL_INV', invalidateRkey: mw }, path);
      const [inv] = lo.cq.pollUntil(1, 200_000_000);
      expect([inv?.status, inv?.opcode]).toEqual(['SUCCESS', 'LOCAL_INV']);
      expect(write(lo, 'late', { addr: target.addr, rkey: mw.rkey }).status).toBe('REM_ACCESS_ERR');
      expect(target.buffer.toString('latin1', 0, 6)).toBe('type 2');
    });

    it(`SEND_WITH_INV (${path}) invalidates the responder's type 2 window; its receive says WITH_INV`, () => {
      lo = rxeLoopback({ extended: path === 'ex', memoryWindowOps: true });
      const target = lo.pd.allocMr(32, [...WINDOW_ACCESS]);
      const mw = lo.pd.allocMw(2);
      lo.b.postSend({ opcode: 'BIND_MW', bind: { mw, mr: target, access: ['REMOTE_WRITE'] } });
      expect(lo.cq.pollUntil(1, 200_000_000)[0]?.status).toBe('SUCCESS');
      const rkey = mw.rkey;
      const inbox = lo.pd.allocMr(32, ['LOCAL_WRITE']);
      lo.b.postRecv([{ sgList: [inbox.sge(0, 16)] }, { sgList: [inbox.sge(16, 16)] }]);
      const note = lo.pd.allocMr(4, ['LOCAL_WRITE']);
      note.buffer.write('done');
      // A plain Send first: the flags a receive has without invalidation.
      lo.a.postSend({ opcode: 'SEND', sgList: [note.sge()] }, path);
      const plain = lo.cq.pollUntil(2, 200_000_000).find((w) => w.opcode === 'RECV');
      lo.a.postSend({ opcode: 'SEND_WITH_INV', sgList: [note.sge()], invalidateRkey: rkey }, path);
      const wcs = lo.cq.pollUntil(2, 200_000_000);
      const recv = wcs.find((w) => w.opcode === 'RECV');
      expect(wcs.map((w) => w.status)).toEqual(['SUCCESS', 'SUCCESS']);
      // rxe writes the kernel's IB_WC_WITH_INVALIDATE (1 << 2, include/rdma/ib_verbs.h)
      // into the CQE it maps to user space; libibverbs' 1 << 2 is IBV_WC_IP_CSUM_OK
      // (IBV_WC_WITH_INV is 1 << 3), so the invalidation reads as IP_CSUM_OK (6.1).
      expect(plain?.flags).toEqual(['GRH']);
      expect(recv?.flags).toEqual(['GRH', 'IP_CSUM_OK']);
      // ibv_wc.invalidated_rkey shares imm_data's union: host order.
      expect(recv?.immDataRaw).toBe(rkey);
      expect(write(lo, 'late', { addr: target.addr, rkey }).status).toBe('REM_ACCESS_ERR');
    });
  }

  it('the window closes before its MR in a cascade; a closed window is EBADF', () => {
    lo = rxeLoopback();
    const target = lo.pd.allocMr(32, [...WINDOW_ACCESS]);
    const mw = lo.pd.allocMw(1);
    lo.b.bindMw(mw, { mr: target, access: ['REMOTE_WRITE'] });
    lo.cq.pollUntil(1, 200_000_000);
    lo.pd.close();
    expect([mw.closed, target.closed]).toEqual([true, true]);
    let caught: unknown;
    try {
      lo.b.bindMw(mw, { mr: target, access: ['REMOTE_WRITE'] });
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(VerbsError);
    expect((caught as VerbsError).code).toBe('EBADF');
  });
});

describe('memory windows on siw0', () => {
  afterAll(() => expect(ownResources()).toEqual(NONE));

  it('ibv_alloc_mw fails with EOPNOTSUPP, naming the cause', async () => {
    const p = await cmPair('198.51.100.1');
    try {
      for (const type of [1, 2] as const) {
        let caught: unknown;
        try {
          p.pd.allocMw(type);
        } catch (e) {
          caught = e;
        }
        expect(caught).toBeInstanceOf(VerbsError);
        expect((caught as VerbsError).code).toBe('EOPNOTSUPP');
        expect((caught as VerbsError).call).toBe('ibv_alloc_mw');
        expect((caught as VerbsError).message).toMatch(/siw has no memory windows/);
      }
      expect(p.ctx.queryDevice().maxMw).toBe(0);
    } finally {
      await p.close();
    }
  });
});
