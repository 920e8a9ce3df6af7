/**
 * RoCE requester assertions where the tester answers: a verbs program on rxe posts, the
 * tester plays the responder and answers each request packet it receives with the packets
 * the assertion names (ACKs, NAKs, duplicates, ghosts, values). The same answers go to the
 * engine's RC requester rules (src/engine/roce/rc-requester.ts), which predict the packets
 * the device sends (retransmissions included), its completions and its QP state. Nothing
 * here states an expected result: only the posts and the answers.
 */

import type { RoceRequesterPost, RoceRequestPacket } from '../engine/roce/rc-requester.js';
import { psnAdd } from '../engine/roce/rc-responder.js';
import type { Assertion } from './assertion.js';
import { build, type RoceTarget, type TesterPacket } from './roce-packets.js';

/** What an answer builder gets: where answers go and the device's first PSN. */
export interface RoceAnswerContext extends RoceTarget {
  /** The device QP's first send PSN. */
  readonly psn: number;
}

/** A requester assertion where the tester answers. */
export interface RoceAnsweredAssertion extends Assertion {
  readonly testerRole: 'responder';
  /** The device QP's rnr_retry (0-7) and retry_cnt [3]. */
  readonly rnrRetry: number;
  readonly retryCnt?: number;
  /** What the verbs program posts, all at once. */
  readonly posts: readonly RoceRequesterPost[];
  /** The tester's answers to the n-th request packet it receives (n from 0). */
  readonly answer: (
    n: number,
    request: RoceRequestPacket,
    c: RoceAnswerContext,
  ) => readonly TesterPacket[];
  /** Request packets watched at most (an RNR retry of 7 never ends) [16]. */
  readonly cap?: number;
}

const write = (wrId: bigint): RoceRequesterPost => ({ wrId, kind: 'write', length: 16 });
/** The original remote data the tester claims (not a byte palindrome, not in memory). */
const CLAIMED = 0x0123_4567_89ab_cdefn;
/** Read data that is not a byte palindrome (24 bytes: more than the Read asked). */
const READ_DATA = Uint8Array.from({ length: 24 }, (_, i) => (i * 29 + 3) & 0xff);
/** A distance beyond every PSN the device sent: a ghost response. */
const GHOST = 0x100;

const base = { provider: 'rxe', testerRole: 'responder', hostile: false } as const;

function rnrAlways(rnrRetry: number, id: string, title: string): RoceAnsweredAssertion {
  return {
    ...base,
    id,
    spec: 'IBTA Vol. 1 §9.7.5.2.8 (RNR NAK), §9.7.6.1.5, Table 45 (rnr_retry 7 = for ever)',
    title,
    rnrRetry,
    posts: [write(0x61n)],
    answer: (_n, r, c) => [build.ack(c, r.psn, { kind: 'RNR_NAK', timer: 1 })],
    cap: 12,
  };
}

