/**
 * The reference Requester of one iWARP RDMAP Stream: posts work requests as RDMAP
 * messages, keeps Read and Atomic Requests within ORD (RFC 7306 §5.2: atomics share the
 * RDMA Read ORD), matches Atomic Responses and Read V2 Responses on QN 3 by MSN (RFC 7306
 * §5.1, V2 draft §6), Read Responses by order (RFC 5040 §5.5), and turns a received
 * Terminate into error completions.
 */

import { byFamily, type FamilyHandlers } from '../../codec/iwarp/by-family.js';
import type {
  AtomicResponse,
  RdmapMessage,
  RdmaReadResponse,
  ReadV2Response,
  Terminate,
} from '../../codec/iwarp/messages.js';
import { type IwarpProfile, profileOption } from '../../codec/iwarp/profiles.js';
import type { QpState } from '../../ibverbs/qp-state.js';
import type { WcStatus } from '../../ibverbs/wc-status.js';
import { type EngineFailure, taggedAccessFailure } from '../errors/failure-table.js';
import { buildTerminate } from '../errors/terminate.js';
import type {
  StreamIdentity,
  TaggedAccessFailure,
  TaggedBufferTable,
} from '../memory/tagged-buffer.js';
import { errorCompletion, type WorkCompletion } from '../projection/work-completion.js';
import { type IwarpSendState, newIwarpSendState, workRequestToIwarp } from './to-iwarp.js';
import type { WorkRequest, WorkRequestError } from './work-request.js';

/** How a Requester is set up. */
export interface RequesterOptions {
  readonly profile?: IwarpProfile;
  /** Outbound RDMA Read Queue Depth, shared by Reads and Atomics. */
  readonly ord: number;
  /** Local buffers that RDMA Read Responses are placed into. */
  readonly localBuffers?: TaggedBufferTable;
  readonly stream?: StreamIdentity;
  /**
   * Status given to work requests cut short by a received Terminate: a function of the
   * Terminate (see `projection/terminate-status.ts`); default REM_OP_ERR for the
   * request in progress and WR_FLUSH_ERR for the rest.
   */
  readonly terminateStatus?: (terminate: Terminate) => WcStatus;
  /**
   * Whether a local error placing a response (an Atomic Response whose local SGE is
   * refused) sends a Terminate to the peer: RFC 7306 §8.1 ("The Local Peer MUST send a
   * Terminate Message"), default true. False for the RoCE projection, where a local error
   * completes the WQE in error and sends nothing (IBTA 10.7.3).
   */
  readonly localErrorTerminates?: boolean;
}

/** One posted work request awaiting its completion. */
interface Outstanding {
  readonly wr: WorkRequest;
  /** QN 3 MSN its response will carry (atomics); undefined for Reads (tagged response). */
  readonly responseMsn: number | undefined;
  readonly requestIdentifier: number | undefined;
  readonly messages: readonly RdmapMessage[];
}

/** What one call into the Requester produced. */
export interface RequesterResult {
  /** Messages to transmit now, in order. */
  readonly sent: readonly RdmapMessage[];
  /** Send-side completions, in order. */
  readonly completions: readonly WorkCompletion[];
  /** Set when this call found a protocol error (and `sent` ends with the Terminate). */
  readonly failure: EngineFailure | undefined;
}

/** The Requester of one RDMAP Stream. */
export class Requester {
  readonly profile: IwarpProfile;
  readonly #options: RequesterOptions;
  readonly #send: IwarpSendState = newIwarpSendState();
  /** Read / Atomic requests on the wire, in order. */
  readonly #inFlight: Outstanding[] = [];
  /** Requests waiting for an ORD slot, in order (verbs does not fail them, it waits). */
  readonly #waiting: Outstanding[] = [];
  #expectedQn3Msn = 1;
  #nextQn3Msn = 1;
  #qpState: QpState = 'RTS';
  #outgoingQn2Msn = 1;

  constructor(options: RequesterOptions) {
    this.profile = profileOption('engine', options);
    this.#options = options;
  }

  /** The QP state a verbs user would query. */
  get qpState(): QpState {
    return this.#qpState;
  }

