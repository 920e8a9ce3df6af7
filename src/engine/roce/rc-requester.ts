/**
 * The response rules of an InfiniBand / RoCEv2 RC requester, packet by packet: what the
 * packet tester (src/probe/) expects a device's requester to do when the tester
 * plays the responder and answers its requests. As public sources cite the IBTA Vol. 1:
 *
 *   - §9.7.6.1.1 / §9.7.6.1.2: an ACK at PSN p acknowledges every request up to p
 *     (coalesced ACKs); the requests it covers complete in order, successfully;
 *   - §9.7.6.1.3 (ghost and duplicate responses): a response whose PSN is not that of an
 *     outstanding request (behind the oldest one: a duplicate; beyond the last one sent: a
 *     ghost) is silently dropped;
 *   - §9.7.6.1.4 (Atomic responses): the AtomicAckETH's original remote data is what the
 *     requester returns to its local buffer, whatever the remote memory holds;
 *   - §9.7.6.1.4 / §10.8.3 (Read responses): a Read Response ONLY carries the whole Read; a
 *     payload of another length completes the Read with a local length error (LOC_LEN_ERR),
 *     the QP in ERR;
 *   - §9.7.5.2.8 / §9.7.6.1.5 (RNR NAK): the requests before p are acknowledged; the request
 *     at p is sent again after the RNR timer, at most rnr_retry times, where 7 means for
 *     ever (Table 45's footnote); then it completes with RNR_RETRY_EXC_ERR, the QP in ERR;
 *   - §9.7.5.2.1 (PSN Sequence Error NAK): the requests before p are acknowledged and the
 *     requester sends again from p (the rewind), counting a transport retry;
 *   - §9.7.5.2.2 / §9.7.5.2.3 / §9.7.5.2.4 (Invalid Request, Remote Access, Remote
 *     Operational Error NAKs): the request at p completes with REM_INV_REQ_ERR,
 *     REM_ACCESS_ERR or REM_OP_ERR, the QP moves to ERR (§10.3.1) and the requests after
 *     it are flushed (WR_FLUSH_ERR).
 *
 * Deterministic, no I/O, no timers: a retransmission is reported as the PSNs sent again.
 * The PSN arithmetic (§9.7.1) is the RC responder's (./psn.ts).
 */

import type { AethNakCodeName, AethSyndrome } from '../../codec/roce/aeth.js';
import { HALF_PSN_SPACE, psnAdd, psnDistance } from './psn.js';

/** A request the verbs program posts (one packet each: payloads up to one PMTU). */
export interface RoceRequesterPost {
  readonly wrId: bigint;
  readonly kind: 'write' | 'read' | 'fetch-add';
  /** Bytes written or read. */
  readonly length: number;
}

/** A response the requester receives, in the terms of the codec's decoder. */
export interface RoceRequesterResponse {
  /** `RC_ACKNOWLEDGE`, `RC_ATOMIC_ACKNOWLEDGE` or `RC_RDMA_READ_RESPONSE_ONLY`. */
  readonly opcode: string;
  readonly psn: number;
  readonly syndrome: AethSyndrome;
  readonly payloadLength?: number;
  readonly originalRemoteData?: bigint;
}

/** A send completion the verbs program sees. */
export interface RoceRequesterCompletion {
  readonly wrId: bigint;
  readonly status:
    | 'SUCCESS'
    | 'RNR_RETRY_EXC_ERR'
    | 'RETRY_EXC_ERR'
    | 'REM_INV_REQ_ERR'
    | 'REM_ACCESS_ERR'
    | 'REM_OP_ERR'
    | 'LOC_LEN_ERR'
    | 'WR_FLUSH_ERR';
  /** A FetchAdd that succeeded: the value placed in its local buffer. */
  readonly fetched?: bigint;
}

/** A request packet the requester sends. */
export interface RoceRequestPacket {
  readonly opcode: 'RC_RDMA_WRITE_ONLY' | 'RC_RDMA_READ_REQUEST' | 'RC_FETCH_ADD';
  readonly psn: number;
}

