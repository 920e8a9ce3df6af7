/**
 * A real device as a side of the program (program.ts): the requester QP posts the
 * program's work requests into the responder's MR, and, when the responder QP is in the
 * same process (the one-guest suite), it posts the receives and the Writes back, and its
 * memory is read at the end. The link requester (link/guest.ts) runs the same side with
 * the responder in the other guest.
 */
import type { WorkCompletion } from '../../verbs/completion.js';
import type { Cq } from '../../verbs/cq.js';
import { VerbsError } from '../../verbs/errors.js';
import type { Access, Mr, RemoteRef } from '../../verbs/mr.js';
import { attachMcast, detachMcast } from '../../verbs/multicast.js';
import type { Mw } from '../../verbs/mw.js';
import type { PostPath, Qp, RawSge, SendWr } from '../../verbs/qp.js';
import type { Srq } from '../../verbs/srq.js';
import { formatValue } from '../compare-format.js';
import { observedCompletion } from '../observe.js';
import { operandsOf, type ReceiveUse, traitsOf } from '../operations.js';
import {
  type BindMwStep,
  COMPLETION_TIMEOUT_MS,
  type HammerObservation,
  type HammerStep,
  type McastStepOf,
  type Polled,
  type PostResult,
  type ProgramPlan,
  type ProgramSide,
  type TimedCompletion,
  type WindowStepResult,
} from '../program.js';
import {
  DEFAULT_TARGET,
  LOCAL_SLOT,
  mcastGidOf,
  type Operation,
  payloadBytes,
  type RequesterQp,
  receiveSgeOf,
  recvIdOf,
  responderWrIdOf,
  type Scenario,
  type Side,
  UD_RECEIVE_AT,
  UD_RECEIVE_LENGTH,
  windowWrIdOf,
  wrIdOf,
} from '../scenario.js';
import { srcQpName } from '../ud-engine-side.js';
import { NO_TIMER_TRANSPORT, type TimerWitness, timerWitnessOf } from './timer-witness.js';
import type { UdPair } from './ud-pair.js';

/**
 * The verbs SendWr for `op`, the `index`-th work request of the program; `window` is the
 * scenario's memory window once a `bind-mw` step bound it.
 */
export function sendWrOf(
  op: Operation,
  index: number,
  local: Mr,
  remote: RemoteRef,
  window?: Mw,
): SendWr {
  const traits = traitsOf(op.kind);
  const slot = LOCAL_SLOT * index;
  const length = traits.localData === 'payload' ? (op.length ?? 8) : 8;
  const sgList: (RawSge | ReturnType<Mr['sge']>)[] =
    op.local === 'none' || length === 0
      ? []
      : op.local === 'short'
        ? [local.sge(slot, 4)]
        : op.local === 'invalid-lkey'
          ? [{ addr: local.addr + BigInt(slot), length, lkey: (local.lkey ^ 0x00ff_0000) >>> 0 }]
          : [local.sge(slot, length)];
  const target: RemoteRef = {
    addr: remote.addr + BigInt(op.target ?? DEFAULT_TARGET),
    rkey:
      op.rkey === 'invalid'
        ? (remote.rkey ^ 0x00ff_0000) >>> 0
        : op.rkey === 'window'
          ? boundWindow(window).rkey
          : remote.rkey,
  };
  return {
    wrId: wrIdOf(index),
    opcode: traits.opcode,
    sgList,
    ...(traits.remote ? { remote: target } : {}),
    ...(traits.invalidatesWindow ? { invalidateRkey: boundWindow(window).rkey } : {}),
    ...(op.solicited ? { solicited: true } : {}),
    ...operandsOf(op.kind, op),
  };
}

function boundWindow(window: Mw | undefined): Mw {
  if (window === undefined) throw new Error('the program uses its window before a bind-mw step');
  return window;
}

/** The rights the scenario's window grants (scenario.ts `bind-mw`). */
const WINDOW_ACCESS: readonly Access[] = ['REMOTE_READ', 'REMOTE_WRITE'];

/**
 * The requester's memory: one LOCAL_SLOT per work request, each holding its request's
 * 16 payload bytes (what a Write or Send carries out; a fetched value lands over them).
 */
