/**
 * rdma-core's `ibv_rc_pingpong` (libibverbs/examples/rc_pingpong.c) written with the
 * wrapper as docs/verbs.md teaches it, the way a new user writes it: `postRecv` one
 * receive per message received, `postSend` one Send per message, and either
 * `cq.pollUntil(1)` (busy poll) or `await cq.next()` (completion events, as the example's
 * `-e`). It speaks the example's address exchange (exchange.ts) and follows its protocol:
 * the client posts the first Send; each side posts its next Send once its previous Send
 * completed and a message arrived (`pending` of rc_pingpong.c's parse_single_wc); `iters`
 * exchanges; the time from the first post to the last completion, divided by `iters`, is
 * its `usec/iter` as the example's own. Every completion is checked (status, opcode,
 * byte_len); the last message received is returned for the caller to check its bytes.
 */
import { performance } from 'node:perf_hooks';
import {
  type Cq,
  connectRcByHand,
  type Exchange,
  openDevice,
  prepareExchange,
  type Qp,
  type RecvWr,
  type SendWr,
  type WorkCompletion,
} from '../../verbs/index.js';
import { clientExchange, listenExchange, type PingPongDest } from './exchange.js';

export type WaitMode = 'poll' | 'events';
/**
 * How the loop is written: `everyday` as docs/verbs.md teaches the verbs (postRecv,
 * postSend, pollUntil / cq.next), `exchange` with a prepared exchange (src/verbs/exchange.ts:
 * one native call per step).
 */
export type LoopForm = 'everyday' | 'exchange';

export interface PingPongOptions {
  readonly device: string;
  /** Message size in bytes (the example's `-s`, default 4096). */
  readonly size: number;
  /** Exchanges (the example's `-n`). */
  readonly iters: number;
  readonly mode: WaitMode;
  /** The loop's form (default `everyday`). */
  readonly form?: LoopForm;
  /** `exchange`: one signaled send every this many (default: the exchange's own, 8 here). */
  readonly signalEvery?: number;
  /** The timeout of each wait (default 60000 ms; 0: none). */
  readonly waitTimeoutMs?: number;
  /** The TCP port of the exchange (`-p`). */
  readonly port: number;
  /** Client: the server's host; server: undefined (then `listening` is told the port). */
  readonly server?: string;
  /** Receives kept posted (`-r`, default 500). */
  readonly rxDepth?: number;
  /** The byte every message this side sends carries (the example fills 0x7b). */
  readonly fill?: number;
  /** Page-start bytes of the message sent set to 0, as `ibv_rc_pingpong -c` expects. */
  readonly zeroPageStarts?: boolean;
  /**
   * Profiling (busy poll only): microseconds spent in postSend, postRecv, pollUntil
   * before a Send completion, pollUntil before a receive completion, added into
   * slots 0-3 (each call timed with performance.now()).
   */
  readonly profile?: Float64Array;
  /** Server role: called once the exchange listens (start the C client then). */
  readonly listening?: () => void;
}

export interface PingPongResult {
  readonly usecPerIter: number;
  /** The first message received (a copy). */
  readonly firstReceived: Buffer;
  /**
   * The last message received (a copy). The C example sends from the buffer it receives
   * into, so from its second message on it echoes what this side sent.
   */
  readonly received: Buffer;
  readonly sends: number;
  readonly receives: number;
  /** `exchange` on events: how often the channel woke the loop up. */
  readonly wakeUps?: number;
}

const SEND = 1;
const RECV = 2;

