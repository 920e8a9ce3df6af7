import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterAll, describe, expect, it } from 'vitest';
import { WC_WORDS } from '../../../src/native/bindings.js';
import { type Mr, openDevice, VerbsArgumentError, VerbsError } from '../../../src/verbs/index.js';
import { addon } from '../../../src/verbs/native.js';
import { cmPair, rxeLoopback } from './fixtures.js';
import { NONE, ownResources } from './resources.js';
import { thrownCode } from './thrown-code.js';

// `gc` without restarting node with --expose-gc: flip the flag, then fetch the function
// from a fresh context (the flag is read when a context is created).
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

async function collect(): Promise<void> {
  for (let i = 0; i < 6; i++) {
    gc();
    await new Promise((r) => setImmediate(r));
  }
}

describe('misuse of the verbs wrapper on rxe0', () => {
  afterAll(async () => {
    await collect();
    expect(ownResources()).toEqual(NONE);
  });

  it('use after close throws VerbsError EBADF on every object', () => {
    const lo = rxeLoopback();
    const mr = lo.pd.regMr(Buffer.alloc(8), ['LOCAL_WRITE']);
    const sge = mr.sge();
    mr.close();
    expect(thrownCode(() => lo.a.postSend({ opcode: 'SEND', sgList: [sge] }))).toBe('EBADF');
    lo.a.close();
    expect(thrownCode(() => lo.a.postSend({ opcode: 'SEND' }))).toBe('EBADF');
    expect(thrownCode(() => lo.a.postRecv({}))).toBe('EBADF');
    expect(thrownCode(() => lo.a.query())).toBe('EBADF');
    expect(thrownCode(() => lo.a.modify({ state: 'ERR' }))).toBe('EBADF');
    lo.b.close();
    lo.cq.close();
    expect(thrownCode(() => lo.cq.poll())).toBe('EBADF');
    expect(thrownCode(() => lo.pd.createQp({ sendCq: lo.cq }))).toBe('EBADF');
    lo.pd.close();
    expect(thrownCode(() => lo.pd.regMr(Buffer.alloc(8), []))).toBe('EBADF');
    lo.ctx.close();
    expect(thrownCode(() => lo.ctx.queryDevice())).toBe('EBADF');
    expect(thrownCode(() => lo.ctx.allocPd())).toBe('EBADF');
  });

  it('double close is idempotent and leaves the objects closed', () => {
    const lo = rxeLoopback();
    lo.close();
    lo.close();
    for (const o of [lo.a, lo.b, lo.cq, lo.pd, lo.ctx]) expect(o.closed).toBe(true);
    expect(ownResources()).toEqual(NONE);
  });

  it('close({ cascade: false }) on a parent with live children is refused with EBUSY, nothing released', async () => {
    const lo = rxeLoopback();
    const mr = lo.pd.regMr(Buffer.alloc(8), ['LOCAL_WRITE']);
    expect(thrownCode(() => lo.cq.close({ cascade: false }))).toBe('EBUSY'); // a QP still uses the CQ
    expect(lo.cq.closed).toBe(false);
    expect(lo.cq.poll()).toEqual([]);
    expect(thrownCode(() => lo.pd.close({ cascade: false }))).toBe('EBUSY');
    expect(thrownCode(() => lo.ctx.close({ cascade: false }))).toBe('EBUSY');
    // The QPs still work after the refusals.
    lo.a.postSend({
      opcode: 'RDMA_WRITE',
      sgList: [mr.sge()],
      remote: { addr: mr.addr, rkey: mr.rkey },
    });
    expect((await lo.cq.next({ timeoutMs: 10_000 })).wrId).toBeTypeOf('bigint');
    mr.close();
    lo.close();
    expect(lo.ctx.closed).toBe(true);
  });

  it('close() on a parent closes its children first, reachable or forgotten (issue 9)', async () => {
    const lo = rxeLoopback();
    const mr = lo.pd.regMr(Buffer.alloc(8), ['LOCAL_WRITE']);
    const ah = lo.pd.createAh({ port: 1, grh: { dgid: lo.gid.gid, sgidIndex: lo.gid.index } });
    // Forgotten children: unreachable from JS, perhaps collected, perhaps not finalized.
    (() => {
      const pd = lo.ctx.allocPd();
      pd.regMr(Buffer.alloc(4096), ['LOCAL_WRITE']);
      pd.createQp({ sendCq: lo.ctx.createCq({ cqe: 4 }) });
    })();
    gc(); // collected, finalizers perhaps not yet run: the addon closes them anyway
    // A CQ closes the QPs using it first.
    lo.cq.close();
    expect([lo.a.closed, lo.b.closed, lo.cq.closed]).toEqual([true, true, true]);
    expect(lo.pd.closed).toBe(false);
    // The context closes its PDs (with their AHs and MRs), its CQs, then itself.
    lo.ctx.close();
    expect([mr.closed, ah.closed, lo.pd.closed, lo.ctx.closed]).toEqual([true, true, true, true]);
    expect(thrownCode(() => lo.a.postSend({ opcode: 'SEND' }))).toBe('EBADF');
  });

  it('the rdma_cm tree cascades the same way: channel -> cm_ids -> their QP (issue 20)', async () => {
    const pair = await cmPair('192.0.2.1');
    // Without cascade, a cm_id with its QP and a channel with its ids refuse, nothing released.
    expect(thrownCode(() => pair.client.close({ cascade: false }))).toBe('EBUSY');
    expect(thrownCode(() => pair.channel.close({ cascade: false }))).toBe('EBUSY');
    expect([pair.clientQp.closed, pair.client.closed, pair.channel.closed]).toEqual([
      false,
      false,
      false,
    ]);
    // While rdma_disconnect runs on the thread pool, the id is pinned, cascade or not.
    const disconnected = Promise.allSettled([pair.client.disconnect(), pair.server.disconnect()]);
    expect(thrownCode(() => pair.client.close())).toBe('EBUSY');
    expect([pair.clientQp.closed, pair.client.closed]).toEqual([false, false]);
    await disconnected;
    // A cm_id closes its QP first.
    pair.client.close();
    expect([pair.clientQp.closed, pair.client.closed]).toEqual([true, true]);
    // The channel closes its ids (the listener, the accepted id with its QP), then itself.
    pair.channel.close();
    expect([pair.serverQp.closed, pair.server.closed, pair.listener.closed]).toEqual([
      true,
      true,
      true,
    ]);
    expect(pair.channel.closed).toBe(true);
    expect(thrownCode(() => pair.server.reject())).toBe('EBADF');
    pair.cq.close();
    pair.pd.close();
    expect(ownResources().cm_id).toBe(0);
  });

  it('wrong argument types and out-of-range values are refused before posting', () => {
    const lo = rxeLoopback();
    const mr = lo.pd.regMr(Buffer.alloc(16), ['LOCAL_WRITE']);
    const post = (wr: unknown) => thrownCode(() => lo.a.postSend(wr as never));
    expect(post({ opcode: 'NOPE' })).toBe('VerbsArgumentError');
    expect(post({ opcode: 'SEND', wrId: 1 })).toBe('VerbsArgumentError');
    expect(post({ opcode: 'ATOMIC_FETCH_AND_ADD', add: 1 })).toBe('VerbsArgumentError');
    expect(post({ opcode: 'ATOMIC_FETCH_AND_ADD', add: -1n })).toBe('VerbsArgumentError');
    expect(post({ opcode: 'ATOMIC_FETCH_AND_ADD', add: 1n << 64n })).toBe('VerbsArgumentError');
    expect(post({ opcode: 'SEND_WITH_IMM', immData: 2 ** 32 })).toBe('VerbsArgumentError');
    expect(post({ opcode: 'SEND', sgList: [{ mr: Buffer.alloc(8) }] })).toBe('VerbsArgumentError'); // unregistered Buffer
    expect(post({ opcode: 'SEND', sgList: [mr.sge(8, 9)] })).toBe('VerbsArgumentError'); // past the MR
    expect(post({ opcode: 'SEND', sgList: [mr.sge(-1, 2)] })).toBe('VerbsArgumentError');
    expect(post(null)).toBe('VerbsArgumentError');
    expect(thrownCode(() => lo.pd.regMr('not a buffer' as never, []))).toBe('VerbsArgumentError');
    // An unknown name is the lookup convention's UnknownNameError (issue 25).
    expect(thrownCode(() => lo.pd.regMr(Buffer.alloc(8), ['EVERYTHING' as never]))).toBe(
      'UnknownNameError',
    );
    expect(thrownCode(() => lo.ctx.createCq({ cqe: 0 }))).toBe('VerbsArgumentError');
    expect(thrownCode(() => lo.ctx.queryPort(7))).toBe('EINVAL');
    expect(lo.a.inFlight.send).toBe(0);
    mr.close();
    lo.close();
  });

  it('one request, checked into a reused request of the QP: refusals typed, nothing kept from them, SGE counts change, a re-entering getter posts its own (issue 23)', () => {
    for (const extended of [false, true]) {
      const lo = rxeLoopback({ extended });
      const src = lo.pd.allocMr(16, ['LOCAL_WRITE']);
      const dst = lo.pd.allocMr(16, ['LOCAL_WRITE', 'REMOTE_WRITE']);
      src.buffer.write('0123456789abcdef', 'latin1');
      const post = (wr: unknown) => thrownCode(() => lo.a.postSend(wr as never));
      // Names of the opcode table's prototype, and values with no usable string form.
      expect(post({ opcode: 'toString' })).toBe('VerbsArgumentError');
      expect(post({ opcode: '__proto__' })).toBe('VerbsArgumentError');
      const throwing = {
        toString() {
          throw new Error('no string form');
        },
      };
      expect(post({ opcode: throwing })).toBe('VerbsArgumentError');
      expect(post({ opcode: Symbol('SEND') })).toBe('VerbsArgumentError');
      // Refused after its SGE was checked: the MR is not kept by anything.
      expect(post({ opcode: 'RDMA_WRITE', sgList: [src.sge(0, 4)], immData: -1 })).toBe(
        'VerbsArgumentError',
      );
      expect(lo.a.inFlight.send).toBe(0);
      // Two SGEs, then none, then one, through the same reused list.
      const two = lo.a.postSend({
        opcode: 'RDMA_WRITE',
        sgList: [src.sge(0, 2), src.sge(8, 2)],
        remote: dst.remote(0),
      });
      const none = lo.a.postSend({ opcode: 'RDMA_WRITE', remote: dst.remote(4) });
      const one = lo.a.postSend({
        opcode: 'RDMA_WRITE',
        sgList: [src.sge(4, 4)],
        remote: dst.remote(8),
      });
      expect(lo.cq.pollUntil(3).map((w) => [w.wrId, w.status])).toEqual([
        [two[0], 'SUCCESS'],
        [none[0], 'SUCCESS'],
        [one[0], 'SUCCESS'],
      ]);
      expect(dst.buffer.toString('latin1', 0, 12)).toBe('0189\0\0\0\x004567');
      // A getter of the request that posts on the same QP while it is being checked.
      let inner: bigint[] = [];
      const outer = lo.a.postSend({
        opcode: 'RDMA_WRITE',
        remote: dst.remote(12),
        get sgList() {
          if (inner.length === 0)
            inner = lo.a.postSend({
              opcode: 'RDMA_WRITE',
              sgList: [src.sge(12, 2)],
              remote: dst.remote(0),
            });
          return [src.sge(14, 2)];
        },
      } as never);
      const wcs = lo.cq.pollUntil(2);
      expect(wcs.map((w) => [w.wrId, w.status])).toEqual([
        [inner[0], 'SUCCESS'],
        [outer[0], 'SUCCESS'],
      ]);
      expect(dst.buffer.toString('latin1', 0, 2) + dst.buffer.toString('latin1', 12, 14)).toBe(
        'cdef',
      );
      expect(lo.a.inFlight.send).toBe(0);
      lo.close();
    }
  });

  it('prepared SRQ receives: wrong use is a typed error, the addon refuses bad words, use after release or close is EBADF (issue 23)', () => {
    const lo = rxeLoopback();
    const mr = lo.pd.allocMr(16, ['LOCAL_WRITE']);
    const srq = lo.pd.createSrq({ maxWr: 8, maxSge: 1 });
    expect(thrownCode(() => srq.prepareRecv(null as never))).toBe('VerbsArgumentError');
    expect(thrownCode(() => srq.prepareRecv([{ sgList: [] }] as never))).toBe('VerbsArgumentError');
    expect(thrownCode(() => srq.prepareRecv({ wrId: 5n, sgList: [mr.sge()] }))).toBe(
      'VerbsArgumentError',
    );
    // More SGEs than the SRQ's max_sge, refused at preparation.
    const tooMany = Array(srq.maxSge + 1).fill(mr.sge(0, 8));
    expect(thrownCode(() => srq.prepareRecv({ sgList: tooMany }))).toBe('VerbsArgumentError');
    expect(thrownCode(() => srq.prepareRecv({ sgList: [{ mr: Buffer.alloc(8) }] as never }))).toBe(
      'VerbsArgumentError',
    );
    // The count-only poll: typed refusals, and an empty CQ times out (ETIMEDOUT).
    expect(thrownCode(() => lo.cq.pollUntilCount(-1))).toBe('VerbsArgumentError');
    expect(thrownCode(() => lo.cq.pollUntilCount(1, 2 ** 32))).toBe('VerbsArgumentError');
    expect(thrownCode(() => lo.cq.pollUntilCount(1, 10))).toBe('ETIMEDOUT');
    const recv = srq.prepareRecv({ sgList: [mr.sge(0, 8)] });
    for (const bad of [0, -1, 1.5, 65536, Number.NaN, '2', 2n, undefined])
      expect(thrownCode(() => recv.post(bad as never))).toBe('VerbsArgumentError');
    expect(srq.inFlight).toBe(0);
    // More copies than the queue holds: the provider refuses the first that does not fit
    // (rxe: ENOMEM); those before it were posted and stay tracked.
    const refused = (() => {
      try {
        recv.post(0xffff);
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    expect(refused).toBeInstanceOf(VerbsError);
    expect((refused as VerbsError).call).toBe('ibv_post_srq_recv');
    expect(srq.inFlight).toBe((refused as VerbsError).badWrIndex);
    // The addon's own checks, called directly.
    const native = srq.native;
    expect(thrownCode(() => native.postRecvCopies(new Uint32Array(4), 0))).toBe(
      'VerbsArgumentError',
    );
    expect(thrownCode(() => native.postRecvCopies(new Uint32Array(2), 1))).toBe(
      'VerbsArgumentError',
    );
    expect(thrownCode(() => native.postRecvCopies([1, 2, 3, 4] as never, 1))).toBe(
      'VerbsArgumentError',
    );
    expect(thrownCode(() => native.postRecvCopies(new Uint32Array(4), 65536))).toBe(
      'VerbsArgumentError',
    );
    const badSges = new Uint32Array(4);
    badSges[2] = 9; // nine SGEs that the words do not hold
    expect(thrownCode(() => native.postRecvCopies(badSges, 1))).toBe('VerbsArgumentError');
    // A closed MR, a released request, a closed SRQ.
    const other = lo.pd.allocMr(8, ['LOCAL_WRITE']);
    const usesOther = srq.prepareRecv({ sgList: [other.sge()] });
    const live = srq.prepareRecv({ sgList: [mr.sge(8, 8)] });
    other.close();
    expect(thrownCode(() => usesOther.post(1))).toBe('EBADF');
    recv.release();
    expect(thrownCode(() => recv.post(1))).toBe('EBADF');
    srq.close();
    expect(thrownCode(() => srq.prepareRecv({ sgList: [mr.sge()] }))).toBe('EBADF');
    expect(thrownCode(() => live.post(1))).toBe('EBADF');
    expect(srq.inFlight).toBe(0);
    mr.close();
    lo.close();
  });

  it('the native classes called directly refuse wrong arguments with VerbsArgumentError naming the field', () => {
    const lo = rxeLoopback();
    const native = addon();
    /** The error's class and field, or 'no error'. */
    const refusal = (fn: () => unknown): string => {
      try {
        fn();
      } catch (e) {
        return e instanceof VerbsArgumentError ? `VerbsArgumentError ${e.field}` : String(e);
      }
      return 'no error';
    };
    const pd = lo.pd.native;
    expect(refusal(() => new native.NativeMr(pd, 'x' as never, 0))).toBe(
      'VerbsArgumentError memory',
    );
    expect(refusal(() => new native.NativeMr({} as never, 8, 0))).toBe('VerbsArgumentError pd');
    expect(refusal(() => new native.NativeMr(pd, 8, 1.5))).toBe('VerbsArgumentError access');
    expect(refusal(() => new native.NativeMr(pd, 0, 0))).toBe('VerbsArgumentError length');
    expect(refusal(() => new native.NativeMr(pd, 16, 0, 8, 16))).toBe('VerbsArgumentError range');
    expect(refusal(() => new native.NativeMr(pd, 16, 0, -1, 8))).toBe(
      'VerbsArgumentError range.offset',
    );
    expect(refusal(() => new native.NativeContext(5 as never))).toBe('VerbsArgumentError name');
    expect(refusal(() => new native.NativeAh(pd, 5 as never))).toBe('VerbsArgumentError attr');
    expect(refusal(() => lo.a.native.modify(5 as never, 0))).toBe('VerbsArgumentError attr');
    expect(refusal(() => lo.a.native.postRecv('x' as never, 1))).toBe('VerbsArgumentError words');
    expect(refusal(() => lo.a.native.postRecv(new Uint32Array(2), 1))).toBe(
      'VerbsArgumentError words',
    );
    expect(refusal(() => lo.a.native.postRecv(new Uint32Array(4), 65536))).toBe(
      'VerbsArgumentError count',
    );
    // The wrapper checks a range before the addon does, with the same field names.
    expect(refusal(() => lo.pd.allocMr(16, [], { offset: 8, length: 16 }))).toBe(
      'VerbsArgumentError range',
    );
    expect(refusal(() => lo.pd.allocMr(16, [], { offset: 0, length: 0 }))).toBe(
      'VerbsArgumentError range.length',
    );
    expect(lo.a.inFlight.recv).toBe(0);
    lo.close();
  });

  it('the bound calls (poll, packed post) refuse wrong arguments with VerbsArgumentError, a closed object with EBADF, and keep their memory after a detach', () => {
    const lo = rxeLoopback();
    const refusal = (fn: () => unknown): string => {
      try {
        fn();
      } catch (e) {
        return e instanceof VerbsArgumentError
          ? `VerbsArgumentError ${e.field}`
          : (thrownCode(() => {
              throw e;
            }) ?? String(e));
      }
      return 'no error';
    };
    const poll = lo.cq.native.boundPoll();
    expect(poll.memory.byteLength).toBe(256 * WC_WORDS * 4);
    for (const bad of ['1', -1, 1.5, 257, Number.NaN, 2n, undefined, {}]) {
      expect(refusal(() => poll.poll(bad as never, 0, 1))).toBe('VerbsArgumentError max');
      expect(refusal(() => poll.poll(1, 0, bad as never))).toBe('VerbsArgumentError atLeast');
    }
    expect(refusal(() => poll.poll(0, 0, 0))).toBe('VerbsArgumentError max');
    expect(refusal(() => poll.poll(1, -1, 1))).toBe('VerbsArgumentError spinLimit');
    expect(refusal(() => poll.poll(1, 2 ** 32, 1))).toBe('VerbsArgumentError spinLimit');
    // An empty CQ: nothing, at once; waiting for 16 gives up after 1000 empty polls.
    expect(poll.poll(16, 0, 0)).toBe(0);
    expect(poll.poll(16, 1000, 16)).toBe(0);
    const post = lo.a.native.boundPost(64);
    expect(post.memory.byteLength).toBe(64 * 4);
    for (const bad of ['1', -1, 1.5, 65536, Number.NaN, 2n, undefined])
      expect(refusal(() => post.post(bad as never, false))).toBe('VerbsArgumentError count');
    // 64 words cannot hold 9 requests: refused before anything is posted.
    expect(refusal(() => post.post(9, false))).toBe('VerbsArgumentError words');
    expect(refusal(() => lo.a.native.boundPost(0))).toBe('VerbsArgumentError words');
    // A transfer of the addon's memory: Node 24 refuses it (DataCloneError: external
    // memory is not transferable), Node 20 copies it; were it ever detached, the block
    // stays the bound call's. Either way the bound calls still read and write their own
    // memory, never freed memory.
    for (const memory of [post.memory, poll.memory]) {
      try {
        structuredClone(memory, { transfer: [memory] });
      } catch (e) {
        expect((e as Error).name).toBe('DataCloneError');
      }
    }
    expect(post.post(0, false)).toBeUndefined();
    expect(poll.poll(4, 0, 1)).toBe(0);
    expect(lo.a.inFlight.send).toBe(0);
    lo.close();
    expect(refusal(() => poll.poll(1, 0, 1))).toBe('EBADF');
    expect(refusal(() => post.post(0, false))).toBe('EBADF');
  });

  it('SRQs and memory windows: wrong use is a typed error, use after close is EBADF (issue 23)', () => {
    const lo = rxeLoopback();
    const plain = lo.pd.allocMr(64, ['LOCAL_WRITE', 'REMOTE_WRITE']);
    const bindable = lo.pd.allocMr(64, ['LOCAL_WRITE', 'REMOTE_WRITE', 'MW_BIND']);
    const srq = lo.pd.createSrq({ maxWr: 8, maxSge: 1 });
    // An SRQ receive larger than max_sge, refused before anything is posted.
    const tooMany = Array(srq.maxSge + 1).fill(plain.sge(0, 8));
    expect(thrownCode(() => srq.postRecv({ sgList: tooMany }))).toBe('VerbsArgumentError');
    expect(srq.inFlight).toBe(0);
    expect(thrownCode(() => lo.pd.createSrq({ maxWr: 0, maxSge: 1 }))).toBe('VerbsArgumentError');
    expect(thrownCode(() => srq.modify({}))).toBe('VerbsArgumentError');
    expect(thrownCode(() => srq.modify({ max: 3 } as never))).toBe('VerbsArgumentError');
    const otherPd = lo.ctx.allocPd();
    expect(thrownCode(() => otherPd.createQp({ sendCq: lo.cq, srq }))).toBe('VerbsArgumentError');
    otherPd.close();

    const mw1 = lo.pd.allocMw(1);
    const mw2 = lo.pd.allocMw(2);
    expect(thrownCode(() => lo.pd.allocMw(3 as never))).toBe('VerbsArgumentError');
    // A type 1 window in a work request, a type 2 one in bindMw.
    expect(
      thrownCode(() =>
        lo.a.postSend({
          opcode: 'BIND_MW',
          bind: { mw: mw1, mr: bindable, access: ['REMOTE_WRITE'] },
        }),
      ),
    ).toBe('VerbsArgumentError');
    expect(thrownCode(() => lo.a.postSend({ opcode: 'LOCAL_INV', invalidateRkey: mw1 }))).toBe(
      'VerbsArgumentError',
    );
    expect(thrownCode(() => lo.a.bindMw(mw2, { mr: bindable, access: ['REMOTE_WRITE'] }))).toBe(
      'VerbsArgumentError',
    );
    // An MR without MW_BIND; a window past the MR; invalidation without a key.
    expect(thrownCode(() => lo.a.bindMw(mw1, { mr: plain, access: ['REMOTE_WRITE'] }))).toBe(
      'VerbsArgumentError',
    );
    expect(
      thrownCode(() => lo.a.bindMw(mw1, { mr: bindable, length: 65, access: ['REMOTE_WRITE'] })),
    ).toBe('VerbsArgumentError');
    expect(thrownCode(() => lo.a.postSend({ opcode: 'LOCAL_INV' }))).toBe('VerbsArgumentError');
    expect(thrownCode(() => lo.a.postSend({ opcode: 'SEND', invalidateRkey: 5 }))).toBe(
      'VerbsArgumentError',
    );
    // A BIND_MW cannot be prepared (its rkey changes with every post).
    expect(
      thrownCode(() =>
        lo.a.prepare({
          opcode: 'BIND_MW',
          bind: { mw: mw2, mr: bindable, access: ['REMOTE_WRITE'] },
        }),
      ),
    ).toBe('VerbsArgumentError');
    expect(lo.a.inFlight.send).toBe(0);
    // A bind on a closed MR.
    bindable.close();
    expect(thrownCode(() => lo.a.bindMw(mw1, { mr: bindable, access: ['REMOTE_WRITE'] }))).toBe(
      'EBADF',
    );
    // Use after close.
    mw1.close();
    expect(thrownCode(() => lo.a.bindMw(mw1, { mr: plain, access: [] }))).toBe('EBADF');
    srq.close();
    expect(thrownCode(() => srq.postRecv({ sgList: [plain.sge(0, 8)] }))).toBe('EBADF');
    expect(thrownCode(() => srq.query())).toBe('EBADF');
    expect(thrownCode(() => srq.modify({ limit: 1 }))).toBe('EBADF');
    expect(thrownCode(() => lo.pd.createQp({ sendCq: lo.cq, srq }))).toBe('EBADF');
    // The native classes refuse wrong arguments with VerbsArgumentError, never a crash.
    const native = addon();
    expect(thrownCode(() => new native.NativeSrq(lo.pd.native, 5 as never))).toBe(
      'VerbsArgumentError',
    );
    expect(thrownCode(() => new native.NativeMw(lo.pd.native, 7))).toBe('VerbsArgumentError');
    expect(thrownCode(() => lo.a.native.bindMw({} as never, 1n, 0, {} as never))).toBe(
      'VerbsArgumentError',
    );
    // The PD's cascade closes the type 2 window.
    plain.close();
    lo.close();
    expect(mw2.closed).toBe(true);
    expect(thrownCode(() => lo.pd.createSrq({ maxWr: 1, maxSge: 1 }))).toBe('EBADF');
    expect(thrownCode(() => lo.pd.allocMw(2))).toBe('EBADF');
  });

  it('allocMr with a range registers only that part; the bytes around stay outside the MR', () => {
    const lo = rxeLoopback();
    const mr = lo.pd.allocMr(48, ['LOCAL_WRITE'], { offset: 16, length: 24 });
    mr.allocation.fill(0xa5);
    expect([mr.allocation.length, mr.length, mr.buffer.length, mr.allocationOffset]).toEqual([
      48, 24, 24, 16,
    ]);
    expect(mr.buffer.byteOffset - mr.allocation.byteOffset).toBe(16);
    expect(mr.buffer[0]).toBe(0xa5);
    // An SGE past the registered range is refused even though the allocation goes on.
    expect(thrownCode(() => lo.a.postSend({ opcode: 'SEND', sgList: [mr.sge(16, 9)] }))).toBe(
      'VerbsArgumentError',
    );
    mr.close();
    expect(mr.closed).toBe(true);
    lo.close();
  });

  it('a forgotten MR stays registered while a request using it is in flight', async () => {
    const lo = rxeLoopback();
    const remote = lo.pd.regMr(Buffer.alloc(8), ['LOCAL_WRITE', 'REMOTE_WRITE']);
    (() => {
      // The only reference to this MR is the in-flight request.
      const src: Mr = lo.pd.regMr(Buffer.from('kept!!!!'), ['LOCAL_WRITE']);
      lo.a.postSend({ opcode: 'RDMA_WRITE', sgList: [src.sge()], remote: remote.remote() });
    })();
    await collect();
    expect(ownResources().mr).toBe(2);
    const wc = await lo.cq.next({ timeoutMs: 10_000 });
    expect(wc.status).toBe('SUCCESS');
    expect(remote.buffer.toString()).toBe('kept!!!!');
    expect(lo.a.inFlight.send).toBe(0);
    await collect();
    expect(ownResources().mr).toBe(1); // retired, collected, deregistered by its finalizer
    remote.close();
    lo.close();
  });

  it('finalizers free forgotten objects (GC pressure) without crashing', async () => {
    const before = ownResources();
    (() => {
      for (let i = 0; i < 20; i++) {
        const ctx = openDevice('rxe0');
        const pd = ctx.allocPd();
        const cq = ctx.createCq({ cqe: 16 });
        pd.createQp({ sendCq: cq });
        pd.regMr(Buffer.alloc(4096), ['LOCAL_WRITE']);
      }
    })();
    expect(ownResources().qp).toBe(before.qp + 20);
    await collect();
    await collect();
    expect(ownResources()).toEqual(before);
  });

  it('a CQ that was awaited and then forgotten is collected (its fd watcher does not pin it)', async () => {
    const before = ownResources();
    // Only the error code leaves the closure: a live Error keeps its stack frames (and the
    // closures in them, hence the CQ) reachable until its stack is formatted.
    const outcome = await (async () => {
      const ctx = openDevice('rxe0');
      const cq = ctx.createCq({ cqe: 8 });
      return cq.next({ timeoutMs: 20 }).then(
        () => 'resolved',
        (e: VerbsError) => e.code,
      );
    })();
    expect(outcome).toBe('ETIMEDOUT');
    expect(ownResources().cq).toBe(before.cq + 1);
    await collect();
    await collect();
    expect(ownResources()).toEqual(before);
  });
});
