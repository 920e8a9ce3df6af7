/**
 * The SRQ receive rate with both sides in one thread (srq-rate.ts runs a thread per side).
 */
import { connectPairByHand } from '../../verbs/index.js';
import type { Pair } from './loopback.js';

/**
 * Messages of each SRQ rate measurement and of its anchor (`ib_send_bw -n`): 10000, not
 * the 3200 of the FetchAdd rate. One stream of 3200 Sends lasts about 64 ms in the guest,
 * and a single stall of a vCPU on the shared 2-core host (several ms) moved a round's
 * ratio by a third either way (2026-11-29: rounds 0.52-1.77 in one run); a longer stream,
 * on both sides, averages such stalls.
 */
export const SRQ_COUNT = 10_000;

/** Receives reposted per refill and Sends per stream in the SRQ rate. */
const SRQ_CHUNK = 128;
/** The SRQ's depth: perftest's default rx-depth with --use-srq (posted before the clock). */
export const SRQ_DEPTH = 512;
/** The message of the SRQ rate (ib_send_bw -s 8). */
export const SRQ_MESSAGE = 8;
/**
 * Sends per doorbell in the SRQ rate, ours and the anchor's (`ib_send_bw -l`, its
 * post_list): perftest rings one doorbell per Send by default, which measured in the
 * guest (2026-11-28, two runs each) 1.2-1.35x slower than lists of 16 (0.022 / 0.030 and
 * 0.041 / 0.050 Mpps); a sender batching where its anchor does not would be measured
 * against a slower sender. With `-l`, perftest also asks one completion per list
 * (perftest_parameters.c sets cq_mod to post_list), as `repeat` asks one per chain.
 */
export const SRQ_DOORBELL = 16;

/** ib_send_bw's arguments for the same stream (the SRQ receive rate's anchor). */
export const SRQ_ANCHOR_ARGS: readonly string[] = [
  '--use-srq',
  '-s',
  String(SRQ_MESSAGE),
  '-n',
  String(SRQ_COUNT),
  '-l',
  String(SRQ_DOORBELL),
];

/**
 * Streams of SRQ_COUNT Sends per measurement of the threaded SRQ rate, the last one
 * measured: the sides live across the rounds (srq-rate.ts), so only the first round warms
 * up V8 in them. Measured in the guest (2026-11-29, one boot, load 1.2-3.5): with the
 * measured stream second, the sender made 0.012-0.038 Mpps and the SRQ ran empty (1-8
 * RNR NAKs per run) while V8's background compiler took 0.84 s of the guest's two CPUs;
 * with it seventh (19200 Sends before it), 0.054-0.056 Mpps, as fast as with a receiver
 * that does not poll at all. Streams are SRQ_COUNT long: three before the measured one.
 */
export const SRQ_FIRST_STREAMS = 4;
export const SRQ_STREAMS = 2;

/** How the SRQ rate's receiver (re)posts: copies of a prepared receive, or postRecv lists. */
export type SrqRefill = 'prepared' | 'lists';

/**
 * Receive message rate through a shared receive queue, in Mpps, as `ib_send_bw --use-srq`
 * runs it: the SRQ filled to SRQ_DEPTH before the clock starts (perftest's server posts
 * its rx-depth before the run), then SRQ_COUNT 8-byte Sends from one QP to a QP that
 * receives through the SRQ, in streams of SRQ_CHUNK (`RoundTrip.repeat`, window 128,
 * SRQ_DOORBELL per doorbell), each followed by `pollUntilCount` of its receive
 * completions (counted and retired on the SRQ) and the refill of what they consumed, up to SRQ_COUNT
 * receives in all (perftest reposts each completed receive while the run needs it).
 * `refill`: `srq.prepareRecv` copies (one call per refill) or `srq.postRecv` lists (every
 * receive checked and packed in JavaScript). The clock runs from the first Send to the last
 * receive completion polled. Both sides in one thread, printed without a target beside the
 * targeted form (srq-rate.ts: a thread per side, as perftest's server and client are two
 * processes whose polling and reposting overlap the other's posts).
 */
export function srqReceiveRate(p: Pair, refill: SrqRefill): number {
  const gid = p.ctx.findGid({ type: 'RoCEv2' });
  const recvCq = p.ctx.createCq({ cqe: 2 * SRQ_DEPTH });
  const srq = p.pd.createSrq({ maxWr: SRQ_DEPTH, maxSge: 1 });
  const sender = p.pd.createQp({ sendCq: p.cq, maxSendWr: 256, maxRecvWr: 1 });
  const receiver = p.pd.createQp({ sendCq: p.cq, recvCq, srq });
  const src = p.pd.allocMr(SRQ_MESSAGE, ['LOCAL_WRITE']);
  const dst = p.pd.allocMr(SRQ_MESSAGE, ['LOCAL_WRITE']);
  try {
    connectPairByHand(sender, receiver, gid, { aPsn: 0x1a2b3c, bPsn: 0x3c2b1a });
    const send = sender.prepareRoundTrip({ opcode: 'SEND', sgList: [src.sge()] });
    const prepared = srq.prepareRecv({ sgList: [dst.sge()] });
    const recvs = Array.from({ length: SRQ_CHUNK }, () => ({ sgList: [dst.sge()] }));
    const post = (n: number): void => {
      if (refill === 'prepared') prepared.post(n);
      else srq.postRecv(n === SRQ_CHUNK ? recvs : recvs.slice(0, n));
    };
    for (let posted = 0; posted < SRQ_DEPTH; posted += SRQ_CHUNK) post(SRQ_CHUNK);
    let posted = SRQ_DEPTH;
    let received = 0;
    const started = performance.now();
    while (received < SRQ_COUNT) {
      const n = Math.min(SRQ_CHUNK, SRQ_COUNT - received);
      send.repeat(n, { window: 128, batch: SRQ_DOORBELL });
      recvCq.pollUntilCount(n); // a failed receive throws VerbsCompletionError
      received += n;
      const more = Math.min(n, SRQ_COUNT - posted);
      if (more > 0) {
        post(more);
        posted += more;
      }
    }
    const seconds = (performance.now() - started) / 1e3;
    send.release();
    prepared.release();
    if (srq.inFlight !== 0) throw new Error(`SRQ rate: ${srq.inFlight} receives left`);
    return SRQ_COUNT / seconds / 1e6;
  } finally {
    receiver.close();
    sender.close();
    srq.close();
    recvCq.close();
    src.close();
    dst.close();
  }
}