/** One ping-pong with a peer speaking rc_pingpong's protocol (the C example or this). */
export async function rcPingPong(o: PingPongOptions): Promise<PingPongResult> {
  const rxDepth = o.rxDepth ?? 500;
  const ctx = openDevice(o.device);
  try {
    const gid = ctx.findGid({ type: 'RoCEv2' });
    const pd = ctx.allocPd();
    const cq = ctx.createCq({ cqe: rxDepth + 1, channel: o.mode === 'events' });
    // rc_pingpong's send queue holds one request, every Send signaled. The exchange's
    // holds 16: it signals one Send in 8 (its default, half the depth), as perftest
    // moderates its completions; on events a Send completion can cost a wake-up.
    const maxSendWr = o.form === 'exchange' ? Math.max(16, o.signalEvery ?? 1) : 1;
    const qp = pd.createQp({ sendCq: cq, recvCq: cq, maxSendWr, maxRecvWr: rxDepth });
    // Separate send and receive memory (the example shares one buffer), so that what
    // arrives can be checked against what was sent.
    const sendMr = pd.allocMr(o.size, ['LOCAL_WRITE']);
    const recvMr = pd.allocMr(o.size, ['LOCAL_WRITE']);
    sendMr.buffer.fill(o.fill ?? 0x7b);
    if (o.zeroPageStarts === true) for (let i = 0; i < o.size; i += 4096) sendMr.buffer[i] = 0;
    const recv = { sgList: [recvMr.sge()] };
    const send = { opcode: 'SEND' as const, sgList: [sendMr.sge()] };
    let exchange: Exchange | undefined;
    const psn = Math.floor(Math.random() * 0x1000000);
    const mine: PingPongDest = { lid: 0, qpn: qp.qpNum, psn, gid: gid.gid };
    const connect = (peer: PingPongDest) => {
      connectRcByHand(qp, {
        remote: { qpNum: peer.qpn, psn: peer.psn, gid: peer.gid },
        localPsn: psn,
        sgidIndex: gid.index,
        // rc_pingpong.c pp_connect_ctx: its defaults.
        mtu: 1024,
        maxRdAtomic: 1,
        maxDestRdAtomic: 1,
        minRnrTimer: 12,
        timeout: 14,
        retryCnt: 7,
        rnrRetry: 7,
      });
      // (rxe refuses receives on a QP in RESET: posted once it is connected, before this
      // side's address goes to the peer, as rc_pingpong posts them in INIT.)
      if (o.form === 'exchange') {
        exchange = prepareExchange(
          qp,
          { send, recv },
          {
            timeoutMs: 60_000,
            ...(o.signalEvery === undefined ? {} : { signalEvery: o.signalEvery }),
          },
        );
        exchange.postReceives(rxDepth);
      } else qp.postRecv(Array.from({ length: rxDepth }, () => recv));
    };
    if (o.server === undefined) {
      const server = await listenExchange(o.port);
      try {
        o.listening?.();
        await server.accept(1, ([peer]) => {
          connect(peer as PingPongDest);
          return [mine];
        });
      } finally {
        server.close();
      }
    } else {
      const [peer] = await clientExchange(o.server, o.port, [mine]);
      connect(peer as PingPongDest);
    }
    const state = { pending: RECV, scnt: 0, rcnt: 0 };
    const first = Buffer.alloc(o.size);
    const start = performance.now();
    if (exchange !== undefined) {
      const r = await exchangeLoop(exchange, o, recvMr.buffer, first);
      const usec = (performance.now() - start) * 1000;
      return {
        usecPerIter: usec / o.iters,
        firstReceived: first,
        received: Buffer.from(recvMr.buffer),
        wakeUps: exchange.wakeUps,
        ...r,
      };
    }
    if (o.server !== undefined) {
      qp.postSend(send);
      state.pending |= SEND;
    }
    // One completion: count it, repost the receive it consumed, send when both are in.
    const onCompletion = (wc: WorkCompletion) => {
      if (!wc.ok) throw new Error(`completion ${wc.wrId}: ${wc.status}`);
      if (wc.opcode === 'SEND') {
        state.scnt++;
        state.pending &= ~SEND;
      } else if (wc.opcode === 'RECV') {
        if (wc.byteLen !== o.size)
          throw new Error(`a message of ${wc.byteLen} bytes, not ${o.size}`);
        if (state.rcnt++ === 0) recvMr.buffer.copy(first);
        qp.postRecv(recv);
        state.pending &= ~RECV;
      } else throw new Error(`an unexpected completion: ${wc.opcode}`);
      if (state.scnt < o.iters && state.pending === 0) {
        qp.postSend(send);
        state.pending = RECV | SEND;
      }
    };
    if (o.profile !== undefined) {
      profiledLoop(o.profile, cq, qp, send, recv, state, o.iters, o.size);
    } else if (o.mode === 'poll') busyLoop(cq, state, o.iters, onCompletion);
    else
      await eventLoop(
        cq,
        state,
        o.iters,
        onCompletion,
        o.waitTimeoutMs === 0 ? {} : { timeoutMs: o.waitTimeoutMs ?? 60_000 },
      );
    const usec = (performance.now() - start) * 1000;
    const received = Buffer.from(recvMr.buffer);
    return {
      usecPerIter: usec / o.iters,
      firstReceived: first,
      received,
      sends: state.scnt,
      receives: state.rcnt,
    };
  } finally {
    ctx.close();
  }
}

