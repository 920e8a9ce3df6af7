/**
 * The FetchAdd figures: latency through the general path, event-driven and through a round
 * trip, the message rate through `RoundTrip.repeat`, and the same general loop in pyverbs.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { Mr, SendWr } from '../../verbs/index.js';
import { watchedStep } from '../stall/stall-watch.js';
import { rawOutputs } from './anchor.js';
import {
  DEVICE,
  ITERATIONS,
  type Latency,
  latencyOf,
  type Pair,
  samplesOf,
  WARMUP,
} from './loopback.js';

const ORIGINAL = 0x0123456789abcdefn;

/**
 * The FetchAdd(+1) every figure here posts: the target word, the MR its fetched value
 * lands in, and the request between them.
 */
function fetchAddOne(p: Pair): { target: Mr; old: Mr; wr: SendWr } {
  const target = p.pd.allocMr(8, ['LOCAL_WRITE', 'REMOTE_ATOMIC']);
  const old = p.pd.allocMr(8, ['LOCAL_WRITE']);
  const wr = {
    opcode: 'ATOMIC_FETCH_AND_ADD' as const,
    sgList: [old.sge()],
    remote: target.remote(),
    add: 1n,
  };
  return { target, old, wr };
}

/**
 * The latency of a postSend loop from its stamps, once its last fetched value shows that
 * every FetchAdd(+1) landed; frees the loop's MRs.
 */
function loopLatency(stamps: Float64Array, fetched: bigint, target: Mr, old: Mr): Latency {
  if (fetched !== BigInt(stamps.length - 1)) throw new Error(`FetchAdd fetched ${fetched}`);
  target.close();
  old.close();
  return latencyOf(samplesOf(stamps));
}

/**
 * How a loop's iterations are timed: by the post's own stamp (`qp.lastPostedAt`, the TSC
 * read just before the doorbell, as perftest stamps its posts with rdtsc and a round
 * trip's `postedAt`), or by a clock read per iteration (`performance.now()`, as the
 * pyverbs loop reads `time.perf_counter_ns()`): a system call in the TCG guest, 2-30 us
 * with the host's load, which perftest does not pay.
 */
export type Stamp = 'post' | 'clock';

/**
 * FetchAdd latency through the general path, as the docs' first example does it:
 * `postSend`, busy-poll (`pollUntil`), read the fetched value from the MR.
 */
export function fetchAddLatencyGeneral(p: Pair, stamp: Stamp): Latency {
  const { target, old, wr } = fetchAddOne(p);
  const stamps = new Float64Array(ITERATIONS + WARMUP + 1);
  let fetched = 0n;
  for (let i = 0; i < stamps.length; i++) {
    if (stamp === 'clock') stamps[i] = performance.now();
    p.a.postSend(wr);
    if (stamp === 'post') stamps[i] = p.a.lastPostedAt / 1000; // ms, as performance.now()
    p.cq.pollUntil(1);
    fetched = old.buffer.readBigUInt64LE();
  }
  return loopLatency(stamps, fetched, target, old);
}

/**
 * FetchAdd latency event-driven, as a user of promises writes it: `postSend`, then
 * `await cq.next()` (the completion channel on the libuv loop), read the fetched value.
 */
export async function fetchAddLatencyEvents(p: Pair): Promise<Latency> {
  const { target, old, wr } = fetchAddOne(p);
  const stamps = new Float64Array(ITERATIONS + WARMUP + 1);
  let fetched = 0n;
  for (let i = 0; i < stamps.length; i++) {
    p.a.postSend(wr);
    stamps[i] = p.a.lastPostedAt / 1000; // at the post, as perftest -e stamps its posts
    const wc = await p.cq.next({ timeoutMs: 10_000 });
    if (!wc.ok) throw new Error(`FetchAdd completed with ${wc.status}`);
    fetched = old.buffer.readBigUInt64LE();
  }
  return loopLatency(stamps, fetched, target, old);
}

/** FetchAdd latency through the fast path: `run()` then `fetched`, one native call. */
export function fetchAddLatencyRoundTrip(p: Pair): Latency {
  const { target, old, wr } = fetchAddOne(p);
  target.buffer.writeBigUInt64LE(ORIGINAL);
  const fa = p.a.prepareRoundTrip(wr);
  const stamps = new Float64Array(ITERATIONS + WARMUP + 1);
  let fetched = 0n;
  for (let i = 0; i < stamps.length; i++) {
    fa.run();
    stamps[i] = fa.postedAt / 1000; // ms, as performance.now(); no timer call in the loop
    fetched = fa.fetched;
  }
  if (fetched !== ORIGINAL + BigInt(stamps.length - 1))
    throw new Error(`FetchAdd round trip fetched ${fetched.toString(16)}`);
  fa.release();
  target.close();
  old.close();
  return latencyOf(samplesOf(stamps));
}

/** Requests in the rate stream (perftest's ib_atomic_bw runs -n 3200 in the same round). */
export const RATE_COUNT = 3200;

/**
 * FetchAdd message rate in Mpps through `RoundTrip.repeat`: the request posted RATE_COUNT
 * times in one native call, 128 outstanding at most (perftest's tx-depth), 16 per doorbell
 * with one signaled completion each (perftest: one per call, one completion per cq-mod 100).
 */
export function fetchAddRate(p: Pair): number {
  const { target, old, wr } = fetchAddOne(p);
  const fa = p.a.prepareRoundTrip(wr);
  fa.repeat(RATE_COUNT, { window: 128, batch: 16 });
  const seconds = (fa.completedAt - fa.postedAt) / 1e6;
  const total = target.buffer.readBigUInt64LE();
  fa.release();
  target.close();
  old.close();
  if (total !== BigInt(RATE_COUNT)) throw new Error(`FetchAdd rate: the target holds ${total}`);
  return RATE_COUNT / seconds / 1e6;
}

const PYVERBS_SCRIPT = fileURLToPath(
  new URL('../../../scripts/bench/pyverbs_fetch_add.py', import.meta.url),
);

/** The same FetchAdd loop in pyverbs (python3-pyverbs), or undefined when absent. */
export function pyverbsFetchAdd(): Promise<(Latency & { error?: string }) | undefined> {
  // Bounded by spawnSync's own timeout; the step names it as it runs.
  return watchedStep('pyverbs FetchAdd loop', 310_000, pyverbsRun);
}

function pyverbsRun(): (Latency & { error?: string }) | undefined {
  const r = spawnSync('/usr/bin/python3', [PYVERBS_SCRIPT, DEVICE, String(ITERATIONS)], {
    encoding: 'utf8',
    timeout: 300_000,
  });
  if (r.status !== 0) {
    rawOutputs.push(`pyverbs (exit ${r.status}):\n${r.stdout}${r.stderr}`);
    return undefined;
  }
  const out = JSON.parse(r.stdout.trim().split('\n').pop() ?? '{}') as {
    median_us?: number;
    p99_us?: number;
  };
  return { median: out.median_us ?? Number.NaN, p99: out.p99_us ?? Number.NaN };
}
