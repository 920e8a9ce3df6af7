/**
 * RNR timing as a verbs program configures it, and the class a completion's time falls
 * in. A requester that gets an RNR NAK waits the RNR timer the NAK carries (the
 * responder's min_rnr_timer, IBTA 9.7.5.2.8 and Table 45) before it retries, at most
 * rnr_retry times (7 = without limit); a request nothing answers waits the transport
 * timer (4.096 us x 2^timeout, IBTA 9.7.6.1.3). A completion's time is reported as the
 * class of timer it completed in, not as a number: timing under emulation varies, which
 * timer ran does not.
 */
import type { Scenario } from './scenario.js';

/** IBTA Table 45: the RNR timer field's encoding, in milliseconds (code 0 = 655.36 ms). */
export const RNR_TIMER_MS: readonly number[] = [
  655.36, 0.01, 0.02, 0.03, 0.04, 0.06, 0.08, 0.12, 0.16, 0.24, 0.32, 0.48, 0.64, 0.96, 1.28, 1.92,
  2.56, 3.84, 5.12, 7.68, 10.24, 15.36, 20.48, 30.72, 40.96, 61.44, 81.92, 122.88, 163.84, 245.76,
  327.68, 491.52,
];

/** The defaults connectRcByHand uses (src/verbs/connect.ts). */
export const DEFAULT_MIN_RNR_TIMER = 12;
export const DEFAULT_TIMEOUT = 14;
export const DEFAULT_RNR_RETRY = 7;
/** rnr_retry 7 means "retry without limit" (IBTA 9.7.5.2.8). */
export const INFINITE_RNR_RETRY = 7;

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

/** The class of a completion that came `elapsedMs` after its post. */
export function timerClass(scenario: Scenario, elapsedMs: number): TimerClass {
  const { rnr, transport } = timersOf(scenario);
  if (elapsedMs >= transport) return 'transport-timer';
  return elapsedMs >= rnr ? 'rnr-timer' : 'no-timer';
}

/**
 * When each receive of the program is posted, in ms after the first post on the
 * requester (0 for receives posted before it): the sleeps between the two.
 */
export function receivePostTimes(scenario: Scenario): number[] {
  const times: number[] = [];
  let started = false;
  let clock = 0;
  for (const step of scenario.program) {
    if (step.do === 'post-send' && step.side !== 'responder') started = true;
    else if (step.do === 'sleep' && started) clock += step.ms;
    else if (step.do === 'post-recv') times.push(clock);
  }
  return times;
}

/**
 * Whether a receive posted `atMs` after the request met the RNR NAKs is found by one of
 * its retries: the k-th retry comes k RNR timers after the first NAK, and there are
 * rnr_retry of them (7: without limit). `atRetry` is the retry that finds it (0: the
 * first attempt did).
 */
export function servedByRetry(
  scenario: Scenario,
  atMs: number,
): { served: boolean; atRetry: number } {
  if (atMs <= 0) return { served: true, atRetry: 0 };
  const { rnr } = timersOf(scenario);
  const retries = scenario.rnrRetry ?? DEFAULT_RNR_RETRY;
  const atRetry = Math.ceil(atMs / rnr);
  return { served: retries === INFINITE_RNR_RETRY || atRetry <= retries, atRetry };
}