/**
 * The loop with a prepared exchange: the client sends first (each step: send, wait for
 * the answer); the server waits for the first message, answers and waits `iters - 1`
 * times, then sends its last answer alone. Every message's length is checked.
 */
async function exchangeLoop(
  ex: Exchange,
  o: PingPongOptions,
  landed: Buffer,
  first: Buffer,
): Promise<{ sends: number; receives: number }> {
  const events = o.mode === 'events';
  const wait = o.waitTimeoutMs === 0 ? {} : { timeoutMs: o.waitTimeoutMs ?? 60_000 };
  let sends = 0;
  let receives = 0;
  const check = () => {
    if (ex.byteLen !== o.size) throw new Error(`a message of ${ex.byteLen} bytes, not ${o.size}`);
    if (receives++ === 0) landed.copy(first);
  };
  if (o.server === undefined) {
    if (events) await ex.receiveAsync(wait);
    else ex.receive();
    check();
    for (let i = 1; i < o.iters; i++) {
      if (events) await ex.runAsync(wait);
      else ex.run();
      sends++;
      check();
    }
    ex.send();
    sends++;
  } else if (events) {
    for (let i = 0; i < o.iters; i++) {
      await ex.runAsync(wait);
      sends++;
      check();
    }
  } else {
    for (let i = 0; i < o.iters; i++) {
      ex.run();
      sends++;
      check();
    }
  }
  return { sends, receives };
}

interface Counts {
  scnt: number;
  rcnt: number;
}

function busyLoop(cq: Cq, s: Counts, iters: number, on: (wc: WorkCompletion) => void): void {
  while (s.rcnt < iters || s.scnt < iters) for (const wc of cq.pollUntil(1)) on(wc);
}

async function eventLoop(
  cq: Cq,
  s: Counts,
  iters: number,
  on: (wc: WorkCompletion) => void,
  wait: { timeoutMs?: number },
): Promise<void> {
  while (s.rcnt < iters || s.scnt < iters) on(await cq.next(wait));
}

/** busyLoop with each call timed (PingPongOptions.profile). */
function profiledLoop(
  acc: Float64Array,
  cq: Cq,
  qp: Qp,
  send: SendWr,
  recv: RecvWr,
  s: Counts & { pending: number },
  iters: number,
  size: number,
): void {
  const now = () => performance.now() * 1000;
  while (s.rcnt < iters || s.scnt < iters) {
    const t0 = now();
    const [wc] = cq.pollUntil(1);
    const t1 = now();
    if (wc === undefined || !wc.ok) throw new Error(`completion: ${wc?.status}`);
    if (wc.opcode === 'SEND') {
      acc[2] = (acc[2] ?? 0) + (t1 - t0);
      s.scnt++;
      s.pending &= ~SEND;
    } else {
      acc[3] = (acc[3] ?? 0) + (t1 - t0);
      if (wc.byteLen !== size) throw new Error('length');
      s.rcnt++;
      const t2 = now();
      qp.postRecv(recv);
      acc[1] = (acc[1] ?? 0) + (now() - t2);
      s.pending &= ~RECV;
    }
    if (s.scnt < iters && s.pending === 0) {
      const t3 = now();
      qp.postSend(send);
      acc[0] = (acc[0] ?? 0) + (now() - t3);
      s.pending = RECV | SEND;
    }
  }
}
