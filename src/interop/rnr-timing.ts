/**
 * RNR timing as a verbs program configures it, and the class a completion's time falls
 * in. A requester that gets an RNR NAK waits the RNR timer the NAK carries (the
 * responder's min_rnr_timer, IBTA 9.7.5.2.8 and Table 45) before it retries, at most
 * rnr_retry times (7 = without limit); a request nothing answers waits the transport
 * timer (4.096 us x 2^timeout, IBTA 9.7.6.1.3). A completion's time is reported as the
 * class of timer it completed in, not as a number: timing under emulation varies, which
 * timer ran does not. The engine classes its own clock here ({@link timerClass}); a
 * device is classed from its own evidence (kernel/timer-witness.ts: rxe's counters),
 * never from the guest's wall clock, which a loaded TCG host stretches (issue 38).
 */
import { RNR_TIMER_MS } from '../engine/session/rnr.js';
import type { Scenario } from './scenario.js';

/** IBTA Table 45, kept with the engine's RNR retries (engine/session/rnr.ts). */
export { INFINITE_RNR_RETRY, RNR_TIMER_MS } from '../engine/session/rnr.js';

/** The defaults connectRcByHand uses (src/verbs/connect.ts). */
export const DEFAULT_MIN_RNR_TIMER = 12;
export const DEFAULT_TIMEOUT = 14;
export const DEFAULT_RNR_RETRY = 7;

/** The transport timer of `timeout` (IBTA 9.7.6.1.3: 4.096 us x 2^timeout), in ms. */
export function transportTimeoutMs(timeout: number): number {
  return 4.096e-3 * 2 ** timeout;
}

/**
 * `no-timer`: completed before any RNR timer could have run out (the first answer decided
 * it); `rnr-timer`: after at least one RNR timer and before a transport timeout could have
 * run out; `transport-timer`: after the transport timer.
 */
export type TimerClass = 'no-timer' | 'rnr-timer' | 'transport-timer';

/** The timers of `scenario`'s requester, in ms. */
export function timersOf(scenario: Scenario): { rnr: number; transport: number } {
  return {
    rnr: RNR_TIMER_MS[scenario.minRnrTimer ?? DEFAULT_MIN_RNR_TIMER] ?? 0,
    transport: transportTimeoutMs(scenario.timeout ?? DEFAULT_TIMEOUT),
  };
}

/** The class of a completion that came `elapsedMs` after its post, on the engine's clock. */
export function timerClass(scenario: Scenario, elapsedMs: number): TimerClass {
  const { rnr, transport } = timersOf(scenario);
  if (elapsedMs >= transport) return 'transport-timer';
  return elapsedMs >= rnr ? 'rnr-timer' : 'no-timer';
}
