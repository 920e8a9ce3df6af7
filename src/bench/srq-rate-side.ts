/**
 * One side of the two-thread SRQ receive rate (srq-rate.ts), run in a worker thread with
 * its own device context, as each `ib_send_bw --use-srq` side is its own process. The
 * sides live for the whole benchmark (every round), as a program keeps its receiver: each
 * `{ streams }` message runs that many streams of `count` Sends, the last one measured.
 *
 * - the receiver: a QP that receives through an SRQ of depth `depth`, filled before the
 *   first run (perftest's server posts its rx-depth first), then one
 *   `RecvRefill.repostUntil` per run: in one native call, receive completions taken up to
 *   REFILL per poll and as many receives posted again after each poll (perftest's server
 *   polls up to 16 and reposts each completed receive). Until 2026-12-05 the receiver
 *   looped in JavaScript, `pollUntilCount(16)` then `PreparedRecv.post(16)`: two
 *   crossings per 16 receives;
 * - the sender: `count` 8-byte Sends per stream, each a `RoundTrip.repeat` (window 128,
 *   `batch` per doorbell; perftest's client: tx-depth 128, post_list `batch`), its rate
 *   from the measured stream's first post to its last completion (the addon's TSC stamps),
 *   as perftest's client reports MsgRate.
 *
 * The streams before the measured one warm both sides up: a new worker compiles its loop
 * (V8's optimizing compiler, on background threads that share the guest's two CPUs with
 * both sides) only after some thousand iterations; until then a receiver that refills in
 * interpreted JavaScript under TCG falls behind the sender, whose Sends then meet an empty
 * SRQ (RNR NAKs, each a retry timer). perftest's C needs no warm-up and has none.
 */
import { workerData } from 'node:worker_threads';
import { prepareRecvRefill } from '../verbs/index.js';
import { connectToPeer, openSide, type PeerQp, SPIN_LIMIT } from './side-common.js';

export interface SrqSideConfig {
  readonly device: string;
  readonly role: 'sender' | 'receiver';
  /** Messages per stream. */
  readonly count: number;
  /** The SRQ's depth (receiver). */
  readonly depth: number;
  /** The message size in bytes. */
  readonly size: number;
  /** Sends per doorbell (sender; one signaled per doorbell), as perftest's post_list. */
  readonly batch: number;
}

/** What each run's message asks: `streams` streams of `count`, the last one measured. */
export interface SrqSideRun {
  readonly streams: number;
}

/** The sender's rate (Mpps); the receiver sends none (a failed receive throws there). */
export interface SrqSideResult {
  readonly mpps: number | undefined;
}

/** Receive completions one poll takes at most, reposted together (perftest's CTX_POLL_BATCH). */
const REFILL = 16;

function side(config: SrqSideConfig): void {
  const { port, ctx, gid, pd } = openSide('srq-rate-side', config.device);
  const cq = ctx.createCq({ cqe: 2 * config.depth });
  const receiver = config.role === 'receiver';
  const srq = receiver ? pd.createSrq({ maxWr: config.depth, maxSge: 1 }) : undefined;
  const qp = pd.createQp({ sendCq: cq, recvCq: cq, maxSendWr: 256, maxRecvWr: 1, srq });
  const mr = pd.allocMr(config.size, ['LOCAL_WRITE']);
  const psn = receiver ? 0x3c2b1a : 0x1a2b3c;
  const self: PeerQp = { qpNum: qp.qpNum, psn, gid: gid.gid };
  port.once('message', (start: { peer: PeerQp }) => {
    connectToPeer(qp, start.peer, psn, gid.index);
    const recv = srq && prepareRecvRefill(srq, cq, { sgList: [mr.sge()] });
    recv?.post(config.depth);
    const send = receiver ? undefined : qp.prepareRoundTrip({ opcode: 'SEND', sgList: [mr.sge()] });
    const stream = { window: 128, batch: config.batch };
    const onRun = (run: SrqSideRun | 'end') => {
      if (run === 'end') {
        port.off('message', onRun);
        recv?.release();
        send?.release();
        // The context's close closes its QP, SRQ, MR, CQ and PD first (the cascade).
        ctx.close();
        return;
      }
      let result: SrqSideResult = { mpps: undefined };
      if (recv !== undefined) {
        // Every receive is reposted (the SRQ stays at its depth across runs); a failed
        // receive throws (VerbsCompletionError).
        recv.repostUntil(run.streams * config.count, { batch: REFILL, spinLimit: SPIN_LIMIT });
      } else if (send !== undefined) {
        for (let s = 0; s < run.streams; s++) send.repeat(config.count, stream);
        const seconds = (send.completedAt - send.postedAt) / 1e6;
        result = { mpps: config.count / seconds / 1e6 };
      }
      port.postMessage(result);
    };
    port.on('message', onRun);
    port.postMessage('ready');
  });
  port.postMessage(self);
}

side(workerData as SrqSideConfig);
