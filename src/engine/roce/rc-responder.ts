/**
 * The transport rules of an InfiniBand / RoCEv2 RC responder, packet by packet: the one
 * RC responder of the engine. It gives what the packet tester (src/probe/)
 * expects a device to answer when the tester plays the requester, and the answers in the
 * packets the suite predicts (../projection/roce-exchange.ts). The engine's Responder
 * (../responder/) models the operations as iWARP messages; this model adds what RoCE
 * decides per packet (PSN, opcode sequence, lengths, the responder resources of Reads and
 * Atomics), as public sources cite the IBTA Vol. 1:
 *
 *   - header validation, §9.6: a bad ICRC (Annex A17.3.3), a reserved opcode, a QPN that
 *     is not this QP, or an opcode of another transport: silently dropped;
 *   - QP state, §10.3.1: a QP in RESET or INIT drops every packet, a QP in ERR too;
 *   - PSN, §9.7.4.1 / §9.7.5.1.2: the expected PSN is executed; a PSN ahead of it (the
 *     "invalid" half of the PSN space) gets ONE NAK PSN Sequence Error carrying the
 *     expected PSN, further ones are dropped until the expected PSN comes (C9-113); a PSN
 *     behind it is a duplicate: a Send or Write is acknowledged and not placed again, a Read
 *     is executed again, an Atomic is answered from its saved result and not executed
 *     again (§9.7.5.1.3, C9-121);
 *   - opcode sequence, §9.7.5.1.4: a MIDDLE or LAST with no FIRST, or a FIRST inside a
 *     message: NAK Invalid Request;
 *   - length, §9.7.5.1.5 (C9-76): a payload over the PMTU, or a message whose payload (pad
 *     bytes removed, BTH PadCnt) differs from the RETH DMA length: NAK Invalid Request;
 *   - the QP's remote access enables, §10.6.3.3, checked first: an operation they do not
 *     allow is NAK Invalid Request (rxe_resp.c check_op_valid), not Remote Access Error;
 *   - R_Key and bounds, §9.7.5.2.8: NAK Remote Access Error; an Atomic that is not 8-byte
 *     aligned (o9-21): NAK Invalid Request;
 *   - ATOMIC WRITE (IBTA 1.5 Annex A19, oA19-28): exactly 8 bytes, 8-byte aligned; anything
 *     else NAK Invalid Request; a responder without it answers the opcode like any
 *     operation it does not support: NAK Invalid Request;
 *   - a Send or a Write with Immediate with no receive posted: RNR NAK carrying the
 *     responder's min_rnr_timer (§9.7.5.2.8, Table 45), the PSN is not consumed.
 *
 * This file holds the transport rules only. The semantics (placement, R_Key / access /
 * bounds, atomics, receive consumption) come from an {@link RcSemantics}
 * (./rc-semantics.ts): for the tester one region over the engine's shared core
 * (./rc-region.ts), for the suite the shared responder core's run of the scenario. The
 * answers' shapes are ./rc-answers.ts, the PSN arithmetic ./psn.ts.
 *
 * Deterministic, no I/O: the caller passes decoded packets and reads the answers and the
 * memory back.
 */

import type { AethNakCodeName, AethSyndrome } from '../../codec/roce/aeth.js';
import { bthOpcodeInfo } from '../../codec/roce/opcodes.js';
import type { RocePacket } from '../../codec/roce/packet.js';
import { ArgumentError } from '../../errors.js';
import type { AccessFlag } from '../../ibverbs/access-flags.js';
import { HALF_PSN_SPACE, PSN_SPACE, psnAdd, psnDistance } from './psn.js';
import { ACK_SYNDROME, nakSyndrome, readResponseOpcode, rnrNakSyndrome } from './rc-answers.js';
import { type RoceRegion, RoceRegionSemantics } from './rc-region.js';
import {
  isRefusal,
  type RcRefusal,
  type RcSemantics,
  type RoceReceiveCompletion,
} from './rc-semantics.js';

