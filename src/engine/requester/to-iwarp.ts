/**
 * Work requests as iWARP RDMAP messages (RFC 5040, RFC 7306, V2 draft), built with the
 * codec's builders. RFC 7306 mask semantics for the verbs atomics:
 * - FETCH_AND_ADD: FetchAdd with Add Mask 0 — one 64-bit add (RFC 7306 §5.1.1); Compare
 *   Data 0 and Compare Mask all ones as the transmit values of unused fields (§5.2.1).
 * - CMP_AND_SWP: CmpSwap with Compare Mask and Swap Mask all ones — a plain 64-bit
 *   compare and swap (§5.1.2 pseudocode with every bit selected).
 * - RDMA_WRITE_WITH_IMM: RDMA Write followed by Immediate Data (RFC 7306 §6).
 * - SEND_WITH_IMM: only the V2 draft has it (§5.3); in `rfc7306` / `draft-01` it is not
 *   expressible (typed result).
 */
import {
  ALL_ONES_64,
  makeAtomicRequest,
  makeImmediateData,
  makeRdmaWrite,
  makeReadRequest,
  makeSend,
} from '../../codec/iwarp/build.js';
import type { RdmapMessage } from '../../codec/iwarp/messages.js';
import type { IwarpProfile } from '../../codec/iwarp/profiles.js';
import { makeReadV2Request, sendWithImmediateSegments } from '../wire/build.js';
import { validateWorkRequest, type WorkRequest, type WorkRequestError } from './work-request.js';

/** Sequence state the Requester owns: next MSN per outgoing queue, next Request Identifier. */
export interface IwarpSendState {
  /** Next MSN on QN 0 (Sends, Immediate Data). */
  qn0: number;
  /** Next MSN on QN 1 (Read and Atomic Requests). */
  qn1: number;
  /** Next Atomic Request Identifier (RFC 7306 §5.2.1: chosen by the sending RNIC). */
  requestIdentifier: number;
}

/** A fresh stream: every MSN starts at 1 (RFC 5041 §5.3). */
export function newIwarpSendState(): IwarpSendState {
  return { qn0: 1, qn1: 1, requestIdentifier: 1 };
}

/** Result of turning one work request into messages. */
export type IwarpEncoding =
  | { readonly ok: true; readonly messages: readonly RdmapMessage[] }
  | { readonly ok: false; readonly error: WorkRequestError };

/** The typed refusal of a request iWARP (in this profile) has no message for. */
function notExpressible(wr: WorkRequest, detail: string): IwarpEncoding {
  return {
    ok: false,
    error: { reason: 'not-expressible', wrId: wr.wrId, opcode: wr.opcode, detail },
  };
}

/**
 * The iWARP messages for `wr` in `profile`; advances `state` only on success (nothing is
 * half-applied). The 32-bit verbs immediate becomes the 64-bit Immediate Data value
 * zero-extended (its four bytes are the last four on the wire) — an engine choice: no
 * document maps the verbs `imm_data` onto RFC 7306's eight bytes.
 */
