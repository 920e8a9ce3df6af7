/**
 * rxe's port counters (`/sys/class/infiniband/<dev>/ports/1/hw_counters/`), read as the
 * device's own evidence of which timer a completion came in (issue 38: no judgement by
 * wall-clock time inside an emulated guest, where a loaded TCG host delays every timer).
 *
 * The counters and where rxe increments them (rxe_hw_counters.c names them; the same five
 * names are in the rdma_rxe.ko of the 6.1.0-57, 6.12.95 and 7.3.4 guest lines, and the
 * increments sit in the same places in rxe_comp.c from 5.x to the current tree):
 * - `rcvd_rnr_err` (RXE_CNT_RCV_RNR): the requester's completer got an RNR NAK
 *   (rxe_comp.c check_ack(), `case AETH_RNR_NAK`); with rnr_retry left it arms the RNR
 *   timer (rxe_completer() `case COMPST_RNR_RETRY`: mod_timer(&qp->rnr_nak_timer)).
 * - `retry_rnr_exceeded_err` (RXE_CNT_RNR_RETRY_EXCEEDED): an RNR NAK with no rnr_retry
 *   left (same case, else branch): the request completes RNR_RETRY_EXC_ERR, no timer ran.
 * - `completer_retry_err` (RXE_CNT_COMP_RETRY): the completer starts a retry with retry_cnt
 *   left (`case COMPST_ERROR_RETRY`), entered when the retransmit timer fired
 *   (retransmit_timer() -> comp.timeout -> COMPST_EXIT) or on a sequence NAK.
 * - `retry_exceeded_err` (RXE_CNT_RETRY_EXCEEDED): the same case with no retry_cnt left:
 *   RETRY_EXC_ERR.
 * - `rcvd_seq_err` (RXE_CNT_RCV_SEQ_ERR): a PSN sequence NAK (check_ack(),
 *   AETH_NAK_PSN_SEQ_ERROR), the other way into COMPST_ERROR_RETRY; subtracted.
 *
 * Measured in the 6.1.0-57 and 7.3.4 guests (the rnr scenarios, rxe-rnr-*): rnr_retry 0
 * moved rcvd_rnr_err +1 and retry_rnr_exceeded_err +1; rnr_retry 2 +3 and +1; rnr_retry 1
 * with the receive too late +2 and +1; a receive posted 300 or 50 ms late rcvd_rnr_err +1.
 *
 * The counters are per device port, so a delta is one QP's only while nothing else runs
 * on the device: the one-guest suite runs one scenario at a time, both QPs on the one
 * device (the RNR NAK is counted on the requester's completer only).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { RdmaInteropError } from '../../errors.js';
import type { TimerClass } from '../rnr-timing.js';

/** The counters a completion's timer class is decided from (see the header). */
export const TIMER_COUNTERS = [
  'rcvd_rnr_err',
  'retry_rnr_exceeded_err',
  'completer_retry_err',
  'retry_exceeded_err',
  'rcvd_seq_err',
] as const;

export type TimerCounter = (typeof TIMER_COUNTERS)[number];

/** One reading of {@link TIMER_COUNTERS} (u64 in the kernel: bigint). */
export type TimerCounts = Readonly<Record<TimerCounter, bigint>>;

/** A counter that cannot be read as rxe writes it, or that went back between readings. */
export class HwCountersError extends RdmaInteropError {
  override readonly name = 'HwCountersError';
  readonly origin = 'interop';
  constructor(
    /** The counter file, or the counter's name, that is wrong. */
    readonly what: string,
    message: string,
  ) {
    super(`${what}: ${message}`);
  }
}

export const SYSFS_INFINIBAND = '/sys/class/infiniband';

/** The hw_counters directory of `device`'s `port` (rxe has one port, 1). */
export function hwCountersDir(device: string, port = 1, root = SYSFS_INFINIBAND): string {
  return join(root, device, 'ports', String(port), 'hw_counters');
}

function readText(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'error';
    throw new HwCountersError(path, `cannot be read (${code}): no such counter on this device`);
  }
}

/** A sysfs counter file: one decimal u64 and a newline (core/sysfs.c print_hw_stat). */
function readCounter(path: string): bigint {
  const text = readText(path);
  if (!/^\d{1,20}\n?$/.test(text))
    throw new HwCountersError(path, `not a decimal counter: ${JSON.stringify(text.slice(0, 40))}`);
  return BigInt(text.trim());
}

