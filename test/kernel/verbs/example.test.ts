import { afterAll, describe, expect, it } from 'vitest';
import { connectPairByHand, EventChannel, openDevice } from '../../../src/verbs/index.js';
import { NONE, ownResources } from './resources.js';

// The worked examples of docs/verbs.md, verbatim in spirit: keep the two in step.
describe('docs/verbs.md worked examples', () => {
  afterAll(() => expect(ownResources()).toEqual(NONE));

  it('rxe0: two QPs by hand, a FetchAdd and a write-with-immediate', async () => {
    using ctx = openDevice('rxe0');
    const gid = ctx.findGid({ type: 'RoCEv2', ipv4: '192.0.2.1' });
    using pd = ctx.allocPd();
    using cq = ctx.createCq({ cqe: 64 });
    using a = pd.createQp({ sendCq: cq });
    using b = pd.createQp({ sendCq: cq });
    connectPairByHand(a, b, gid, { aPsn: 100, bPsn: 200 });

    using counter = pd.regMr(Buffer.alloc(8), ['LOCAL_WRITE', 'REMOTE_ATOMIC', 'REMOTE_WRITE']);
    counter.buffer.writeBigUInt64LE(0x0123456789abcdefn);
    using old = pd.regMr(Buffer.alloc(8), ['LOCAL_WRITE']);
    a.postSend({
      opcode: 'ATOMIC_FETCH_AND_ADD',
      sgList: [old.sge()],
      remote: counter.remote(),
      add: 5n,
    });
    const fa = await cq.next({ timeoutMs: 10_000 });
    expect(fa.status).toBe('SUCCESS');
    expect(old.buffer.readBigUInt64LE()).toBe(0x0123456789abcdefn);
    expect(counter.buffer.readBigUInt64LE()).toBe(0x0123456789abcdf4n);

    using payload = pd.regMr(Buffer.from('hello-rxe'), ['LOCAL_WRITE']);
    using inbox = pd.regMr(Buffer.alloc(16), ['LOCAL_WRITE', 'REMOTE_WRITE']);
    b.postRecv({ sgList: [] });
    a.postSend({
      opcode: 'RDMA_WRITE_WITH_IMM',
      sgList: [payload.sge()],
      remote: inbox.remote(),
      immData: 7306,
    });
    const got = cq.pollUntil(2).find((w) => w.opcode === 'RECV_RDMA_WITH_IMM');
    expect(got?.immData).toBe(7306);
    expect(inbox.buffer.subarray(0, 9).toString()).toBe('hello-rxe');
  });

  it('siw0: the same over rdma_cm (the FetchAdd and the immediate are refused)', async () => {
    const channel = new EventChannel();
    const listener = channel.createId();
    listener.bindAddr('198.51.100.1', 0);
    listener.listen();
    const client = channel.createId();
    await client.resolveAddr('198.51.100.1', listener.localPort);
    await client.resolveRoute();
    const ctx = client.context();
    const pd = ctx.allocPd();
    const cq = ctx.createCq({ cqe: 64 });
    const cqp = client.createQp(pd, { sendCq: cq });
    const connecting = client.connect({ privateData: Buffer.from('hi') });
    const request = await listener.nextConnectRequest();
    const server = request.id;
    const sqp = server.createQp(pd, { sendCq: cq });
    await Promise.all([connecting, server.accept()]);

    const counter = pd.regMr(Buffer.alloc(8), ['LOCAL_WRITE', 'REMOTE_WRITE']);
    const old = pd.regMr(Buffer.alloc(8), ['LOCAL_WRITE']);
    expect(() =>
      cqp.postSend({
        opcode: 'ATOMIC_FETCH_AND_ADD',
        sgList: [old.sge()],
        remote: counter.remote(),
        add: 5n,
      }),
    ).toThrow(expect.objectContaining({ name: 'VerbsError', code: 'EINVAL' }));
    expect(() =>
      cqp.postSend({
        opcode: 'RDMA_WRITE_WITH_IMM',
        sgList: [old.sge()],
        remote: counter.remote(),
        immData: 7306,
      }),
    ).toThrow(expect.objectContaining({ name: 'VerbsError', code: 'EINVAL' }));
    old.buffer.write('iwarp!!!');
    cqp.postSend({ opcode: 'RDMA_WRITE', sgList: [old.sge()], remote: counter.remote() });
    expect((await cq.next({ timeoutMs: 10_000 })).status).toBe('SUCCESS');
    expect(counter.buffer.toString()).toBe('iwarp!!!');

    await Promise.all([client.disconnect(), server.disconnect()]);
    for (const x of [cqp, sqp, counter, old, client, server, listener, cq, pd, channel]) x.close();
  });
});
