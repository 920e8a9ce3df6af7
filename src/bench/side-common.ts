/**
 * What the worker-thread sides of the benchmarks share (write-imm-side.ts,
 * srq-rate-side.ts): their port to the main thread, the spin limit of their polls, and
 * the RC connection to the peer's QP from what the peer told.
 */
import { parentPort } from 'node:worker_threads';
import { connectRcByHand, openDevice, type Qp } from '../verbs/index.js';

/** The most empty polls `Cq.pollUntil` takes (u32 max): the driver's time limit ends a hang. */
export const SPIN_LIMIT = 0xffffffff;

/** What a side tells its peer about its QP (through the main thread). */
export interface PeerQp {
  readonly qpNum: number;
  readonly psn: number;
  readonly gid: Uint8Array;
}

/**
 * A side's start: its port to the main thread (`script` names it when run elsewhere), its
 * own context on `device`, the RoCEv2 GID and a PD.
 */
export function openSide(script: string, device: string) {
  if (parentPort === null) throw new Error(`${script} runs in a worker thread`);
  const ctx = openDevice(device);
  return { port: parentPort, ctx, gid: ctx.findGid({ type: 'RoCEv2' }), pd: ctx.allocPd() };
}

/** Connects `qp` (RC, by hand) to the peer's QP. */
export function connectToPeer(qp: Qp, peer: PeerQp, localPsn: number, sgidIndex: number): void {
  connectRcByHand(qp, {
    remote: { qpNum: peer.qpNum, psn: peer.psn, gid: Buffer.from(peer.gid) },
    localPsn,
    sgidIndex,
  });
}
