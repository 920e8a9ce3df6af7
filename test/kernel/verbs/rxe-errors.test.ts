import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { connectPairByHand, type Mr } from '../../../src/verbs/index.js';
import { type Loopback, rxeLoopback, u64Buffer } from './fixtures.js';
import { NONE, ownResources } from './resources.js';

// Remote errors of atomics and writes on rxe0, as the requester sees them: the status
// of the error completion, the requester QP going to ERR, and memory left untouched.
// (prior-art.md §5: rxe_resp.c NAK codes; the requester-side statuses are measured here.)
describe('remote errors on rxe0', () => {
  let lo: Loopback | undefined;
  const mrs: Mr[] = [];
  afterEach(() => {
    for (const mr of mrs.splice(0)) mr.close();
    lo?.close();
    lo = undefined;
  });
  afterAll(() => expect(ownResources()).toEqual(NONE));

  async function fetchAdd(target: { addr: bigint; rkey: number }) {
    if (lo === undefined) throw new Error('no loopback');
    const old = lo.pd.regMr(Buffer.alloc(8), ['LOCAL_WRITE']);
    mrs.push(old);
    lo.a.postSend({ opcode: 'ATOMIC_FETCH_AND_ADD', sgList: [old.sge()], remote: target, add: 1n });
    return lo.cq.next({ timeoutMs: 30_000 });
  }

  it('an MR without REMOTE_ATOMIC: REM_ACCESS_ERR, memory untouched', async () => {
    lo = rxeLoopback();
    const target = lo.pd.regMr(u64Buffer(0x0123456789abcdefn), ['LOCAL_WRITE', 'REMOTE_WRITE']);
    mrs.push(target);
    const wc = await fetchAdd(target.remote());
    expect(wc.status).toBe('REM_ACCESS_ERR');
    expect(lo.a.query().state).toBe('ERR');
    expect(target.buffer.readBigUInt64LE()).toBe(0x0123456789abcdefn);
  });

  it('a wrong rkey: REM_ACCESS_ERR', async () => {
    lo = rxeLoopback();
    const target = lo.pd.regMr(u64Buffer(0x0123456789abcdefn), ['LOCAL_WRITE', 'REMOTE_ATOMIC']);
    mrs.push(target);
    const wc = await fetchAdd({ addr: target.addr, rkey: (target.rkey ^ 0x5a5a00) >>> 0 });
    expect(wc.status).toBe('REM_ACCESS_ERR');
    expect(target.buffer.readBigUInt64LE()).toBe(0x0123456789abcdefn);
  });

  it('a responder QP that does not grant REMOTE_ATOMIC: REM_INV_REQ_ERR', async () => {
    lo = rxeLoopback();
    // Re-connect b without atomic access: RESET, then by hand with WRITE/READ only.
    lo.b.modify({ state: 'RESET' });
    lo.a.modify({ state: 'RESET' });
    connectPairByHand(lo.a, lo.b, lo.gid, {
      aPsn: 8,
      bPsn: 9,
      b: { access: ['LOCAL_WRITE', 'REMOTE_WRITE', 'REMOTE_READ'] },
    });
    const target = lo.pd.regMr(u64Buffer(0x0123456789abcdefn), ['LOCAL_WRITE', 'REMOTE_ATOMIC']);
    mrs.push(target);
    const wc = await fetchAdd(target.remote());
    expect(wc.status).toBe('REM_INV_REQ_ERR');
    expect(target.buffer.readBigUInt64LE()).toBe(0x0123456789abcdefn);
  });

  it('an RDMA Write running past the end of the remote MR: REM_ACCESS_ERR', async () => {
    lo = rxeLoopback();
    const src = lo.pd.regMr(Buffer.alloc(16, 0x77), ['LOCAL_WRITE']);
    const dst = lo.pd.regMr(Buffer.alloc(8), ['LOCAL_WRITE', 'REMOTE_WRITE']);
    mrs.push(src, dst);
    lo.a.postSend({ opcode: 'RDMA_WRITE', sgList: [src.sge()], remote: dst.remote(0) });
    const wc = await lo.cq.next({ timeoutMs: 30_000 });
    expect(wc.status).toBe('REM_ACCESS_ERR');
    expect(dst.buffer).toEqual(Buffer.alloc(8));
  });
});
