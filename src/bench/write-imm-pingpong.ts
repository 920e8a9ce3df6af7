/**
 * The write-with-immediate ping-pong with one side per thread, as `ib_write_lat` runs one
 * side per process: each side in its own worker (write-imm-side.ts) with its own context,
 * QP and CQ, busy-polling on its own CPU, so one side's post overlaps the other's polling
 * exactly as perftest's two processes do. Its loop per side is the user loop of issue 13,
 * `run()`: post a write-with-immediate, wait for the peer's. The sides are opened once
 * and measured every round (as the SRQ rate's, srq-rate.ts); each measurement resolves
 * with the initiator's post stamps (us): consecutive differences are round trips.
 */
import { openSidePair } from './two-threads.js';
import type { SideConfig, SideResult, SideRun } from './write-imm-side.js';

const SIDE_SCRIPT = new URL('./write-imm-side.js', import.meta.url);
/** Set-up, or a few thousand round trips, under TCG. */
const LIMIT_MS = 120_000;

/** Both sides, connected: measure as often as wanted, then close. */
export interface PingPongSides {
  /** `count` round trips: the initiator's post stamps (us). */
  measure(count: number): Promise<Float64Array>;
  close(): Promise<void>;
}

export async function openWriteImmPingPong(device: string): Promise<PingPongSides> {
  const config = (initiator: boolean): SideConfig => ({ device, initiator });
  const pair = await openSidePair<SideRun, SideResult>(
    SIDE_SCRIPT,
    [config(true), config(false)],
    LIMIT_MS,
    'the ping-pong',
  );
  return {
    async measure(count: number): Promise<Float64Array> {
      const [result] = await pair.run({ count });
      if (result.stamps === undefined) throw new Error('the initiator sent no stamps');
      return result.stamps;
    },
    close: () => pair.close(),
  };
}
