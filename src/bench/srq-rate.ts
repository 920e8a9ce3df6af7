/**
 * The SRQ receive rate with one side per thread, as `ib_send_bw --use-srq` runs one side
 * per process: the receiver (an SRQ kept full by a `RecvRefill`: completions taken and
 * receives reposted in one native call per run) and the sender (`repeat` streams) each in its own worker
 * (srq-rate-side.ts), with its own context, busy-polling on its own CPU, so the
 * receiver's polling and reposting overlap the sender's posts as perftest's server's do
 * its client's. The sides are opened once and measured every round: each measurement
 * resolves with the sender's message rate (Mpps), as perftest's client reports it.
 */
import type { SrqSideConfig, SrqSideResult, SrqSideRun } from './srq-rate-side.js';
import { openSidePair } from './two-threads.js';

const SIDE_SCRIPT = new URL('./srq-rate-side.js', import.meta.url);
/** Set-up, or one measurement with its warm-up streams, under TCG. */
const LIMIT_MS = 120_000;

/** Both sides, connected: measure as often as wanted, then close. */
export interface SrqRateSides {
  /** Runs `streams` streams, the last measured: the sender's rate (Mpps). */
  measure(streams: number): Promise<number>;
  close(): Promise<void>;
}

export async function openSrqRateSides(
  device: string,
  run: Omit<SrqSideConfig, 'device' | 'role'>,
): Promise<SrqRateSides> {
  const config = (role: SrqSideConfig['role']): SrqSideConfig => ({ device, role, ...run });
  const pair = await openSidePair<SrqSideRun, SrqSideResult>(
    SIDE_SCRIPT,
    [config('receiver'), config('sender')],
    LIMIT_MS,
    'the SRQ rate',
  );
  return {
    async measure(streams: number): Promise<number> {
      const [, sent] = await pair.run({ streams });
      if (sent.mpps === undefined) throw new Error('the sender sent no rate');
      return sent.mpps;
    },
    close: () => pair.close(),
  };
}
