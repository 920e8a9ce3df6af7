/**
 * The reference Responder / Data Sink of one RDMAP Stream: takes incoming RDMAP messages
 * (already decoded by the codec) and produces what an RFC 7306 RNIC does — placements,
 * receive completions, Atomic / Read Responses, or a Terminate. Deterministic, no I/O.
 *
 * Processing order per message (RFC 7306 §8.2): DDP fields (version, queue number, MSN),
 * RDMA OpCode, RDMA Version, then the operation's own checks. The first failure ends the
 * stream with a Terminate (RFC 5040 §7); nothing is half-applied.
 */

import { controlBitsFor, makeReadResponse } from '../../codec/iwarp/build.js';
import { type FamilyHandlers, handlerOf } from '../../codec/iwarp/by-family.js';
import { DDP_UNTAGGED_HEADER_LENGTH, DDP_VERSION } from '../../codec/iwarp/ddp.js';
import type {
  AtomicRequest,
  ControlBits,
  ImmediateData,
  RdmapMessage,
  RdmaReadRequest,
  RdmaWrite,
  ReadV2Request,
  Send,
  SendWithImmediate,
  Terminate,
} from '../../codec/iwarp/messages.js';
import {
  ATOMIC_OPCODES,
  type AtomicOperationKind,
  acceptedQueueNumbers,
  RDMAP_OPCODES,
  type RdmapFamily,
  type RdmapMessageKind,
  type RdmapOpcodeInfo,
  rdmapOpcodeOf,
} from '../../codec/iwarp/opcodes.js';
import {
  type IwarpProfile,
  PROFILE_RDMA_VERSION,
  profileOption,
} from '../../codec/iwarp/profiles.js';
import { decodeRdmapMessage } from '../../codec/iwarp/rdmap.js';
import { ACCESS_FLAGS, type AccessFlag } from '../../ibverbs/access-flags.js';
import { failureOfDecodeError } from '../errors/decode-failure.js';
import { type EngineFailure, taggedAccessFailure } from '../errors/failure-table.js';
import { buildTerminate } from '../errors/terminate.js';
import type { StreamIdentity, TaggedBufferTable } from '../memory/tagged-buffer.js';
import { makeReadV2Response } from '../wire/build.js';
import { executeAtomic } from './execute-atomic.js';
import type { Placement, ReceiveBuffer, ReceiveCompletion, ResponderResult } from './types.js';

/** How a Responder is set up. */
export interface ResponderOptions {
  /** Which document to follow; `rfc7306` by default. */
  readonly profile?: IwarpProfile;
  readonly stream: StreamIdentity;
  /** The Tagged Buffers (shared by every stream of the RNIC). */
  readonly buffers: TaggedBufferTable;
  /**
   * Inbound RDMA Read Queue Depth: QN 1 buffers for Read *and* Atomic Requests together
   * (RFC 7306 §5.2: atomics reuse the ORD/IRD flow control of RDMA Reads).
   */
  readonly ird: number;
  /** False models a peer without RFC 7306 Atomics (e.g. Linux siw). Default true. */
  readonly supportsAtomics?: boolean;
  /** False models a peer without RFC 7306 Immediate Data (e.g. Linux siw). Default true. */
  readonly supportsImmediateData?: boolean;
  /**
   * Where the immediate value of write-with-immediate travels. `receive-buffer` (default,
   * iWARP): RFC 7306 §6.3, the Immediate Data Message's 8 bytes are placed in the untagged
   * buffer it consumes, which must hold them. `header` (RoCE): the IBTA ImmDt header
   * carries the value and the consumed receive WQE's SGEs are not used, so a receive of
   * any length (even none) completes it.
   */
  readonly immediateCarrier?: 'receive-buffer' | 'header';
  /**
   * The QP's remote access enables (`qp_access_flags`, an ACCESS_FLAGS mask; default every
   * right). A request the QP does not enable fails before its STag is looked at
   * (`qp-access-disabled`: IBTA 1.5 Vol. 1 §10.6.3.3; rxe_resp.c check_op_valid runs
   * before check_rkey), not as the region's access-rights violation.
   */
  readonly qpAccess?: number;
  /**
   * When false, Read / Atomic Requests stay queued until `processRequests()`, so a test
   * can observe the IRD limit. Default true (processed as soon as Delivered).
   */
  readonly processOnDelivery?: boolean;
}

