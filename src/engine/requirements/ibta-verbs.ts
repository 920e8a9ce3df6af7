/**
 * The IBTA 1.5 (Vol. 1) verbs rules the engine session models (src/engine/session/),
 * beside the transport's. The IBTA text is not redistributable (specs/ holds the IETF texts
 * only), so each row states the rule in our words with its section; the traceability test
 * still requires a test naming each row.
 */
import type { Requirement } from './requirements.js';

/** The verbs rules of the engine session, one row per rule. */
export const IBTA_VERBS_REQUIREMENTS: readonly Requirement[] = [
  {
    id: 'IBTA-9.7.5.2.8-1',
    document: 'ibta-1.5',
    section: '9.7.5.2.8',
    text: 'After an RNR NAK the requester retries the request once the RNR timer the NAK carries has run out, at most rnr_retry times (7: without limit); a receive posted meanwhile is found by the next retry, and with the retries spent the request completes with RNR_RETRY_EXC_ERR.',
  },
  {
    id: 'IBTA-10.2.9-1',
    document: 'ibta-1.5',
    section: '10.2.9',
    text: 'A shared receive queue gives its receive WQEs out in the order they were posted, to whichever associated QP receives a message that consumes one.',
  },
  {
    id: 'IBTA-10.2.9.2-1',
    document: 'ibta-1.5',
    section: '10.2.9.2',
    text: 'An armed SRQ limit raises the SRQ Limit Reached affiliated event once, when the WQEs left on the SRQ fall below the limit, and is then disarmed (a query reads 0).',
  },
  {
    id: 'IBTA-10.3.1-1',
    document: 'ibta-1.5',
    section: '10.3.1',
    text: 'A work request posted to a QP in the Error state completes with a flush error (WR_FLUSH_ERR).',
  },
  {
    id: 'IBTA-10.3.1-2',
    document: 'ibta-1.5',
    section: '10.3.1',
    text: 'A QP in the Error state discards incoming packets: a request sent to it is never acknowledged, so its sender completes it with RETRY_EXC_ERR once its retries are spent (9.7.6.1.3) and enters the Error state.',
  },
  {
    id: 'IBTA-10.6.3.3-1',
    document: 'ibta-1.5',
    section: '10.6.3.3',
    text: "A remote access needs the responder QP's access enable as well as the region's access right.",
  },
  {
    id: 'IBTA-11.4.2.2-1',
    document: 'ibta-1.5',
    section: '11.4.2.2',
    text: 'A CQ armed for solicited completions is signalled by the next receive completion with the Solicited Event, or by an unsuccessful completion.',
  },
];
