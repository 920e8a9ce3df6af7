/**
 * Shared receive queues: receives consumed across QPs, the limit event.
 */
import type { Step } from '../scenario.js';
import { PAYLOAD, type Row, SWAP, WORD } from './family.js';

/** A Send from the requester's `qp` and its requester completion (the SRQ programs). */
function sendFrom(qp: 'first' | 'second', payload: bigint): Step[] {
  return [
    { do: 'post-send', wrs: [{ kind: 'SEND', payload }], qp },
    { do: 'wait', side: 'requester', count: 1 },
  ];
}

/** Four receives on the SRQ. */
const FOUR_SRQ_RECEIVES: readonly Step[] = Array.from({ length: 4 }, () => ({
  do: 'post-recv' as const,
  for: 'send' as const,
}));

/** How long an SRQ event wait that should see none waits (it spends all of it). */
const NO_SRQ_EVENT_MS = 300;

/**
 * Shared receive queues (IBTA 1.5 §10.2.9) on every device: rxe (both post APIs) and siw
 * (libsiw and siw have SRQs: siw_create_srq, siw_post_srq_recv, the limit in
 * siw_qp_rx.c siw_rqe_get).
 */
export const SRQ: readonly Row[] = [
  {
    // §10.2.9: the SRQ's receives are taken in the order they were posted, by whichever
    // QP a Send arrives on; each completion names its QP (qp_num). Each Send is waited
    // for before the next, so the arrival order is the posting order. Not captured: the
    // two connections' messages would interleave in one capture, each with its own MSNs.
    suffix: 'srq-two-qps',
    title: 'Sends from two QPs into one SRQ: receives taken in posting order',
    srq: true,
    capture: false,
    program: [
      ...FOUR_SRQ_RECEIVES,
      ...sendFrom('first', PAYLOAD),
      ...sendFrom('second', PAYLOAD ^ 0x00ff_00ff_00ff_00ffn),
      ...sendFrom('second', SWAP),
      ...sendFrom('first', WORD ^ 0xf0f0_0000_0000_0f0fn),
      { do: 'wait', side: 'responder', count: 4 },
      { do: 'query', side: 'requester' },
      { do: 'query', side: 'responder' },
    ],
  },
  {
    // §10.2.9.2 / §11.6.3.3: with 4 receives and the limit armed at 2, the first two
    // Sends leave 3 and 2 (not fewer than 2: no event), the third leaves 1: the event,
    // once, and the limit is disarmed (reads 0; rxe_resp.c get_srq_wqe sets srq->limit = 0).
    suffix: 'srq-limit',
    title: 'SRQ limit 2 over 4 receives: SRQ_LIMIT_REACHED at the third Send only',
    srq: true,
    program: [
      ...FOUR_SRQ_RECEIVES,
      { do: 'srq-limit', limit: 2 },
      ...sendFrom('first', PAYLOAD),
      ...sendFrom('first', SWAP),
      { do: 'wait', side: 'responder', count: 2 },
      { do: 'srq-event', timeoutMs: NO_SRQ_EVENT_MS },
      ...sendFrom('first', WORD ^ 0xf0f0_0000_0000_0f0fn),
      { do: 'wait', side: 'responder', count: 1 },
      { do: 'srq-event', timeoutMs: 5000 },
    ],
  },
];
