/**
 * The RoCEv2 packets of a verbs scenario, both directions, as the engine predicts them.
 *
 * Requests: the engine's own encoding (`workRequestToRoce`, IBTA §9.4), from the
 * requester's first PSN. Responses: the engine's one RC responder (../roce/rc-responder.ts,
 * the transport rules of IBTA Vol. 1 §9.7 the packet tester's expectations come from too)
 * answers each request packet, with the semantics of the engine's run of the same scenario
 * (`projectRoce`, the shared responder core): one acknowledgement per message, with the
 * request's PSN and the MSN of completed messages (§9.7.5.1.2), up to the first failure.
 * At the failure: the NAK the engine's failure table names (IBTA Table 44; §9.7.5.2.8),
 * or for a missing receive an RNR NAK with the responder's min_rnr_timer (§9.7.5.2.8; an
 * rnr_retry of 0 ends the exchange there); the requests after it are not sent.
 */
import {
  AethNakCode,
  type AethNakCodeName,
  type AethSyndrome,
  encodeAethSyndrome,
} from '../../codec/roce/aeth.js';
import { makeBth } from '../../codec/roce/bth.js';
import type { AtomicEth, ExtensionHeaders, Reth } from '../../codec/roce/headers.js';
import { BthOpcode, bthOpcodeInfo } from '../../codec/roce/opcodes.js';
import type { RocePacket as DecodedRocePacket, RocePacketFields } from '../../codec/roce/packet.js';
import { workRequestToRoce } from '../requester/to-roce.js';
import type { ModelledWrOpcode, WorkRequest } from '../requester/work-request.js';
import { PSN_MASK } from '../roce/psn.js';
import { type RcRequestFamily, type RoceAnswer, RoceRcResponder } from '../roce/rc-responder.js';
import type { RcRefusal, RcSemantics, RoceReceiveCompletion } from '../roce/rc-semantics.js';
import { projectRoce, type TransportOutcome, type VerbsScenario } from './project.js';

/**
 * Which rule of the RC responder answers each work request the engine encodes
 * (`workRequestToRoce`): the request family its packets carry. A work request kind new to
 * the engine is a compile error here until it names one, and the responder answers it by
 * that family's rule (an ACK, an ATOMIC Acknowledge, Read Response packets, or the empty
 * Read Response of a FLUSH).
 */
export const ROCE_REQUEST_FAMILY = {
  RDMA_WRITE: 'RDMA_WRITE',
  RDMA_WRITE_WITH_IMM: 'RDMA_WRITE',
  SEND: 'SEND',
  SEND_WITH_IMM: 'SEND',
  SEND_WITH_INV: 'SEND',
  RDMA_READ: 'RDMA_READ_REQUEST',
  ATOMIC_FETCH_AND_ADD: 'FETCH_ADD',
  ATOMIC_CMP_AND_SWP: 'COMPARE_SWAP',
  ATOMIC_WRITE: 'ATOMIC_WRITE',
  FLUSH: 'FLUSH',
} as const satisfies Record<ModelledWrOpcode, RcRequestFamily>;

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

/** The RC responder's answer as a packet to the requester, with the responder's MSN. */
function answerPacket(a: RoceAnswer, destinationQp: number, msn: number): RocePacket {
  const extra: ExtensionHeaders =
    a.originalRemoteData === undefined
      ? {}
      : { AtomicAckETH: { originalRemoteData: a.originalRemoteData } };
  const payload =
    a.payloadHex === undefined ? undefined : Uint8Array.from(Buffer.from(a.payloadHex, 'hex'));
  return response(
    destinationQp,
    a.opcode as keyof typeof BthOpcode,
    a.psn,
    a.syndrome,
    msn,
    extra,
    payload,
  );
}

/**
 * The semantics of the engine's run (`projectRoce`) for the RC responder: the requests
 * before the failing one execute (their results are the run's: an Atomic's original
 * value, a Read's bytes from the responder's region), the failing one is refused as the
 * failure table says, by the first check the RC responder asks of it.
 */
class ProjectedSemantics implements RcSemantics {
  readonly #projected: TransportOutcome;
  readonly #options: RoceExchangeOptions;
  readonly #failedWrId: bigint | undefined;
  /** The work request whose packets the responder is being given. */
  wr: WorkRequest | undefined;

  constructor(
    projected: TransportOutcome,
    options: RoceExchangeOptions,
    failedWrId: bigint | undefined,
  ) {
    this.#projected = projected;
    this.#options = options;
    this.#failedWrId = failedWrId;
  }

