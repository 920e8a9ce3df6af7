/**
 * The transport rules of an InfiniBand / RoCEv2 RC responder, packet by packet: what the
 * packet tester (src/probe/) expects a device to answer when the tester plays the
 * requester. The engine's Responder (../responder/) models the operations as iWARP
 * messages; this model adds what RoCE decides per packet (PSN, opcode sequence, lengths,
 * the responder resources of Reads and Atomics), as public sources cite the IBTA Vol. 1:
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
 *   - R_Key and bounds, §9.7.5.2.8: NAK Remote Access Error; an Atomic that is not 8-byte
 *     aligned (o9-21): NAK Invalid Request;
 *   - ATOMIC WRITE (IBTA 1.5 Annex A19, oA19-28): exactly 8 bytes, 8-byte aligned; anything
 *     else NAK Invalid Request; a responder without it answers the opcode like any
 *     operation it does not support: NAK Invalid Request;
 *   - a Send or a Write with Immediate with no receive posted: RNR NAK carrying the
 *     responder's min_rnr_timer (§9.7.5.2.8, Table 45), the PSN is not consumed.
 *
 * Deterministic, no I/O: the caller passes decoded packets and reads the answers and the
 * memory back.
 */

import type { AethSyndrome } from '../../codec/roce/aeth.js';
import { bthOpcodeInfo } from '../../codec/roce/opcodes.js';
import type { RocePacket } from '../../codec/roce/packet.js';

/** PSN arithmetic is modulo 2^24 (IBTA §9.7.1). */
const PSN_SPACE = 0x1000000;
const HALF_PSN_SPACE = PSN_SPACE / 2;

/** `a - b` modulo 2^24. */
export function psnDistance(a: number, b: number): number {
  return (a - b + PSN_SPACE) % PSN_SPACE;
}

/** `psn + n` modulo 2^24. */
export function psnAdd(psn: number, n: number): number {
  return (psn + n) % PSN_SPACE;
}

/** The QP states that matter to a responder (§10.3.1). */
export type RoceQpState = 'RESET' | 'INIT' | 'RTR' | 'RTS' | 'ERR';

/** The one memory region the tester targets. */
export interface RoceRegion {
  readonly virtualAddress: bigint;
  readonly rKey: number;
  /** The region's bytes (copied: the model keeps its own mirror). */
  readonly contents: Uint8Array;
}

export interface RoceRcResponderOptions {
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
  readonly region: RoceRegion;
  /** Receive buffers posted, by length, in order. */
  readonly receives?: readonly number[];
  /** Whether the responder implements ATOMIC WRITE (IBTA 1.5). */
  readonly atomicWrite: boolean;
  readonly state?: RoceQpState;
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

/** A receive completion the responder's verbs program sees. */
export interface RoceReceiveCompletion {
  readonly byteLength: number;
  readonly immediateData: number | undefined;
  readonly opcode: 'RECV' | 'RECV_RDMA_WITH_IMM';
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

const ACK: AethSyndrome = { kind: 'ACK', creditCount: 31 };

function nak(code: 'PSN_SEQUENCE_ERROR' | 'INVALID_REQUEST' | 'REMOTE_ACCESS_ERROR'): AethSyndrome {
  return { kind: 'NAK', code };
}

function hex(bytes: Uint8Array): string {
  return Buffer.from(bytes).toString('hex');
}

/** The RC responder model (see the file comment for the rules and their sources). */
export class RoceRcResponder {
  readonly #o: RoceRcResponderOptions;
  readonly #memory: Uint8Array;
  readonly #receives: number[];
  readonly #saved: SavedResult[] = [];
  #expected: number;
  #state: RoceQpState;
  #nakSent = false;
  /** The operation of the message in progress (after a FIRST), or undefined. */
  #inMessage: string | undefined;
  #messageOffset = 0;
  #messageLength = 0;
  #messageVa = 0n;

