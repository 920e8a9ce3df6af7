/**
 * Prepared Send/Receive exchanges (src/verbs/exchange.ts, native/exchange.cc) on rxe0 in
 * loopback: with immediates, a receive posted earlier with postRecv, and a QP in error.
 * Against rdma-core's `ibv_rc_pingpong`, in both roles, busy-polling and on events, they
 * run in interop-c-pingpong.test.ts beside the everyday loop (its `exchange` cases).
 * (docs/verbs.md's example runs in test/kernel/docs/examples.test.ts, as every device
 * example; it passed here too, verbatim, in the guest run of 2026-12-05. Speed is measured
 * by `npm run bench`, never here.)
 */
import { afterEach, describe, expect, it } from 'vitest';
import { prepareExchange, VerbsCompletionError } from '../../../src/verbs/index.js';
import { channelPair } from './exchange-fixture.js';

describe('prepared exchanges on rxe0', () => {
  const cleanups: (() => void)[] = [];
  afterEach(() => {
    for (const c of cleanups.splice(0).reverse()) c();
  });

  it('loopback on events with immediates: every message and immediate arrives in order, an earlier postRecv first', async () => {
    const p = channelPair();
    cleanups.push(() => p.close());
    const mrA = p.pd.allocMr(128, ['LOCAL_WRITE']);
    const mrB = p.pd.allocMr(128, ['LOCAL_WRITE']);
    const send = (mr: typeof mrA) => ({
      opcode: 'SEND_WITH_IMM' as const,
      sgList: [mr.sge(0, 64)],
      immData: 0,
    });
    const recv = (mr: typeof mrA) => ({ sgList: [mr.sge(64, 64)] });
    const a = prepareExchange(p.a, { send: send(mrA), recv: recv(mrA) });
    const b = prepareExchange(p.b, { send: send(mrB), recv: recv(mrB) });
    cleanups.push(() => {
      a.release();
      b.release();
    });
    // One receive posted the everyday way comes first; the exchange reposts its own.
    const [early] = p.b.postRecv({ wrId: 0x0102030405060708n, sgList: [mrB.sge(64, 64)] });
    expect(p.b.inFlight.recv).toBe(1);
    a.postReceives(4);
    b.postReceives(4);
    const seen: number[] = [];
    for (let i = 0; i < 20; i++) {
      const imm = (0x9e3779b9 * (i + 1)) >>> 0;
      mrA.buffer.fill(i + 1, 0, 64);
      a.sendImmData = imm;
      const answered = b.receiveAsync({ timeoutMs: 5000 });
      const asked = a.runAsync({ timeoutMs: 5000 });
      await answered;
      if (i === 0) {
        expect(b.completion.wrId).toBe(early);
        expect(p.b.inFlight.recv).toBe(0);
      }
      expect(b.byteLen).toBe(64);
      expect(b.immData).toBe(imm);
      seen.push(mrB.buffer[64] as number);
      expect(mrB.buffer.subarray(64).equals(Buffer.alloc(64, i + 1))).toBe(true);
      mrB.buffer.fill(0xc0 + (i % 16), 0, 64);
      b.sendImmData = (imm ^ 0xffffffff) >>> 0;
      b.send();
      await asked;
      expect(a.immData).toBe((imm ^ 0xffffffff) >>> 0);
      expect(a.completion.opcode).toBe('RECV');
      expect(mrA.buffer.subarray(64).equals(Buffer.alloc(64, 0xc0 + (i % 16)))).toBe(true);
    }
    expect(seen).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
  });

  it('a QP in error: the flushed receive is a VerbsCompletionError (WR_FLUSH_ERR), nothing is lost or left awaited', () => {
    const p = channelPair();
    cleanups.push(() => p.close());
    const mr = p.pd.allocMr(64, ['LOCAL_WRITE']);
    const ex = prepareExchange(p.a, {
      send: { opcode: 'SEND', sgList: [mr.sge()] },
      recv: { sgList: [mr.sge()] },
    });
    cleanups.push(() => ex.release());
    ex.postReceives(2);
    p.a.modify({ state: 'ERR' });
    let error: unknown;
    try {
      ex.receive();
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(VerbsCompletionError);
    expect((error as VerbsCompletionError).status).toBe('WR_FLUSH_ERR');
    expect(ex.ok).toBe(false);
    // The second flushed receive is the next step's: it fails the same way, then the
    // queue is empty (a third would time out).
    expect(() => ex.receive()).toThrow(VerbsCompletionError);
    expect(p.cqA.poll(8)).toEqual([]);
  });
});