export function requesterMemory(
  plan: ProgramPlan,
  allocate: (length: number, access: readonly Access[]) => Mr,
  access: readonly Access[],
): Mr {
  const mr = allocate(LOCAL_SLOT * plan.requesterSlots, access);
  plan.requests.forEach((op, i) => {
    mr.buffer.set(payloadBytes({ ...op, length: 16 }), LOCAL_SLOT * i);
  });
  return mr;
}

async function pollOne(cq: Cq, timeoutMs: number): Promise<WorkCompletion | undefined> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const [wc] = cq.poll(1);
    if (wc !== undefined) return wc;
    if (Date.now() >= deadline) return undefined;
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
}

/** Runs a verbs call: `ok`, or the errno's name of the VerbsError it threw. */
function tryVerbs(call: () => void): string {
  try {
    call();
    return 'ok';
  } catch (error) {
    if (!(error instanceof VerbsError)) throw error;
    return error.code;
  }
}

/** A QP and its CQ. */
export interface QpEnd {
  readonly qp: Qp;
  readonly cq: Cq;
}

export interface DeviceSideOptions {
  readonly scenario: Scenario;
  /** The program's plan ({@link planOf}), which the requester's buffer was made from. */
  readonly plan: ProgramPlan;
  readonly requester: QpEnd;
  /** The requester's buffer ({@link requesterMemory}). */
  readonly local: Mr;
  /** The responder's MR as the requester addresses it. */
  readonly remote: RemoteRef;
  /**
   * The responder QP and its MR (guards included in its allocation), when they are in
   * this process; absent on the link, where the responder's guest posts the receives.
   */
  readonly responder?: QpEnd & {
    readonly mr: Mr;
    /** The SRQ the responder QPs receive through (a scenario with `srq`). */
    readonly srq?: Srq;
    /** The second responder QP, on the SRQ (a scenario that posts on `qp: 'second'`). */
    readonly second?: Qp;
  };
  /** The requester's second QP, on the requester's CQ (`qp: 'second'`). */
  readonly secondRequester?: Qp;
  /**
   * A `ud` scenario's pair (kernel/ud-pair.ts): Sends go to the operation's group, and
   * the responder's receives, waits and attaches are those of its receiving QPs.
   */
  readonly ud?: UdPair;
  /** The concurrency step (kernel/hammer.ts), where the side can run it. */
  readonly hammer?: (step: HammerStep) => Promise<HammerObservation>;
  /** Stops the capture and gives the program's messages as lines, if captured. */
  readonly wire?: () => Promise<string | undefined>;
  /**
   * What classes a timed wait's completion (`wcN.timer`); default the scenario device's
   * own evidence (timer-witness.ts timerWitnessOf: rxe's counters, none on siw).
   */
  readonly timers?: TimerWitness;
}

/** The sides whose completions a timed wait of `scenario` classes. */
function timedSides(scenario: Scenario): ReadonlySet<Side> {
  return new Set(
    scenario.program.flatMap((s) => (s.do === 'wait' && s.timed === true ? [s.side] : [])),
  );
}

/** A completion a wait polled, with the word it fetched (what the link reports). */
export interface PolledCompletion {
  readonly wc: WorkCompletion;
  fetched?: bigint;
  /**
   * Milliseconds from the side's last post to this completion, on the guest's clock: shown
   * in notes only (a loaded emulated guest stretches it), never a compared field.
   */
  readonly elapsedMs?: number;
}

/** The device side of a program; `posts` and `polled` keep what it saw, in order. */
export class DeviceSide implements ProgramSide {
  readonly #options: DeviceSideOptions;
  // When each side last posted (timed waits measure from there).
  readonly #lastPost: Record<Side, number> = { requester: 0, responder: 0 };
  readonly posts: PostResult[] = [];
  readonly polled: Record<Side, PolledCompletion[]> = { requester: [], responder: [] };
  // The solicited-only wait an `arm-solicited` step started, per side.
  readonly #armed: Partial<Record<Side, Promise<WorkCompletion | undefined>>> = {};
  // Completions a wait gets before polling the CQ: the one that woke a `cq-event`, and
  // those a window step polled past while looking for its own.
  readonly #woke: Record<Side, WorkCompletion[]> = { requester: [], responder: [] };
  // The scenario's memory window, allocated at its first bind.
  #window: Mw | undefined;
  // Whether the SRQ's limit event came, listened for from the arming (`srq-limit`) on.
  #limitEvent: Promise<boolean> | undefined;

