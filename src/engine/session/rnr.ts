/**
 * The RNR timers of an RC requester (IBTA 1.5 §9.7.5.2.8, Table 45): a request the
 * responder answers with an RNR NAK ("no receive posted") is retried after the RNR timer
 * the NAK carries (the responder's min_rnr_timer), at most rnr_retry times, 7 meaning
 * "without limit". A receive posted while the requester waits is found by the first retry
 * after it.
 */

/** IBTA Table 45: the RNR timer field's encoding, in milliseconds (code 0 = 655.36 ms). */
export const RNR_TIMER_MS: readonly number[] = [
  655.36, 0.01, 0.02, 0.03, 0.04, 0.06, 0.08, 0.12, 0.16, 0.24, 0.32, 0.48, 0.64, 0.96, 1.28, 1.92,
  2.56, 3.84, 5.12, 7.68, 10.24, 15.36, 20.48, 30.72, 40.96, 61.44, 81.92, 122.88, 163.84, 245.76,
  327.68, 491.52,
];

/** rnr_retry 7 means "retry without limit" (IBTA §9.7.5.2.8). */
export const INFINITE_RNR_RETRY = 7;

/**
 * Whether a receive posted `atMs` after the requester's first request met the RNR NAKs is
 * found by one of its retries: the k-th retry comes k RNR timers after the first NAK, and
 * there are `rnrRetry` of them (7: without limit). `atRetry` is the retry that finds it
 * (0: the first attempt did).
 */
export function servedByRetry(
  atMs: number,
  rnrMs: number,
  rnrRetry: number,
): { readonly served: boolean; readonly atRetry: number } {
  if (atMs <= 0) return { served: true, atRetry: 0 };
  const atRetry = Math.ceil(atMs / rnrMs);
  return { served: rnrRetry === INFINITE_RNR_RETRY || atRetry <= rnrRetry, atRetry };
}
