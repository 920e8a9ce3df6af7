/**
 * The Send/Receive ping-pong figures of `bench verbs` (issue 34): the wrapper's
 * ping-pong (rc-pingpong/peer.ts) as the client of rdma-core's `ibv_rc_pingpong`, against
 * `ibv_rc_pingpong` with itself (busy poll; `-e` for the event form), 64 B and 4 KiB, in
 * two forms: a prepared exchange (src/verbs/exchange.ts: one native call per step,
 * `run()` or `await runAsync()`), which carries the target (at most 1.5x the C pair), and
 * the loop as the verbs are first taught (`postRecv` per message received, `postSend` per
 * message, `pollUntil` or `await cq.next()`), printed beside it without one. Each figure
 * is the client's usec/iter (one exchange: a message each way); both forms and the C pair
 * are measured back to back in alternating rounds (rounds.ts).
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
      for (const form of ['exchange', 'everyday'] as const)
        await nodeWithC(
          { device: DEVICE, ...c, form, iters: Math.min(c.iters, 1000), port: port++ },
          gid,
        );
}

/** The columns of a round: the C pair's usec/iter and the everyday loop's. */
const C_PAIR = 'usec/iter';
const EVERYDAY = 'everyday';

/** One round of every case: ours then the C pair (or the other way round). */
export async function sendRecvRound(round: number, anchorFirst: boolean): Promise<Round<number>[]> {
  const gid = roceGidIndex(DEVICE);
  const out: Round<number>[] = [];
  let port = BASE_PORT + 20 * round;
  for (const c of SEND_RECV_CASES) {
    const k: PingPongCase = { device: DEVICE, ...c, form: 'exchange', port };
    port += 3;
    out.push(
      await pair(
        anchorFirst,
        () => nodeWithC(k, gid),
        async () => {
          // The everyday loop rides with the anchor, on the other side of ours.
          const everyday = await nodeWithC({ ...k, form: 'everyday', port: k.port + 2 }, gid);
          return new Map([
            [C_PAIR, await cWithC({ ...k, port: k.port + 1 }, gid)],
            [EVERYDAY, everyday],
          ]);
        },
        (ours, cols) => ours / (cols.get(C_PAIR) ?? Number.NaN),
      ),
    );
  }
  return out;
}

/** The figures from every round's results (`rounds[r][case]`). */
export function sendRecvFigures(rounds: readonly Round<number>[][], suite: string): Figure[] {
  return SEND_RECV_CASES.flatMap((c, i) => {
    const perCase = rounds.map((r) => r[i] as Round<number>);
    const mid = medianRound(perCase);
    const events = c.mode === 'events';
    const anchorName = events ? 'ibv_rc_pingpong -e pair' : 'ibv_rc_pingpong pair';
    // The everyday loop's rounds, keyed by its own ratio to the same anchor runs.
    const everyday = perCase.map((r) => {
      const us = r.cols.get(EVERYDAY) ?? Number.NaN;
      return { ours: us, cols: r.cols, ratio: us / (r.cols.get(C_PAIR) ?? Number.NaN) };
    });
    const midEveryday = medianRound(everyday);
    return [
      figure({
        suite,
        name: `Send/Receive ping-pong ${c.size} B, prepared exchange ${events ? 'await runAsync()' : 'run()'}, client of ibv_rc_pingpong (us per exchange)`,
        unit: 'us',
        value: mid.ours,
        anchorName,
        anchor: mid.cols.get(C_PAIR) ?? Number.NaN,
        rounds: perCase.length,
        ratioSpread: spreadOf(perCase),
        target: { op: '<=', ratio: 1.5 },
      }),
      figure({
        suite,
        name: `Send/Receive ping-pong ${c.size} B, ${events ? 'postSend + await cq.next()' : 'postSend + pollUntil'}, postRecv per message, client of ibv_rc_pingpong (us per exchange)`,
        unit: 'us',
        value: midEveryday.ours,
        anchorName,
        anchor: midEveryday.cols.get(C_PAIR) ?? Number.NaN,
        rounds: perCase.length,
        ratioSpread: spreadOf(everyday),
      }),
    ];
  });
}
