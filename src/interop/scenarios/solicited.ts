/**
 * The solicited event: a Send with or without SE into a CQ armed for solicited completions.
 */
import type { Step } from '../scenario.js';
import { PAYLOAD, type Row } from './family.js';

/**
 * How long the responder's solicited-only arm waits for its event. Woken, it returns at
 * once; unwoken (a Send without SE) the scenario spends the whole wait, so it is short.
 */
const SOLICITED_WAIT_MS = 1000;

/**
 * A Send with or without the Solicited Event bit into a responder CQ armed for solicited
 * completions only (ibv_req_notify_cq(cq, 1)): IBTA 1.5 §11.4.2.2 and RFC 5040 §5.3 say
 * the event comes for the SE Send only. The completion itself comes either way.
 */
function solicitedSend(solicited: boolean): Step[] {
  return [
    { do: 'post-recv', for: 'send' },
    { do: 'arm-solicited', side: 'responder', timeoutMs: SOLICITED_WAIT_MS },
    { do: 'post-send', wrs: [{ kind: 'SEND', payload: PAYLOAD, solicited }] },
    { do: 'cq-event', side: 'responder' },
    { do: 'wait', side: 'requester', count: 1 },
    { do: 'wait', side: 'responder', count: 1 },
  ];
}

export const SOLICITED: readonly Row[] = [
  {
    suffix: 'solicited-event',
    title: 'Send with SE into a CQ armed for solicited completions',
    program: solicitedSend(true),
  },
  {
    suffix: 'unsolicited-no-event',
    title: 'Send without SE into a CQ armed for solicited completions',
    program: solicitedSend(false),
  },
];
