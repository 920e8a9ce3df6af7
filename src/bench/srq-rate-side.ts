/**
 * One side of the two-thread SRQ receive rate (srq-rate.ts), run in a worker thread with
 * its own device context, as each `ib_send_bw --use-srq` side is its own process:
 *
 * - the receiver: a QP that receives through an SRQ of depth `depth`, filled before the
 *   run (perftest's server posts its rx-depth first), then `pollUntilCount` of the receive
 *   completions (counted and retired, no completion objects) in batches of REFILL and the refill of what each batch consumed with one
 *   `PreparedRecv.post` (perftest's server reposts each completed receive);
 * - the sender: `count` 8-byte Sends as one `RoundTrip.repeat` stream (window 128, `batch` per
 *   doorbell; perftest's client: tx-depth 128, post_list `batch`), its rate from the stream's first post to
 *   its last completion (the addon's TSC stamps), as perftest's client reports MsgRate.
 *
 * A stream of `count` Sends before the measured one warms both sides up: V8 compiles a
 * loop only after some thousand iterations, and until then a receiver that refills in
 * interpreted JavaScript under TCG falls behind the sender, whose Sends then meet an empty
 * SRQ (RNR NAKs, each a retry timer: measured in the guest, 110 in three runs without it;
 * perftest's C needs no warm-up and had none).
 */
import { workerData } from 'node:worker_threads';
import { connectToPeer, openSide, type PeerQp, SPIN_LIMIT } from './side-common.js';

export interface SrqSideConfig {
  readonly device: string;
  readonly role: 'sender' | 'receiver';
  /** Messages in all. */
  readonly count: number;
  /** The SRQ's depth (receiver). */
  readonly depth: number;
  /** The message size in bytes. */
  readonly size: number;
  /** Sends per doorbell (sender; one signaled per doorbell), as perftest's post_list. */
  readonly batch: number;
}

/** The sender's rate (Mpps); the receiver sends none (a failed receive throws there). */
export interface SrqSideResult {
  readonly mpps: number | undefined;
}

/** Receive completions polled per batch, and reposted per refill. */
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
    const recv = srq?.prepareRecv({ sgList: [mr.sge()] });
    if (recv !== undefined) recv.post(config.depth);
    port.once('message', () => {
      let result: SrqSideResult;
      if (recv !== undefined) {
        // The warm-up stream's receives and the measured stream's.
        const total = 2 * config.count;
        let received = 0;
        let posted = config.depth;
        while (received < total) {
          const n = Math.min(REFILL, total - received);
          // Counted, not decoded: a failed receive throws (VerbsCompletionError).
          cq.pollUntilCount(n, SPIN_LIMIT);
          received += n;
          const more = Math.min(n, total - posted);
          if (more > 0) {
            recv.post(more);
            posted += more;
          }
        }
        recv.release();
        result = { mpps: undefined };
      } else {
        const send = qp.prepareRoundTrip({ opcode: 'SEND', sgList: [mr.sge()] });
        const stream = { window: 128, batch: config.batch };
        send.repeat(config.count, stream); // the warm-up
        send.repeat(config.count, stream);
        const seconds = (send.completedAt - send.postedAt) / 1e6;
        send.release();
        result = { mpps: config.count / seconds / 1e6 };
      }
      port.postMessage(result);
      // The context's close closes its QP, SRQ, MR, CQ and PD first (the cascade).
      ctx.close();
    });
    port.postMessage('ready');
  });
  port.postMessage(self);
}

side(workerData as SrqSideConfig);
