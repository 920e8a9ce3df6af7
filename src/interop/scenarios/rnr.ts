/**
 * Receiver Not Ready: a Send that finds no receive, and receives posted late.
 */
import type { Step } from '../scenario.js';
import { failing, IMM, PAYLOAD, type Row, single } from './family.js';

/**
 * The RNR timers: the longest RNR timer, 655.36 ms (IBTA Table 45 code 0), against a 4.3 s
 * transport timer (timeout 20), far apart so that no transport timer runs out while the
 * RNR waits and late receives play out, even in an emulated guest on a loaded host (an
 * rnr_retry 0 answer took over 123 ms, then over 245 ms, at host load 17-21). The device's
 * class is counted, not timed (kernel/timer-witness.ts: rxe's hw_counters).
 */
const RNR_TIMERS = { minRnrTimer: 0, timeout: 20 } as const;

/** `steps` with the requester's first wait timed (its completion's timer class). */
function timed(steps: readonly Step[]): Step[] {
  const first = steps.findIndex((s) => s.do === 'wait' && s.side === 'requester');
  return steps.map((s, i) => (i === first && s.do === 'wait' ? { ...s, timed: true } : s));
}

/** `steps` without their receive (the request meets RNR NAKs). */
function withoutReceive(steps: readonly Step[]): Step[] {
  return steps.filter((s) => s.do !== 'post-recv');
}

/** A Send met by RNR NAKs, its receive posted `ms` after it. */
function lateReceive(ms: number, responderWaitMs?: number): Step[] {
  return [
    { do: 'post-send', wrs: [{ kind: 'SEND', payload: PAYLOAD }] },
    { do: 'sleep', ms },
    { do: 'post-recv', for: 'send' },
    { do: 'wait', side: 'requester', count: 1, timed: true },
    {
      do: 'wait',
      side: 'responder',
      count: 1,
      ...(responderWaitMs === undefined ? {} : { timeoutMs: responderWaitMs }),
    },
    { do: 'query', side: 'requester' },
    { do: 'query', side: 'responder' },
  ];
}

/**
 * RNR: rnr_retry and min_rnr_timer need a by-hand bring-up (rxe). iWARP has no RNR: a
 * Send that finds no receive is a DDP error that ends the stream (RFC 5041 §7.2,
 * RFC 5040 §7), which `send-no-recv` shows on both transports.
 */
export const RNR: readonly Row[] = [
  {
    suffix: 'send-no-recv',
    title: 'Send, no receive posted (rnr_retry 0 on rxe; iWARP has no RNR)',
    rnrRetry: 0,
    ...RNR_TIMERS,
    program: timed(withoutReceive(failing({ kind: 'SEND', payload: PAYLOAD }))),
  },
  {
    suffix: 'send-imm-no-recv',
    byHand: true,
    title: 'Send with Immediate, no receive posted, rnr_retry 0',
    rnrRetry: 0,
    ...RNR_TIMERS,
    program: timed(
      withoutReceive(failing({ kind: 'SEND_WITH_IMM', payload: PAYLOAD, immData: IMM })),
    ),
  },
  {
    suffix: 'write-imm-no-recv',
    byHand: true,
    title: 'RDMA Write with Immediate, no receive posted, rnr_retry 0',
    rnrRetry: 0,
    ...RNR_TIMERS,
    program: timed(
      withoutReceive(failing({ kind: 'RDMA_WRITE_WITH_IMM', payload: PAYLOAD, immData: IMM })),
    ),
  },
  {
    suffix: 'rnr-retry-2',
    byHand: true,
    title: 'Send, no receive posted, rnr_retry 2',
    rnrRetry: 2,
    ...RNR_TIMERS,
    program: timed(withoutReceive(single({ kind: 'SEND', payload: PAYLOAD }))),
  },
  {
    suffix: 'rnr-retry-3-late-recv',
    byHand: true,
    title: 'Send, rnr_retry 3, receive posted 300 ms late (found by a retry)',
    rnrRetry: 3,
    ...RNR_TIMERS,
    program: lateReceive(300),
  },
  {
    suffix: 'rnr-retry-1-too-late',
    byHand: true,
    title: 'Send, rnr_retry 1, receive posted 1000 ms late (after the retries ran out)',
    rnrRetry: 1,
    ...RNR_TIMERS,
    program: lateReceive(1000, 500),
  },
  {
    suffix: 'rnr-infinite-late-recv',
    byHand: true,
    title: 'Send, rnr_retry 7 (infinite), receive posted 50 ms late',
    rnrRetry: 7,
    ...RNR_TIMERS,
    program: lateReceive(50),
  },
];