  constructor(options: RoceRcResponderOptions) {
    this.#o = options;
    // A copy: `contents` may be a Buffer, whose slice() is a view of the same memory.
    this.#memory = Uint8Array.from(options.region.contents);
    this.#receives = [...(options.receives ?? [])];
    this.#expected = options.expectedPsn;
    this.#state = options.state ?? 'RTS';
  }

  /** The region's bytes as the model has them now. */
  get memory(): Uint8Array {
    return this.#memory.slice();
  }

  get expectedPsn(): number {
    return this.#expected;
  }

  get state(): RoceQpState {
    return this.#state;
  }

  /** Posts a receive buffer of `length` bytes. */
  postReceive(length: number): void {
    this.#receives.push(length);
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
  #fatal(
    rule: string,
    code: 'INVALID_REQUEST' | 'REMOTE_ACCESS_ERROR',
    psn: number,
  ): RoceResponderStep {
    this.#state = 'ERR';
    return answer('nak', rule, [this.#ackPacket(psn, nak(code))]);
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
      default:
        return this.#fatal('unsupported-opcode', 'INVALID_REQUEST', psn);
    }
  }

  /** R_Key and bounds (§9.7.5.2.8): the MR offset, or undefined. */
  #target(va: bigint, rKey: number, length: number): number | undefined {
    const r = this.#o.region;
    if (rKey !== r.rKey) return undefined;
    const offset = va - r.virtualAddress;
    if (offset < 0n || offset + BigInt(length) > BigInt(r.contents.length)) return undefined;
    return Number(offset);
  }

  #advance(n = 1): void {
    this.#expected = psnAdd(this.#expected, n);
    this.#nakSent = false;
  }

