/**
 * The reference RNIC pair as a session: an RC connection between a requester QP and a
 * responder QP that a caller drives step by step, as it would drive two devices through
 * libibverbs: post work requests and receives, poll completions, query and modify the
 * QPs, let time pass for the RNR timers, arm an SRQ's limit, read memory and the wire.
 *
 * Each step runs the engine's requester and responder (src/engine/requester/, responder/)
 * over what has been posted so far, through the transport's projection (projection/:
 * iWARP per RFC 5040/7306, RoCEv2 per IBTA 1.5); the engine is deterministic, so a request
 * sees what the requests before it did. What is a verbs rule rather than a transport rule
 * lives beside it here: the RNR retries (rnr.ts), the SRQ's limit (srq.ts), the Write posted
 * back to a requester in ERR (write-back.ts), the solicited event (§11.4.2.2).
 */
import {
  requireArray,
  requireInteger,
  requireKnownOptions,
  requireName,
  requireObject,
} from '../../arguments.js';
import { ArgumentError } from '../../errors.js';
import type { QpState } from '../../ibverbs/qp-state.js';
import {
  projectIwarp,
  projectRoce,
  REQUESTER_STREAM,
  RESPONDER_STREAM,
  type ResponderWindow,
  type TransportOutcome,
  type VerbsScenario,
} from '../projection/project.js';
import type { WorkCompletion } from '../projection/work-completion.js';
import type { WorkRequest } from '../requester/work-request.js';
import { RNR_TIMER_MS, servedByRetry } from './rnr.js';
import { SrqCount } from './srq.js';
import {
  checkOptions,
  DEFAULT_MIN_RNR_TIMER,
  DEFAULT_RNR_RETRY,
  type EngineSessionOptions,
  RECEIVE_CONSUMERS,
  REMOTE_RIGHTS,
  requireSide,
  type SessionCompletion,
  SessionMisuseError,
  type SessionPostResult,
  type SessionReceive,
  type SessionSide,
  type SessionWindow,
  type SessionWire,
} from './types.js';
import { writeBackCompletion } from './write-back.js';

export type {
  EngineSessionOptions,
  SessionCompletion,
  SessionPostResult,
  SessionReceive,
  SessionSide,
  SessionWindow,
  SessionWire,
} from './types.js';
export { SessionMisuseError } from './types.js';

/**
 * A reference RNIC pair, driven step by step. Every method checks its arguments and
 * throws an `ArgumentError` (an `UnknownNameError` for a bad side name, a
 * `SessionMisuseError` for a step the configuration does not allow) before it changes
 * anything.
 *
 * @example
 * const session = new EngineSession({ transport: 'roce', responder: { buffers: [region] } });
 * session.post('requester', [{ wrId: 1n, opcode: 'ATOMIC_FETCH_AND_ADD', ... }]);
 * session.poll('requester'); // { status: 'SUCCESS', atomicOriginal: ... }
 */
export class EngineSession {
  readonly #options: EngineSessionOptions;
  readonly #wrs: WorkRequest[] = [];
  readonly #receives: Array<{ receive: SessionReceive; at: number }> = [];
  readonly #windows: ResponderWindow[] = [];
  readonly #writeBacks: WorkCompletion[] = [];
  readonly #polled: Record<SessionSide, number> = { requester: 0, responder: 0 };
  readonly #qpAccess: Record<SessionSide, number>;
  readonly #stateOverride: Partial<Record<SessionSide, QpState>> = {};
  /** What each Read found at its target, by wr_id (an RC responder executes in order). */
  readonly #readData = new Map<bigint, Uint8Array>();
  /** The QP each receive-consuming request came on, in posting order (the SRQ's consumers). */
  readonly #consumers: string[] = [];
  readonly #srq: SrqCount | undefined;
  #frozenAccess: number | undefined;
  #clock = 0;
  #firstPostAt: number | undefined;
  #version = 0;
  #cache: { version: number; verbs: VerbsScenario; outcome: TransportOutcome } | undefined;

