/**
 * What an RC requester does when the responder never answers (IBTA Vol. 1 §9.7.6.1.3,
 * transport timer; §10.3.1): after each timeout it retransmits from the oldest
 * unacknowledged PSN, at most retry_cnt times, then completes the request with
 * RETRY_EXC_ERR and moves the QP to ERR. Unlike rnr_retry, where 7 means "retry for ever"
 * (§9.7.5.2.8, Table 45's footnote; verbs' rnr_retry 7), a retry_cnt of 7 is 7 retries.
 */

/** The transport timeout for the QP attribute `timeout` (4.096 us x 2^timeout; 0 = none). */
export function transportTimeoutMicroseconds(timeout: number): number | undefined {
  return timeout === 0 ? undefined : 4.096 * 2 ** timeout;
}

/** What the requester sends and reports when no answer ever comes. */
export interface NoAnswerOutcome {
  /** Transmissions of the request: the first one and retry_cnt retries. */
  readonly transmissions: number;
  readonly status: 'RETRY_EXC_ERR';
  readonly qpState: 'ERR';
}

/** The engine's rule for a request that is never answered, for a QP's retry_cnt (0-7). */
export function noAnswerOutcome(retryCnt: number): NoAnswerOutcome {
  if (!Number.isInteger(retryCnt) || retryCnt < 0 || retryCnt > 7)
    throw new RangeError(`retry_cnt ${retryCnt} is not 0..7`);
  return { transmissions: 1 + retryCnt, status: 'RETRY_EXC_ERR', qpState: 'ERR' };
}
