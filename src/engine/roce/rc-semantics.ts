/**
 * What the RC responder (./rc-responder.ts) asks of the operations it carries: the
 * transport rules stay there (PSN, opcode sequence, PMTU and lengths, duplicates, RNR,
 * acknowledgements: IBTA Vol. 1 §9.7), the semantics come from here. Two implementations:
 *
 *   - ./rc-region.ts: one memory region over the engine's shared core (the tagged-buffer
 *     table's R_Key / access / bounds check, execute-atomic's FetchAdd and CmpSwap), for
 *     the packet tester, which plays the requester towards a device;
 *   - ../projection/roce-exchange.ts: the engine run of a verbs scenario (projectRoce, the
 *     shared responder core), for the packets the suite predicts.
 *
 * A refusal names the rule (a stable name, shown in results) and what the responder
 * answers (IBTA §9.7.5.2.8, Table 44): a NAK of a class, an RNR NAK (the PSN is not
 * consumed, the QP stays), or nothing (the engine has no NAK for the failure).
 */

import type { AethNakCodeName } from '../../codec/roce/aeth.js';
import type { AtomicEth, Reth } from '../../codec/roce/headers.js';

export type RcRefusal =
  | { readonly rule: string; readonly answer: 'nak'; readonly code: AethNakCodeName }
  | { readonly rule: string; readonly answer: 'rnr' | 'none' };

/** A receive completion the responder's verbs program sees. */
export interface RoceReceiveCompletion {
  readonly byteLength: number;
  readonly immediateData: number | undefined;
  readonly opcode: 'RECV' | 'RECV_RDMA_WITH_IMM';
}

/** The semantics the RC responder executes requests with (see the file comment). */
export interface RcSemantics {
  /** The region's bytes as the semantics have them now (a copy; empty when not modelled). */
  readonly memory: Uint8Array;
  /**
   * Whether a receive is posted, asked at a Send's first packet and at a Write with
   * Immediate's last (§9.7.5.2.8: an RNR NAK otherwise).
   */
  receiveReady(): boolean;
  /** A Write's first (or only) packet: its RETH target granted (undefined) or refused. */
  writeTarget(reth: Reth): RcRefusal | undefined;
  /** Places a Write packet's payload `at` bytes into the message granted last. */
  placeWrite(at: number, payload: Uint8Array): void;
  /** A Send's last packet, before its receive is consumed: refused, or undefined. */
  sendRefusal(): RcRefusal | undefined;
  /** Consumes the receive of a completed Send or Write with Immediate. */
  consumeReceive(completion: RoceReceiveCompletion): RoceReceiveCompletion;
  /** An RDMA READ's data, or the refusal (§9.7.5.2.8). */
  read(reth: Reth): { readonly data: Uint8Array } | RcRefusal;
  /** Executes FETCH ADD or COMPARE SWAP (§9.4.5): the original value, or the refusal. */
  atomic(kind: 'fetch-add' | 'cmp-swap', eth: AtomicEth): { readonly original: bigint } | RcRefusal;
  /** Whether the responder implements ATOMIC WRITE (IBTA 1.5 Annex A19). */
  atomicWriteSupported(): boolean;
  /** Executes ATOMIC WRITE (A19): undefined when placed, or the refusal. */
  atomicWrite(reth: Reth, payload: Uint8Array): RcRefusal | undefined;
  /** Executes FLUSH (A19): undefined when answered (an empty Read Response), or the refusal. */
  flush(reth: Reth): RcRefusal | undefined;
}

/** Whether a semantics answer is a refusal. */
export function isRefusal(value: object | undefined): value is RcRefusal {
  return value !== undefined && 'rule' in value && 'answer' in value;
}