/** A queued inbound Read / Atomic Request (one QN 1 buffer each). */
interface PendingRequest {
  readonly message: AtomicRequest | RdmaReadRequest | ReadV2Request;
  readonly bytes: Uint8Array | undefined;
}

/** One message being assembled on QN 0 (segments share an MSN until L = 1). */
interface InboundUntagged {
  readonly buffer: ReceiveBuffer;
  readonly data: Uint8Array;
  length: number;
}

/** The families of RFC 7306 §6 Immediate Data and its V2 Send variants. */
const IMMEDIATE_FAMILIES = new Set<RdmapFamily>(['immediate-data', 'send-immediate']);

/** The Responder of one RDMAP Stream. */
export class Responder {
  readonly profile: IwarpProfile;
  readonly #options: ResponderOptions;
  readonly #receiveQueue: ReceiveBuffer[] = [];
  readonly #pending: PendingRequest[] = [];
  /** Next expected MSN per incoming untagged queue (RFC 5041 §5.3: MSN starts at 1). */
  readonly #expectedMsn = new Map<number, number>([
    [0, 1],
    [1, 1],
    [2, 1],
  ]);
  /** Next MSN per outgoing untagged queue. */
  readonly #outgoingMsn = new Map<number, number>([
    [2, 1],
    [3, 1],
  ]);
  #inbound: InboundUntagged | undefined;
  #terminated = false;
  #peerTerminate: Terminate | undefined;

  /** Per-profile lookups, computed once from the codec's tables (hot path). */
  readonly #queues: ReadonlyMap<RdmapMessageKind, readonly number[]>;
  readonly #atomicKinds: ReadonlyMap<number, AtomicOperationKind>;
  readonly #rdmaVersion: number;
  readonly #control: ControlBits;

  constructor(options: ResponderOptions) {
    this.profile = profileOption('engine', options);
    this.#options = options;
    const profile = this.profile;
    this.#queues = new Map(
      RDMAP_OPCODES.map((row) => [row.kind, acceptedQueueNumbers(row.opcode, profile)]),
    );
    this.#atomicKinds = new Map(
      ATOMIC_OPCODES.filter((row) => row.profiles.includes(profile)).map((row) => [
        row.aOpCode,
        row.kind,
      ]),
    );
    this.#rdmaVersion = PROFILE_RDMA_VERSION[profile];
    this.#control = controlBitsFor(profile);
  }

  /** True once a Terminate was sent or received: the stream accepts nothing more. */
  get terminated(): boolean {
    return this.#terminated;
  }

  /** The Terminate received from the peer, if any. */
  get peerTerminate(): Terminate | undefined {
    return this.#peerTerminate;
  }

  /** Number of Read / Atomic Requests holding a QN 1 buffer. */
  get pendingRequests(): number {
    return this.#pending.length;
  }

  /** Posts an untagged receive buffer on QN 0 (consumed in order by Sends / Immediate Data). */
  postReceive(buffer: ReceiveBuffer): void {
    this.#receiveQueue.push(buffer);
  }

  /** Number of posted, unconsumed receive buffers. */
  get postedReceives(): number {
    return this.#receiveQueue.length;
  }

  /**
   * Handles one incoming DDP segment. `bytes` is the segment as received (optional; used
   * for the exact Immediate Data length check and the Terminate header copy).
   */
  receive(message: RdmapMessage, bytes?: Uint8Array): ResponderResult {
    if (this.#terminated) return ignored();
    const out = new Collector();
    const info = rdmapOpcodeOf(message.kind);
    const failure = this.#validate(message, info, bytes);
    if (failure !== undefined) return this.#terminate(out, failure, message, bytes);
    const result = handlerOf(this.#arrival, info.family)(message, info, bytes, out);
    if (result !== undefined) return this.#terminate(out, result, message, bytes);
    if (message.kind === 'terminate') return out.result('peer-terminated');
    if (this.#options.processOnDelivery !== false) return this.#process(out);
    return out.result('accepted');
  }

  /**
   * Handles one DDP segment as bytes: decodes it with the codec (in this Responder's
   * profile) and, when the codec refuses it, answers with the Terminate the failed
   * validation calls for (RFC 7306 §8.2), copying the segment's DDP header.
   */
  receiveSegment(bytes: Uint8Array): ResponderResult {
    if (this.#terminated) return ignored();
    const decoded = decodeRdmapMessage(bytes, { profile: this.profile });
    if (decoded.ok) return this.receive(decoded.value, bytes);
    const out = new Collector();
    // RFC 7306 §8.2 checks the RDMA OpCode before the operation's own fields: a message
    // this RNIC does not implement is Unexpected OpCode (§1.1) however its body looks,
    // unless a DDP field (version, queue) failed first.
    const ddpField = ['dv', 'qn', 'rv'].includes(decoded.error.field);
    const failure =
      !ddpField && this.#unimplementedOpcode(bytes)
        ? 'unexpected-opcode'
        : failureOfDecodeError(decoded.error);
    const terminate = buildTerminate(this.profile, this.#nextOutgoingMsn(2), failure, { bytes });
    this.#terminated = true;
    this.#pending.length = 0;
    out.sent.push(terminate);
    return out.result('terminated', failure, terminate);
  }

  /** True when the segment's opcode names an extension this RNIC does not implement. */
  #unimplementedOpcode(bytes: Uint8Array): boolean {
    if (this.#rdmaVersion !== 1 || bytes.length < 2) return false;
    // RFC 5040 §4.2: the Opcode is the RDMAP control byte's low 4 bits in RV 1.
    const row = RDMAP_OPCODES.find((r) => r.opcode === (bytes[1]! & 0x0f));
    if (row === undefined) return false;
    return this.#extensionOff(row.family);
  }

  /** True when `family` is an RFC 7306 extension this RNIC was configured without (§1.1). */
  #extensionOff(family: RdmapOpcodeInfo['family']): boolean {
    if (family === 'atomic-request' || family === 'atomic-response')
      return this.#options.supportsAtomics === false;
    return IMMEDIATE_FAMILIES.has(family) && this.#options.supportsImmediateData === false;
  }

  /** Processes every queued Read / Atomic Request in the order Delivered (RFC 7306 §5.2.1). */
  processRequests(): ResponderResult {
    if (this.#terminated) return ignored();
    return this.#process(new Collector());
  }

  // ------------------------------------------------------------------------------------

  #validate(
    message: RdmapMessage,
    info: RdmapOpcodeInfo,
    bytes: Uint8Array | undefined,
  ): EngineFailure | undefined {
    // RFC 7306 §8.2: "The DDP layer MUST validate all DDP Segment fields."
    if (message.control.ddpVersion !== DDP_VERSION) return 'invalid-ddp-version';
    if (!message.ddp.tagged) {
      const queues = this.#queues.get(message.kind) ?? [];
      if (!queues.includes(message.ddp.queueNumber)) return 'invalid-qn';
      const expected = this.#expectedMsn.get(message.ddp.queueNumber);
      if (expected !== message.ddp.messageSequenceNumber) return 'msn-out-of-range';
    }
    // RFC 7306 §8.2: "The RDMA OpCode MUST be valid." An opcode outside the profile, or an
    // extension this RNIC does not implement, is Unexpected OpCode (RFC 7306 §1.1).
    if (!info.profiles.includes(this.profile)) return 'unexpected-opcode';
    if (this.#extensionOff(info.family)) return 'unexpected-opcode';
    // RFC 7306 §8.2: "The RDMA Version MUST be valid."
    if (message.control.rdmaVersion !== this.#rdmaVersion) return 'invalid-rdmap-version';
    // RFC 7306 §6.3: "The Remote Peer MUST check that Immediate Data ... include exactly
    // 8 bytes of data from the DDP layer." Only checkable on the raw segment.
    if (
      info.family === 'immediate-data' &&
      bytes !== undefined &&
      bytes.length !== DDP_UNTAGGED_HEADER_LENGTH + (info.layout?.length ?? 0)
    )
      return 'immediate-data-length';
    return undefined;
  }

  /**
   * What each family does on arrival (its own checks and effects); one handler per family,
   * so a new family does not compile until it has its behaviour here.
   */
  readonly #arrival: FamilyHandlers<
    EngineFailure | undefined,
    [RdmapOpcodeInfo, Uint8Array | undefined, Collector]
  > = {
    write: (message, _info, _bytes, out) => this.#write(message, out),
    send: (message, info, _bytes, out) => this.#send(message, info, out),
    'immediate-data': (message, _info, _bytes, out) => this.#immediate(message, out),
    'send-immediate': (message, _info, _bytes, out) => this.#sendWithImmediate(message, out),
    'atomic-request': (message, _info, bytes) => this.#queueRequest(message, bytes),
    'read-request': (message, _info, bytes) => this.#queueRequest(message, bytes),
    'read-v2-request': (message, _info, bytes) => this.#queueRequest(message, bytes),
    terminate: (message) => {
      this.#advanceMsn(message.ddp);
      this.#terminated = true;
      this.#peerTerminate = message;
      return undefined;
    },
    // Responses travel to the Requester; arriving here they answer nothing.
    'atomic-response': () => 'unexpected-response',
    'read-response': () => 'unexpected-response',
    'read-v2-response': () => 'unexpected-response',
  };

  /** True when the QP does not enable `right` (see ResponderOptions.qpAccess). */
  #qpDenies(right: AccessFlag): boolean {
    const enabled = this.#options.qpAccess;
    return enabled !== undefined && (enabled & ACCESS_FLAGS[right]) === 0;
  }

  #write(message: RdmaWrite, out: Collector): EngineFailure | undefined {
    if (this.#qpDenies('REMOTE_WRITE')) return 'qp-access-disabled';
    const { stag, taggedOffset } = message.ddp;
    const check = this.#options.buffers.check(
      this.#options.stream,
      stag,
      taggedOffset,
      message.payload.length,
      'REMOTE_WRITE',
    );
    if (!check.ok) return taggedAccessFailure(check.failure, 'ddp');
    check.access.buffer.memory.set(message.payload, check.access.offset);
    out.placements.push({ stag, taggedOffset, length: message.payload.length });
    return undefined;
  }

  /** Takes (or continues) the receive buffer of the current QN 0 message. */
  #inboundBuffer(): InboundUntagged | undefined {
    if (this.#inbound !== undefined) return this.#inbound;
    const buffer = this.#receiveQueue.shift();
    if (buffer === undefined) return undefined;
    this.#inbound = { buffer, data: new Uint8Array(buffer.length), length: 0 };
    return this.#inbound;
  }

  /** Places untagged payload at its Message Offset (RFC 5041 §4.3). */
  #placeUntagged(
    inbound: InboundUntagged,
    messageOffset: number,
    payload: Uint8Array,
  ): EngineFailure | undefined {
    // RFC 5041 §7.2 code 0x05: DDP Message too long for available buffer.
    if (messageOffset + payload.length > inbound.buffer.length) return 'message-too-long';
    inbound.data.set(payload, messageOffset);
    inbound.length = Math.max(inbound.length, messageOffset + payload.length);
    return undefined;
  }

  #send(message: Send, info: RdmapOpcodeInfo, out: Collector): EngineFailure | undefined {
    const inbound = this.#inboundBuffer();
    if (inbound === undefined) return 'no-receive-buffer';
    const placed = this.#placeUntagged(inbound, message.ddp.messageOffset, message.payload);
    if (placed !== undefined) return placed;
    if (!message.ddp.last) return undefined;
    const invalidates = info.invalidatesSTag;
    let invalidatedSTag: number | undefined;
    if (invalidates) {
      const target = this.#options.buffers.get(message.invalidateSTag);
      if (target === undefined || target.protectionDomain !== this.#options.stream.protectionDomain)
        return 'stag-cannot-be-invalidated';
      if (!this.#options.buffers.invalidate(message.invalidateSTag))
        return 'stag-cannot-be-invalidated';
      invalidatedSTag = message.invalidateSTag;
    }
    this.#complete(out, message, inbound, undefined, invalidatedSTag);
    return undefined;
  }

  #immediate(message: ImmediateData, out: Collector): EngineFailure | undefined {
    // RFC 7306 §6.3: one Immediate Data Message consumes one Untagged Buffer on QN 0.
    const inbound = this.#inboundBuffer();
    if (inbound === undefined) return 'no-receive-buffer';
    if (this.#options.immediateCarrier !== 'header') {
      const bytes = new Uint8Array(8);
      new DataView(bytes.buffer).setBigUint64(0, message.immediateData, false);
      const placed = this.#placeUntagged(inbound, 0, bytes);
      if (placed !== undefined) return placed;
    }
    this.#complete(out, message, inbound, message.immediateData, undefined);
    return undefined;
  }

  #sendWithImmediate(message: SendWithImmediate, out: Collector): EngineFailure | undefined {
    const inbound = this.#inboundBuffer();
    if (inbound === undefined) return 'no-receive-buffer';
    if (!message.ddp.last) {
      return this.#placeUntagged(inbound, message.ddp.messageOffset, message.payload);
    }
    // V2 draft §5.3: the segment with L = 1 carries the immediate data and nothing else.
    if (message.immediateData === undefined || message.payload.length > 0)
      return 'immediate-data-length';
    let invalidatedSTag: number | undefined;
    if (rdmapOpcodeOf(message.kind).invalidatesSTag) {
      const target = this.#options.buffers.get(message.invalidateSTag);
      if (
        target === undefined ||
        target.protectionDomain !== this.#options.stream.protectionDomain ||
        !this.#options.buffers.invalidate(message.invalidateSTag)
      )
        return 'stag-cannot-be-invalidated';
      invalidatedSTag = message.invalidateSTag;
    }
    this.#complete(out, message, inbound, message.immediateData, invalidatedSTag);
    return undefined;
  }

  #complete(
    out: Collector,
    message: Send | ImmediateData | SendWithImmediate,
    inbound: InboundUntagged,
    immediateData: bigint | undefined,
    invalidatedSTag: number | undefined,
  ): void {
    this.#inbound = undefined;
    this.#advanceMsn(message.ddp);
    out.completions.push({
      receiveId: inbound.buffer.id,
      messageKind: message.kind,
      byteLength: inbound.length,
      data: inbound.data.slice(0, inbound.length),
      immediateData,
      invalidatedSTag,
      solicitedEvent: rdmapOpcodeOf(message.kind).solicitedEvent,
    });
  }

  #advanceMsn(ddp: RdmapMessage['ddp']): void {
    if (ddp.tagged || !ddp.last) return;
    const next = ((this.#expectedMsn.get(ddp.queueNumber) ?? 1) + 1) >>> 0;
    this.#expectedMsn.set(ddp.queueNumber, next);
  }

  #queueRequest(
    message: AtomicRequest | RdmaReadRequest | ReadV2Request,
    bytes: Uint8Array | undefined,
  ): EngineFailure | undefined {
    // RFC 7306 §5.2 / §5.2.2: Read and Atomic Requests share the QN 1 buffers (IRD).
    if (this.#pending.length >= this.#options.ird) return 'ird-exceeded';
    // RFC 7306 §5.2.1 item 5: an unsupported AOpCode MUST surface an error.
    if (message.kind === 'atomic-request' && !this.#atomicKinds.has(message.aOpCode))
      return 'unsupported-atomic-opcode';
    this.#advanceMsn(message.ddp);
    this.#pending.push({ message, bytes });
    return undefined;
  }

  /** Runs queued requests in order; RFC 7306 §5.2.2 item 6: responses leave in that order. */
  #process(out: Collector): ResponderResult {
    while (this.#pending.length > 0) {
      const request = this.#pending[0]!;
      const failure = this.#execute(request.message, out);
      if (failure !== undefined)
        return this.#terminate(out, failure, request.message, request.bytes);
      this.#pending.shift();
    }
    return out.result('accepted');
  }

  #execute(
    message: AtomicRequest | RdmaReadRequest | ReadV2Request,
    out: Collector,
  ): EngineFailure | undefined {
    const { buffers, stream } = this.#options;
    if (message.kind === 'atomic-request') {
      if (this.#qpDenies('REMOTE_ATOMIC')) return 'qp-access-disabled';
      const check = buffers.check(
        stream,
        message.remoteSTag,
        message.remoteTaggedOffset,
        8,
        'REMOTE_ATOMIC',
      );
      if (!check.ok) return taggedAccessFailure(check.failure, 'rdmap');
      // RFC 7306 §8.2: the ULP Buffer address MUST be 64-bit aligned, else Remote
      // Operation Error / Catastrophic error, localized to RDMAP Stream; memory untouched.
      if ((check.access.address & 7n) !== 0n) return 'misaligned-atomic';
      const kind = this.#atomicKinds.get(message.aOpCode)!;
      const { original } = executeAtomic(kind, check.access, message);
      // RFC 7306 §5.2.2: untagged, QN 3, the request's identifier and the original value.
      // Built inline (same values as the codec's makeAtomicResponse) to keep the hot
      // path free of per-message table lookups.
      out.sent.push({
        kind: 'atomic-response',
        ddp: {
          tagged: false,
          last: true,
          queueNumber: 3,
          messageSequenceNumber: this.#nextOutgoingMsn(3),
          messageOffset: 0,
        },
        control: this.#control,
        invalidateSTag: 0,
        originalRequestIdentifier: message.requestIdentifier,
        originalRemoteDataValue: original,
      });
      return undefined;
    }
    if (this.#qpDenies('REMOTE_READ')) return 'qp-access-disabled';
    const check = buffers.check(
      stream,
      message.sourceSTag,
      message.sourceTaggedOffset,
      message.readSize,
      'REMOTE_READ',
    );
    if (!check.ok) return taggedAccessFailure(check.failure, 'rdmap');
    const { memory } = check.access.buffer;
    const data = memory.slice(check.access.offset, check.access.offset + message.readSize);
    if (message.kind === 'rdma-read-request') {
      out.sent.push(
        makeReadResponse(
          { stag: message.sinkSTag, taggedOffset: message.sinkTaggedOffset, payload: data },
          this.profile,
        ),
      );
    } else {
      // V2 draft §6: the Read V2 Response is untagged on QN 3.
      out.sent.push(makeReadV2Response(this.#nextOutgoingMsn(3), data));
    }
    return undefined;
  }

  #nextOutgoingMsn(queue: number): number {
    const msn = this.#outgoingMsn.get(queue) ?? 1;
    this.#outgoingMsn.set(queue, (msn + 1) >>> 0);
    return msn;
  }

  #terminate(
    out: Collector,
    failure: EngineFailure,
    message: RdmapMessage,
    bytes: Uint8Array | undefined,
  ): ResponderResult {
    const terminate = buildTerminate(this.profile, this.#nextOutgoingMsn(2), failure, {
      message,
      ...(bytes === undefined ? {} : { bytes }),
    });
    this.#terminated = true;
    this.#pending.length = 0;
    out.sent.push(terminate);
    return out.result('terminated', failure, terminate);
  }
}

/** Accumulates one call's outputs. */
class Collector {
  readonly sent: RdmapMessage[] = [];
  readonly completions: ReceiveCompletion[] = [];
  readonly placements: Placement[] = [];

  result(
    outcome: ResponderResult['outcome'],
    failure?: EngineFailure,
    terminate?: Terminate,
  ): ResponderResult {
    return {
      outcome,
      sent: this.sent,
      completions: this.completions,
      placements: this.placements,
      failure,
      terminate,
      ignoredReason: undefined,
    };
  }
}

function ignored(): ResponderResult {
  return {
    outcome: 'ignored',
    sent: [],
    completions: [],
    placements: [],
    failure: undefined,
    terminate: undefined,
    ignoredReason: 'stream-terminated',
  };
}