  /** The run's memory is read per Read; the responder keeps none of its own. */
  get memory(): Uint8Array {
    return new Uint8Array(0);
  }

  /** The failing request's refusal: RNR NAK, the failure table's NAK, or no answer. */
  #refusal(): RcRefusal | undefined {
    if (this.wr === undefined || this.wr.wrId !== this.#failedWrId) return undefined;
    const { failure, nak } = this.#projected;
    const rule = failure ?? 'failed';
    if (failure === 'no-receive-buffer') return { rule, answer: 'rnr' };
    if (nak !== undefined && nak in AethNakCode)
      return { rule, answer: 'nak', code: nak as AethNakCodeName };
    return { rule, answer: 'none' };
  }

  receiveReady(): boolean {
    return true;
  }

  writeTarget(_reth: Reth): RcRefusal | undefined {
    return this.#refusal();
  }

  placeWrite(_at: number, _payload: Uint8Array): void {}

  sendRefusal(): RcRefusal | undefined {
    return this.#refusal();
  }

  consumeReceive(completion: RoceReceiveCompletion): RoceReceiveCompletion {
    return completion;
  }

  read(reth: Reth): { readonly data: Uint8Array } | RcRefusal {
    const refusal = this.#refusal();
    if (refusal !== undefined) return refusal;
    // The Read's bytes from the responder's region as the run left it.
    const region = this.#projected.memory.get(this.#options.remote.stag);
    const at = Number(reth.virtualAddress - this.#options.remote.base);
    return { data: region?.slice(at, at + reth.dmaLength) ?? new Uint8Array(0) };
  }

  atomic(
    _kind: 'fetch-add' | 'cmp-swap',
    _eth: AtomicEth,
  ): { readonly original: bigint } | RcRefusal {
    const refusal = this.#refusal();
    if (refusal !== undefined) return refusal;
    const wrId = this.wr?.wrId;
    const done = this.#projected.requester.completions.find((wc) => wc.wrId === wrId);
    return { original: done?.atomicOriginal ?? 0n };
  }

  atomicWriteSupported(): boolean {
    return true;
  }

  atomicWrite(_reth: Reth, _payload: Uint8Array): RcRefusal | undefined {
    return this.#refusal();
  }

  flush(_reth: Reth): RcRefusal | undefined {
    return this.#refusal();
  }
}

/**
 * A request packet as the responder sees it after decoding (no bytes needed: the engine
 * built it; PSN in 24 bits, as the BTH carries it). Undefined for an opcode the codec does
 * not know, which the responder drops as undecodable.
 */
function decodedView(fields: RocePacketFields): DecodedRocePacket | undefined {
  const opcode = bthOpcodeInfo(fields.bth.opcode);
  if (opcode === undefined) return undefined;
  return {
    bth: makeBth({ ...fields.bth, psn: fields.bth.psn & PSN_MASK }),
    opcode,
    headers: fields.headers,
    payload: fields.payload ?? new Uint8Array(0),
    pad: new Uint8Array(0),
    icrc: 0,
  };
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
  const semantics = new ProjectedSemantics(projected, options, failedWrId);
  const responder = new RoceRcResponder(
    {
      qpn: options.responderQp,
      requesterQpn: options.requesterQp,
      expectedPsn: options.firstPsn & PSN_MASK,
      mtu: options.mtu,
      minRnrTimer: options.minRnrTimer,
      maxDestRdAtomic: verbs.responder.ird ?? 16,
    },
    semantics,
  );
  for (const wr of verbs.workRequests) {
    const encoded = workRequestToRoce(wr, state);
    if (!encoded.ok) break;
    semantics.wr = wr;
    // After a NAK or RNR NAK, the request's later packets are on the wire but the responder
    // is not asked again: the requester's retry or its ERR decides (the exchange ends here).
    let refused = false;
    for (const fields of encoded.packets) {
      requests.push({
        opcode: fields.bth.opcode,
        psn: fields.bth.psn & PSN_MASK,
        destinationQp: fields.bth.destinationQp,
        solicitedEvent: fields.bth.solicitedEvent ?? false,
        headers: fields.headers,
        payload: fields.payload ?? new Uint8Array(0),
      });
      if (refused) continue;
      const step = responder.receive(decodedView(fields), true);
      for (const a of step.answers)
        responses.push(answerPacket(a, options.requesterQp, responder.msn));
      refused = step.outcome === 'nak' || step.outcome === 'rnr';
    }
    // The failing request ends the exchange (a NAK moves both QPs to ERR; an RNR NAK with
    // the link's rnr_retry of 0 ends it too).
    if (wr.wrId === failedWrId) break;
  }
  return { requests, responses };
}