export { psnAdd, psnDistance } from './psn.js';
export type { RoceRegion } from './rc-region.js';
export type { RcRefusal, RcSemantics, RoceReceiveCompletion } from './rc-semantics.js';

/**
 * The request families the responder executes (the BTH operation without FIRST / MIDDLE /
 * LAST / ONLY and WITH_*: §9.4 SEND, RDMA WRITE, RDMA READ, the ATOMICs; IBTA 1.5 Annex
 * A19 ATOMIC WRITE and FLUSH). Any other request opcode is answered NAK Invalid Request.
 */
export const RC_REQUEST_FAMILIES = [
  'SEND',
  'RDMA_WRITE',
  'RDMA_READ_REQUEST',
  'FETCH_ADD',
  'COMPARE_SWAP',
  'ATOMIC_WRITE',
  'FLUSH',
] as const;
export type RcRequestFamily = (typeof RC_REQUEST_FAMILIES)[number];

function isRequestFamily(family: string): family is RcRequestFamily {
  return (RC_REQUEST_FAMILIES as readonly string[]).includes(family);
}

/** The QP states that matter to a responder (§10.3.1). */
export type RoceQpState = 'RESET' | 'INIT' | 'RTR' | 'RTS' | 'ERR';

/** The transport parameters of the responder QP. */
export interface RoceRcTransportOptions {
  /** This (the device's) QPN. */
  readonly qpn: number;
  /** The requester's QPN, where answers go. */
  readonly requesterQpn: number;
  /** The first expected PSN (the QP's rq_psn). */
  readonly expectedPsn: number;
  /** Path MTU in bytes. */
  readonly mtu: number;
  /** The responder's min_rnr_timer code (Table 45), as an RNR NAK carries it. */
  readonly minRnrTimer: number;
  /** Saved Read / Atomic results the responder keeps (max_dest_rd_atomic). */
  readonly maxDestRdAtomic: number;
  readonly state?: RoceQpState;
}

/** The tester's responder: the transport over one region (./rc-region.ts). */
export interface RoceRcResponderOptions extends RoceRcTransportOptions {
  readonly region: RoceRegion;
  /** Receive buffers posted, by length, in order. */
  readonly receives?: readonly number[];
  /** Whether the responder implements ATOMIC WRITE (IBTA 1.5). */
  readonly atomicWrite: boolean;
  /**
   * The QP's remote access enables (default Remote Write, Read and Atomic): a request they
   * do not allow is NAK Invalid Request, before the R_Key is looked at (rc-region.ts).
   */
  readonly qpAccess?: readonly AccessFlag[];
  /** Whether the QP and the region grant FLUSH_GLOBAL (IBTA 1.5 FLUSH); default not. */
  readonly flush?: boolean;
}

/** One answer the responder sends (a packet, in the terms of the codec's decoder). */
export interface RoceAnswer {
  /** BTH opcode name, e.g. `RC_ACKNOWLEDGE`. */
  readonly opcode: string;
  readonly psn: number;
  readonly syndrome: AethSyndrome;
  /** Read Response payload / Atomic original value (hex, for the comparison). */
  readonly payloadHex?: string;
  readonly originalRemoteData?: bigint;
}

/** What one packet did. */
export interface RoceResponderStep {
  /** `executed`: a new request, carried out; `duplicate`: answered as a duplicate; `nak`;
   *  `dropped`: silently dropped; `rnr`: RNR NAK. */
  readonly outcome: 'executed' | 'duplicate' | 'nak' | 'dropped' | 'rnr' | 'accepted';
  /** Which rule decided (stable names, shown in results). */
  readonly rule: string;
  readonly answers: readonly RoceAnswer[];
  readonly completions: readonly RoceReceiveCompletion[];
}

/** A saved Read or Atomic (a "responder resource"). */
interface SavedResult {
  readonly psn: number;
  readonly kind: 'read' | 'atomic';
  readonly packet: RocePacket;
  /** Atomic: the original value sent back. */
  readonly original?: bigint;
  /** Read: how many response packets (PSNs) it used. */
  readonly span: number;
}