  constructor(options: EngineSessionOptions) {
    checkOptions(options);
    this.#options = options;
    const qp = options.responder.qpAccess ?? REMOTE_RIGHTS;
    this.#qpAccess = { requester: REMOTE_RIGHTS, responder: qp };
    this.#srq = options.responder.srq === true ? new SrqCount() : undefined;
    // The projection checks the regions and depths: a bad one fails here, not mid-program.
    this.#settle();
  }

  /** The milliseconds the session's clock has advanced. */
  get now(): number {
    return this.#clock;
  }

  /**
   * Posts `wrs` on `side` (ibv_post_send). On the requester they go to the responder; on
   * the responder only RDMA Writes back to the requester are modelled (write-back.ts).
   * `via` names the requester QP a request came on, for the SRQ's completions.
   */
  post(
    side: SessionSide,
    wrs: readonly WorkRequest[],
    options: { readonly via?: string } = {},
  ): SessionPostResult {
    requireSide(side);
    for (const [i, wr] of requireArray('engine', 'wrs', wrs).entries())
      requireObject('engine', `wrs[${i}]`, wr);
    requireKnownOptions('engine', 'options', options, ['via']);
    if (side === 'responder') return this.#postBack(wrs);
    if (this.#firstPostAt === undefined) {
      this.#firstPostAt = this.#clock;
      this.#frozenAccess = this.#qpAccess.responder;
    }
    const ids = new Set<bigint>();
    for (const wr of wrs) {
      if (wr.opcode === 'RDMA_READ') this.#readData.set(wr.wrId, this.#readSnapshot(wr));
      this.#wrs.push(wr);
      this.#version += 1;
      ids.add(wr.wrId);
      if (RECEIVE_CONSUMERS.has(wr.opcode)) this.#consumers.push(options.via ?? 'first');
    }
    const outcome = this.#settle();
    this.#srq?.consumedUpTo(
      outcome.responder.completions.filter(
        (wc) => wc.status === 'SUCCESS' && wc.opcode?.startsWith('RECV') === true,
      ).length,
    );
    return {
      refused: [...outcome.notExpressible, ...outcome.invalid].filter((e) => ids.has(e.wrId)),
    };
  }

  /** Posts a receive on the responder (to its SRQ when the session has one). */
  postRecv(side: SessionSide, receive: SessionReceive): void {
    requireSide(side);
    if (side !== 'responder')
      throw new SessionMisuseError('engine', 'side', 'the engine models receives on the responder');
    requireObject('engine', 'receive', receive);
    if (typeof receive.id !== 'bigint')
      throw new ArgumentError('engine', 'receive.id', 'is not a bigint');
    requireInteger('engine', 'receive.length', receive.length, 0, 0xffff_ffff);
    if (receive.stag !== undefined || receive.addr !== undefined) {
      const region = this.#options.responder.buffers.find((b) => b.stag === receive.stag);
      const offset = region === undefined ? -1n : (receive.addr ?? -1n) - region.baseTaggedOffset;
      if (region === undefined || offset < 0n || offset + BigInt(receive.length) > region.length)
        throw new ArgumentError(
          'engine',
          'receive.addr',
          'the buffer is not inside a responder region',
        );
    }
    this.#receives.push({ receive, at: this.#clock });
    this.#srq?.posted();
    this.#version += 1;
  }

  /** The side's next completion (ibv_poll_cq), or undefined when its CQ is empty. */
  poll(side: SessionSide): SessionCompletion | undefined {
    requireSide(side);
    const wc = this.#completions(side)[this.#polled[side]];
    if (wc === undefined) return undefined;
    const receiveIndex =
      side === 'responder' && wc.opcode?.startsWith('RECV') === true
        ? this.#completions(side)
            .slice(0, this.#polled[side])
            .filter((c) => c.opcode?.startsWith('RECV') === true).length
        : undefined;
    this.#polled[side] += 1;
    const via = receiveIndex === undefined ? undefined : this.#consumers[receiveIndex];
    return this.#srq === undefined || via === undefined ? wc : { ...wc, via };
  }

  /**
   * Whether a CQ armed for solicited completions would be signalled by a completion not
   * yet polled: one with the Solicited Event, or an unsuccessful one (IBTA 1.5 §11.4.2.2).
   */
  solicitedPending(side: SessionSide): boolean {
    requireSide(side);
    return this.#completions(side)
      .slice(this.#polled[side])
      .some((wc) => wc.solicited === true || wc.status !== 'SUCCESS');
  }

  /** The side's QP state (ibv_query_qp). */
  query(side: SessionSide): QpState {
    requireSide(side);
    return this.#stateOverride[side] ?? this.#settle()[side].qpState;
  }

  /**
   * Sets the side's remote access enables at RTS (ibv_modify_qp IBV_QP_ACCESS_FLAGS). The
   * responder's rights in force are those of its first request: the engine's responder
   * checks one access set for the whole connection.
   */
  modify(side: SessionSide, attributes: { readonly access: number }): void {
    requireSide(side);
    requireKnownOptions('engine', 'attributes', attributes, ['access']);
    this.#qpAccess[side] = requireInteger('engine', 'attributes.access', attributes.access, 0);
    if (side === 'responder' && this.#frozenAccess === undefined) this.#version += 1;
  }

  /** Lets `ms` milliseconds pass (the RNR timers run: a late receive is found by a retry). */
  advance(ms: number): void {
    if (typeof ms !== 'number' || !Number.isFinite(ms) || ms < 0)
      throw new ArgumentError('engine', 'ms', `${String(ms)} is not a duration in ms`);
    this.#clock += ms;
  }

  /**
   * How long the requests waited on RNR timers (IBTA §9.7.5.2.8): a request no receive
   * served fails after its rnr_retry retries, one RNR timer each; one a late receive
   * served completes at the retry that found it; else 0.
   */
  rnrDelayMs(): number {
    const rnr = this.#rnrMs();
    if (this.#settle().failure === 'no-receive-buffer') return this.#rnrRetry() * rnr;
    const late = this.#receives
      .map(({ at }) => servedByRetry(this.#sincePost(at), rnr, this.#rnrRetry()))
      .filter((s) => s.served && s.atRetry > 0);
    return Math.max(0, ...late.map((s) => s.atRetry * rnr));
  }

  /** Binds a memory window over a responder region, on `side`'s QP (ibv_bind_mw). */
  bindWindow(side: SessionSide, window: SessionWindow): void {
    requireSide(side);
    requireObject('engine', 'window', window);
    if (!this.#options.responder.buffers.some((b) => b.stag === window.parent))
      throw new ArgumentError('engine', 'window.parent', 'is not a responder region');
    requireName('engine', 'window type', { 1: 0, 2: 0 }, String(window.type), 'window.type');
    // The session's windows are bound before its first request (IBTA 1.5 o10-37.2.30: a
    // free window binds once); a second bind of the same STag changes nothing.
    if (this.#windows.some((w) => w.stag === window.stag)) return;
    const { type, ...binding } = window;
    this.#windows.push({
      ...binding,
      ...(type === 2
        ? { streamId: side === 'responder' ? RESPONDER_STREAM : REQUESTER_STREAM }
        : {}),
    });
    this.#version += 1;
  }

  /** Invalidates a bound window locally (LOCAL_INV, §10.6.7.2.4): requests after it fail. */
  invalidateWindow(side: SessionSide, stag: number): void {
    requireSide(side);
    const at = this.#windows.findIndex((w) => w.stag === stag);
    if (at < 0) throw new SessionMisuseError('engine', 'stag', 'no window with that STag is bound');
    const window = this.#windows[at];
    if (window !== undefined && window.invalidatedBefore === undefined)
      this.#windows[at] = { ...window, invalidatedBefore: this.#wrs.length };
    this.#version += 1;
  }

  /** Arms the SRQ's limit (ibv_modify_srq IBV_SRQ_LIMIT; 0 disarms it). */
  srqLimit(limit: number): void {
    this.#requireSrq().arm(requireInteger('engine', 'limit', limit, 0, 0xffff_ffff));
  }

  /** Whether SRQ_LIMIT_REACHED came since the last call, and the srq_limit read after it. */
  srqEvent(): { readonly reached: boolean; readonly limit: number } {
    const srq = this.#requireSrq();
    return { reached: srq.takeEvent(), limit: srq.limit };
  }

  /**
   * The side's registered memory, by STag: the responder's regions with what the requests
   * and the consumed receives left; the requester's with the Read data that landed.
   */
  memory(side: SessionSide): ReadonlyMap<number, Uint8Array> {
    requireSide(side);
    return side === 'responder'
      ? this.#responderMemory(this.#settle())
      : this.#requesterMemory(this.#settle());
  }

  /** The messages (iWARP) or request packets (RoCEv2) of the requests posted so far. */
  wire(): SessionWire {
    const outcome = this.#settle();
    return { iwarp: outcome.iwarpWire, roce: outcome.roceRequests };
  }

  /** The whole connection so far as the projection's input (the RoCE exchange reads it). */
  scenario(): VerbsScenario {
    this.#settle();
    if (this.#cache === undefined) throw new Error('unreachable: settled without a cache');
    return this.#cache.verbs;
  }

  #requireSrq(): SrqCount {
    if (this.#srq === undefined)
      throw new SessionMisuseError('engine', 'srq', 'the session has no shared receive queue');
    return this.#srq;
  }

  #postBack(wrs: readonly WorkRequest[]): SessionPostResult {
    for (const [i, wr] of wrs.entries())
      if (wr.opcode !== 'RDMA_WRITE')
        throw new SessionMisuseError(
          'engine',
          `wrs[${i}].opcode`,
          'the responder posts RDMA Writes back only',
        );
    for (const wr of wrs) {
      const { completion, responderState } = writeBackCompletion(
        wr.wrId,
        'payload' in wr ? wr.payload.length : 0,
        { requester: this.query('requester'), responder: this.query('responder') },
      );
      this.#writeBacks.push(completion);
      if (responderState === 'ERR') this.#stateOverride.responder = 'ERR';
    }
    return { refused: [] };
  }

  #completions(side: SessionSide): readonly WorkCompletion[] {
    const outcome = this.#settle();
    return side === 'requester'
      ? outcome.requester.completions
      : [...outcome.responder.completions, ...this.#writeBacks];
  }

  #rnrMs(): number {
    return RNR_TIMER_MS[this.#options.responder.minRnrTimer ?? DEFAULT_MIN_RNR_TIMER] ?? 0;
  }

  #rnrRetry(): number {
    return this.#options.requester?.rnrRetry ?? DEFAULT_RNR_RETRY;
  }

  /** Milliseconds from the first request to `at` (0 for what came before it). */
  #sincePost(at: number): number {
    return this.#firstPostAt === undefined ? 0 : Math.max(0, at - this.#firstPostAt);
  }

  #verbs(): VerbsScenario {
    const { responder, requester } = this.#options;
    const qp = this.#frozenAccess ?? this.#qpAccess.responder;
    const gated = responder.qpGatedAccess ?? REMOTE_RIGHTS;
    // The QP's enables, kept apart from the regions' rights (a request the QP does not
    // enable is NAK Invalid Request on RoCE, not the region's Remote Access Error); a
    // right the QP does not gate is granted.
    const qpAccess = (qp | ~gated) >>> 0;
    // A receive posted while the request met RNR NAKs counts if a retry finds it.
    const receives = this.#receives
      .filter(
        ({ at }) => servedByRetry(this.#sincePost(at), this.#rnrMs(), this.#rnrRetry()).served,
      )
      .map(({ receive }) => ({ id: receive.id, length: receive.length }));
    return {
      responder: {
        buffers: responder.buffers,
        qpAccess,
        receives,
        ...(this.#windows.length === 0 ? {} : { windows: [...this.#windows] }),
        ...(responder.ird === undefined ? {} : { ird: responder.ird }),
        ...(responder.protectionDomain === undefined
          ? {}
          : { protectionDomain: responder.protectionDomain }),
        ...(responder.supportsAtomics === undefined
          ? {}
          : { supportsAtomics: responder.supportsAtomics }),
        ...(responder.supportsImmediateData === undefined
          ? {}
          : { supportsImmediateData: responder.supportsImmediateData }),
      },
      ...(requester === undefined
        ? {}
        : {
            requester: {
              ...(requester.ord === undefined ? {} : { ord: requester.ord }),
              ...(requester.localBuffers === undefined
                ? {}
                : { localBuffers: requester.localBuffers }),
            },
          }),
      workRequests: [...this.#wrs],
    };
  }

  /** The projection of everything posted so far (recomputed only after a change). */
  #settle(): TransportOutcome {
    if (this.#cache?.version === this.#version) return this.#cache.outcome;
    const verbs = this.#verbs();
    const outcome = this.#options.transport === 'roce' ? projectRoce(verbs) : projectIwarp(verbs);
    this.#cache = { version: this.#version, verbs, outcome };
    return outcome;
  }

  /** The bytes a Read finds: its target as the requests posted before it left it. */
  #readSnapshot(wr: Extract<WorkRequest, { opcode: 'RDMA_READ' }>): Uint8Array {
    const memory = this.#responderMemory(this.#settle());
    const window = this.#windows.find((w) => w.stag === wr.rkey);
    const stag = window?.parent ?? wr.rkey;
    const region = this.#options.responder.buffers.find((b) => b.stag === stag);
    const bytes = memory.get(stag);
    // A malformed Read (the requester refuses it as invalid) finds nothing.
    if (region === undefined || bytes === undefined || typeof wr.remoteAddr !== 'bigint')
      return new Uint8Array(0);
    if (!Number.isSafeInteger(wr.length) || wr.length < 0) return new Uint8Array(0);
    const at = Number(wr.remoteAddr - region.baseTaggedOffset);
    return at < 0 ? new Uint8Array(0) : bytes.slice(at, at + wr.length);
  }

  #responderMemory(outcome: TransportOutcome): Map<number, Uint8Array> {
    const memory = new Map<number, Uint8Array>();
    for (const [stag, bytes] of outcome.memory) memory.set(stag, bytes.slice());
    // The bytes a Send (or, on iWARP, an Immediate Data message: RFC 7306 §6.3) placed in
    // the receive it consumed, in the receive's own buffer.
    for (const wc of outcome.responder.completions) {
      if (wc.data === undefined || wc.data.byteLength === 0) continue;
      const receive = this.#receives.find((r) => r.receive.id === wc.wrId)?.receive;
      if (receive?.stag === undefined || receive.addr === undefined) continue;
      const region = this.#options.responder.buffers.find((b) => b.stag === receive.stag);
      const bytes = memory.get(receive.stag);
      if (region === undefined || bytes === undefined) continue;
      bytes.set(
        wc.data.subarray(0, Math.min(wc.data.byteLength, receive.length)),
        Number(receive.addr - region.baseTaggedOffset),
      );
    }
    return memory;
  }

  #requesterMemory(outcome: TransportOutcome): Map<number, Uint8Array> {
    const buffers = this.#options.requester?.localBuffers ?? [];
    const memory = new Map<number, Uint8Array>();
    for (const b of buffers) memory.set(b.stag, b.contents?.slice() ?? new Uint8Array(b.length));
    for (const wc of outcome.requester.completions) {
      const data = this.#readData.get(wc.wrId);
      const wr = this.#wrs.find((w) => w.wrId === wc.wrId);
      if (wc.status !== 'SUCCESS' || data === undefined || wr?.opcode !== 'RDMA_READ') continue;
      const region = buffers.find((b) => b.stag === wr.localSTag);
      const bytes = memory.get(wr.localSTag);
      if (region === undefined || bytes === undefined) continue;
      const at = Number(wr.localAddr - region.baseTaggedOffset);
      if (at >= 0 && at + data.byteLength <= bytes.byteLength) bytes.set(data, at);
    }
    return memory;
  }
}