  #write(p: RocePacket): RoceResponderStep {
    const psn = p.bth.psn;
    const position = p.opcode.position;
    const withImmediate = p.opcode.operation.endsWith('WITH_IMMEDIATE');
    if (withImmediate && this.#receives.length === 0)
      return answer('rnr', 'no-receive', [
        this.#ackPacket(psn, { kind: 'RNR_NAK', timer: this.#o.minRnrTimer }),
      ]);
    if (position === 'first' || position === 'only') {
      const reth = p.headers.RETH;
      if (reth === undefined) return this.#fatal('opcode-sequence', 'INVALID_REQUEST', psn);
      if (this.#target(reth.virtualAddress, reth.rKey, reth.dmaLength) === undefined)
        return this.#fatal('remote-access', 'REMOTE_ACCESS_ERROR', psn);
      this.#messageVa = reth.virtualAddress;
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
    const at = Number(this.#messageVa - this.#o.region.virtualAddress) + this.#messageOffset;
    this.#memory.set(p.payload, at);
    this.#messageOffset = end;
    this.#inMessage = last ? undefined : 'RDMA_WRITE';
    this.#advance();
    const completions: RoceReceiveCompletion[] = [];
    if (last && withImmediate) {
      this.#receives.shift();
      completions.push({
        byteLength: this.#messageLength,
        immediateData: p.headers.ImmDt?.immediateData,
        opcode: 'RECV_RDMA_WITH_IMM',
      });
    }
    const answers = last || p.bth.ackRequest ? [this.#ackPacket(psn, ACK)] : [];
    return { outcome: 'executed', rule: 'write', answers, completions };
  }

  #send(p: RocePacket): RoceResponderStep {
    const psn = p.bth.psn;
    const position = p.opcode.position;
    if ((position === 'first' || position === 'only') && this.#receives.length === 0)
      return answer('rnr', 'no-receive', [
        this.#ackPacket(psn, { kind: 'RNR_NAK', timer: this.#o.minRnrTimer }),
      ]);
    if (position === 'first' || position === 'only') this.#messageOffset = 0;
    const end = this.#messageOffset + p.payload.length;
    const last = position === 'last' || position === 'only';
    if (!last && p.payload.length !== this.#o.mtu)
      return this.#fatal('length-mismatch', 'INVALID_REQUEST', psn);
    this.#messageOffset = end;
    this.#inMessage = last ? undefined : 'SEND';
    this.#advance();
    const completions: RoceReceiveCompletion[] = [];
    if (last) {
      this.#receives.shift();
      completions.push({
        byteLength: end,
        immediateData: p.headers.ImmDt?.immediateData,
        opcode: 'RECV',
      });
    }
    const answers = last || p.bth.ackRequest ? [this.#ackPacket(psn, ACK)] : [];
    return { outcome: 'executed', rule: 'send', answers, completions };
  }

  #readAnswers(p: RocePacket): { answers: RoceAnswer[]; span: number } | undefined {
    const reth = p.headers.RETH;
    if (reth === undefined) return undefined;
    const offset = this.#target(reth.virtualAddress, reth.rKey, reth.dmaLength);
    if (offset === undefined) return undefined;
    const data = this.#memory.subarray(offset, offset + reth.dmaLength);
    const span = Math.max(1, Math.ceil(data.length / this.#o.mtu));
    const answers: RoceAnswer[] = [];
    for (let i = 0; i < span; i++) {
      const name =
        span === 1
          ? 'RC_RDMA_READ_RESPONSE_ONLY'
          : i === 0
            ? 'RC_RDMA_READ_RESPONSE_FIRST'
            : i === span - 1
              ? 'RC_RDMA_READ_RESPONSE_LAST'
              : 'RC_RDMA_READ_RESPONSE_MIDDLE';
      answers.push({
        opcode: name,
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
    if (!duplicate) {
      this.#save({ psn: p.bth.psn, kind: 'read', packet: p, span: result.span });
      this.#advance(result.span);
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
    if (eth.virtualAddress % 8n !== 0n)
      return this.#fatal('atomic-misaligned', 'INVALID_REQUEST', psn);
    const offset = this.#target(eth.virtualAddress, eth.rKey, 8);
    if (offset === undefined) return this.#fatal('remote-access', 'REMOTE_ACCESS_ERROR', psn);
    const view = new DataView(this.#memory.buffer, this.#memory.byteOffset + offset, 8);
    // The responder's memory is host order; rxe runs on little-endian hosts.
    const original = view.getBigUint64(0, true);
    const next =
      p.opcode.operation === 'FETCH_ADD'
        ? BigInt.asUintN(64, original + eth.swapOrAddData)
        : original === eth.compareData
          ? eth.swapOrAddData
          : original;
    view.setBigUint64(0, next, true);
    this.#save({ psn, kind: 'atomic', packet: p, original, span: 1 });
    this.#advance();
    return {
      outcome: 'executed',
      rule: 'atomic',
      answers: [
        { opcode: 'RC_ATOMIC_ACKNOWLEDGE', psn, syndrome: ACK, originalRemoteData: original },
      ],
      completions: [],
    };
  }

  #atomicWrite(p: RocePacket): RoceResponderStep {
    const psn = p.bth.psn;
    if (!this.#o.atomicWrite) return this.#fatal('unsupported-opcode', 'INVALID_REQUEST', psn);
    const reth = p.headers.RETH;
    if (reth === undefined) return this.#fatal('opcode-sequence', 'INVALID_REQUEST', psn);
    // oA19-28: exactly 8 bytes; o9-21: 8-byte aligned.
    if (reth.dmaLength !== 8 || p.payload.length !== 8)
      return this.#fatal('atomic-write-length', 'INVALID_REQUEST', psn);
    if (reth.virtualAddress % 8n !== 0n)
      return this.#fatal('atomic-misaligned', 'INVALID_REQUEST', psn);
    const offset = this.#target(reth.virtualAddress, reth.rKey, 8);
    if (offset === undefined) return this.#fatal('remote-access', 'REMOTE_ACCESS_ERROR', psn);
    this.#memory.set(p.payload, offset);
    this.#advance();
    return {
      outcome: 'executed',
      rule: 'atomic-write',
      answers: [this.#ackPacket(psn, ACK)],
      completions: [],
    };
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
