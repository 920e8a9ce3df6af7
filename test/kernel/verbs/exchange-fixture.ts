/**
 * Two RC QPs of rxe0 connected by hand in loopback, each on its own CQ with a completion
 * channel (what an exchange's async steps need), for the exchange's kernel tests.
 */
import {
  type Context,
  type Cq,
  connectPairByHand,
  openDevice,
  type Pd,
  type Qp,
} from '../../../src/verbs/index.js';

export interface ChannelPair {
  readonly ctx: Context;
  readonly pd: Pd;
  readonly cqA: Cq;
  readonly cqB: Cq;
  readonly a: Qp;
  readonly b: Qp;
  close(): void;
}

export function channelPair(): ChannelPair {
  const ctx = openDevice('rxe0');
  const gid = ctx.findGid({ type: 'RoCEv2', ipv4: '192.0.2.1' });
  const pd = ctx.allocPd();
  const cqA = ctx.createCq({ cqe: 64, channel: true });
  const cqB = ctx.createCq({ cqe: 64, channel: true });
  const qp = (cq: Cq) => pd.createQp({ sendCq: cq, recvCq: cq, maxSendWr: 8, maxRecvWr: 16 });
  const a = qp(cqA);
  const b = qp(cqB);
  connectPairByHand(a, b, gid, { aPsn: 0x2a5c31, bPsn: 0x0c5a13 });
  return {
    ctx,
    pd,
    cqA,
    cqB,
    a,
    b,
    close() {
      a.close();
      b.close();
      cqA.close();
      cqB.close();
      pd.close();
      ctx.close();
    },
  };
}