  // What classes timed waits, and the sides it marks posts on (those a timed wait reads).
  readonly #timers: TimerWitness;
  readonly #timed: ReadonlySet<Side>;

  constructor(options: DeviceSideOptions) {
    this.#options = options;
    this.#timed = timedSides(options.scenario);
    this.#timers =
      options.timers ??
      (this.#timed.size === 0 ? NO_TIMER_TRANSPORT : timerWitnessOf(options.scenario));
  }

  #responder(what: string): NonNullable<DeviceSideOptions['responder']> {
    const responder = this.#options.responder;
    if (responder === undefined)
      throw new Error(`${what}: the responder QP is not in this process`);
    return responder;
  }

  #end(side: Side): QpEnd {
    return side === 'requester' ? this.#options.requester : this.#responder(`${side} QP`);
  }

  postSend(
    side: Side,
    wrs: readonly Operation[],
    first: number,
    qp: RequesterQp,
  ): PostResult | Promise<PostResult> {
    // A side a timed wait reads: the witness marks the post first (it may wait for a fresh
    // counter reading); the others post at once, as before.
    if (this.#timed.has(side))
      return this.#timers.mark(side).then(() => this.#postSend(side, wrs, first, qp));
    return this.#postSend(side, wrs, first, qp);
  }

  #postSend(side: Side, wrs: readonly Operation[], first: number, qp: RequesterQp): PostResult {
    const { scenario, local, remote } = this.#options;
    const posted: { readonly qp: Qp; readonly wrs: SendWr[]; readonly path?: PostPath } =
      side === 'responder'
        ? {
            qp: this.#responder('post-send').qp,
            // 8 bytes of the responder's buffer written into the requester's first slot.
            wrs: wrs.map((_, i) => ({
              wrId: responderWrIdOf(first + i),
              opcode: 'RDMA_WRITE' as const,
              sgList: [this.#responder('post-send').mr.sge(0, 8)],
              remote: local.remote(0),
            })),
          }
        : {
            qp: qp === 'second' ? this.#secondRequester() : this.#options.requester.qp,
            wrs: wrs.map((op, i) => {
              const wr = sendWrOf(op, first + i, local, remote, this.#window);
              const ud = this.#options.ud;
              return ud === undefined ? wr : { ...wr, ud: ud.destinationOf(op.group ?? 'g1') };
            }),
            path: scenario.postPath,
          };
    this.#lastPost[side] = performance.now();
    const result = ((): PostResult => {
      try {
        posted.qp.postSend(posted.wrs, posted.path);
        return { result: 'ok' };
      } catch (error) {
        if (!(error instanceof VerbsError)) throw error;
        // ibv_post_send names the refused request in bad_wr (the wrapper's badWrIndex).
        return side === 'responder' || error.badWrIndex === undefined
          ? { result: error.code }
          : { result: error.code, badWr: error.badWrIndex };
      }
    })();
    this.posts.push(result);
    return result;
  }

  postRecv(index: number, use: ReceiveUse, qp: RequesterQp = 'first'): void {
    const ud = this.#options.ud;
    if (ud !== undefined) {
      // The GRH into the scratch buffer, the payload into the receiving QP's MR slot.
      const { mr } = this.#responder('post-recv');
      ud.receivers[qp].qp.postRecv({
        wrId: recvIdOf(index),
        sgList: [ud.grh.sge(0, 40), mr.sge(UD_RECEIVE_AT[qp], UD_RECEIVE_LENGTH)],
      });
      return;
    }
    const responder = this.#options.responder;
    // On the link the responder's guest posts the program's receives (link/guest.ts).
    if (responder === undefined) return;
    const { at, length } = receiveSgeOf(this.#options.scenario.device, use);
    const wr = {
      wrId: recvIdOf(index),
      sgList: length === 0 ? [] : [responder.mr.sge(at, length)],
    };
    if (responder.srq === undefined) responder.qp.postRecv(wr);
    else responder.srq.postRecv(wr);
  }

  async nextCompletion(
    side: Side,
    timeoutMs: number,
    qp: RequesterQp = 'first',
  ): Promise<Polled | undefined> {
    const ud = this.#options.ud;
    const cq = ud !== undefined && side === 'responder' ? ud.receivers[qp].cq : this.#end(side).cq;
    const wc = this.#woke[side].shift() ?? (await pollOne(cq, timeoutMs));
    if (wc === undefined) return undefined;
    const elapsed = performance.now() - this.#lastPost[side];
    const entry: PolledCompletion = { wc, elapsedMs: elapsed };
    this.polled[side].push(entry);
    const local = this.#options.local;
    return {
      completion: observedCompletion(wc, {
        imm: wc.immData,
        immRaw: wc.immData === undefined ? undefined : wc.immDataRaw,
        vendorErr: wc.vendorErr,
        qp:
          side === 'responder' && this.#options.scenario.srq === true
            ? wc.qpNum === this.#options.responder?.second?.qpNum
              ? 'second'
              : 'first'
            : undefined,
        // ibv_wc.invalidated_rkey shares imm_data's union (verbs.h), in host order.
        invalidated:
          this.#options.plan.invalidatesRemotely && wc.status === 'SUCCESS' && wc.opcode === 'RECV'
            ? wc.immDataRaw === this.#window?.rkey
              ? 'window'
              : formatValue(wc.immDataRaw)
            : undefined,
        ...(this.#options.ud !== undefined && side === 'responder'
          ? { srcQp: srcQpName(wc.srcQp, this.#options.requester.qp.qpNum) }
          : {}),
      }),
      fetched: (index) => {
        entry.fetched = local.buffer.readBigUInt64LE(LOCAL_SLOT * index);
        return entry.fetched;
      },
    };
  }

  timerOf(side: Side): Promise<TimedCompletion> {
    return this.#timers.classOf(side);
  }

  queryState(side: Side): string {
    return this.#end(side).qp.query().state ?? 'UNKNOWN';
  }

  modify(side: Side, access: readonly Access[]): string {
    return tryVerbs(() => {
      this.#end(side).qp.modify({ access: ['LOCAL_WRITE', ...access] });
    });
  }

  async sleep(ms: number): Promise<void> {
    await new Promise((resolve) => setTimeout(resolve, ms));
  }

  armSolicited(side: Side, timeoutMs: number): void {
    // cq.next({ solicitedOnly }) arms with ibv_req_notify_cq(cq, 1) now and does not poll
    // first; the timeout is the answer `none`, any other failure the step's error.
    this.#armed[side] = this.#end(side)
      .cq.next({ solicitedOnly: true, timeoutMs })
      .catch((error: unknown) => {
        if (error instanceof VerbsError && error.code === 'ETIMEDOUT') return undefined;
        throw error;
      });
  }

  async cqEvent(side: Side): Promise<boolean> {
    const armed = this.#armed[side];
    if (armed === undefined) throw new Error(`cq-event: the ${side} CQ was not armed`);
    delete this.#armed[side];
    const wc = await armed;
    if (wc === undefined) return false;
    this.#woke[side].push(wc);
    return true;
  }

  async bindMw(step: BindMwStep, index: number): Promise<WindowStepResult> {
    const { type, side } = step;
    const { mr } = this.#responder('bind-mw');
    const { qp } = this.#end(side);
    const wrId = windowWrIdOf(index);
    const where = {
      mr,
      access: WINDOW_ACCESS,
      ...(step.range === undefined
        ? {}
        : { addr: mr.addr + BigInt(step.range.at), length: step.range.length }),
    };
    const posted = tryVerbs(() => {
      this.#window ??= mr.pd.allocMw(type);
      const mw = this.#window;
      if (type === 1) qp.bindMw(mw, { ...where, wrId });
      else
        qp.postSend(
          { wrId, opcode: 'BIND_MW', bind: { mw, ...where } },
          side === 'requester' ? this.#options.scenario.postPath : 'legacy',
        );
    });
    return posted === 'ok'
      ? { result: posted, ...(await this.#own(side, wrId)) }
      : { result: posted };
  }

  async localInvalidate(side: Side, index: number): Promise<WindowStepResult> {
    const { qp } = this.#end(side);
    const wrId = windowWrIdOf(index);
    const mw = boundWindow(this.#window);
    const posted = tryVerbs(() => {
      qp.postSend(
        { wrId, opcode: 'LOCAL_INV', invalidateRkey: mw.rkey },
        side === 'requester' ? this.#options.scenario.postPath : 'legacy',
      );
    });
    return posted === 'ok'
      ? { result: posted, ...(await this.#own(side, wrId)) }
      : { result: posted };
  }

  /**
   * Polls `side`'s CQ for the completion of the window request `wrId`; the completions
   * before it stay for the side's next wait.
   */
  async #own(side: Side, wrId: bigint): Promise<{ status?: string }> {
    const cq = this.#end(side).cq;
    for (;;) {
      const wc = await pollOne(cq, COMPLETION_TIMEOUT_MS);
      if (wc === undefined) return {};
      if (wc.wrId === wrId) return { status: wc.status };
      this.#woke[side].push(wc);
    }
  }

  #secondRequester(): Qp {
    const qp = this.#options.secondRequester;
    if (qp === undefined) throw new Error('post-send: the pair has no second requester QP');
    return qp;
  }

  #srq(what: string): Srq {
    const srq = this.#responder(what).srq;
    if (srq === undefined) throw new Error(`${what}: the responder has no SRQ`);
    return srq;
  }

  mcast(step: McastStepOf): string {
    const { scenario, ud } = this.#options;
    const qp = ud === undefined ? this.#responder(step.do).qp : ud.receivers[step.qp ?? 'first'].qp;
    const gid = Buffer.from(mcastGidOf(scenario, step.group));
    return tryVerbs(() => {
      if (step.do === 'attach-mcast') attachMcast(qp, gid);
      else detachMcast(qp, gid);
    });
  }

  reregMr(access: readonly Access[]): string {
    const mr = this.#responder('rereg-mr').mr;
    return tryVerbs(() => mr.rereg({ access }));
  }

  srqLimit(limit: number): string {
    const srq = this.#srq('srq-limit');
    const result = tryVerbs(() => {
      srq.modify({ limit });
    });
    if (result === 'ok') this.#listenForLimit(srq);
    return result;
  }

  /**
   * Waits for the SRQ's limit event from the arming on, across the program's steps: the
   * context reads async events whenever its descriptor is readable while anyone waits,
   * and Srq.limitReached once handed an event only to the waiters present then, so a wait
   * started only at the `srq-event` step missed an event read just after the previous
   * wait timed out (measured once on 7.3.4: rxe-srq-limit-ex saw none within 5 s). The SRQ
   * now keeps such an event for its next wait; listening from the arming stays the
   * simplest order to read.
   */
  #listenForLimit(srq: Srq): Promise<boolean> {
    this.#limitEvent ??= srq.limitReached().then(
      () => true,
      // The SRQ closed with the pair (EBADF): no event.
      () => false,
    );
    return this.#limitEvent;
  }

  async srqEvent(timeoutMs: number): Promise<{ reached: boolean; limit: string }> {
    const srq = this.#srq('srq-event');
    const event = this.#listenForLimit(srq);
    let timer: NodeJS.Timeout | undefined;
    const reached = await Promise.race([
      event,
      new Promise<false>((resolve) => {
        timer = setTimeout(() => resolve(false), timeoutMs);
      }),
    ]);
    clearTimeout(timer);
    // Seen: the next wait listens afresh (the device disarmed the limit).
    if (reached) this.#limitEvent = undefined;
    let limit = '';
    const queried = tryVerbs(() => {
      limit = String(srq.query().limit);
    });
    return { reached, limit: queried === 'ok' ? limit : queried };
  }

  async hammer(step: HammerStep): Promise<HammerObservation> {
    if (this.#options.hammer === undefined) throw new Error('hammer: not on this side');
    return this.#options.hammer(step);
  }

  /**
   * Deallocates the window, before the pair's teardown: the verbs cascade destroys the QPs
   * first (lifetime.ts CLOSE_ORDER), and a type 2 window bound to a QP holds a reference
   * to it (rxe_mw.c rxe_do_bind_mw: rxe_get(qp)), so rxe's QP destroy waits for it: ~50 s
   * per scenario in a 6.1.192 guest (rxe_pool.c __rxe_cleanup's timed wait), none on 7.3.4.
   */
  dispose(): void {
    this.#window?.close();
    this.#window = undefined;
  }

  memory(): Uint8Array | undefined {
    const responder = this.#options.responder;
    return responder === undefined ? undefined : new Uint8Array(responder.mr.allocation);
  }

  async wire(): Promise<string | undefined> {
    return this.#options.wire?.();
  }
}