  /** Read / Atomic requests on the wire (at most ORD). */
  get outstanding(): number {
    return this.#inFlight.length;
  }

  /**
   * Posts `wr`. Returns the messages to send now (possibly none while ORD is full) and
   * any immediate send-side completions, or a typed error when the profile cannot carry
   * the request. Posting to a QP in error flushes (WR_FLUSH_ERR), like verbs.
   */
  post(
    wr: WorkRequest,
  ):
    | { readonly ok: true; readonly result: RequesterResult }
    | { readonly ok: false; readonly error: WorkRequestError } {
    if (this.#qpState === 'ERR')
      return ok({
        sent: [],
        completions: [errorCompletion(wr.wrId, 'WR_FLUSH_ERR')],
        failure: undefined,
      });
    const encoded = workRequestToIwarp(wr, this.profile, this.#send);
    if (!encoded.ok) return { ok: false, error: encoded.error };
    const needsResponse = wr.opcode === 'RDMA_READ' || wr.opcode.startsWith('ATOMIC');
    if (!needsResponse)
      // RFC 5040 §5.5: a Send / RDMA Write completes at the Local Peer once handed to the
      // LLP; the engine's LLP is reliable, so it completes on post.
      return ok({ sent: encoded.messages, completions: [sendCompletion(wr)], failure: undefined });
    // Atomic Responses and Read V2 Responses come back untagged on QN 3 (RFC 7306 §5.1,
    // V2 draft §6): their MSN is fixed now, in posting order.
    const qn3 = wr.opcode !== 'RDMA_READ' || wr.readV2 === true;
    const first = encoded.messages[0];
    const entry: Outstanding = {
      wr,
      responseMsn: qn3 ? this.#allocateQn3Msn() : undefined,
      requestIdentifier:
        first !== undefined && first.kind === 'atomic-request'
          ? first.requestIdentifier
          : undefined,
      messages: encoded.messages,
    };
    if (this.#inFlight.length >= this.#options.ord) {
      this.#waiting.push(entry);
      return ok({ sent: [], completions: [], failure: undefined });
    }
    this.#inFlight.push(entry);
    return ok({ sent: entry.messages, completions: [], failure: undefined });
  }

  /** Handles an incoming message (responses, Terminate). */
  receive(message: RdmapMessage): RequesterResult {
    if (this.#qpState === 'ERR') return { sent: [], completions: [], failure: undefined };
    return byFamily(message, this.#arrival);
  }

  /**
   * What each family does arriving at the Requester: responses and Terminate; anything
   * else answers nothing it sent. One handler per family, so a new one does not compile
   * until it is decided here.
   */
  readonly #arrival: FamilyHandlers<RequesterResult> = {
    'atomic-response': (message) => this.#atomicResponse(message),
    'read-response': (message) => this.#readResponse(message),
    'read-v2-response': (message) => this.#readV2Response(message),
    terminate: (message) => this.#terminated(message),
    write: (message) => this.#fail('unexpected-response', message),
    send: (message) => this.#fail('unexpected-response', message),
    'immediate-data': (message) => this.#fail('unexpected-response', message),
    'send-immediate': (message) => this.#fail('unexpected-response', message),
    'read-request': (message) => this.#fail('unexpected-response', message),
    'read-v2-request': (message) => this.#fail('unexpected-response', message),
    'atomic-request': (message) => this.#fail('unexpected-response', message),
  };

  #allocateQn3Msn(): number {
    const msn = this.#nextQn3Msn;
    this.#nextQn3Msn = (msn + 1) >>> 0;
    return msn;
  }

  #atomicResponse(message: AtomicResponse): RequesterResult {
    // RFC 7306 §5.1: "the Message Sequence Number (MSN) will be used to locate the
    // corresponding Atomic Operation request".
    const entry = this.#qn3Request(message.ddp.messageSequenceNumber);
    if (entry === undefined || entry.requestIdentifier !== message.originalRequestIdentifier)
      // RFC 7306 §5.2.2: an invalid Atomic Response surfaces an error at the Requester.
      return this.#fail('unexpected-response', message);
    this.#retireQn3(entry);
    const localError = this.#placeAtomicOriginal(entry.wr, message.originalRemoteDataValue);
    if (localError !== undefined) return this.#localError(entry.wr, localError);
    const completion: WorkCompletion = {
      wrId: entry.wr.wrId,
      status: 'SUCCESS',
      opcode: entry.wr.opcode === 'ATOMIC_FETCH_AND_ADD' ? 'FETCH_ADD' : 'COMP_SWAP',
      byteLen: 8,
      immData: undefined,
      flags: [],
      atomicOriginal: message.originalRemoteDataValue,
    };
    return { sent: this.#release(), completions: [completion], failure: undefined };
  }

  /**
   * Places an atomic's original value into its local SGE (host byte order, little-endian
   * here), or names the local error (IBTA 10.7.3; work-request.ts AtomicLocal).
   */
  #placeAtomicOriginal(wr: WorkRequest, original: bigint): WcStatus | undefined {
    if (!('local' in wr) || wr.local === undefined) return undefined;
    if (wr.local === null || wr.local.length < 8) return 'LOC_LEN_ERR';
    const local = this.#options.localBuffers;
    if (local === undefined || this.#options.stream === undefined) return 'LOC_PROT_ERR';
    const check = local.check(this.#options.stream, wr.local.lkey, wr.local.addr, 8, 'LOCAL_WRITE');
    if (!check.ok) return 'LOC_PROT_ERR';
    new DataView(
      check.access.buffer.memory.buffer,
      check.access.buffer.memory.byteOffset,
    ).setBigUint64(check.access.offset, original, true);
    return undefined;
  }

  /**
   * A local error: the request completes with `status`, the QP goes to ERR and every
   * other outstanding request is flushed (verbs: later posts flush too, see `post`). On
   * iWARP the stream ends with a Terminate (RFC 7306 §8.1: the Local Peer MUST send one;
   * item 1's layout, no header copied, as the Atomic Response itself is valid: the
   * fault is this side's work request). Its failure is the Requester's own, so the
   * result's `failure` (a protocol error of the peer's message) stays undefined.
   */
  #localError(wr: WorkRequest, status: WcStatus): RequesterResult {
    this.#qpState = 'ERR';
    const rest = [...this.#inFlight.splice(0), ...this.#waiting.splice(0)];
    const terminates = this.#options.localErrorTerminates !== false;
    return {
      sent: terminates
        ? [buildTerminate(this.profile, this.#outgoingQn2Msn++, 'requester-local-error', undefined)]
        : [],
      completions: [
        errorCompletion(wr.wrId, status),
        ...rest.map((o) => errorCompletion(o.wr.wrId, 'WR_FLUSH_ERR')),
      ],
      failure: undefined,
    };
  }

  #readResponse(message: RdmaReadResponse): RequesterResult {
    // RFC 5040 §5.5: Read Responses come back in the order of the Read Requests.
    const index = this.#inFlight.findIndex(
      (o) => o.wr.opcode === 'RDMA_READ' && o.responseMsn === undefined,
    );
    const entry = this.#inFlight[index];
    if (entry === undefined || entry.wr.opcode !== 'RDMA_READ')
      return this.#fail('unexpected-response', message);
    const refused = this.#placeLocal(message.ddp.stag, message.ddp.taggedOffset, message.payload);
    if (refused !== undefined) return this.#fail(taggedAccessFailure(refused, 'ddp'), message);
    if (!message.ddp.last) return { sent: [], completions: [], failure: undefined };
    this.#inFlight.splice(index, 1);
    const completion: WorkCompletion = {
      wrId: entry.wr.wrId,
      status: 'SUCCESS',
      opcode: 'RDMA_READ',
      byteLen: entry.wr.length,
      immData: undefined,
      flags: [],
    };
    return { sent: this.#release(), completions: [completion], failure: undefined };
  }

  #readV2Response(message: ReadV2Response): RequesterResult {
    // V2 draft §6: "the MSN MUST be used to locate the corresponding RDMA Read V2 request".
    const entry = this.#qn3Request(message.ddp.messageSequenceNumber);
    if (entry === undefined || entry.wr.opcode !== 'RDMA_READ')
      return this.#fail('unexpected-response', message);
    const wr = entry.wr;
    const to = wr.localAddr + BigInt(message.ddp.messageOffset);
    if (this.#placeLocal(wr.localSTag, to, message.payload) !== undefined)
      return this.#fail('message-too-long', message);
    if (!message.ddp.last) return { sent: [], completions: [], failure: undefined };
    this.#retireQn3(entry);
    const completion: WorkCompletion = {
      wrId: wr.wrId,
      status: 'SUCCESS',
      opcode: 'RDMA_READ',
      byteLen: wr.length,
      immData: undefined,
      flags: [],
    };
    return { sent: this.#release(), completions: [completion], failure: undefined };
  }

  /**
   * The request a QN 3 response answers, located by the response's MSN (RFC 7306 §5.1, V2
   * draft §6), or undefined when none waits for it or it is not the MSN expected next.
   */
  #qn3Request(msn: number): Outstanding | undefined {
    const entry = this.#inFlight.find((o) => o.responseMsn === msn);
    return msn === this.#expectedQn3Msn ? entry : undefined;
  }

  /** The QN 3 response of `entry` is complete: the next MSN is expected, its ORD slot freed. */
  #retireQn3(entry: Outstanding): void {
    this.#expectedQn3Msn = (this.#expectedQn3Msn + 1) >>> 0;
    this.#inFlight.splice(this.#inFlight.indexOf(entry), 1);
  }

  /**
   * Writes `payload` at (`stag`, `to`) of the requester's local buffers, when it models them
   * (IBTA 10.7.3: a local write access); the check's failure when refused.
   */
  #placeLocal(stag: number, to: bigint, payload: Uint8Array): TaggedAccessFailure | undefined {
    const local = this.#options.localBuffers;
    if (local === undefined || this.#options.stream === undefined) return undefined;
    const check = local.check(this.#options.stream, stag, to, payload.length, 'LOCAL_WRITE');
    if (!check.ok) return check.failure;
    check.access.buffer.memory.set(payload, check.access.offset);
    return undefined;
  }

  /** Moves waiting requests into freed ORD slots; returns their messages. */
  #release(): RdmapMessage[] {
    const sent: RdmapMessage[] = [];
    while (this.#waiting.length > 0 && this.#inFlight.length < this.#options.ord) {
      const next = this.#waiting.shift()!;
      this.#inFlight.push(next);
      sent.push(...next.messages);
    }
    return sent;
  }

  /** RFC 5040 §7 / RFC 7306 §6.1: the peer's Terminate ends the stream; WRs complete in error. */
  #terminated(terminate: Terminate): RequesterResult {
    const first = this.#options.terminateStatus?.(terminate) ?? 'REM_OP_ERR';
    const completions = this.#flushAll(first);
    return { sent: [], completions, failure: undefined };
  }

  #flushAll(firstStatus: WcStatus): WorkCompletion[] {
    this.#qpState = 'ERR';
    const all = [...this.#inFlight, ...this.#waiting];
    this.#inFlight.length = 0;
    this.#waiting.length = 0;
    return all.map((o, i) => errorCompletion(o.wr.wrId, i === 0 ? firstStatus : 'WR_FLUSH_ERR'));
  }

  #fail(failure: EngineFailure, message: RdmapMessage): RequesterResult {
    const terminate = buildTerminate(this.profile, this.#outgoingQn2Msn++, failure, { message });
    const completions = this.#flushAll('BAD_RESP_ERR');
    return { sent: [terminate], completions, failure };
  }
}

function ok(result: RequesterResult): { readonly ok: true; readonly result: RequesterResult } {
  return { ok: true, result };
}

/** The local completion of a Send / RDMA Write (signaled). */
function sendCompletion(wr: WorkRequest): WorkCompletion {
  const write = wr.opcode === 'RDMA_WRITE' || wr.opcode === 'RDMA_WRITE_WITH_IMM';
  return {
    wrId: wr.wrId,
    status: 'SUCCESS',
    opcode: write ? 'RDMA_WRITE' : 'SEND',
    byteLen: 'payload' in wr ? wr.payload.length : 0,
    immData: undefined,
    flags: [],
  };
}
