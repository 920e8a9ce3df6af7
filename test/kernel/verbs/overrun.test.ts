/**
 * Issue 8: a CQ overrun and unsignaled traffic no longer lose information silently, and
 * asynchronous events are part of the API (ctx.asyncEvents()).
 */
import { describe, expect, it } from 'vitest';
import {
  type AsyncEvent,
  connectPairByHand,
  openDevice,
  VerbsArgumentError,
  VerbsAsyncEventError,
} from '../../../src/verbs/index.js';

function rxePair(cqe: number, maxSendWr = 128) {
  const ctx = openDevice('rxe0');
  const gid = ctx.findGid({ type: 'RoCEv2', ipv4: '192.0.2.1' });
  const pd = ctx.allocPd();
  const cq = ctx.createCq({ cqe });
  const other = ctx.createCq({ cqe: 16 });
  const a = pd.createQp({ sendCq: cq, recvCq: other, maxSendWr });
  const b = pd.createQp({ sendCq: other, maxSendWr });
  connectPairByHand(a, b, gid, { aPsn: 1, bPsn: 2 });
  const src = pd.regMr(Buffer.alloc(8, 0x11), ['LOCAL_WRITE']);
  const dst = pd.regMr(Buffer.alloc(8), ['LOCAL_WRITE', 'REMOTE_WRITE']);
  return { ctx, pd, cq, other, a, b, src, dst };
}

describe('CQ overrun (rxe0)', () => {
  it('64 signaled writes into a 7-entry CQ: the CQ_ERR rejects next() and releases the 57', async () => {
    const p = rxePair(7);
    const events: AsyncEvent[] = [];
    const abort = new AbortController();
    const iterating = (async () => {
      for await (const ev of p.ctx.asyncEvents({ signal: abort.signal })) events.push(ev);
    })();
    const write = { opcode: 'RDMA_WRITE' as const, sgList: [p.src.sge()], remote: p.dst.remote() };
    const ids = p.a.postSend(Array.from({ length: 64 }, () => write));
    const got: bigint[] = [];
    let failure: unknown;
    try {
      for (;;) got.push((await p.cq.next({ timeoutMs: 30_000 })).wrId);
    } catch (e) {
      failure = e;
    }
    expect(failure).toBeInstanceOf(VerbsAsyncEventError);
    const error = failure as VerbsAsyncEventError;
    expect(error.event).toBe('CQ_ERR');
    expect(got.length).toBe(p.cq.cqe);
    expect(error.lostWrIds).toEqual(ids.slice(got.length));
    expect(p.a.inFlight.send).toBe(0);
    await expect(p.cq.next()).rejects.toBe(error);
    abort.abort();
    await iterating;
    expect(events.map((e) => e.type)).toContain('CQ_ERR');
    expect(events.find((e) => e.type === 'CQ_ERR')?.cq).toBe(p.cq);
  });
});

describe('unsignaled traffic (rxe0)', () => {
  it('more unsignaled writes in a row than the send queue holds are refused; a signaled one retires them', async () => {
    const p = rxePair(64, 32);
    const depth = p.a.native.cap.maxSendWr;
    const write = {
      opcode: 'RDMA_WRITE' as const,
      sgList: [p.src.sge()],
      remote: p.dst.remote(),
      signaled: false,
    };
    p.a.postSend(Array.from({ length: depth }, () => write));
    expect(() => p.a.postSend(write)).toThrow(VerbsArgumentError);
    expect(p.a.inFlight.send).toBe(depth);
    const [last] = p.a.postSend({ ...write, signaled: true });
    const wc = await p.cq.next({ timeoutMs: 30_000 });
    expect(wc.wrId).toBe(last);
    expect(wc.ok).toBe(true);
    expect(p.a.inFlight.send).toBe(0);
    // 5,000 writes, one signaled per queue depth: the bookkeeping never exceeds the depth.
    let most = 0;
    for (let i = 1; i <= 5000; i++) {
      const signaled = i % depth === 0;
      p.a.postSend({ ...write, signaled });
      most = Math.max(most, p.a.inFlight.send);
      if (signaled) await p.cq.next({ timeoutMs: 30_000 });
    }
    expect(most).toBe(depth);
    expect(p.a.inFlight.send).toBe(5000 % depth);
  });
});
