/**
 * Misuse of prepared exchanges (src/verbs/exchange.ts) on rxe0: every wrong call is a
 * typed error (VerbsArgumentError, or VerbsError with its errno) with nothing posted, and
 * nothing crashes the process: wrong arguments, requests an exchange cannot carry, a
 * released exchange, closed MRs and QPs, a step while an async one waits.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Qp } from '../../../src/verbs/index.js';
import { prepareExchange, VerbsArgumentError, VerbsError } from '../../../src/verbs/index.js';
import { channelPair } from './exchange-fixture.js';
import { rxeLoopback } from './fixtures.js';

function errnoOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (e) {
    if (e instanceof VerbsArgumentError) return 'argument';
    if (e instanceof VerbsError) return e.code;
    return `untyped: ${String(e)}`;
  }
  return undefined;
}

describe('exchange misuse on rxe0', () => {
  const cleanups: (() => void)[] = [];
  afterEach(() => {
    for (const c of cleanups.splice(0).reverse()) c();
  });

  it('wrong arguments and requests an exchange cannot carry are VerbsArgumentErrors', () => {
    const p = channelPair();
    cleanups.push(() => p.close());
    const mr = p.pd.allocMr(64, ['LOCAL_WRITE']);
    const send = { opcode: 'SEND' as const, sgList: [mr.sge()] };
    const recv = { sgList: [mr.sge()] };
    const bad: [string, () => unknown][] = [
      ['not a Qp', () => prepareExchange({} as Qp, { send, recv })],
      ['null requests', () => prepareExchange(p.a, null as never)],
      ['a send list', () => prepareExchange(p.a, { send: [send] as never, recv })],
      ['no recv', () => prepareExchange(p.a, { send, recv: undefined as never })],
      ['RDMA_READ', () => prepareExchange(p.a, { send: { ...send, opcode: 'RDMA_READ' }, recv })],
      [
        'an unknown opcode',
        () => prepareExchange(p.a, { send: { ...send, opcode: 'toString' as never }, recv }),
      ],
      ['a send wrId', () => prepareExchange(p.a, { send: { ...send, wrId: 7n }, recv })],
      ['a recv wrId', () => prepareExchange(p.a, { send, recv: { ...recv, wrId: 7n } })],
      ['signalEvery 0', () => prepareExchange(p.a, { send, recv }, { signalEvery: 0 })],
      [
        'signalEvery past the send queue',
        () => prepareExchange(p.a, { send, recv }, { signalEvery: 9 }),
      ],
      ['timeoutMs 0.5', () => prepareExchange(p.a, { send, recv }, { timeoutMs: 0.5 })],
      ['options null', () => prepareExchange(p.a, { send, recv }, null as never)],
      [
        'an SGE past its MR',
        () => prepareExchange(p.a, { send: { ...send, sgList: [mr.sge(32, 64)] }, recv }),
      ],
      [
        'a recv SGE that is no SGE',
        () => prepareExchange(p.a, { send, recv: { sgList: [42 as never] } }),
      ],
    ];
    for (const [what, fn] of bad) expect(errnoOf(fn), what).toBe('argument');
    const ex = prepareExchange(p.a, { send, recv });
    cleanups.push(() => ex.release());
    for (const n of [0, 1.5, 65536, Number.NaN])
      expect(
        errnoOf(() => ex.postReceives(n)),
        String(n),
      ).toBe('argument');
    for (const v of [-1, 2 ** 32, 1.5])
      expect(
        errnoOf(() => {
          ex.sendImmData = v;
        }),
        String(v),
      ).toBe('argument');
    expect(p.a.inFlight).toEqual({ send: 0, recv: 0 });
  });

  it('async steps need one CQ with a channel; a QP with an SRQ is refused', async () => {
    const lo = rxeLoopback();
    cleanups.push(() => lo.close());
    const mr = lo.pd.allocMr(64, ['LOCAL_WRITE']);
    const noChannel = lo.ctx.createCq({ cqe: 16, channel: false });
    const withChannel = lo.ctx.createCq({ cqe: 16 });
    const plain = lo.pd.createQp({ sendCq: noChannel });
    const split = lo.pd.createQp({ sendCq: withChannel, recvCq: noChannel });
    const srq = lo.pd.createSrq({ maxWr: 4, maxSge: 1 });
    const viaSrq = lo.pd.createQp({ sendCq: withChannel, srq });
    cleanups.push(() => {
      for (const r of [viaSrq, srq, split, plain, withChannel, noChannel]) r.close();
    });
    const requests = {
      send: { opcode: 'SEND' as const, sgList: [mr.sge()] },
      recv: { sgList: [mr.sge()] },
    };
    for (const qp of [plain, split]) {
      const ex = prepareExchange(qp, requests);
      cleanups.push(() => ex.release());
      await expect(ex.runAsync({ timeoutMs: 1000 })).rejects.toBeInstanceOf(VerbsArgumentError);
      await expect(ex.receiveAsync({ timeoutMs: 1000 })).rejects.toBeInstanceOf(VerbsArgumentError);
    }
    expect(errnoOf(() => prepareExchange(viaSrq, requests))).toBe('argument');
  });

  it('released, MR closed, QP closed: EBADF; a step while an async one waits: EBUSY; timeouts and aborts leave nothing busy', async () => {
    const p = channelPair();
    cleanups.push(() => p.close());
    const mr = p.pd.allocMr(64, ['LOCAL_WRITE']);
    const other = p.pd.allocMr(64, ['LOCAL_WRITE']);
    const make = (m = mr) =>
      prepareExchange(
        p.a,
        { send: { opcode: 'SEND', sgList: [m.sge()] }, recv: { sgList: [m.sge()] } },
        { timeoutMs: 50 },
      );
    const released = make();
    released.release();
    released.release();
    expect(released.released).toBe(true);
    expect(errnoOf(() => released.run())).toBe('EBADF');
    expect(errnoOf(() => released.postReceives(1))).toBe('EBADF');
    await expect(released.runAsync()).rejects.toMatchObject({ code: 'EBADF' });

    const waiting = make();
    cleanups.push(() => waiting.release());
    waiting.postReceives(1);
    const pending = waiting.receiveAsync({ timeoutMs: 100 });
    expect(errnoOf(() => waiting.run())).toBe('EBUSY');
    expect(errnoOf(() => waiting.postReceives(1))).toBe('EBUSY');
    await expect(pending).rejects.toMatchObject({ code: 'ETIMEDOUT' });
    // Nothing came: a busy wait times out too, and the wait stays (no second receive posted).
    expect(errnoOf(() => waiting.receive())).toBe('ETIMEDOUT');

    // An aborted signal or a wrong timeout refuses the step before it posts; an abort
    // during the wait ends it; neither leaves the exchange busy.
    const signalled = make();
    cleanups.push(() => signalled.release());
    await expect(signalled.runAsync({ signal: AbortSignal.abort('stop') })).rejects.toBe('stop');
    await expect(signalled.runAsync({ timeoutMs: 0 })).rejects.toBeInstanceOf(VerbsArgumentError);
    await expect(signalled.runAsync(null as never)).rejects.toBeInstanceOf(VerbsArgumentError);
    signalled.postReceives(1);
    const controller = new AbortController();
    const aborted = signalled.receiveAsync({ signal: controller.signal });
    controller.abort('enough');
    await expect(aborted).rejects.toBe('enough');
    expect(errnoOf(() => signalled.postReceives(1))).toBeUndefined();

    const onOther = make(other);
    cleanups.push(() => onOther.release());
    other.close();
    expect(errnoOf(() => onOther.run())).toBe('EBADF');
    expect(errnoOf(() => onOther.postReceives(1))).toBe('EBADF');

    const afterQp = make();
    cleanups.push(() => afterQp.release());
    p.a.close();
    expect(errnoOf(() => afterQp.run())).toBe('EBADF');
    expect(
      errnoOf(() =>
        prepareExchange(p.a, {
          send: { opcode: 'SEND', sgList: [mr.sge()] },
          recv: { sgList: [mr.sge()] },
        }),
      ),
    ).toBe('EBADF');
  });
});
