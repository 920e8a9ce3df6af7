/**
 * The SRQ receive rate with one side per thread, as `ib_send_bw --use-srq` runs one side
 * per process: the receiver (an SRQ kept full with `PreparedRecv.post`, its completions
 * counted with `pollUntilCount`) and the sender (`repeat` streams) each in its own worker
 * (srq-rate-side.ts), with its own context, busy-polling on its own CPU, so the
 * receiver's polling and reposting overlap the sender's posts as perftest's server's do
 * its client's. The sides are opened once and measured every round: each measurement
 * resolves with the sender's message rate (Mpps), as perftest's client reports it.
 */
import type { Worker } from 'node:worker_threads';
import type { SrqSideConfig, SrqSideResult, SrqSideRun } from './srq-rate-side.js';
import { connectSides, endSides, goSides, startSide, withLimit } from './two-threads.js';

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
  const sides: [Worker, Worker] = [
    startSide(SIDE_SCRIPT, config('receiver')),
    startSide(SIDE_SCRIPT, config('sender')),
  ];
  const [receiver, sender] = sides;
  try {
    await withLimit(connectSides(receiver, sender), LIMIT_MS, 'the SRQ rate set-up');
  } catch (e) {
    await endSides(sides, false);
    throw e;
  }
  let failed = false;
  return {
    async measure(streams: number): Promise<number> {
      try {
        const go: SrqSideRun = { streams };
        const [, sent] = await withLimit(
          goSides<SrqSideResult>(receiver, sender, go),
          LIMIT_MS,
          'the SRQ rate',
        );
        if (sent.mpps === undefined) throw new Error('the sender sent no rate');
        return sent.mpps;
      } catch (e) {
        failed = true;
        throw e;
      }
    },
    async close(): Promise<void> {
      if (!failed) for (const side of sides) side.postMessage('end');
      await endSides(sides, !failed);
    },
  };
}
