/**
 * What decides a device's `wcN.timer` field (program.ts, a `timed` wait): not the wall
 * clock in the guest, which a loaded TCG host stretches past any class boundary (issue
 * 38), but what the device itself shows ran between the side's last post and the
 * completion.
 */
import type { TimedCompletion } from '../program.js';
import { DEVICES, deviceOf, type Scenario, type Side } from '../scenario.js';
import {
  countsMoved,
  hwCountersDir,
  type ReaderClock,
  readFreshTimerCounts,
  type TimerCounts,
  timerClassOf,
  timerEvidence,
} from './hw-counters.js';

/** Marks a side's post and classes its next completion. */
export interface TimerWitness {
  /** Called just before each post on `side` (a timed wait counts from the side's last post). */
  mark(side: Side): Promise<void>;
  /** The class of the completion `side` just polled, and what showed it. */
  classOf(side: Side): Promise<TimedCompletion>;
}

/** rxe: the port's counters (hw-counters.ts), read at the post and at the completion. */
export class CounterWitness implements TimerWitness {
  readonly #dir: string;
  readonly #clock: ReaderClock | undefined;
  readonly #marks: Partial<Record<Side, TimerCounts>> = {};

  constructor(dir: string, clock?: ReaderClock) {
    this.#dir = dir;
    this.#clock = clock;
  }

  async mark(side: Side): Promise<void> {
    this.#marks[side] = await readFreshTimerCounts(this.#dir, this.#clock);
  }

  async classOf(side: Side): Promise<TimedCompletion> {
    const before = this.#marks[side];
    if (before === undefined) throw new Error(`a timed wait on the ${side} before any post`);
    const after = await readFreshTimerCounts(this.#dir, this.#clock);
    return {
      timer: timerClassOf(timerEvidence(before, after)),
      evidence: `rxe hw_counters ${countsMoved(before, after)}`,
    };
  }
}

/**
 * iWARP (siw): neither timer exists at the RDMA layers, so `no-timer` is the only class
 * a completion can come in, and it is reported as such, not measured. A Send that finds
 * no buffer is a DDP error that ends the stream (RFC 5041 §7.2, RFC 5040 §7), never an
 * RNR NAK; a lost segment is TCP's to resend (RFC 5044 runs MPA over TCP), below any
 * completion. siw keeps no counters either (its ib_device_ops register no hw stats: no
 * hw_counters directory), so there is nothing on the device that could say otherwise.
 */
export const NO_TIMER_TRANSPORT: TimerWitness = {
  mark: async () => {},
  classOf: async () => ({
    timer: 'no-timer',
    evidence: 'iWARP: no RNR and no transport timer at the RDMA layers (not measured)',
  }),
};

/**
 * A RoCE (or InfiniBand) provider other than rxe: its timers exist, but its counters are
 * not rxe's (hw-counters.ts reads rxe_hw_counters.c's names; mlx5, for one, names its own
 * differently), so nothing here can tell which timer ran: `not-measured`, never a class
 * read from counters that are not there.
 */
export function notMeasured(provider: string): TimerWitness {
  return {
    mark: async () => {},
    classOf: async () => ({
      timer: 'not-measured',
      evidence: `${provider}: the timer witness reads rxe's hw_counters only (not measured)`,
    }),
  };
}

/** The witness of `scenario`'s device; `root` is sysfs's infiniband class (tests: a fake). */
export function timerWitnessOf(
  scenario: Pick<Scenario, 'device' | 'on'>,
  root?: string,
  clock?: ReaderClock,
): TimerWitness {
  // The provider of the device it runs on (a device bound by run --device: its own), the
  // transport by the reference target (a device bound to it speaks the same one).
  const target = DEVICES[scenario.device];
  const provider = scenario.on?.provider ?? target.provider;
  if (target.transport === 'iwarp') return NO_TIMER_TRANSPORT;
  return provider === 'rxe'
    ? new CounterWitness(hwCountersDir(deviceOf(scenario), 1, root), clock)
    : notMeasured(provider);
}