export const ROCE_ANSWERED_ASSERTIONS: readonly RoceAnsweredAssertion[] = [
  rnrAlways(
    0,
    'roce-requester-rnr-retry-0',
    'rnr_retry 0: the first RNR NAK ends the Write with RNR_RETRY_EXC_ERR, the QP in ERR',
  ),
  rnrAlways(
    1,
    'roce-requester-rnr-retry-1',
    'rnr_retry 1: the Write is sent twice, then RNR_RETRY_EXC_ERR, the QP in ERR',
  ),
  rnrAlways(
    7,
    'roce-requester-rnr-retry-7',
    'rnr_retry 7: every RNR NAK gets the Write sent again, with no completion',
  ),
  {
    ...base,
    id: 'roce-requester-psn-sequence-rewind',
    spec: 'IBTA Vol. 1 §9.7.5.2.1 (PSN Sequence Error NAK), §9.7.6.1.2 (implicit ACK)',
    title:
      'a PSN Sequence Error NAK at the second of three Writes completes the first and rewinds to the second',
    rnrRetry: 0,
    posts: [write(0x71n), write(0x72n), write(0x73n)],
    answer: (n, _r, c) =>
      n === 2
        ? [build.ack(c, psnAdd(c.psn, 1), { kind: 'NAK', code: 'PSN_SEQUENCE_ERROR' })]
        : n === 4
          ? [build.ack(c, psnAdd(c.psn, 2), { kind: 'ACK', creditCount: 31 })]
          : [],
  },
  {
    ...base,
    id: 'roce-requester-nak-remote-access',
    spec: 'IBTA Vol. 1 §9.7.5.2.3 (Remote Access Error NAK), §10.3.1',
    title: 'a Remote Access NAK ends the Write with REM_ACCESS_ERR and the QP in ERR',
    rnrRetry: 0,
    posts: [write(0x81n), write(0x82n)],
    answer: (n, r, c) =>
      n === 0 ? [build.ack(c, r.psn, { kind: 'NAK', code: 'REMOTE_ACCESS_ERROR' })] : [],
  },
  {
    ...base,
    id: 'roce-requester-nak-invalid-request',
    spec: 'IBTA Vol. 1 §9.7.5.2.2 (Invalid Request NAK), §10.3.1',
    title: 'an Invalid Request NAK ends the Write with REM_INV_REQ_ERR and the QP in ERR',
    rnrRetry: 0,
    posts: [write(0x91n)],
    answer: (_n, r, c) => [build.ack(c, r.psn, { kind: 'NAK', code: 'INVALID_REQUEST' })],
  },
  {
    ...base,
    id: 'roce-requester-coalesced-ack',
    spec: 'IBTA Vol. 1 §9.7.6.1.2 (an ACK acknowledges every request up to its PSN)',
    title: 'one ACK at the third Write completes all three, in order',
    rnrRetry: 0,
    posts: [write(0xa1n), write(0xa2n), write(0xa3n)],
    answer: (n, r, c) => (n === 2 ? [build.ack(c, r.psn, { kind: 'ACK', creditCount: 31 })] : []),
  },
  {
    ...base,
    id: 'roce-requester-duplicate-and-ghost-dropped',
    spec: 'IBTA Vol. 1 §9.7.6.1.3 (duplicate and ghost responses are dropped)',
    title:
      'after the ACK of a Write, a duplicate ACK and a ghost ACK and Atomic ACK (PSNs never sent) are dropped',
    rnrRetry: 0,
    posts: [write(0xb1n)],
    answer: (_n, r, c) => [
      build.ack(c, r.psn, { kind: 'ACK', creditCount: 31 }),
      build.ack(c, r.psn, { kind: 'ACK', creditCount: 31 }),
      build.ack(c, psnAdd(r.psn, GHOST), { kind: 'ACK', creditCount: 31 }),
      build.atomicAck(c, psnAdd(r.psn, GHOST + 1), CLAIMED),
    ],
  },
  {
    ...base,
    id: 'roce-requester-ghost-ack-outstanding',
    spec: 'IBTA Vol. 1 §9.7.6.1.3 (a ghost response is dropped)',
    title:
      'an ACK for a PSN never sent, while a FetchAdd is outstanding, is dropped: the FetchAdd completes with its own Atomic ACK, sent once',
    rnrRetry: 0,
    posts: [{ wrId: 0xc1n, kind: 'fetch-add', length: 8 }],
    answer: (n, r, c) =>
      n === 0
        ? [
            build.ack(c, psnAdd(r.psn, GHOST), { kind: 'ACK', creditCount: 31 }),
            build.atomicAck(c, r.psn, CLAIMED),
          ]
        : [],
  },
  {
    ...base,
    id: 'roce-requester-read-response-too-long',
    spec: 'IBTA Vol. 1 §9.7.6.1.4 (Read responses), §10.8.3 (local length error)',
    title: 'a Read Response ONLY carrying 24 bytes for a 16-byte Read is a length error',
    rnrRetry: 0,
    posts: [{ wrId: 0xe1n, kind: 'read', length: 16 }],
    answer: (n, r, c) => (n === 0 ? [build.readResponse(c, r.psn, READ_DATA)] : []),
  },
  {
    ...base,
    id: 'roce-requester-read-response-too-short',
    spec: 'IBTA Vol. 1 §9.7.6.1.4 (Read responses), §10.8.3 (local length error)',
    title:
      'a Read Response ONLY carrying 8 bytes for a 16-byte Read is a length error (the tester answers the first Read Request only)',
    rnrRetry: 0,
    // One transport retry (timeout 18: 1.07 s) at most, should the device retry the Read.
    retryCnt: 1,
    posts: [{ wrId: 0xe2n, kind: 'read', length: 16 }],
    answer: (n, r, c) => (n === 0 ? [build.readResponse(c, r.psn, READ_DATA.subarray(0, 8))] : []),
  },
  {
    ...base,
    id: 'roce-requester-atomic-ack-value',
    spec: 'IBTA Vol. 1 §9.7.6.1.4, §9.5.3 (AtomicAckETH: the original remote data)',
    title: 'a FetchAdd returns the original value the Atomic ACK carried, not memory',
    rnrRetry: 0,
    posts: [{ wrId: 0xd1n, kind: 'fetch-add', length: 8 }],
    answer: (_n, r, c) => [build.atomicAck(c, r.psn, CLAIMED)],
  },
];
