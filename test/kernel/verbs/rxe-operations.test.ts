import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { type Loopback, rxeLoopback, u64Buffer } from './fixtures.js';
import { NONE, ownResources } from './resources.js';

// Every RC operation on rxe0 in loopback: payloads, completion fields, immediate data in
// both byte orders, scatter/gather, inline, unsignaled requests and post lists.
describe('RC operations on rxe0', () => {
  let lo: Loopback | undefined;
  afterEach(() => {
    lo?.close();
    lo = undefined;
  });
  afterAll(() => expect(ownResources()).toEqual(NONE));

  it('SEND scatters into a two-SGE receive and reports byte_len', async () => {
    lo = rxeLoopback();
    const src = lo.pd.regMr(Buffer.from('RFC 7306 send payload!'), ['LOCAL_WRITE']);
    const dst = lo.pd.regMr(Buffer.alloc(32, 0xee), ['LOCAL_WRITE']);
    const [recvId] = lo.b.postRecv({ sgList: [dst.sge(0, 8), dst.sge(16, 16)] });
    lo.a.postSend({ opcode: 'SEND', sgList: [src.sge()] });
    const wcs = lo.cq.pollUntil(2);
    const recv = wcs.find((w) => w.opcode === 'RECV');
    const send = wcs.find((w) => w.opcode === 'SEND');
    expect(send?.status).toBe('SUCCESS');
    expect(recv?.wrId).toBe(recvId);
    expect(recv?.byteLen).toBe(22);
    expect(recv?.qpNum).toBe(lo.b.qpNum);
    expect(recv?.srcQp).toBe(0); // src_qp is defined for UD only; rxe leaves it 0 on RC
    expect(dst.buffer.subarray(0, 8).toString()).toBe('RFC 7306');
    expect(dst.buffer.subarray(8, 16)).toEqual(Buffer.alloc(8, 0xee));
    expect(dst.buffer.subarray(16, 30).toString()).toBe(' send payload!');
    expect(recv?.immData).toBeUndefined();
    src.close();
    dst.close();
  });

  it('SEND_WITH_IMM delivers the immediate value (host order) and its raw network-order bits', async () => {
    lo = rxeLoopback();
    const src = lo.pd.regMr(Buffer.from('imm'), ['LOCAL_WRITE']);
    const dst = lo.pd.regMr(Buffer.alloc(16), ['LOCAL_WRITE']);
    lo.b.postRecv({ sgList: [dst.sge()] });
    lo.a.postSend({ opcode: 'SEND_WITH_IMM', sgList: [src.sge()], immData: 0x12345678 });
    const recv = lo.cq.pollUntil(2).find((w) => w.opcode === 'RECV');
    expect(recv?.flags).toContain('WITH_IMM');
    expect(recv?.immData).toBe(0x12345678);
    expect(recv?.immDataRaw).toBe(0x78563412);
    expect(recv?.byteLen).toBe(3);
    src.close();
    dst.close();
  });

  it('RDMA_WRITE places bytes at an offset; RDMA_READ fetches them back', async () => {
    lo = rxeLoopback();
    const local = lo.pd.regMr(Buffer.from('0123456789abcdef'), ['LOCAL_WRITE']);
    const remote = lo.pd.regMr(Buffer.alloc(32), ['LOCAL_WRITE', 'REMOTE_WRITE', 'REMOTE_READ']);
    lo.a.postSend({ opcode: 'RDMA_WRITE', sgList: [local.sge(4, 8)], remote: remote.remote(10) });
    const w = await lo.cq.next({ timeoutMs: 10_000 });
    expect(w.opcode).toBe('RDMA_WRITE');
    expect(remote.buffer.subarray(10, 18).toString()).toBe('456789ab');
    const back = lo.pd.regMr(Buffer.alloc(8), ['LOCAL_WRITE']);
    lo.a.postSend({ opcode: 'RDMA_READ', sgList: [back.sge()], remote: remote.remote(10) });
    const r = await lo.cq.next({ timeoutMs: 10_000 });
    expect(r.opcode).toBe('RDMA_READ');
    expect(r.byteLen).toBe(8);
    expect(back.buffer.toString()).toBe('456789ab');
    for (const mr of [local, remote, back]) mr.close();
  });

  it.each([
    ['legacy', false],
    ['ex', true],
  ] as const)(
    'RDMA_WRITE_WITH_IMM (%s path) writes and consumes a receive',
    async (path, extended) => {
      lo = rxeLoopback({ extended });
      const local = lo.pd.regMr(Buffer.from('written!'), ['LOCAL_WRITE']);
      const remote = lo.pd.regMr(Buffer.alloc(8), ['LOCAL_WRITE', 'REMOTE_WRITE']);
      const [recvId] = lo.b.postRecv({ sgList: [] });
      lo.a.postSend(
        {
          opcode: 'RDMA_WRITE_WITH_IMM',
          sgList: [local.sge()],
          remote: remote.remote(),
          immData: 0xa1b2c3d4,
        },
        path,
      );
      const wcs = lo.cq.pollUntil(2);
      const recv = wcs.find((w) => w.qpNum === lo?.b.qpNum);
      expect(recv?.wrId).toBe(recvId);
      expect(recv?.opcode).toBe('RECV_RDMA_WITH_IMM');
      expect(recv?.immData).toBe(0xa1b2c3d4);
      expect(recv?.immDataRaw).toBe(0xd4c3b2a1);
      expect(recv?.byteLen).toBe(8);
      expect(remote.buffer.toString()).toBe('written!');
      local.close();
      remote.close();
    },
  );

  it('inline SEND copies the payload at post time', async () => {
    lo = rxeLoopback();
    const src = lo.pd.regMr(Buffer.from('inline-data'), ['LOCAL_WRITE']);
    const dst = lo.pd.regMr(Buffer.alloc(16), ['LOCAL_WRITE']);
    lo.b.postRecv({ sgList: [dst.sge()] });
    lo.a.postSend({ opcode: 'SEND', sgList: [src.sge()], inline: true });
    src.buffer.fill(0x21); // changed after posting: the inline copy was taken already
    const recv = lo.cq.pollUntil(2).find((w) => w.opcode === 'RECV');
    expect(recv?.byteLen).toBe(11);
    expect(dst.buffer.subarray(0, 11).toString()).toBe('inline-data');
    src.close();
    dst.close();
  });

  it('a post list of FetchAdds (one doorbell, unsignaled but the last) retires in order', async () => {
    lo = rxeLoopback();
    const target = lo.pd.regMr(u64Buffer(0x0123456789abcdefn), ['LOCAL_WRITE', 'REMOTE_ATOMIC']);
    const results = lo.pd.regMr(Buffer.alloc(64), ['LOCAL_WRITE']);
    const add = 0x0000000100000003n;
    const wrs = Array.from({ length: 8 }, (_, i) => ({
      wrId: BigInt(100 + i),
      opcode: 'ATOMIC_FETCH_AND_ADD' as const,
      sgList: [results.sge(i * 8, 8)],
      remote: target.remote(),
      add,
      signaled: i === 7,
    }));
    lo.a.postSend(wrs);
    expect(lo.a.inFlight.send).toBe(8);
    const wc = await lo.cq.next({ timeoutMs: 10_000 });
    expect(wc.wrId).toBe(107n);
    expect(lo.a.inFlight.send).toBe(0);
    expect(target.buffer.readBigUInt64LE(0)).toBe(0x0123456789abcdefn + 8n * add);
    for (let i = 0; i < 8; i++)
      expect(results.buffer.readBigUInt64LE(i * 8)).toBe(0x0123456789abcdefn + BigInt(i) * add);
    target.close();
    results.close();
  });

  it('a misaligned atomic is refused synchronously on the legacy path (librxe EINVAL)', () => {
    lo = rxeLoopback();
    const target = lo.pd.regMr(Buffer.alloc(16), ['LOCAL_WRITE', 'REMOTE_ATOMIC']);
    const result = lo.pd.regMr(Buffer.alloc(8), ['LOCAL_WRITE']);
    expect(() =>
      lo?.a.postSend({
        opcode: 'ATOMIC_FETCH_AND_ADD',
        sgList: [result.sge()],
        remote: target.remote(1),
        add: 1n,
      }),
    ).toThrow(expect.objectContaining({ code: 'EINVAL', call: 'ibv_post_send', device: 'rxe0' }));
    expect(lo.a.inFlight.send).toBe(0);
    target.close();
    result.close();
  });

  it('a misaligned atomic via ibv_wr_* reaches the responder and completes with an error', async () => {
    lo = rxeLoopback({ extended: true });
    const target = lo.pd.regMr(Buffer.alloc(16), ['LOCAL_WRITE', 'REMOTE_ATOMIC']);
    const result = lo.pd.regMr(Buffer.alloc(8), ['LOCAL_WRITE']);
    lo.a.postSend({
      opcode: 'ATOMIC_FETCH_AND_ADD',
      sgList: [result.sge()],
      remote: target.remote(1),
      add: 1n,
    });
    const wc = await lo.cq.next({ timeoutMs: 20_000 });
    expect(wc.ok).toBe(false);
    expect(wc.status).toBe('REM_INV_REQ_ERR');
    expect(lo.a.query().state).toBe('ERR');
    target.close();
    result.close();
  });

  it('refuses an ibv_wr_* op the QP was not created for (EOPNOTSUPP), nothing posted', () => {
    lo = rxeLoopback({ extended: true });
    expect(() =>
      lo?.a.postSend({
        opcode: 'ATOMIC_WRITE',
        remote: { addr: 0x1000n, rkey: 1 },
        atomicValue: 1n,
      }),
    ).toThrow(expect.objectContaining({ code: 'EOPNOTSUPP', call: 'ibv_wr_start' }));
    expect(lo.a.inFlight.send).toBe(0);
    expect(lo.a.query().state).toBe('RTS');
  });

  it('ATOMIC_WRITE: librxe accepts the QP, the 6.1 kernel completes it with LOC_QP_OP_ERR', async () => {
    // Measured on Debian 6.1 (rxe gained IB_WR_ATOMIC_WRITE in 6.2); memory is untouched.
    lo = rxeLoopback();
    const ctx = lo.ctx;
    const pd = lo.pd;
    const cq = ctx.createCq({ cqe: 16 });
    const gid = lo.gid;
    const writer = pd.createQp({ sendCq: cq, extended: true, atomicWrite: true });
    const peer = pd.createQp({ sendCq: cq });
    const { connectPairByHand } = await import('../../../src/verbs/index.js');
    connectPairByHand(writer, peer, gid, { aPsn: 6, bPsn: 5 });
    const target = pd.regMr(Buffer.alloc(8), ['LOCAL_WRITE', 'REMOTE_WRITE', 'REMOTE_ATOMIC']);
    writer.postSend({
      opcode: 'ATOMIC_WRITE',
      remote: target.remote(),
      atomicValue: 0x0123456789abcdefn,
    });
    const wc = await cq.next({ timeoutMs: 10_000 });
    expect(wc.status).toBe('LOC_QP_OP_ERR');
    expect(target.buffer.readBigUInt64LE()).toBe(0n);
    writer.close();
    peer.close();
    target.close();
    cq.close();
  });

  it('a prepared list posts again and again, and refuses after release or a closed MR', async () => {
    lo = rxeLoopback();
    const target = lo.pd.regMr(u64Buffer(0x0123456789abcdefn), ['LOCAL_WRITE', 'REMOTE_ATOMIC']);
    const old = lo.pd.regMr(Buffer.alloc(8), ['LOCAL_WRITE']);
    const fa = lo.a.prepare({
      wrId: 0x5a5a0001n,
      opcode: 'ATOMIC_FETCH_AND_ADD',
      sgList: [old.sge()],
      remote: target.remote(),
      add: 0x100n,
    });
    expect(fa.wrIds).toEqual([0x5a5a0001n]);
    for (let i = 0; i < 3; i++) {
      fa.post();
      const wc = await lo.cq.next({ timeoutMs: 10_000 });
      expect(wc.wrId).toBe(0x5a5a0001n);
      expect(old.buffer.readBigUInt64LE()).toBe(0x0123456789abcdefn + BigInt(i) * 0x100n);
    }
    expect(target.buffer.readBigUInt64LE()).toBe(0x0123456789abcdefn + 0x300n);
    old.close();
    expect(() => fa.post()).toThrow(expect.objectContaining({ code: 'EBADF' }));
    fa.release();
    expect(() => fa.post()).toThrow(expect.objectContaining({ code: 'EBADF' }));
    expect(lo.a.inFlight.send).toBe(0);
    target.close();
  });
});
