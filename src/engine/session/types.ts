/**
 * The engine session's vocabulary: how a connection is brought up, what a step takes and
 * returns, the misuse error, and the argument checks every step runs first.
 */
import {
  requireArray,
  requireBoolean,
  requireInteger,
  requireKnownOptions,
  requireName,
  requireObject,
} from '../../arguments.js';
import { ArgumentError } from '../../errors.js';
import { ACCESS_FLAGS } from '../../ibverbs/access-flags.js';
import type { TaggedBufferRegistration } from '../memory/tagged-buffer.js';
import type { TransportOutcome, WireMessage } from '../projection/project.js';
import type { WorkCompletion } from '../projection/work-completion.js';
import type { WorkRequestError } from '../requester/work-request.js';

/** The two QPs of the session's connection. */
export type SessionSide = 'requester' | 'responder';

export const SIDES: Readonly<Record<SessionSide, 0>> = { requester: 0, responder: 0 };
export const TRANSPORTS = { iwarp: 0, roce: 0 } as const;

/**
 * The remote rights a responder QP must enable as well as the region (IBTA 1.5 §10.6.3.3:
 * a remote access needs the QP's access enable and the region's).
 */
export const REMOTE_RIGHTS =
  ACCESS_FLAGS.REMOTE_READ | ACCESS_FLAGS.REMOTE_WRITE | ACCESS_FLAGS.REMOTE_ATOMIC;

/** The defaults libibverbs users commonly bring an RC QP up with (src/verbs/connect.ts). */
export const DEFAULT_MIN_RNR_TIMER = 12;
export const DEFAULT_RNR_RETRY = 7;

/** How the session's connection is brought up. */
export interface EngineSessionOptions {
  /** `iwarp` (RFC 5040/7306 over MPA) or `roce` (RoCEv2, IBTA 1.5 Annex A17). */
  readonly transport: 'iwarp' | 'roce';
  readonly responder: {
    /** The responder's registered regions (their `contents` the memory before the first step). */
    readonly buffers: readonly TaggedBufferRegistration[];
    /** Inbound RDMA Read / Atomic depth (default 16). */
    readonly ird?: number;
    readonly protectionDomain?: number;
    /** iWARP only: false models a peer without RFC 7306 atomics. */
    readonly supportsAtomics?: boolean;
    /** iWARP only: false models a peer without RFC 7306 Immediate Data. */
    readonly supportsImmediateData?: boolean;
    /** The QP's remote access enables (`ACCESS_FLAGS` mask; default read, write, atomic). */
    readonly qpAccess?: number;
    /** The rights the QP gates (default read, write, atomic; a caller adds the flush ones). */
    readonly qpGatedAccess?: number;
    /** min_rnr_timer, an IBTA Table 45 code (default 12). */
    readonly minRnrTimer?: number;
    /** Receives go to a shared receive queue (IBTA 1.5 §10.2.9). */
    readonly srq?: boolean;
  };
  readonly requester?: {
    /** Outbound RDMA Read / Atomic depth (default 16). */
    readonly ord?: number;
    /** The requester's registered regions (Read data lands in them). */
    readonly localBuffers?: readonly TaggedBufferRegistration[];
    /** rnr_retry (0-7, 7 = without limit; default 7). */
    readonly rnrRetry?: number;
  };
}

/** A receive: its wr_id, its length, and where its bytes are in the responder's memory. */
export interface SessionReceive {
  readonly id: bigint;
  readonly length: number;
  /** The region (STag) and Tagged Offset of its buffer; without them, its data is not kept. */
  readonly stag?: number;
  readonly addr?: bigint;
}

/** A memory window the session binds (IBTA 1.5 §10.6.7) over a responder region. */
export interface SessionWindow {
  /** The STag of the region it is bound over. */
  readonly parent: number;
  readonly stag: number;
  readonly baseTaggedOffset: bigint;
  readonly length: number;
  readonly access: number;
  /** Type 2 windows are associated with the QP they are bound on (§10.6.7.2.1). */
  readonly type: 1 | 2;
}

/** What a post returned: the requests of this post the requester refused, with why. */
export interface SessionPostResult {
  readonly refused: readonly WorkRequestError[];
}

/** A polled completion; a receive taken from the SRQ names the QP its request came on. */
export type SessionCompletion = WorkCompletion & { readonly via?: string };

/** What crossed the wire so far, as the transport carries it. */
export interface SessionWire {
  /** iWARP: every RDMAP message both ways, in order. */
  readonly iwarp: readonly WireMessage[];
  /** RoCEv2: the requester's request packets, in order. */
  readonly roce: TransportOutcome['roceRequests'];
}

/** A session step that the session's configuration does not allow. */
export class SessionMisuseError extends ArgumentError {
  override readonly name: string = 'SessionMisuseError';
}

export const RECEIVE_CONSUMERS: ReadonlySet<string> = new Set([
  'SEND',
  'SEND_WITH_IMM',
  'SEND_WITH_INV',
  'RDMA_WRITE_WITH_IMM',
]);

export function requireSide(side: unknown): asserts side is SessionSide {
  requireName('engine', 'session side', SIDES, side, 'side');
}

export function checkOptions(options: EngineSessionOptions): void {
  requireObject('engine', 'options', options);
  requireKnownOptions('engine', 'options', options, ['transport', 'responder', 'requester']);
  requireName('engine', 'transport', TRANSPORTS, options.transport, 'options.transport');
  requireObject('engine', 'options.responder', options.responder);
  requireKnownOptions('engine', 'options.responder', options.responder, [
    'buffers',
    'ird',
    'protectionDomain',
    'supportsAtomics',
    'supportsImmediateData',
    'qpAccess',
    'qpGatedAccess',
    'minRnrTimer',
    'srq',
  ]);
  const r = options.responder;
  requireArray('engine', 'options.responder.buffers', r.buffers);
  if (r.qpAccess !== undefined)
    requireInteger('engine', 'options.responder.qpAccess', r.qpAccess, 0);
  if (r.qpGatedAccess !== undefined)
    requireInteger('engine', 'options.responder.qpGatedAccess', r.qpGatedAccess, 0);
  if (r.minRnrTimer !== undefined)
    requireInteger('engine', 'options.responder.minRnrTimer', r.minRnrTimer, 0, 31);
  if (r.srq !== undefined) requireBoolean('engine', 'options.responder.srq', r.srq);
  const q = options.requester;
  if (q !== undefined) {
    requireKnownOptions('engine', 'options.requester', q, ['ord', 'localBuffers', 'rnrRetry']);
    if (q.rnrRetry !== undefined)
      requireInteger('engine', 'options.requester.rnrRetry', q.rnrRetry, 0, 7);
  }
  // The rest (depths, buffers, extensions) is checked by the projection on the first step.
}
