/**
 * The write-with-immediate ping-pong, in one thread and a thread per side.
 */
import type { Mr } from '../../verbs/index.js';
import { column, implausibleLatency } from '../perftest-plausibility.js';
import { watchedStep } from '../stall/stall-watch.js';
import type { PingPongSides } from '../write-imm-pingpong.js';
import { anchor } from './anchor.js';
import { ITERATIONS, type Latency, latencyOf, type Pair, samplesOf, WARMUP } from './loopback.js';
import { pair, type Round } from './rounds.js';

/**
 * Write-with-immediate ping-pong through round trips (each `run()` ends at the peer's
 * receive), half round trip in microseconds. Receives are posted ahead in lists of 100
 * (one call each, in 1% of the iterations: it shows in p99, not in the median).
 */
export function writeImmLatency(p: Pair): Latency {
  const bufA = p.pd.allocMr(8, ['LOCAL_WRITE', 'REMOTE_WRITE']);
  const bufB = p.pd.allocMr(8, ['LOCAL_WRITE', 'REMOTE_WRITE']);
  const wr = (src: Mr, dst: Mr) => ({
    opcode: 'RDMA_WRITE_WITH_IMM' as const,
    sgList: [src.sge()],
    remote: dst.remote(),
    immData: 7306,
  });
  const ping = p.a.prepareRoundTrip(wr(bufA, bufB), { untilReceiveOn: p.b });
  const pong = p.b.prepareRoundTrip(wr(bufB, bufA), { untilReceiveOn: p.a });
  const recvs = Array.from({ length: 100 }, () => ({ sgList: [] }));
  const stamps = new Float64Array(ITERATIONS + WARMUP + 1);
  for (let i = 0; i < stamps.length; i++) {
    if (i % 100 === 0) {
      p.b.postRecv(recvs);
      p.a.postRecv(recvs);
    }
    ping.run();
    stamps[i] = ping.postedAt / 1000;
    pong.run();
  }
  ping.release();
  pong.release();
  bufA.close();
  bufB.close();
  return latencyOf(samplesOf(stamps, 0.5));
}

/**
 * The same ping-pong with one side per worker thread (write-imm-pingpong.ts), as
 * `ib_write_lat` runs one side per process: half round trip in microseconds, from the
 * initiator's post stamps. The targeted figure: like for like with its anchor.
 */
export async function writeImmLatencyThreads(sides: PingPongSides): Promise<Latency> {
  const stamps = await sides.measure(ITERATIONS + WARMUP + 1);
  return latencyOf(
    samplesOf(
      stamps.map((us) => us / 1000),
      0.5,
    ),
  );
}

/**
 * One round of the write-with-immediate figure: the threaded ping-pong against
 * `ib_write_lat` on `port`, in the order `anchorFirst` says, the ratio of the typical times.
 */
export function writeImmRound(
  sides: PingPongSides,
  anchorFirst: boolean,
  port: number,
): Promise<Round<Latency>> {
  return pair(
    anchorFirst,
    () =>
      watchedStep('write-with-imm ping-pong, a thread per side', 120_000, () =>
        writeImmLatencyThreads(sides),
      ),
    () => anchor('ib_write_lat', ['-n', String(ITERATIONS)], port, implausibleLatency),
    (w, cols) => w.median / column(cols, 't_typical'),
  );
}