export function workRequestToIwarp(
  wr: WorkRequest,
  profile: IwarpProfile,
  state: IwarpSendState,
): IwarpEncoding {
  const invalid = validateWorkRequest(wr);
  if (invalid !== undefined) return { ok: false, error: invalid };
  switch (wr.opcode) {
    case 'ATOMIC_WRITE':
    case 'FLUSH':
      return notExpressible(
        wr,
        `${wr.opcode} is an InfiniBand operation (IBTA 1.5 Vol. 1 Annex A19, Memory Placement ` +
          'Extensions): iWARP has no such message; RFC 7306 adds only FetchAdd, CmpSwap and ' +
          'Immediate Data (§5, §6)',
      );
    case 'ATOMIC_FETCH_AND_ADD':
    case 'ATOMIC_CMP_AND_SWP': {
      const fetchAdd = wr.opcode === 'ATOMIC_FETCH_AND_ADD';
      const message = makeAtomicRequest(
        {
          operation: fetchAdd ? 'fetch-add' : 'cmp-swap',
          messageSequenceNumber: state.qn1,
          requestIdentifier: state.requestIdentifier,
          remoteSTag: wr.rkey,
          remoteTaggedOffset: wr.remoteAddr,
          addOrSwapData: wr.opcode === 'ATOMIC_FETCH_AND_ADD' ? wr.add : wr.swap,
          addOrSwapMask: fetchAdd ? 0n : ALL_ONES_64,
          compareData: wr.opcode === 'ATOMIC_FETCH_AND_ADD' ? 0n : wr.compare,
          compareMask: ALL_ONES_64,
        },
        profile,
      );
      state.qn1 = (state.qn1 + 1) >>> 0;
      state.requestIdentifier = (state.requestIdentifier + 1) >>> 0;
      return { ok: true, messages: [message] };
    }
    case 'RDMA_WRITE':
    case 'RDMA_WRITE_WITH_IMM': {
      const write = makeRdmaWrite(
        { stag: wr.rkey, taggedOffset: wr.remoteAddr, payload: wr.payload },
        profile,
      );
      if (wr.opcode === 'RDMA_WRITE') return { ok: true, messages: [write] };
      const immediate = makeImmediateData(
        {
          messageSequenceNumber: state.qn0,
          immediateData: BigInt(wr.immData ?? 0),
          solicitedEvent: wr.solicited === true,
        },
        profile,
      );
      state.qn0 = (state.qn0 + 1) >>> 0;
      return { ok: true, messages: [write, immediate] };
    }
    case 'SEND':
    case 'SEND_WITH_IMM': {
      if (wr.opcode === 'SEND') {
        const message = makeSend(
          {
            messageSequenceNumber: state.qn0,
            payload: wr.payload,
            kind: wr.solicited === true ? 'send-se' : 'send',
          },
          profile,
        );
        state.qn0 = (state.qn0 + 1) >>> 0;
        return { ok: true, messages: [message] };
      }
      if (profile !== 'v2-draft')
        return notExpressible(
          wr,
          `profile ${profile}: RFC 7306 has no Send with Immediate. A Send followed by Immediate Data ` +
            'would consume two receive buffers and produce two receive completions (RFC 7306 §6.3: ' +
            '"One Immediate Data ... Message MUST consume one Untagged Buffer"), not the single ' +
            'RECV with WITH_IMM that verbs promises. Only the V2 draft (§5.3, opcode 0x13) carries it.',
        );
      const segments = sendWithImmediateSegments(
        state.qn0,
        wr.solicited === true ? 'send-se-immediate' : 'send-immediate',
        wr.payload,
        BigInt(wr.immData ?? 0),
      );
      state.qn0 = (state.qn0 + 1) >>> 0;
      return { ok: true, messages: segments };
    }
    case 'SEND_WITH_INV': {
      // RFC 5040 §4.1, §5.3: Send with Invalidate names the STag in the DDP untagged
      // header's Invalidate STag field; the Data Sink invalidates it on placement.
      const message = makeSend(
        {
          messageSequenceNumber: state.qn0,
          payload: wr.payload,
          kind: wr.solicited === true ? 'send-se-invalidate' : 'send-invalidate',
          invalidateSTag: wr.invalidateRkey,
        },
        profile,
      );
      state.qn0 = (state.qn0 + 1) >>> 0;
      return { ok: true, messages: [message] };
    }
    case 'RDMA_READ': {
      if (wr.readV2 === true) {
        if (profile !== 'v2-draft')
          return notExpressible(
            wr,
            `profile ${profile}: RDMA Read V2 exists only in the V2 draft (§6)`,
          );
        const v2 = makeReadV2Request(state.qn1, {
          readSize: wr.length,
          sourceSTag: wr.rkey,
          sourceTaggedOffset: wr.remoteAddr,
        });
        state.qn1 = (state.qn1 + 1) >>> 0;
        return { ok: true, messages: [v2] };
      }
      const message = makeReadRequest(
        {
          messageSequenceNumber: state.qn1,
          sinkSTag: wr.localSTag,
          sinkTaggedOffset: wr.localAddr,
          readSize: wr.length,
          sourceSTag: wr.rkey,
          sourceTaggedOffset: wr.remoteAddr,
        },
        profile,
      );
      state.qn1 = (state.qn1 + 1) >>> 0;
      return { ok: true, messages: [message] };
    }
  }
}