const ACK = ACK_SYNDROME;
const nak = (code: AethNakCodeName): AethSyndrome => nakSyndrome(code);

function hex(bytes: Uint8Array): string {
  return Buffer.from(bytes).toString('hex');
}

/** The RC responder model (see the file comment for the rules and their sources). */
export class RoceRcResponder {
  readonly #o: RoceRcTransportOptions;
  readonly #semantics: RcSemantics;
  /** Set when the semantics are the tester's region (postReceive goes there). */
  readonly #region: RoceRegionSemantics | undefined;
  readonly #saved: SavedResult[] = [];
  #expected: number;
  #state: RoceQpState;
  #nakSent = false;
  /** Messages completed (the MSN, §9.7.5.1.2: an AETH carries it; 24 bits). */
  #msn = 0;
  /** The operation of the message in progress (after a FIRST), or undefined. */
  #inMessage: string | undefined;
  #messageOffset = 0;
  #messageLength = 0;

  /** The tester's responder: one region over the engine's shared core. */
  constructor(options: RoceRcResponderOptions);
  /** A responder whose semantics come from `semantics` (the suite's engine run). */
  constructor(options: RoceRcTransportOptions, semantics: RcSemantics);
  constructor(options: RoceRcTransportOptions | RoceRcResponderOptions, semantics?: RcSemantics) {
    this.#o = options;
    if (semantics === undefined) {
      const o = options as RoceRcResponderOptions;
      this.#region = new RoceRegionSemantics(
        o.region,
        o.receives ?? [],
        o.atomicWrite,
        o.qpAccess,
        o.flush ?? false,
      );
      this.#semantics = this.#region;
    } else {
      this.#region = undefined;
      this.#semantics = semantics;
    }
    this.#expected = options.expectedPsn;
    this.#state = options.state ?? 'RTS';
  }

  /** The region's bytes as the model has them now. */
  get memory(): Uint8Array {
    return this.#semantics.memory;
  }

  get expectedPsn(): number {
    return this.#expected;
  }

  get state(): RoceQpState {
    return this.#state;
  }

  /** Posts a receive buffer of `length` bytes (the tester's region semantics). */
  postReceive(length: number): void {
    if (this.#region === undefined)
      throw new ArgumentError(
        'engine',
        'postReceive',
        'this responder was given its semantics, which keep their own receives',
      );
    this.#region.postReceive(length);
  }

  /** The MSN: how many messages the responder completed (mod 2^24). */
  get msn(): number {
    return this.#msn;
  }

  /**
   * One packet from the requester. `packet` undefined means it did not decode (a reserved
   * opcode or a malformed header); `icrcValid` false means its ICRC did not match.
   */
  receive(packet: RocePacket | undefined, icrcValid: boolean): RoceResponderStep {
    if (!icrcValid) return dropped('icrc-mismatch');
    if (packet === undefined) return dropped('undecodable');
    if (packet.bth.destinationQp !== this.#o.qpn) return dropped('unknown-qpn');
    if (this.#state === 'RESET' || this.#state === 'INIT') return dropped('qp-not-ready');
    if (this.#state === 'ERR') return dropped('qp-in-error');
    if (packet.opcode.transport !== 'RC') return dropped('wrong-transport');
    if (['ACKNOWLEDGE', 'ATOMIC_ACKNOWLEDGE'].includes(packet.opcode.operation))
      return dropped('response-at-responder');
    if (packet.opcode.operation.startsWith('RDMA_READ_RESPONSE'))
      return dropped('response-at-responder');
    const distance = psnDistance(packet.bth.psn, this.#expected);
    if (distance === 0) return this.#execute(packet);
    if (distance < HALF_PSN_SPACE) {
      if (this.#nakSent) return dropped('psn-ahead-nak-already-sent');
      this.#nakSent = true;
      return answer('nak', 'psn-ahead', [
        this.#ackPacket(this.#expected, nak('PSN_SEQUENCE_ERROR')),
      ]);
    }
    return this.#duplicate(packet);
  }

  #ackPacket(psn: number, syndrome: AethSyndrome): RoceAnswer {
    return { opcode: 'RC_ACKNOWLEDGE', psn, syndrome };
  }

  /** A NAK that ends the exchange: Invalid Request and Remote Access move the QP to ERR (§10.3.1). */
  #fatal(rule: string, code: AethNakCodeName, psn: number): RoceResponderStep {
    this.#state = 'ERR';
    return answer('nak', rule, [this.#ackPacket(psn, nak(code))]);
  }

  #rnr(rule: string, psn: number): RoceResponderStep {
    return answer('rnr', rule, [this.#ackPacket(psn, rnrNakSyndrome(this.#o.minRnrTimer))]);
  }

  /**
   * What the semantics refused: a NAK of its class (the QP to ERR), an RNR NAK (the PSN
   * not consumed, §9.7.5.2.8), or no answer (the QP to ERR: nothing more is executed).
   */
  #refused(refusal: RcRefusal, psn: number): RoceResponderStep {
    if (refusal.answer === 'nak') return this.#fatal(refusal.rule, refusal.code, psn);
    if (refusal.answer === 'rnr') return this.#rnr(refusal.rule, psn);
    this.#state = 'ERR';
    return dropped(refusal.rule);
  }

  #execute(p: RocePacket): RoceResponderStep {
    const op = p.opcode;
    const psn = p.bth.psn;
    const known = bthOpcodeInfo(p.bth.opcode);
    if (known === undefined) return dropped('undecodable');
    const payloadLength = p.payload.length;
    if (payloadLength > this.#o.mtu)
      return this.#fatal('payload-over-pmtu', 'INVALID_REQUEST', psn);
    // Opcode sequence (§9.7.5.1.4).
    const family = op.operation.replace(/_(FIRST|MIDDLE|LAST|ONLY)(_WITH_.*)?$/, '');
    if (op.position === 'middle' || op.position === 'last') {
      if (this.#inMessage !== family) return this.#fatal('opcode-sequence', 'INVALID_REQUEST', psn);
    } else if (this.#inMessage !== undefined)
      return this.#fatal('opcode-sequence', 'INVALID_REQUEST', psn);
    if (!isRequestFamily(family)) return this.#fatal('unsupported-opcode', 'INVALID_REQUEST', psn);
    switch (family) {
      case 'RDMA_WRITE':
        return this.#write(p);
      case 'SEND':
        return this.#send(p);
      case 'RDMA_READ_REQUEST':
        return this.#read(p, false);
      case 'FETCH_ADD':
      case 'COMPARE_SWAP':
        return this.#atomic(p);
      case 'ATOMIC_WRITE':
        return this.#atomicWrite(p);
      case 'FLUSH':
        return this.#flush(p);
      default:
        throw new TypeError(`unhandled request family ${String(family satisfies never)}`);
    }
  }

  #advance(n = 1): void {
    this.#expected = psnAdd(this.#expected, n);
    this.#nakSent = false;
  }

  /** A message completed: the MSN counts it (§9.7.5.1.2), modulo 2^24 like a PSN. */
  #completed(): void {
    this.#msn = psnAdd(this.#msn, 1);
  }

  #write(p: RocePacket): RoceResponderStep {
    const psn = p.bth.psn;
    const position = p.opcode.position;
    const withImmediate = p.opcode.operation.endsWith('WITH_IMMEDIATE');
    if (withImmediate && !this.#semantics.receiveReady()) return this.#rnr('no-receive', psn);
    if (position === 'first' || position === 'only') {
      const reth = p.headers.RETH;
      if (reth === undefined) return this.#fatal('opcode-sequence', 'INVALID_REQUEST', psn);
      const refusal = this.#semantics.writeTarget(reth);
      if (refusal !== undefined) return this.#refused(refusal, psn);
      this.#messageLength = reth.dmaLength;
      this.#messageOffset = 0;
    }
    const end = this.#messageOffset + p.payload.length;
    const last = position === 'last' || position === 'only';
    // C9-76: a message's payload is the RETH length; FIRST and MIDDLE carry exactly one PMTU.
    if (end > this.#messageLength || (last && end !== this.#messageLength))
      return this.#fatal('length-mismatch', 'INVALID_REQUEST', psn);
    if (!last && p.payload.length !== this.#o.mtu)
      return this.#fatal('length-mismatch', 'INVALID_REQUEST', psn);
    this.#semantics.placeWrite(this.#messageOffset, p.payload);
    this.#messageOffset = end;
    this.#inMessage = last ? undefined : 'RDMA_WRITE';
    this.#advance();
    if (last) this.#completed();
    const completions: RoceReceiveCompletion[] = [];
    if (last && withImmediate)
      completions.push(
        this.#semantics.consumeReceive({
          byteLength: this.#messageLength,
          immediateData: p.headers.ImmDt?.immediateData,
          opcode: 'RECV_RDMA_WITH_IMM',
        }),
      );
    const answers = last || p.bth.ackRequest ? [this.#ackPacket(psn, ACK)] : [];
    return { outcome: 'executed', rule: 'write', answers, completions };
  }

  #send(p: RocePacket): RoceResponderStep {
    const psn = p.bth.psn;
    const position = p.opcode.position;
    if ((position === 'first' || position === 'only') && !this.#semantics.receiveReady())
      return this.#rnr('no-receive', psn);
    if (position === 'first' || position === 'only') this.#messageOffset = 0;
    const end = this.#messageOffset + p.payload.length;
    const last = position === 'last' || position === 'only';
    if (!last && p.payload.length !== this.#o.mtu)
      return this.#fatal('length-mismatch', 'INVALID_REQUEST', psn);
    const refusal = last ? this.#semantics.sendRefusal() : undefined;
    if (refusal !== undefined) return this.#refused(refusal, psn);
    this.#messageOffset = end;
    this.#inMessage = last ? undefined : 'SEND';
    this.#advance();
    const completions: RoceReceiveCompletion[] = [];
    if (last) {
      this.#completed();
      completions.push(
        this.#semantics.consumeReceive({
          byteLength: end,
          immediateData: p.headers.ImmDt?.immediateData,
          opcode: 'RECV',
        }),
      );
    }
    const answers = last || p.bth.ackRequest ? [this.#ackPacket(psn, ACK)] : [];
    return { outcome: 'executed', rule: 'send', answers, completions };
  }

  /** A Read's response packets (§9.7.5.1.5: PMTU-sized, one PSN each), or the refusal. */
  #readAnswers(p: RocePacket): { answers: RoceAnswer[]; span: number } | RcRefusal | undefined {
    const reth = p.headers.RETH;
    if (reth === undefined) return undefined;
    const result = this.#semantics.read(reth);
    if (isRefusal(result)) return result;
    const data = result.data;
    const span = Math.max(1, Math.ceil(data.length / this.#o.mtu));
    const answers: RoceAnswer[] = [];
    for (let i = 0; i < span; i++) {
      answers.push({
        opcode: readResponseOpcode(i, span),
        psn: psnAdd(p.bth.psn, i),
        syndrome: ACK,
        payloadHex: hex(data.subarray(i * this.#o.mtu, (i + 1) * this.#o.mtu)),
      });
    }
    return { answers, span };
  }

  #save(result: SavedResult): void {
    this.#saved.push(result);
    while (this.#saved.length > this.#o.maxDestRdAtomic) this.#saved.shift();
  }

  #read(p: RocePacket, duplicate: boolean): RoceResponderStep {
    const result = this.#readAnswers(p);
    if (result === undefined) return this.#fatal('remote-access', 'REMOTE_ACCESS_ERROR', p.bth.psn);
    if (isRefusal(result)) return this.#refused(result, p.bth.psn);
    if (!duplicate) {
      this.#save({ psn: p.bth.psn, kind: 'read', packet: p, span: result.span });
      this.#advance(result.span);
      this.#completed();
    }
    return {
      outcome: duplicate ? 'duplicate' : 'executed',
      rule: duplicate ? 'duplicate-read-executed-again' : 'read',
      answers: result.answers,
      completions: [],
    };
  }

  #atomic(p: RocePacket): RoceResponderStep {
    const psn = p.bth.psn;
    const eth = p.headers.AtomicETH;
    if (eth === undefined) return this.#fatal('opcode-sequence', 'INVALID_REQUEST', psn);
    const kind = p.opcode.operation === 'FETCH_ADD' ? 'fetch-add' : 'cmp-swap';
    const result = this.#semantics.atomic(kind, eth);
    if (isRefusal(result)) return this.#refused(result, psn);
    const { original } = result;
    this.#save({ psn, kind: 'atomic', packet: p, original, span: 1 });
    return this.#executedOne('atomic', {
      opcode: 'RC_ATOMIC_ACKNOWLEDGE',
      psn,
      syndrome: ACK,
      originalRemoteData: original,
    });
  }

  #atomicWrite(p: RocePacket): RoceResponderStep {
    const psn = p.bth.psn;
    if (!this.#semantics.atomicWriteSupported())
      return this.#fatal('unsupported-opcode', 'INVALID_REQUEST', psn);
    const reth = p.headers.RETH;
    if (reth === undefined) return this.#fatal('opcode-sequence', 'INVALID_REQUEST', psn);
    const refusal = this.#semantics.atomicWrite(reth, p.payload);
    if (refusal !== undefined) return this.#refused(refusal, psn);
    return this.#executedOne('atomic-write', this.#ackPacket(psn, ACK));
  }

  /** A one-packet request executed: its PSN consumed, its message counted, one answer. */
  #executedOne(rule: string, reply: RoceAnswer): RoceResponderStep {
    this.#advance();
    this.#completed();
    return { outcome: 'executed', rule, answers: [reply], completions: [] };
  }

  /**
   * FLUSH (IBTA 1.5 Annex A19): answered, once the requests before it are placed, by an
   * RDMA READ Response ONLY without data (rxe_comp.c check_ack accepts it for IB_WR_FLUSH).
   */
  #flush(p: RocePacket): RoceResponderStep {
    const psn = p.bth.psn;
    const reth = p.headers.RETH;
    if (reth === undefined) return this.#fatal('opcode-sequence', 'INVALID_REQUEST', psn);
    const refusal = this.#semantics.flush(reth);
    if (refusal !== undefined) return this.#refused(refusal, psn);
    return this.#executedOne('flush', { opcode: 'RC_RDMA_READ_RESPONSE_ONLY', psn, syndrome: ACK });
  }

  #duplicate(p: RocePacket): RoceResponderStep {
    const family = p.opcode.operation;
    if (family === 'RDMA_READ_REQUEST') return this.#read(p, true);
    if (family === 'FETCH_ADD' || family === 'COMPARE_SWAP') {
      const saved = this.#saved.find((s) => s.kind === 'atomic' && s.psn === p.bth.psn);
      // C9-121: an Atomic whose result is no longer kept cannot be answered: dropped.
      if (saved === undefined) return dropped('duplicate-atomic-not-saved');
      return {
        outcome: 'duplicate',
        rule: 'duplicate-atomic-replayed',
        answers: [
          {
            opcode: 'RC_ATOMIC_ACKNOWLEDGE',
            psn: saved.psn,
            syndrome: ACK,
            originalRemoteData: saved.original ?? 0n,
          },
        ],
        completions: [],
      };
    }
    // A duplicate Send or Write: acknowledged (coalesced, up to the last PSN executed), not placed.
    return answer('duplicate', 'duplicate-acknowledged', [
      this.#ackPacket(psnAdd(this.#expected, PSN_SPACE - 1), ACK),
    ]);
  }
}

function dropped(rule: string): RoceResponderStep {
  return { outcome: 'dropped', rule, answers: [], completions: [] };
}

function answer(
  outcome: RoceResponderStep['outcome'],
  rule: string,
  answers: RoceAnswer[],
): RoceResponderStep {
  return { outcome, rule, answers, completions: [] };
}