/** Reads {@link TIMER_COUNTERS} from a hw_counters directory. */
export function readTimerCounts(dir: string): TimerCounts {
  const entries = TIMER_COUNTERS.map((name) => [name, readCounter(join(dir, name))] as const);
  return Object.fromEntries(entries) as Record<TimerCounter, bigint>;
}

/**
 * How long the core keeps a reading (ms, the directory's `lifespan` file): a read within
 * that time of the last refresh gets the cached values (core/sysfs.c update_hw_stats():
 * `if (time_is_after_eq_jiffies(stats->timestamp + stats->lifespan)) return 0;`), 10 ms by
 * default (RDMA_HW_STATS_DEFAULT_LIFESPAN).
 */
export function readLifespanMs(dir: string): number {
  const path = join(dir, 'lifespan');
  const text = readText(path).trim();
  if (!/^\d{1,9}$/.test(text))
    throw new HwCountersError(path, `not a lifespan in ms: ${JSON.stringify(text.slice(0, 40))}`);
  return Number(text);
}

/** Two jiffies at HZ=100 past the lifespan: the cache compares whole jiffies. */
export const JIFFY_MARGIN_MS = 20;

/** A clock the reader waits on (the guest's; a test's fake). */
export interface ReaderClock {
  now(): number;
  sleep(ms: number): Promise<void>;
}

const REAL_CLOCK: ReaderClock = { now: () => performance.now(), sleep: (ms) => sleep(ms) };

// When each directory was last read, by any reader of this process: a fresh reading
// needs the lifespan to have passed since the refresh the last read caused.
const lastRead = new Map<string, number>();

/**
 * Reads a directory's timer counters fresh: waits out the core's cache lifespan since
 * this process last read it, so that a reading never repeats an older one (which would
 * hide the increments between them).
 */
export async function readFreshTimerCounts(
  dir: string,
  clock: ReaderClock = REAL_CLOCK,
): Promise<TimerCounts> {
  const last = lastRead.get(dir);
  if (last !== undefined) {
    const wait = last + readLifespanMs(dir) + JIFFY_MARGIN_MS - clock.now();
    if (wait > 0) await clock.sleep(wait);
  }
  const counts = readTimerCounts(dir);
  lastRead.set(dir, clock.now());
  return counts;
}

/** The counters that moved between two readings (`rcvd_rnr_err +3, ...`), or `none moved`. */
export function countsMoved(before: TimerCounts, after: TimerCounts): string {
  const moved = TIMER_COUNTERS.filter((name) => after[name] !== before[name]).map(
    (name) => `${name} +${after[name] - before[name]}`,
  );
  return moved.length === 0 ? 'none moved' : moved.join(', ');
}

/** The timers a delta shows ran, per kind. */
export interface TimerEvidence {
  /** RNR NAKs that armed the RNR timer (those with no rnr_retry left did not). */
  readonly rnrTimers: bigint;
  /** Retries or RETRY_EXC_ERR that the retransmit timer, not a sequence NAK, caused. */
  readonly transportTimers: bigint;
}

/** What ran between two readings of the same directory. */
export function timerEvidence(before: TimerCounts, after: TimerCounts): TimerEvidence {
  const delta = (name: TimerCounter): bigint => {
    const d = after[name] - before[name];
    // A counter never goes back while the device lives (atomic64_inc only).
    if (d < 0n) throw new HwCountersError(name, `went back from ${before[name]} to ${after[name]}`);
    return d;
  };
  const rnrTimers = delta('rcvd_rnr_err') - delta('retry_rnr_exceeded_err');
  const transportTimers =
    delta('completer_retry_err') + delta('retry_exceeded_err') - delta('rcvd_seq_err');
  return {
    rnrTimers: rnrTimers > 0n ? rnrTimers : 0n,
    transportTimers: transportTimers > 0n ? transportTimers : 0n,
  };
}

/**
 * The class of a completion from what ran between its post and it (rnr-timing.ts names
 * the classes): the transport timer over the RNR timer, as a later time would have said.
 */
export function timerClassOf(evidence: TimerEvidence): TimerClass {
  if (evidence.transportTimers > 0n) return 'transport-timer';
  return evidence.rnrTimers > 0n ? 'rnr-timer' : 'no-timer';
}