/** What one response did. */
export interface RoceRequesterStep {
  readonly rule: string;
  readonly completions: readonly RoceRequesterCompletion[];
  /** Request packets sent again because of this response. */
  readonly sent: readonly RoceRequestPacket[];
}

export interface RoceRcRequesterOptions {
  /** The QP's first send PSN (sq_psn). */
  readonly firstPsn: number;
  /** retry_cnt and rnr_retry (0-7; rnr_retry 7 is "for ever"). */
  readonly retryCnt: number;
  readonly rnrRetry: number;
}

interface Outstanding extends RoceRequesterPost {
  readonly psn: number;
}

const OPCODE: Record<RoceRequesterPost['kind'], RoceRequestPacket['opcode']> = {
  write: 'RC_RDMA_WRITE_ONLY',
  read: 'RC_RDMA_READ_REQUEST',
  'fetch-add': 'RC_FETCH_ADD',
};

/**
 * The status of the request a NAK names (§9.7.5.2.2 - §9.7.5.2.4, §10.8.3; rxe_comp.c
 * `check_ack`): the NAKs that end the request. PSN Sequence Error is not here: the
 * requester sends again (§9.7.5.2.1).
 */
const NAK_STATUS = {
  INVALID_REQUEST: 'REM_INV_REQ_ERR',
  REMOTE_ACCESS_ERROR: 'REM_ACCESS_ERR',
  REMOTE_OPERATIONAL_ERROR: 'REM_OP_ERR',
  INVALID_RD_REQUEST: 'REM_INV_REQ_ERR',
} as const satisfies Partial<Record<AethNakCodeName, RoceRequesterCompletion['status']>>;

/** The status a request ends with when the RNR NAKs outlast rnr_retry (§9.7.5.2.8). */
export const RNR_RETRY_EXCEEDED_STATUS = 'RNR_RETRY_EXC_ERR' as const;

/**
 * The status of the request a NAK of class `code` ends (the table above), or undefined
 * for a PSN Sequence Error, which the requester answers by sending again.
 */
export function nakCompletionStatus(
  code: AethNakCodeName,
): RoceRequesterCompletion['status'] | undefined {
  return code === 'PSN_SEQUENCE_ERROR' ? undefined : NAK_STATUS[code];
}

/** The RC requester model (see the file comment for the rules and their sources). */
export class RoceRcRequester {
  readonly #o: RoceRcRequesterOptions;
  readonly #outstanding: Outstanding[] = [];
  #nextPsn: number;
  #retryLeft: number;
  #rnrLeft: number;
  #state: 'RTS' | 'ERR' = 'RTS';

  constructor(options: RoceRcRequesterOptions) {
    for (const [name, value] of [
      ['retry_cnt', options.retryCnt],
      ['rnr_retry', options.rnrRetry],
    ] as const)
      if (!Number.isInteger(value) || value < 0 || value > 7)
        throw new RangeError(`${name} ${value} is not 0..7`);
    this.#o = options;
    this.#nextPsn = options.firstPsn;
    this.#retryLeft = options.retryCnt;
    this.#rnrLeft = options.rnrRetry;
  }

  get state(): 'RTS' | 'ERR' {
    return this.#state;
  }

  /** Posts a request; returns the packet sent for it. */
  post(request: RoceRequesterPost): RoceRequestPacket {
    const psn = this.#nextPsn;
    this.#outstanding.push({ ...request, psn });
    this.#nextPsn = psnAdd(psn, 1);
    return { opcode: OPCODE[request.kind], psn };
  }

