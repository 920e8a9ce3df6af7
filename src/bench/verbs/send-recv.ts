/**
 * The Send/Receive ping-pong figures of `bench verbs` (issue 34): the wrapper's
 * ping-pong as a new user writes it (rc-pingpong/peer.ts: `postRecv` per message received,
 * `postSend` per message, `pollUntil` or `await cq.next()`) as the client of rdma-core's
 * `ibv_rc_pingpong`, against `ibv_rc_pingpong` with itself (busy poll; `-e` for the event
 * form), 64 B and 4 KiB. Each figure is the client's usec/iter (one exchange: a message each
 * way), ours and the C pair measured back to back in alternating rounds (rounds.ts).
 */

import { cWithC, nodeWithC, type PingPongCase, roceGidIndex } from '../rc-pingpong/measure.js';
import type { WaitMode } from '../rc-pingpong/peer.js';
import { type Figure, figure } from '../report.js';
import { DEVICE } from './loopback.js';
import { medianRound, pair, type Round, spreadOf } from './rounds.js';

/** One figure's case: message size, wait form and iterations (TCG: under a second each). */
interface SendRecvCase {
  readonly size: number;
  readonly mode: WaitMode;
  readonly iters: number;
}

export const SEND_RECV_CASES: readonly SendRecvCase[] = [
  { size: 64, mode: 'poll', iters: 2000 },
  { size: 4096, mode: 'poll', iters: 1000 },
  { size: 64, mode: 'events', iters: 500 },
  { size: 4096, mode: 'events', iters: 500 },
];

/** The first port of the figures' exchanges (perftest's anchors use 18515 and up). */
const BASE_PORT = 21000;

/** Runs the JIT in: the wrapper's loop run against the C example before any round. */
export async function warmSendRecv(runs: number): Promise<void> {
  const gid = roceGidIndex(DEVICE);
  let port = BASE_PORT - 100;
  for (let i = 0; i < runs; i++)
    for (const c of SEND_RECV_CASES)
      await nodeWithC({ device: DEVICE, ...c, iters: Math.min(c.iters, 1000), port: port++ }, gid);
}

/** One round of every case: ours then the C pair (or the other way round). */
export async function sendRecvRound(round: number, anchorFirst: boolean): Promise<Round<number>[]> {
  const gid = roceGidIndex(DEVICE);
  const out: Round<number>[] = [];
  let port = BASE_PORT + 20 * round;
  for (const c of SEND_RECV_CASES) {
    const k: PingPongCase = { device: DEVICE, ...c, port };
    port += 2;
    out.push(
      await pair(
        anchorFirst,
        () => nodeWithC(k, gid),
        async () => new Map([['usec/iter', await cWithC({ ...k, port: k.port + 1 }, gid)]]),
        (ours, cols) => ours / (cols.get('usec/iter') ?? Number.NaN),
      ),
    );
  }
  return out;
}

/** The figures from every round's results (`rounds[r][case]`). */
export function sendRecvFigures(rounds: readonly Round<number>[][], suite: string): Figure[] {
  return SEND_RECV_CASES.map((c, i) => {
    const perCase = rounds.map((r) => r[i] as Round<number>);
    const mid = medianRound(perCase);
    const events = c.mode === 'events';
    return figure({
      suite,
      name: `Send/Receive ping-pong ${c.size} B, ${events ? 'postSend + await cq.next()' : 'postSend + pollUntil'}, postRecv per message, client of ibv_rc_pingpong (us per exchange)`,
      unit: 'us',
      value: mid.ours,
      anchorName: events ? 'ibv_rc_pingpong -e pair' : 'ibv_rc_pingpong pair',
      anchor: mid.cols.get('usec/iter') ?? Number.NaN,
      rounds: perCase.length,
      ratioSpread: spreadOf(perCase),
      target: { op: '<=', ratio: 1.5 },
    });
  });
}
