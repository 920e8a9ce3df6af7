/**
 * The loopback pair on rxe0 every verbs figure runs on, and how a latency is taken from
 * per-iteration stamps (as perftest takes them).
 */
import {
  type Context,
  type Cq,
  connectPairByHand,
  openDevice,
  type Pd,
  type Qp,
} from '../../verbs/index.js';
import { percentile } from '../report.js';

export const DEVICE = 'rxe0';
export const ITERATIONS = 1000;

export interface Pair {
  readonly ctx: Context;
  readonly pd: Pd;
  readonly cq: Cq;
  readonly a: Qp;
  readonly b: Qp;
  close(): void;
}

export function loopback(): Pair {
  const ctx = openDevice(DEVICE);
  const gid = ctx.findGid({ type: 'RoCEv2' });
  const pd = ctx.allocPd();
  // With a channel for the event-driven loop; the busy-polling loops never arm it.
  const cq = ctx.createCq({ cqe: 1024, channel: true });
  const opts = { sendCq: cq, maxSendWr: 256, maxRecvWr: 256 };
  const a = pd.createQp(opts);
  const b = pd.createQp(opts);
  // Outstanding atomics at the device's maximum, as perftest sets them (its out_reads).
  const attr = ctx.queryDevice();
  const rd = Math.min(255, attr.maxQpRdAtom, attr.maxQpInitRdAtom);
  connectPairByHand(a, b, gid, { aPsn: 1, bPsn: 2, maxRdAtomic: rd, maxDestRdAtomic: rd });
  return {
    ctx,
    pd,
    cq,
    a,
    b,
    close() {
      a.close();
      b.close();
      cq.close();
      pd.close();
      ctx.close();
    },
  };
}

/**
 * Iterations run before the measured ones: V8 compiles a hot loop only after some
 * thousand calls, and under TCG the interpreter's iterations are several times slower.
 */
export const WARMUP = 1000;

/** Per-iteration samples (us) from one clock read per iteration, as perftest takes them. */
export function samplesOf(stamps: Float64Array, scale = 1): number[] {
  const out: number[] = [];
  for (let i = WARMUP; i + 1 < stamps.length; i++)
    out.push(((stamps[i + 1] ?? 0) - (stamps[i] ?? 0)) * 1000 * scale);
  return out;
}

export interface Latency {
  readonly median: number;
  readonly p99: number;
}

export function latencyOf(samples: number[]): Latency {
  return { median: percentile(samples, 50), p99: percentile(samples, 99) };
}
