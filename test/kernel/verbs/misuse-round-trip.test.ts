// Misuse of round trips (verbs/round-trip.ts, the post-and-wait fast path): typed refusals
// before anything is posted, EBADF after a release or a close, a timed-out run that stays
// awaited, a failed completion. Split from misuse.test.ts, which covers the other objects.
import { describe, expect, it } from 'vitest';
import {
  type Mr,
  type RoundTrip,
  VerbsArgumentError,
  VerbsCompletionError,
} from '../../../src/verbs/index.js';
import { rxeLoopback } from './fixtures.js';
import { thrownCode } from './thrown-code.js';

describe('misuse of round trips (the post-and-wait fast path) on rxe0', () => {
  it('wrong types and values are VerbsArgumentError before anything is posted', () => {
    const lo = rxeLoopback();
    try {
      const target = lo.pd.regMr(Buffer.alloc(8), ['LOCAL_WRITE', 'REMOTE_ATOMIC']);
      const result = lo.pd.regMr(Buffer.alloc(8), ['LOCAL_WRITE']);
      const ok = {
        opcode: 'ATOMIC_FETCH_AND_ADD' as const,
        sgList: [result.sge()],
        remote: target.remote(),
        add: 1n,
      };
      const bad = (f: () => unknown) => {
        try {
          f();
        } catch (e) {
          return e instanceof VerbsArgumentError ? e.field : (e as Error).name;
        }
        return undefined;
      };
      // biome-ignore lint/suspicious/noExplicitAny: deliberately wrong types
      const qp = lo.a as any;
      expect(bad(() => qp.prepareRoundTrip(null))).toBe('wr');
      expect(bad(() => qp.prepareRoundTrip([ok]))).toBe('wr');
      expect(bad(() => qp.prepareRoundTrip({ ...ok, opcode: 'FETCH' }))).toBe('opcode');
      expect(bad(() => qp.prepareRoundTrip({ ...ok, add: 1 }))).toBe('add');
      expect(bad(() => qp.prepareRoundTrip({ ...ok, sgList: [] }))).toBe('sgList');
      expect(bad(() => qp.prepareRoundTrip({ ...ok, sgList: [result.sge(4)] }))).toBe('sgList[0]');
      expect(
        bad(() => qp.prepareRoundTrip({ ...ok, sgList: [{ addr: 1n, length: 8, lkey: 1 }] })),
      ).toBe('sgList');
      expect(bad(() => qp.prepareRoundTrip(ok, { untilReceiveOn: lo.b }))).toBe('untilReceiveOn');
      expect(bad(() => qp.prepareRoundTrip(ok, { timeoutMs: 0 }))).toBe('timeoutMs');
      expect(bad(() => qp.prepareRoundTrip(ok, null))).toBe('options');
      expect(
        bad(() =>
          qp.prepareRoundTrip(
            { opcode: 'RDMA_WRITE', sgList: [result.sge()], remote: target.remote() },
            { untilReceiveOn: {} },
          ),
        ),
      ).toBe('untilReceiveOn');
      const fa = lo.a.prepareRoundTrip(ok);
      // biome-ignore lint/suspicious/noExplicitAny: deliberately wrong types
      const loose = fa as any;
      expect(
        bad(() => {
          loose.add = 1;
        }),
      ).toBe('add');
      expect(
        bad(() => {
          loose.add = -1n;
        }),
      ).toBe('add');
      expect(
        bad(() => {
          loose.swap = 1n << 64n;
        }),
      ).toBe('swap');
      expect(
        bad(() => {
          loose.remoteAddr = '0';
        }),
      ).toBe('remoteAddr');
      expect(
        bad(() => {
          loose.immData = 1.5;
        }),
      ).toBe('immData');
      expect(fa.add).toBe(1n); // nothing half-applied
      const write = lo.a.prepareRoundTrip({
        opcode: 'RDMA_WRITE',
        sgList: [result.sge()],
        remote: target.remote(),
      });
      expect(bad(() => write.fetched)).toBe('fetched');
      // A raw SGE outside every MR of the PD: the addon refuses it (no address reaches the provider).
      expect(
        thrownCode(() =>
          lo.a.prepareRoundTrip({
            opcode: 'RDMA_WRITE',
            sgList: [{ addr: 0x1000n, length: 8, lkey: result.lkey }],
            remote: target.remote(),
          }),
        ),
      ).toBe('EINVAL');
      fa.release();
      write.release();
    } finally {
      lo.close();
    }
  });

  it('a released round trip, a closed QP, CQ, PD or MR: run() is VerbsError EBADF, never a crash', () => {
    const cases: [string, (lo: ReturnType<typeof rxeLoopback>, mr: Mr, rt: RoundTrip) => void][] = [
      ['released', (_lo, _mr, rt) => rt.release()],
      ['MR closed', (_lo, mr) => mr.close()],
      ['QP closed', (lo) => lo.a.close()],
      ['CQ closed (its QPs first)', (lo) => lo.cq.close()],
      ['PD closed (its QPs and MRs first)', (lo) => lo.pd.close()],
      ['context closed', (lo) => lo.ctx.close()],
    ];
    for (const [what, breakIt] of cases) {
      const lo = rxeLoopback();
      try {
        const target = lo.pd.regMr(Buffer.alloc(8), ['LOCAL_WRITE', 'REMOTE_ATOMIC']);
        const result = lo.pd.regMr(Buffer.alloc(8), ['LOCAL_WRITE']);
        const rt = lo.a.prepareRoundTrip({
          opcode: 'ATOMIC_FETCH_AND_ADD',
          sgList: [result.sge()],
          remote: target.remote(),
          add: 1n,
        });
        rt.run();
        breakIt(lo, result, rt);
        expect([what, thrownCode(() => rt.run())]).toEqual([what, 'EBADF']);
        expect([what, thrownCode(() => rt.run())]).toEqual([what, 'EBADF']);
        rt.release();
      } finally {
        lo.close();
      }
    }
  });

  it('a timed-out run stays awaited (the next run posts nothing new); other users of the QP and CQ are unaffected', () => {
    const lo = rxeLoopback();
    try {
      const src = lo.pd.regMr(Buffer.alloc(8), ['LOCAL_WRITE']);
      const dst = lo.pd.regMr(Buffer.alloc(8), ['LOCAL_WRITE', 'REMOTE_WRITE']);
      // A plain write never makes a receive at the peer: waiting for one times out.
      const rt = lo.a.prepareRoundTrip(
        { opcode: 'RDMA_WRITE', sgList: [src.sge()], remote: dst.remote() },
        { untilReceiveOn: lo.b, timeoutMs: 50 },
      );
      src.buffer.writeBigUInt64LE(0x0123456789abcdefn);
      expect(thrownCode(() => rt.run())).toBe('ETIMEDOUT');
      expect(dst.buffer.readBigUInt64LE()).toBe(0x0123456789abcdefn);
      src.buffer.writeBigUInt64LE(0xfedcba9876543210n);
      expect(thrownCode(() => rt.run())).toBe('ETIMEDOUT');
      expect(dst.buffer.readBigUInt64LE()).toBe(0x0123456789abcdefn); // not posted again
      // Meanwhile the general API on the same QP and CQ works, its completion not taken.
      const [id] = lo.a.postSend({
        opcode: 'RDMA_WRITE',
        sgList: [src.sge()],
        remote: dst.remote(),
      });
      const wcs = lo.cq.pollUntil(1);
      expect(wcs.map((wc) => [wc.wrId, wc.status])).toEqual([[id, 'SUCCESS']]);
      expect(dst.buffer.readBigUInt64LE()).toBe(0xfedcba9876543210n);
      // A send with immediate is the receive it waited for: the same run ends.
      lo.b.postRecv({ sgList: [] });
      lo.a.postSend({ opcode: 'SEND_WITH_IMM', immData: 0x01020304, signaled: false });
      rt.run();
      expect(rt.completion.immData).toBe(0x01020304);
      expect(rt.completion.qpNum).toBe(lo.b.qpNum);
      rt.release();
    } finally {
      lo.close();
    }
  });

  it('a failed completion is a VerbsCompletionError with its status', () => {
    const lo = rxeLoopback();
    try {
      const target = lo.pd.regMr(Buffer.alloc(8), ['LOCAL_WRITE']); // no REMOTE_ATOMIC
      const result = lo.pd.regMr(Buffer.alloc(8), ['LOCAL_WRITE']);
      const rt = lo.a.prepareRoundTrip({
        opcode: 'ATOMIC_FETCH_AND_ADD',
        sgList: [result.sge()],
        remote: target.remote(),
        add: 1n,
      });
      let error: unknown;
      try {
        rt.run();
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(VerbsCompletionError);
      expect((error as VerbsCompletionError).status).toBe('REM_ACCESS_ERR');
      rt.release();
    } finally {
      lo.close();
    }
  });
});
