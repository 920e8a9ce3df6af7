/**
 * The RoCEv2 packets of a verbs scenario, both directions, as the engine predicts them.
 *
 * Requests: the engine's own encoding (`workRequestToRoce`, IBTA §9.4), from the
 * requester's first PSN. Responses: from the engine's run of the same scenario
 * (`projectRoce`), per request up to the first failure, IBTA §9.7.5.1: one
 * acknowledgement per message, with the request's PSN and the MSN of completed messages
 * (§9.7.5.1.2), of the kind {@link ROCE_ACKNOWLEDGEMENT} names. At the failure: the NAK
 * the engine's failure table names (IBTA Table 44; §9.7.5.2.8), or for a missing receive
 * an RNR NAK with the responder's min_rnr_timer (§9.7.5.2.8; an rnr_retry of 0 ends the
 * exchange there).
 */
import { AethNakCode, type AethSyndrome, encodeAethSyndrome } from '../../codec/roce/aeth.js';
import type { ExtensionHeaders } from '../../codec/roce/headers.js';
import { BthOpcode } from '../../codec/roce/opcodes.js';
import { workRequestToRoce } from '../requester/to-roce.js';
import type { ModelledWrOpcode, WorkRequest } from '../requester/work-request.js';
import { projectRoce, type TransportOutcome, type VerbsScenario } from './project.js';

/** One RoCEv2 packet, in the terms a capture can give too. */
export interface RocePacket {
  readonly opcode: number;
  readonly psn: number;
  readonly destinationQp: number;
  readonly solicitedEvent: boolean;
  readonly headers: ExtensionHeaders;
  readonly aethSyndrome?: AethSyndrome;
  readonly payload: Uint8Array;
}

/**
 * How the responder acknowledges a request that succeeded: an ACK (Send, Write, IBTA
 * §9.7.5.1; ATOMIC WRITE, IBTA 1.5 Annex A19), an ATOMIC Acknowledge with the original
 * value (§9.7.4.1.6), an RDMA READ Response ONLY with the Read's bytes (§9.7.4.1.5), or
 * one without data (FLUSH, A19: answered once the earlier requests are placed; rxe_comp.c
 * check_ack accepts a read response for IB_WR_FLUSH).
 */
export type RoceAcknowledgement = 'ack' | 'atomic-ack' | 'read-response' | 'empty-read-response';

export const ROCE_ACKNOWLEDGEMENT = {
  RDMA_WRITE: 'ack',
  RDMA_WRITE_WITH_IMM: 'ack',
  SEND: 'ack',
  SEND_WITH_IMM: 'ack',
  SEND_WITH_INV: 'ack',
  RDMA_READ: 'read-response',
  ATOMIC_FETCH_AND_ADD: 'atomic-ack',
  ATOMIC_CMP_AND_SWP: 'atomic-ack',
  ATOMIC_WRITE: 'ack',
  FLUSH: 'empty-read-response',
} as const satisfies Record<ModelledWrOpcode, RoceAcknowledgement>;

/** Where the packets go and what the responder's NAKs carry. */
export interface RoceExchangeOptions {
  readonly requesterQp: number;
  readonly responderQp: number;
  /** The requester's first PSN (24 bits). */
  readonly firstPsn: number;
  /** Path MTU in bytes. */
  readonly mtu: number;
  /** The responder's min_rnr_timer (IBTA Table 45 code), as an RNR NAK carries it. */
  readonly minRnrTimer: number;
  /** The responder's region Reads are answered from: its STag and base address. */
  readonly remote: { readonly stag: number; readonly base: bigint };
}

const PSN_MASK = 0xff_ffff;
/** The credit count the engine's ACKs carry (it has no credit policy; not compared). */
const ACK: AethSyndrome = { kind: 'ACK', creditCount: 31 };

