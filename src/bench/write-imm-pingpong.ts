/**
 * The write-with-immediate ping-pong with one side per thread, as `ib_write_lat` runs one
 * side per process: each side in its own worker (write-imm-side.ts) with its own context,
 * QP and CQ, busy-polling on its own CPU, so one side's post overlaps the other's polling
 * exactly as perftest's two processes do. Its loop per side is the user loop of issue 13,
 * `run()`: post a write-with-immediate, wait for the peer's. Resolves with the initiator's
 * post stamps (us): consecutive differences are round trips.
 */
import { exchangeAndGo, startSide, withSides } from './two-threads.js';
import type { SideConfig, SideResult } from './write-imm-side.js';

const SIDE_SCRIPT = new URL('./write-imm-side.js', import.meta.url);
/** The whole ping-pong: set-up and a few thousand round trips take seconds under TCG. */
const LIMIT_MS = 120_000;

export async function writeImmPingPong(device: string, count: number): Promise<Float64Array> {
  const config = (initiator: boolean): SideConfig => ({ device, initiator, count });
  const initiator = startSide(SIDE_SCRIPT, config(true));
  const answerer = startSide(SIDE_SCRIPT, config(false));
  return withSides([initiator, answerer], LIMIT_MS, 'the ping-pong', async () => {
    const [result] = await exchangeAndGo<SideResult>(initiator, answerer);
    if (result.stamps === undefined) throw new Error('the initiator sent no stamps');
    return result.stamps;
  });
}
