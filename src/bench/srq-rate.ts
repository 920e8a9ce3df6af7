/**
 * The SRQ receive rate with one side per thread, as `ib_send_bw --use-srq` runs one side
 * per process: the receiver (an SRQ kept full with `PreparedRecv.post`, its completions
 * counted with `pollUntilCount`) and the sender (a `repeat` stream) each in its own worker
 * (srq-rate-side.ts), with its own context, busy-polling on its own CPU, so the
 * receiver's polling and reposting overlap the sender's posts as perftest's server's do
 * its client's. Resolves with the sender's message rate (Mpps), as perftest's client
 * reports it.
 */
import type { SrqSideConfig, SrqSideResult } from './srq-rate-side.js';
import { exchangeAndGo, startSide, withSides } from './two-threads.js';

const SIDE_SCRIPT = new URL('./srq-rate-side.js', import.meta.url);
/** Set-up and a few thousand messages take seconds under TCG. */
const LIMIT_MS = 120_000;

export async function srqRateThreads(
  device: string,
  run: Omit<SrqSideConfig, 'device' | 'role'>,
): Promise<number> {
  const config = (role: SrqSideConfig['role']): SrqSideConfig => ({ device, role, ...run });
  const receiver = startSide(SIDE_SCRIPT, config('receiver'));
  const sender = startSide(SIDE_SCRIPT, config('sender'));
  return withSides([receiver, sender], LIMIT_MS, 'the SRQ rate', async () => {
    const [, sent] = await exchangeAndGo<SrqSideResult>(receiver, sender);
    if (sent.mpps === undefined) throw new Error('the sender sent no rate');
    return sent.mpps;
  });
}