function response(
  destinationQp: number,
  opcode: keyof typeof BthOpcode,
  psn: number,
  syndrome: AethSyndrome,
  msn: number,
  extra: ExtensionHeaders = {},
  payload: Uint8Array = new Uint8Array(0),
): RocePacket {
  return {
    opcode: BthOpcode[opcode],
    psn,
    destinationQp,
    solicitedEvent: false,
    headers: { AETH: { syndrome: encodeAethSyndrome(syndrome), msn }, ...extra },
    aethSyndrome: syndrome,
    payload,
  };
}

/** The acknowledgement of `wr`, which succeeded, at `psn` with `msn`. */
function acknowledgement(
  wr: WorkRequest,
  projected: TransportOutcome,
  options: RoceExchangeOptions,
  psn: number,
  msn: number,
): RocePacket {
  const to = options.requesterQp;
  const kind: RoceAcknowledgement = ROCE_ACKNOWLEDGEMENT[wr.opcode];
  switch (kind) {
    case 'ack':
      return response(to, 'RC_ACKNOWLEDGE', psn, ACK, msn);
    case 'atomic-ack': {
      const original = projected.requester.completions.find((wc) => wc.wrId === wr.wrId);
      return response(to, 'RC_ATOMIC_ACKNOWLEDGE', psn, ACK, msn, {
        AtomicAckETH: { originalRemoteData: original?.atomicOriginal ?? 0n },
      });
    }
    case 'read-response': {
      const region = projected.memory.get(options.remote.stag);
      const at = wr.opcode === 'RDMA_READ' ? Number(wr.remoteAddr - options.remote.base) : 0;
      const length = wr.opcode === 'RDMA_READ' ? wr.length : 0;
      const data = region?.slice(at, at + length) ?? new Uint8Array(0);
      return response(to, 'RC_RDMA_READ_RESPONSE_ONLY', psn, ACK, msn, {}, data);
    }
    case 'empty-read-response':
      return response(to, 'RC_RDMA_READ_RESPONSE_ONLY', psn, ACK, msn);
    default:
      throw new RangeError(`unknown acknowledgement ${String(kind satisfies never)}`);
  }
}

/** The RoCEv2 packets the engine predicts for `verbs`, both directions. */
export function projectRoceExchange(
  verbs: VerbsScenario,
  options: RoceExchangeOptions,
): { requests: RocePacket[]; responses: RocePacket[] } {
  const projected = projectRoce(verbs, options.responderQp);
  const state = { destinationQp: options.responderQp, psn: options.firstPsn, mtu: options.mtu };
  const requests: RocePacket[] = [];
  const responses: RocePacket[] = [];
  const failedAt = projected.requester.completions.findIndex((wc) => wc.status !== 'SUCCESS');
  const failedWrId = failedAt < 0 ? undefined : projected.requester.completions[failedAt]?.wrId;
  let msn = 0;
  for (const wr of verbs.workRequests) {
    const encoded = workRequestToRoce(wr, state);
    if (!encoded.ok) break;
    const packets = encoded.packets.map(
      (p): RocePacket => ({
        opcode: p.bth.opcode,
        psn: p.bth.psn & PSN_MASK,
        destinationQp: p.bth.destinationQp,
        solicitedEvent: p.bth.solicitedEvent ?? false,
        headers: p.headers,
        payload: p.payload ?? new Uint8Array(0),
      }),
    );
    requests.push(...packets);
    const last = packets[packets.length - 1];
    if (last === undefined) continue;
    if (wr.wrId === failedWrId) {
      // The NAK carries the failing request's PSN and the MSN of the last completed message.
      const to = options.requesterQp;
      if (projected.failure === 'no-receive-buffer')
        responses.push(
          response(
            to,
            'RC_ACKNOWLEDGE',
            last.psn,
            { kind: 'RNR_NAK', timer: options.minRnrTimer },
            msn,
          ),
        );
      else if (projected.nak !== undefined && projected.nak in AethNakCode)
        responses.push(
          response(to, 'RC_ACKNOWLEDGE', last.psn, { kind: 'NAK', code: projected.nak }, msn),
        );
      break;
    }
    msn += 1;
    responses.push(acknowledgement(wr, projected, options, last.psn, msn));
  }
  return { requests, responses };
}
