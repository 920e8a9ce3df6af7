/**
 * Receive-then-repost (src/verbs/recv-refill.ts, native/recv_refill.cc) on rxe0: an SRQ
 * feeding two QPs and a QP's own receive queue kept full by one native call per batch,
 * with the data and the counts checked, completions of others set aside for `cq.poll`,
 * and its misuse: every wrong call a typed error with nothing posted (wrong CQ, released,
 * closed objects, counts out of range), a failed receive a VerbsCompletionError.
 */
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import {
  connectPairByHand,
  openDevice,
  prepareRecvRefill,
  VerbsArgumentError,
  VerbsCompletionError,
  VerbsError,
} from '../../../src/verbs/index.js';
import { rxeLoopback } from './fixtures.js';
import { NONE, ownResources } from './resources.js';

function errnoOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (e) {
    if (e instanceof VerbsArgumentError) return 'argument';
    if (e instanceof VerbsCompletionError) return `completion ${e.status}`;
    if (e instanceof VerbsError) return e.code;
    return `untyped: ${String(e)}`;
  }
  return undefined;
}

/** A sender pair a1 -> b1, a2 -> b2 on rxe0, b1 and b2 receiving through one SRQ. */
function srqPair() {
  const ctx = openDevice('rxe0');
  const gid = ctx.findGid({ type: 'RoCEv2', ipv4: '192.0.2.1' });
  const pd = ctx.allocPd();
  const cq = ctx.createCq({ cqe: 256 });
  const srq = pd.createSrq({ maxWr: 32, maxSge: 1 });
  const a1 = pd.createQp({ sendCq: cq });
  const a2 = pd.createQp({ sendCq: cq });
  const b1 = pd.createQp({ sendCq: cq, srq });
  const b2 = pd.createQp({ sendCq: cq, srq });
  connectPairByHand(a1, b1, gid, { aPsn: 0x1a2b3c, bPsn: 0x0c0b0a });
  connectPairByHand(a2, b2, gid, { aPsn: 0x2b3c4d, bPsn: 0x0d0c0b });
  return { ctx, pd, cq, srq, a1, a2, b1, b2, close: () => ctx.close() };
}

const SPIN = 50_000_000;

