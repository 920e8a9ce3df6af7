import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { VerbsError } from '../../../src/verbs/index.js';
import { cmPair, type Loopback, rxeLoopback } from './fixtures.js';
import { NONE, ownResources } from './resources.js';

// Completions and CM events arrive through fds watched on the libuv loop: these tests
// would hang (or time out) if anything blocked the event loop.
describe('async completions and rdma_cm on rxe0', () => {
  let lo: Loopback | undefined;
  afterEach(() => {
    lo?.close();
    lo = undefined;
  });
  afterAll(() => expect(ownResources()).toEqual(NONE));

  it('await cq.next() resolves when a later timer posts the request', async () => {
    lo = rxeLoopback();
    const mr = lo.pd.regMr(Buffer.alloc(8), ['LOCAL_WRITE', 'REMOTE_WRITE']);
    const waiting = lo.cq.next({ timeoutMs: 20_000 });
    let ticks = 0;
    const ticker = setInterval(() => ticks++, 1);
    setTimeout(
      () =>
        lo?.a.postSend({
          wrId: 0xabcdn,
          opcode: 'RDMA_WRITE',
          sgList: [mr.sge()],
          remote: mr.remote(),
        }),
      50,
    );
    const wc = await waiting;
    clearInterval(ticker);
    expect(wc.wrId).toBe(0xabcdn);
    expect(ticks).toBeGreaterThan(0); // the loop kept running while we waited
    mr.close();
  });

  it('times out with VerbsError ETIMEDOUT and aborts with the signal reason', async () => {
    lo = rxeLoopback();
    await expect(lo.cq.next({ timeoutMs: 30 })).rejects.toMatchObject({ code: 'ETIMEDOUT' });
    const ac = new AbortController();
    const p = lo.cq.next({ signal: ac.signal });
    ac.abort(new Error('stop waiting'));
    await expect(p).rejects.toThrow('stop waiting');
  });

  it('iterates completions with for await, ended by closing the CQ', async () => {
    lo = rxeLoopback();
    const mr = lo.pd.regMr(Buffer.alloc(8), ['LOCAL_WRITE', 'REMOTE_WRITE']);
    lo.a.postSend(
      [1n, 2n, 3n].map((wrId) => ({
        wrId,
        opcode: 'RDMA_WRITE' as const,
        sgList: [mr.sge()],
        remote: mr.remote(),
      })),
    );
    const seen: bigint[] = [];
    for await (const wc of lo.cq) {
      seen.push(wc.wrId);
      if (seen.length === 3) break;
    }
    expect(seen).toEqual([1n, 2n, 3n]);
    mr.close();
  });

  it('closing a CQ rejects its pending waits with EBADF', async () => {
    lo = rxeLoopback();
    lo.a.close();
    lo.b.close();
    const p = lo.cq.next();
    lo.cq.close();
    await expect(p).rejects.toBeInstanceOf(VerbsError);
    await expect(p).rejects.toMatchObject({ code: 'EBADF' });
  });

  it('connects over rdma_cm on rxe0 (192.0.2.1) and runs a FetchAdd', async () => {
    const p = await cmPair('192.0.2.1');
    try {
      expect(p.ctx.name).toBe('rxe0');
      expect(p.receivedByServer.subarray(0, 12).toString()).toBe('client-hello');
      const target = p.pd.regMr(Buffer.alloc(8), ['LOCAL_WRITE', 'REMOTE_ATOMIC']);
      target.buffer.writeBigUInt64LE(0x0123456789abcdefn);
      const old = p.pd.regMr(Buffer.alloc(8), ['LOCAL_WRITE']);
      p.clientQp.postSend({
        opcode: 'ATOMIC_FETCH_AND_ADD',
        sgList: [old.sge()],
        remote: target.remote(),
        add: 0x10n,
      });
      const wc = await p.cq.next({ timeoutMs: 10_000 });
      expect(wc.status).toBe('SUCCESS');
      expect(old.buffer.readBigUInt64LE()).toBe(0x0123456789abcdefn);
      expect(target.buffer.readBigUInt64LE()).toBe(0x0123456789abcdffn);
      target.close();
      old.close();
    } finally {
      await p.close();
    }
  });

  it('reports a connection to a port nobody listens on as a typed rejection', async () => {
    const { EventChannel } = await import('../../../src/verbs/index.js');
    const channel = new EventChannel();
    const id = channel.createId();
    try {
      await id.resolveAddr('198.51.100.1', 1);
      await id.resolveRoute();
      const pd = id.context().allocPd();
      const cq = id.context().createCq({ cqe: 8 });
      const qp = id.createQp(pd, { sendCq: cq });
      await expect(id.connect({}, { timeoutMs: 20_000 })).rejects.toMatchObject({
        name: 'VerbsError',
      });
      qp.close();
      cq.close();
      pd.close();
    } finally {
      id.close();
      channel.close();
    }
  });

  it('a rejected connection request reaches the client as ECONNREFUSED with no QP left', async () => {
    const { EventChannel } = await import('../../../src/verbs/index.js');
    const channel = new EventChannel();
    const listener = channel.createId();
    const client = channel.createId();
    try {
      listener.bindAddr('198.51.100.1', 0);
      listener.listen();
      await client.resolveAddr('198.51.100.1', listener.localPort);
      await client.resolveRoute();
      const pd = client.context().allocPd();
      const cq = client.context().createCq({ cqe: 8 });
      const qp = client.createQp(pd, { sendCq: cq });
      const connecting = client.connect({ privateData: Buffer.from('may I?') });
      const request = await listener.nextConnectRequest({ timeoutMs: 20_000 });
      expect(request.privateData.subarray(0, 6).toString()).toBe('may I?');
      request.id.reject(Buffer.from('no'));
      await expect(connecting).rejects.toMatchObject({ name: 'VerbsError', code: 'ECONNREFUSED' });
      request.id.close();
      qp.close();
      cq.close();
      pd.close();
    } finally {
      client.close();
      listener.close();
      channel.close();
    }
  });
});
