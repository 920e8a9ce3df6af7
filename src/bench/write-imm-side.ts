/**
 * One side of the two-thread write-with-immediate ping-pong (write-imm-pingpong.ts), run
 * in a worker thread: its own device context, QP and CQ, as each perftest process has its
 * own. The sides live for the whole benchmark (every round); each `{ count }` message runs
 * one ping-pong. The messages with the main thread are WireSide / SideStart / SideRun /
 * SideResult.
 */
import { workerData } from 'node:worker_threads';
import type { Cq, RemoteRef, WorkCompletion } from '../verbs/index.js';
import { connectToPeer, openSide, type PeerQp, SPIN_LIMIT } from './side-common.js';

/** What a side tells the main thread about itself, for its peer. */
export interface WireSide extends PeerQp {
  readonly target: RemoteRef;
}

/** The peer's side, from the main thread: connect, then wait for `go`. */
export interface SideStart {
  readonly peer: WireSide;
}

/** The initiator's post stamps (us); the other side sends none. */
export interface SideResult {
  readonly stamps: Float64Array | undefined;
}

export interface SideConfig {
  readonly device: string;
  /** The initiator posts first and stamps its posts; the other side answers. */
  readonly initiator: boolean;
}

/** What each run's message asks: `count` round trips (warm-up included). */
export interface SideRun {
  readonly count: number;
}

/** Receives posted ahead, and again every RECV_BATCH messages (one call each). */
const RECV_BATCH = 100;

/** Polls until a completion `wanted` arrives (the others before it are only retired). */
function pollUntilOne(cq: Cq, wanted: (wc: WorkCompletion) => boolean): void {
  for (;;) {
    const [wc] = cq.pollUntil(1, SPIN_LIMIT);
    if (wc !== undefined && wanted(wc)) return;
  }
}

function side(config: SideConfig): void {
  const { port, ctx, gid, pd } = openSide('write-imm-side', config.device);
  const cq = ctx.createCq({ cqe: 1024, channel: false });
  const qp = pd.createQp({ sendCq: cq, recvCq: cq, maxSendWr: 256, maxRecvWr: 256 });
  const mr = pd.allocMr(8, ['LOCAL_WRITE', 'REMOTE_WRITE']);
  const recvs = Array.from({ length: RECV_BATCH }, () => ({ sgList: [] }));
  const psn = config.initiator ? 1 : 2;
  const self: WireSide = { qpNum: qp.qpNum, psn, gid: gid.gid, target: mr.remote() };
  port.once('message', (start: SideStart) => {
    connectToPeer(qp, start.peer, psn, gid.index);
    qp.postRecv(recvs);
    qp.postRecv(recvs);
    // Each run() posts to the peer and waits for the peer's next write-with-immediate
    // (a receive on this QP): perftest's "wait for the peer's write, post" per side.
    const rt = qp.prepareRoundTrip(
      {
        opcode: 'RDMA_WRITE_WITH_IMM',
        sgList: [mr.sge()],
        remote: start.peer.target,
        immData: 7306,
      },
      { untilReceiveOn: qp },
    );
    // Receives consumed since the last repost (one per message this side receives).
    let consumed = 0;
    const onRun = (run: SideRun | 'end') => {
      if (run === 'end') {
        port.off('message', onRun);
        rt.release();
        // The context's close closes its QP, MR, CQ and PD first (the cascade).
        ctx.close();
        return;
      }
      const stamps = config.initiator ? new Float64Array(run.count) : undefined;
      // The initiator's first message; the other worker may still be starting (seconds
      // under TCG on a loaded host), so no spin limit short of the driver's own time limit.
      if (!config.initiator) {
        // (Past a completion of the round trip's own sends that came after its last run.)
        pollUntilOne(cq, (wc) => wc.opcode === 'RECV_RDMA_WITH_IMM');
        consumed++;
      }
      const runs = config.initiator ? run.count : run.count - 1;
      for (let i = 0; i < runs; i++) {
        if (consumed >= RECV_BATCH) {
          qp.postRecv(recvs);
          consumed -= RECV_BATCH;
        }
        rt.run();
        consumed++;
        if (stamps !== undefined) stamps[i] = rt.postedAt;
      }
      // The answer to the initiator's last message; nothing comes after it.
      if (!config.initiator) {
        const [answer] = qp.postSend({
          opcode: 'RDMA_WRITE_WITH_IMM',
          sgList: [mr.sge()],
          remote: start.peer.target,
          immData: 7306,
        });
        pollUntilOne(cq, (wc) => wc.wrId === answer);
      }
      const result: SideResult = { stamps };
      port.postMessage(result);
    };
    port.on('message', onRun);
    port.postMessage('ready');
  });
  port.postMessage(self);
}

side(workerData as SideConfig);