describe('receive refill on rxe0', () => {
  const cleanups: (() => void)[] = [];
  afterEach(() => {
    for (const c of cleanups.splice(0).reverse()) c();
  });
  afterAll(() => expect(ownResources()).toEqual(NONE));

  it('keeps an SRQ full: each batch taken and reposted in one call, the data landed', () => {
    const s = srqPair();
    cleanups.push(() => s.close());
    const slot = s.pd.allocMr(16, ['LOCAL_WRITE']);
    const src = s.pd.allocMr(16, ['LOCAL_WRITE']);
    const refill = prepareRecvRefill(s.srq, s.cq, { sgList: [slot.sge()] });
    refill.post(8);
    expect([refill.outstanding, s.srq.inFlight]).toEqual([8, 8]);
    // One message at a time: its bytes are in the (shared) slot when repost returns.
    for (let i = 0; i < 4; i++) {
      const text = `msg ${i} via ${i % 2 === 0 ? 'a1' : 'a2'}`;
      src.buffer.fill(0);
      src.buffer.write(text);
      (i % 2 === 0 ? s.a1 : s.a2).postSend({ opcode: 'SEND', sgList: [src.sge()] });
      expect(refill.repost(16, SPIN)).toBe(1);
      expect(slot.buffer.toString('latin1', 0, text.length)).toBe(text);
      expect([refill.outstanding, s.srq.inFlight]).toEqual([8, 8]);
    }
    // A stream five times the SRQ's depth (40 > 8 posted): only reposting carries it (in
    // chunks of the depth, so that no Send meets an empty SRQ and waits out an RNR timer).
    for (let chunk = 0; chunk < 5; chunk++) {
      for (let i = 0; i < 8; i++)
        (i % 2 === 0 ? s.a1 : s.a2).postSend({ opcode: 'SEND', sgList: [src.sge(0, 8)] });
      refill.repostUntil(8, { batch: 3, spinLimit: SPIN });
      expect([refill.taken, refill.outstanding, s.srq.inFlight]).toEqual([8, 8, 8]);
    }
    // The 44 send completions were the CQ's, set aside for its own poll, none lost.
    const sends = s.cq.pollUntil(44);
    expect(sends.every((wc) => wc.ok && wc.opcode === 'SEND')).toBe(true);
    expect(s.cq.poll(4)).toEqual([]);
    // Nothing came: repost with spinLimit 0 polls once and takes none.
    expect(refill.repost(16, 0)).toBe(0);
    refill.release();
    expect(refill.released).toBe(true);
  });

  it("keeps a QP's own receive queue full", () => {
    const lo = rxeLoopback();
    cleanups.push(() => lo.close());
    const slot = lo.pd.allocMr(8, ['LOCAL_WRITE']);
    const src = lo.pd.allocMr(8, ['LOCAL_WRITE']);
    using refill = prepareRecvRefill(lo.b, lo.cq, { sgList: [slot.sge()] });
    refill.post(4);
    src.buffer.writeBigUInt64LE(0x0123456789abcdefn);
    for (let chunk = 0; chunk < 3; chunk++) {
      for (let i = 0; i < 4; i++) lo.a.postSend({ opcode: 'SEND', sgList: [src.sge()] });
      refill.repostUntil(4, { batch: 3 });
      expect([refill.taken, refill.outstanding]).toEqual([4, 4]);
    }
    expect(slot.buffer.readBigUInt64LE()).toBe(0x0123456789abcdefn);
    expect(lo.cq.pollUntil(12).every((wc) => wc.ok && wc.opcode === 'SEND')).toBe(true);
  });

  it('wrong arguments, a wrong CQ and counts out of range are VerbsArgumentErrors', () => {
    const s = srqPair();
    cleanups.push(() => s.close());
    const mr = s.pd.allocMr(16, ['LOCAL_WRITE']);
    const wr = { sgList: [mr.sge()] };
    const other = s.ctx.createCq({ cqe: 8 });
    const ctx2 = openDevice('rxe0');
    cleanups.push(() => ctx2.close());
    const foreign = ctx2.createCq({ cqe: 8 });
    const bad: [string, () => unknown][] = [
      ['not a queue', () => prepareRecvRefill({} as never, s.cq, wr)],
      ['not a CQ', () => prepareRecvRefill(s.srq, {} as never, wr)],
      ['a CQ no QP of the SRQ receives on', () => prepareRecvRefill(s.srq, other, wr)],
      ['a CQ of another context', () => prepareRecvRefill(s.srq, foreign, wr)],
      ['a QP on an SRQ', () => prepareRecvRefill(s.b1, s.cq, wr)],
      ['a wrId', () => prepareRecvRefill(s.srq, s.cq, { ...wr, wrId: 7n })],
      ['a list', () => prepareRecvRefill(s.srq, s.cq, [wr] as never)],
      [
        'more SGEs than maxSge',
        () => prepareRecvRefill(s.srq, s.cq, { sgList: [mr.sge(), mr.sge()] }),
      ],
      ['an SGE past its MR', () => prepareRecvRefill(s.srq, s.cq, { sgList: [mr.sge(8, 16)] })],
    ];
    const lo = rxeLoopback();
    cleanups.push(() => lo.close());
    const loMr = lo.pd.allocMr(8, ['LOCAL_WRITE']);
    const cqB = lo.ctx.createCq({ cqe: 8 });
    const c = lo.pd.createQp({ sendCq: cqB, recvCq: lo.cq });
    bad.push(['a QP and its send CQ', () => prepareRecvRefill(c, cqB, { sgList: [loMr.sge()] })]);
    for (const [what, fn] of bad) expect([what, errnoOf(fn)]).toEqual([what, 'argument']);

    const refill = prepareRecvRefill(s.srq, s.cq, wr);
    cleanups.push(() => refill.release());
    const counts: [string, () => unknown][] = [
      ['post 0', () => refill.post(0)],
      ['post 65536', () => refill.post(65536)],
      ['post 1.5', () => refill.post(1.5)],
      ['post "1"', () => refill.post('1' as never)],
      ['repost max 0', () => refill.repost(0)],
      ['repost max 257', () => refill.repost(257)],
      ['repost spinLimit -1', () => refill.repost(16, -1)],
      ['repostUntil -1', () => refill.repostUntil(-1)],
      ['repostUntil 2^32', () => refill.repostUntil(2 ** 32)],
      ['repostUntil batch 0', () => refill.repostUntil(1, { batch: 0 })],
      ['repostUntil batch 257', () => refill.repostUntil(1, { batch: 257 })],
      ['repostUntil options null', () => refill.repostUntil(1, null as never)],
    ];
    for (const [what, fn] of counts) expect([what, errnoOf(fn)]).toEqual([what, 'argument']);
    // Nothing was posted by any of them.
    expect([refill.outstanding, s.srq.inFlight]).toEqual([0, 0]);
    // A fill past what the SRQ holds (rxe's queue holds more than the max_wr it grants:
    // measured on 6.1) is refused by the provider at the first copy that does not fit,
    // the copies before it posted and counted.
    expect(errnoOf(() => refill.post(0xffff))).toBe('ENOMEM');
    expect(refill.outstanding).toBe(s.srq.inFlight);
    expect(refill.outstanding).toBeGreaterThanOrEqual(32);
    // No completion within the spin limit: ETIMEDOUT, nothing taken.
    expect(errnoOf(() => refill.repostUntil(1, { spinLimit: 1000 }))).toBe('ETIMEDOUT');
    expect(refill.taken).toBe(0);
  });

  it('released, closed MR, closed SRQ or CQ: EBADF, nothing posted', () => {
    const s = srqPair();
    cleanups.push(() => s.close());
    const mr = s.pd.allocMr(16, ['LOCAL_WRITE']);
    const keep = s.pd.allocMr(16, ['LOCAL_WRITE']);
    const released = prepareRecvRefill(s.srq, s.cq, { sgList: [keep.sge()] });
    released.release();
    released.release(); // idempotent
    expect(errnoOf(() => released.post(1))).toBe('EBADF');
    expect(errnoOf(() => released.repost(1))).toBe('EBADF');
    expect(errnoOf(() => released.repostUntil(1))).toBe('EBADF');
    const refill = prepareRecvRefill(s.srq, s.cq, { sgList: [mr.sge()] });
    mr.close();
    expect(errnoOf(() => refill.post(1))).toBe('EBADF');
    expect(errnoOf(() => refill.repost(1))).toBe('EBADF');
    expect(refill.outstanding).toBe(0);
    const alive = prepareRecvRefill(s.srq, s.cq, { sgList: [keep.sge()] });
    s.srq.close(); // closes b1 and b2 first
    expect(errnoOf(() => alive.post(1))).toBe('EBADF');
    expect(errnoOf(() => prepareRecvRefill(s.srq, s.cq, { sgList: [keep.sge()] }))).toBe('EBADF');
    const lo = rxeLoopback();
    cleanups.push(() => lo.close());
    const loMr = lo.pd.allocMr(8, ['LOCAL_WRITE']);
    const onQp = prepareRecvRefill(lo.b, lo.cq, { sgList: [loMr.sge()] });
    lo.a.close();
    lo.b.close();
    expect(errnoOf(() => onQp.post(1))).toBe('EBADF');
  });

  it('a failed receive is a VerbsCompletionError and is not replaced', () => {
    const s = srqPair();
    cleanups.push(() => s.close());
    const slot = s.pd.allocMr(8, ['LOCAL_WRITE']);
    const src = s.pd.allocMr(64, ['LOCAL_WRITE']);
    const refill = prepareRecvRefill(s.srq, s.cq, { sgList: [slot.sge()] });
    refill.post(4);
    // 64 bytes into an 8-byte receive: the responder completes the receive in error and
    // NAKs the Send (rxe_resp.c send_data_in: copy_data's -ENOSPC is RESPST_ERR_LENGTH,
    // REM_INV_REQ_ERR; another error RESPST_ERR_MALFORMED_WQE, LOC_QP_OP_ERR, which is
    // what 6.1.192 gave).
    const FAILED = ['LOC_QP_OP_ERR', 'REM_INV_REQ_ERR', 'LOC_LEN_ERR'];
    s.a1.postSend({ opcode: 'SEND', sgList: [src.sge()] });
    let error: unknown;
    try {
      refill.repostUntil(1);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(VerbsCompletionError);
    const status = (error as VerbsCompletionError).status;
    expect(FAILED).toContain(status);
    expect(refill.failed).toMatchObject({ ok: false, status, qpNum: s.b1.qpNum });
    expect([refill.taken, refill.outstanding, s.srq.inFlight]).toEqual([0, 3, 3]);
    // The sender's failed Send is the CQ's, set aside.
    const [sent] = s.cq.pollUntil(1);
    expect(sent?.ok).toBe(false);
    // The other QP of the SRQ still receives, into the receives left.
    s.a2.postSend({ opcode: 'SEND', sgList: [src.sge(0, 8)] });
    expect(refill.repost(16, SPIN)).toBe(1);
    expect(refill.outstanding).toBe(3);

    // A QP's own queue moved to ERR: its receives flush, the first fails the call.
    const lo = rxeLoopback();
    cleanups.push(() => lo.close());
    const loMr = lo.pd.allocMr(8, ['LOCAL_WRITE']);
    const onQp = prepareRecvRefill(lo.b, lo.cq, { sgList: [loMr.sge()] });
    onQp.post(2);
    lo.b.modify({ state: 'ERR' });
    expect(errnoOf(() => onQp.repostUntil(2))).toBe('completion WR_FLUSH_ERR');
    expect(errnoOf(() => onQp.repostUntil(1))).toBe('completion WR_FLUSH_ERR');
    expect(onQp.outstanding).toBe(0);
    onQp.release();
  });
});
