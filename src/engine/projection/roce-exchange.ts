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
 *
 * The answers' shapes (ACK, NAK and RNR NAK syndromes, which acknowledgement a request
 * gets) and the PSN arithmetic are the RC responder's (../roce/rc-answers.ts,
 * ../roce/psn.ts), so the suite's prediction and the tester's expectations share them.
 */
import { AethNakCode, type AethSyndrome, encodeAethSyndrome } from '../../codec/roce/aeth.js';
import type { ExtensionHeaders } from '../../codec/roce/headers.js';
import { BthOpcode } from '../../codec/roce/opcodes.js';
import { workRequestToRoce } from '../requester/to-roce.js';
import type { WorkRequest } from '../requester/work-request.js';
import { PSN_MASK } from '../roce/psn.js';
import {
  ACK_SYNDROME,
  nakSyndrome,
  ROCE_ACKNOWLEDGEMENT,
  type RoceAcknowledgement,
  rnrNakSyndrome,
} from '../roce/rc-answers.js';
import { projectRoce, type TransportOutcome, type VerbsScenario } from './project.js';

export { ROCE_ACKNOWLEDGEMENT, type RoceAcknowledgement } from '../roce/rc-answers.js';

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

const ACK = ACK_SYNDROME;

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
          response(to, 'RC_ACKNOWLEDGE', last.psn, rnrNakSyndrome(options.minRnrTimer), msn),
        );
      else if (projected.nak !== undefined && projected.nak in AethNakCode)
        responses.push(response(to, 'RC_ACKNOWLEDGE', last.psn, nakSyndrome(projected.nak), msn));
      break;
    }
    msn += 1;
    responses.push(acknowledgement(wr, projected, options, last.psn, msn));
  }
  return { requests, responses };
}