  /** One response from the responder (the tester). */
  receive(r: RoceRequesterResponse): RoceRequesterStep {
    if (this.#state === 'ERR') return none('qp-in-error');
    const oldest = this.#outstanding[0];
    if (oldest === undefined) return none('no-request-outstanding');
    const behind = psnDistance(oldest.psn, r.psn);
    if (behind !== 0 && behind < HALF_PSN_SPACE) return none('duplicate-response');
    const sentSpan = psnDistance(this.#nextPsn, oldest.psn);
    const index = psnDistance(r.psn, oldest.psn);
    if (index >= sentSpan) return none('ghost-response');
    const target = this.#outstanding[index] as Outstanding;
    const s = r.syndrome;
    if (s.kind === 'ACK') {
      if (r.opcode === 'RC_ATOMIC_ACKNOWLEDGE') {
        if (target.kind !== 'fetch-add') return none('atomic-ack-for-other-request');
        const done = this.#complete(index);
        return step('atomic-ack', [
          ...done.slice(0, -1),
          { wrId: target.wrId, status: 'SUCCESS', fetched: r.originalRemoteData ?? 0n },
        ]);
      }
      if (r.opcode === 'RC_RDMA_READ_RESPONSE_ONLY') {
        if (target.kind !== 'read') return none('read-response-for-other-request');
        // A Read Response ONLY carries exactly the Read's length: more or less is a length error.
        if (r.payloadLength !== target.length)
          return this.#fail('read-response-length', 'LOC_LEN_ERR', this.#complete(index - 1));
        return step('read-response', this.#complete(index));
      }
      // A plain ACK covers Writes only; an unanswered Read or Atomic before p is not (§9.7.6.1.2).
      const firstOther = this.#outstanding.slice(0, index + 1).findIndex((o) => o.kind !== 'write');
      const last = firstOther === -1 ? index : firstOther - 1;
      return step(index > 0 ? 'coalesced-ack' : 'ack', this.#complete(last));
    }
    const before = this.#complete(index - 1);
    if (s.kind === 'RNR_NAK') {
      if (this.#rnrLeft === 0)
        return this.#fail('rnr-retry-exceeded', RNR_RETRY_EXCEEDED_STATUS, before);
      if (this.#o.rnrRetry !== 7) this.#rnrLeft--;
      return { rule: 'rnr-nak-resend', completions: before, sent: this.#resend() };
    }
    if (s.code === 'PSN_SEQUENCE_ERROR') {
      if (this.#retryLeft === 0) return this.#fail('retry-exceeded', 'RETRY_EXC_ERR', before);
      this.#retryLeft--;
      return { rule: 'psn-sequence-error-rewind', completions: before, sent: this.#resend() };
    }
    return this.#fail(
      `nak-${s.code.toLowerCase().replaceAll('_', '-')}`,
      NAK_STATUS[s.code],
      before,
    );
  }

  /** Completes the outstanding requests 0..last successfully (none when last < 0). */
  #complete(last: number): RoceRequesterCompletion[] {
    if (last >= 0) this.#retryLeft = this.#o.retryCnt;
    if (last >= 0) this.#rnrLeft = this.#o.rnrRetry;
    return this.#outstanding
      .splice(0, last + 1)
      .map((o) => ({ wrId: o.wrId, status: 'SUCCESS' as const }));
  }

  #resend(): RoceRequestPacket[] {
    return this.#outstanding.map((o) => ({ opcode: OPCODE[o.kind], psn: o.psn }));
  }

  #fail(
    rule: string,
    status: RoceRequesterCompletion['status'],
    before: RoceRequesterCompletion[],
  ): RoceRequesterStep {
    this.#state = 'ERR';
    const [first, ...rest] = this.#outstanding.splice(0);
    const completions = [...before];
    if (first !== undefined) completions.push({ wrId: first.wrId, status });
    for (const o of rest) completions.push({ wrId: o.wrId, status: 'WR_FLUSH_ERR' });
    return { rule, completions, sent: [] };
  }
}

function none(rule: string): RoceRequesterStep {
  return { rule, completions: [], sent: [] };
}

function step(rule: string, completions: RoceRequesterCompletion[]): RoceRequesterStep {
  return { rule, completions, sent: [] };
}
