/**
 * Queue pairs: typed state transitions, posting (legacy `ibv_post_send` or the
 * extended `ibv_wr_*` path, one doorbell per list), receive posting, and in-flight
 * tracking: every MR a posted request uses stays referenced until its completion is
 * polled (unsignaled requests retire with the next signaled one, in send-queue order).
 */

import {
  flagNames,
  MTU,
  type Mtu,
  nameOf,
  QP_TYPE,
  type QpType,
  SEND_FLAGS,
} from '../ibverbs/constants.js';
import { ACCESS_FLAGS, QP_STATE, WC_OPCODE } from '../ibverbs/index.js';
import type { NativeAhAttrQuery, NativeQp, NativeQpQuery } from '../native/bindings.js';
import type { CmId } from './cm.js';
import { type WorkCompletion, wrIdOf } from './completion.js';
import type { CompletionSink, Cq } from './cq.js';
import { VerbsArgumentError, VerbsError } from './errors.js';
import { Resource } from './lifetime.js';
import type { Access } from './mr.js';
import { type Mw, nativeBindInfo } from './mw.js';
import type { Pd } from './pd.js';
import { type AddressVector, type QpAttr, type QpStateName, toNativeQpAttr } from './qp-attr.js';
import { PreparedSend } from './requests/prepared-send.js';
import { type PackedRecv, RecvPacker } from './requests/recv-packer.js';
import { RoundTrip, type RoundTripOptions } from './requests/round-trip.js';
import { packSendList, SendPacker } from './requests/send-packer.js';
import {
  applyBinds,
  blankSendWr,
  checkMw,
  type NativeSendWr,
  refuseBindMw,
  toNativeSend,
} from './requests/send-wr.js';
import { KeepList, SgeScratch, u64 } from './requests/sge.js';
import type { InFlight, MwBindOptions, PostPath, RecvWr, SendWr } from './requests/wr.js';
import type { Srq } from './srq.js';

export type { PreparedSend } from './requests/prepared-send.js';
// The request types live in requests/wr.ts; named here too for the importers of this module.
export type { PostPath, RawSge, SendWr } from './requests/wr.js';

/**
 * `ibv_query_qp` with every attribute, raw (as `struct ibv_qp_attr` and
 * `ibv_qp_init_attr` hold them) and named.
 */
export interface QpInfo extends NativeQpQuery {
  readonly state: QpStateName | undefined;
  readonly curState: QpStateName | undefined;
  readonly pathMtuBytes: Mtu | undefined;
  /**
   * The names of `qpAccessFlags` (an rdma_cm QP on Linux 7.3 reads back 0x30e: ib_cm
   * adds FLUSH_GLOBAL and FLUSH_PERSISTENT to the remote rights).
   */
  readonly access: Access[];
  readonly type: QpType | undefined;
  /** The primary path (`ah_attr`); `grh` only when it is global. */
  readonly av: AddressVector;
  /** The alternate path (`alt_ah_attr`). */
  readonly altAv: AddressVector;
}

/** The MTU in bytes (MTU's keys are numbers, which a reverse lookup gives as text). */
function mtuBytes(code: number): Mtu | undefined {
  const name = nameOf(MTU, code);
  return name === undefined ? undefined : (Number(name) as Mtu);
}

function avOf(a: NativeAhAttrQuery): AddressVector {
  return {
    dlid: a.dlid,
    sl: a.sl,
    srcPathBits: a.srcPathBits,
    staticRate: a.staticRate,
    port: a.portNum,
    ...(a.isGlobal ? { grh: { ...a.grh } } : {}),
  };
}

function recvName(): string {
  return 'wr';
}

function indexOfWrId(queue: readonly InFlight[], wrId: bigint): number {
  for (let i = 0; i < queue.length; i++) if (queue[i]?.wrId === wrId) return i;
  return -1;
}

/**
 * A queue pair (`ibv_qp`). `close()` is `ibv_destroy_qp` (`rdma_destroy_qp` for a QP of
 * a cm_id) and releases the MRs its in-flight requests kept.
 */
export class Qp extends Resource<NativeQp> implements CompletionSink {
  /** The PD, send CQ and receive CQ (kept reachable while this QP lives). */
  readonly pd: Pd;
  readonly sendCq: Cq;
  readonly recvCq: Cq;
  /** The SRQ it receives through, if any (kept reachable while this QP lives). */
  readonly srq: Srq | undefined;
  readonly #device: string;
  readonly #sqSigAll: boolean;
  readonly #extended: boolean;
  readonly #sendQueue: InFlight[] = [];
  readonly #recvQueue: InFlight[] = [];
  readonly #sendQueueDepth: number;
  // Unsignaled requests posted since the last signaled one: their send-queue slots are
  // freed only when a later signaled request completes, so more than the queue's depth
  // would overflow it (hardware does not check; rxe happens not to care).
  #unsignaledRun = 0;
  #nextWrId = 1n;
  // The memory postSend packs its requests into for the native call (grown on demand).
  readonly #packer: SendPacker;
  readonly #recvPacker = new RecvPacker();
  readonly #keep = new KeepList();
  // The request and SGE list a one-request postSend is checked into (reused: no request
  // object, SGE list or SGE objects per post); #scratchBusy while one is being checked,
  // so that a getter of the request that posts again gets fresh ones.
  readonly #scratch = blankSendWr();
  readonly #scratchSges = new SgeScratch();
  #scratchBusy = false;
  readonly #takeWrId = (): bigint => this.#nextWrId++;

  /** @internal use `Pd.createQp` or `CmId.createQp` (its `cmId` closes it first) */
  constructor(
    native: NativeQp,
    pd: Pd,
    sendCq: Cq,
    recvCq: Cq,
    device: string,
    sqSigAll: boolean,
    cmId?: CmId,
    srq?: Srq,
  ) {
    super(native, 'Qp', [pd, sendCq, recvCq, ...(cmId ? [cmId] : []), ...(srq ? [srq] : [])]);
    this.pd = pd;
    this.srq = srq;
    this.sendCq = sendCq;
    this.recvCq = recvCq;
    this.#device = device;
    this.#sqSigAll = sqSigAll;
    this.#extended = native.extended;
    this.#sendQueueDepth = native.cap.maxSendWr;
    this.#packer = new SendPacker(native);
    sendCq.attach(native.qpNum, this);
    recvCq.attach(native.qpNum, this);
    pd.context.trackQp(this);
    srq?.attachQp(this);
  }

  /** The QP number. */
  get qpNum(): number {
    return this.native.qpNum;
  }
  /** True when created for the `ibv_wr_*` API. */
  get extended(): boolean {
    return this.#extended;
  }
  /**
   * @internal when the last one-doorbell `postSend` of the packed form rang (microseconds,
   * as `RoundTrip.postedAt`): the benchmark stamps its general loop with it, as perftest
   * stamps its posts, instead of a clock read per iteration.
   */
  get lastPostedAt(): number {
    return this.#packer.postedAt;
  }

  /** Work requests posted and not yet retired by a polled completion. */
  get inFlight(): { send: number; recv: number } {
    return { send: this.#sendQueue.length, recv: this.#recvQueue.length };
  }

  /** `ibv_modify_qp` with a typed attribute object; the mask follows the fields given. */
  modify(attr: QpAttr): void {
    const { attr: native, mask } = toNativeQpAttr(attr);
    this.native.modify(native, mask);
  }

  /** `ibv_query_qp` with every attribute mask bit it answers. */
  query(): QpInfo {
    const q = this.native.query();
    return {
      ...q,
      state: nameOf(QP_STATE, q.qpState),
      curState: nameOf(QP_STATE, q.curQpState),
      pathMtuBytes: mtuBytes(q.pathMtu),
      access: flagNames(ACCESS_FLAGS, q.qpAccessFlags),
      type: nameOf(QP_TYPE, q.qpType),
      av: avOf(q.ahAttr),
      altAv: avOf(q.altAhAttr),
    };
  }

  /**
   * `ibv_bind_mw`: binds a type 1 window to `[addr, addr + length)` of an MR registered
   * with `MW_BIND` (one BIND_MW request on this QP's send queue) and returns its new
   * rkey (also `mw.rkey` from now on). A type 2 window is bound by a `BIND_MW` work
   * request instead (VerbsArgumentError here).
   */
  bindMw(mw: Mw, bind: MwBindOptions): number {
    const native = checkMw(mw, 1, 'mw', this.#device);
    const keep: Resource[] = [mw];
    const info = nativeBindInfo(bind, keep, 'bind');
    const wrId = bind.wrId === undefined ? this.#nextWrId++ : u64('wrId', bind.wrId);
    const signaled = (bind.signaled ?? true) || this.#sqSigAll;
    const entry: InFlight = { wrId, signaled, keep };
    this.#checkUnsignaled([entry]);
    const rkey = this.native.bindMw(native, wrId, signaled ? SEND_FLAGS.SIGNALED : 0, info);
    this.track([entry]);
    mw.setRkey(rkey);
    return rkey;
  }

  #signaled(native: NativeSendWr): boolean {
    return this.#sqSigAll || (native.sendFlags & SEND_FLAGS.SIGNALED) !== 0;
  }

  /** Validates and converts a send list, with what each request keeps alive in flight. */
  #toNativeList(wrs: SendWr | readonly SendWr[]): {
    natives: NativeSendWr[];
    entries: InFlight[];
  } {
    // Arrays made at their final size (an empty array's first push reserves 17 slots,
    // about 150 bytes, which a one-request post paid four times over).
    if (!Array.isArray(wrs)) {
      const { native, entry } = this.#convert(wrs as SendWr);
      return { natives: [native], entries: [entry] };
    }
    const list = wrs as readonly SendWr[];
    const natives: NativeSendWr[] = new Array(list.length);
    const entries: InFlight[] = new Array(list.length);
    for (let i = 0; i < list.length; i++) {
      const { native, entry } = this.#convert(list[i] as SendWr);
      natives[i] = native;
      entries[i] = entry;
    }
    return { natives, entries };
  }

  #convert(wr: SendWr): { native: NativeSendWr; entry: InFlight } {
    const native = toNativeSend(wr, this.#keep, this.#takeWrId, this.#device);
    const entry = { wrId: native.wrId, signaled: this.#signaled(native), keep: this.#keep.take() };
    return { native, entry };
  }

  /**
   * The unsignaled run after `entries`, refusing (VerbsArgumentError, nothing posted) a
   * list that would leave more unsignaled requests in a row than the send queue holds.
   */
  #checkUnsignaled(entries: readonly InFlight[]): number {
    let run = this.#unsignaledRun;
    for (const e of entries) run = this.#runAfter(run, e.signaled);
    return run;
  }

  // The unsignaled run after one more request, refused as #checkUnsignaled says.
  #runAfter(run: number, signaled: boolean): number {
    const next = signaled ? 0 : run + 1;
    if (next > this.#sendQueueDepth)
      throw new VerbsArgumentError(
        'signaled',
        `more than ${this.#sendQueueDepth} unsignaled requests in a row (the send queue's depth) would overflow it: signal one of them`,
      );
    return next;
  }

  /** @internal records posted requests. */
  track(entries: readonly InFlight[]): void {
    for (const e of entries) {
      this.#sendQueue.push(e);
      this.#unsignaledRun = e.signaled ? 0 : this.#unsignaledRun + 1;
    }
  }

  /** @internal the checks before posting a prepared list again. */
  checkUnsignaled(entries: readonly InFlight[]): void {
    this.#checkUnsignaled(entries);
  }

  /**
   * Posts a list of send requests with one doorbell and returns their wrIds. Arguments
   * are validated before anything is posted. `path` defaults to `'ex'` on an extended
   * QP. On a VerbsError from the provider, the requests before the refused one were
   * posted (the verbs contract); they stay tracked.
   */
  postSend(wrs: SendWr | readonly SendWr[], path?: PostPath): bigint[] {
    if (!Array.isArray(wrs) && !this.#scratchBusy) return this.#postOne(wrs as SendWr, path);
    const { natives, entries } = this.#toNativeList(wrs);
    this.#checkUnsignaled(entries);
    const usePath = path ?? (this.extended ? 'ex' : 'legacy');
    try {
      this.#packer.pack(natives);
      this.#packer.post(usePath === 'ex');
    } catch (e) {
      // ibv_post_send names the refused request; those before it are on the wire. The
      // ibv_wr_* path posts all or nothing (ibv_wr_complete), so nothing is tracked.
      const posted =
        e instanceof VerbsError && usePath === 'legacy' && e.call === 'ibv_post_send'
          ? (e.badWrIndex ?? 0)
          : 0;
      this.track(entries.slice(0, posted));
      applyBinds(wrs, natives, posted);
      throw e;
    }
    this.track(entries);
    applyBinds(wrs, natives, natives.length);
    const ids: bigint[] = new Array(entries.length);
    for (let i = 0; i < entries.length; i++) ids[i] = (entries[i] as InFlight).wrId;
    return ids;
  }

  /**
   * `postSend` of one request (not in a list), the everyday loop's form: the same checks
   * and posting, checked into the QP's reused request and SGE list, so that nothing but
   * its in-flight entry, the list of what it keeps and the returned wrId array is made.
   */
  #postOne(wr: SendWr, path: PostPath | undefined): bigint[] {
    const keep = this.#keep;
    let native: NativeSendWr;
    this.#scratchBusy = true;
    try {
      native = toNativeSend(
        wr,
        keep,
        this.#takeWrId,
        this.#device,
        this.#scratch,
        this.#scratchSges,
      );
    } catch (e) {
      keep.take(); // what the refused request collected is not kept
      throw e;
    } finally {
      this.#scratchBusy = false;
    }
    const entry: InFlight = {
      wrId: native.wrId,
      signaled: this.#signaled(native),
      keep: keep.take(),
    };
    const run = this.#runAfter(this.#unsignaledRun, entry.signaled);
    const usePath = path ?? (this.#extended ? 'ex' : 'legacy');
    try {
      this.#packer.pack1(native);
      this.#packer.post(usePath === 'ex');
    } finally {
      // The scratch must not keep a window or an address handle reachable.
      if (native.mw !== undefined || native.ah !== undefined || native.bindInfo !== undefined) {
        native.mw = undefined;
        native.ah = undefined;
        native.bindInfo = undefined;
      }
    }
    // Posted (a refusal threw above: one request, so nothing of it was posted).
    this.#sendQueue.push(entry);
    this.#unsignaledRun = run;
    if (native.bindRkey !== undefined) wr.bind?.mw.setRkey(native.bindRkey);
    return [entry.wrId];
  }

  /**
   * Parses a list of send requests once (legacy path) for repeated posting with
   * {@link PreparedSend.post}: the per-post cost is one native call. The wrIds are fixed
   * (auto-numbered once when absent).
   */
  prepare(wrs: SendWr | readonly SendWr[]): PreparedSend {
    refuseBindMw(wrs);
    const { natives, entries } = this.#toNativeList(wrs);
    const { words, handles } = packSendList(natives);
    const id = this.native.prepare(words, natives.length, handles);
    return new PreparedSend(this, id, entries, (e) => this.track(e));
  }

  /**
   * Prepares one request for the post-and-wait loop: {@link RoundTrip.run} posts it and
   * waits for its completion (or, with `untilReceiveOn`, the peer's receive) in one native
   * call. The fast form of "postSend, then poll": see docs/verbs.md, "Which form".
   */
  prepareRoundTrip(wr: SendWr, options: RoundTripOptions = {}): RoundTrip {
    if (typeof wr !== 'object' || wr === null || Array.isArray(wr))
      throw new VerbsArgumentError('wr', 'a round trip takes one work request object');
    if (typeof options !== 'object' || options === null)
      throw new VerbsArgumentError('options', 'must be an object');
    refuseBindMw(wr);
    const keep: Resource[] = [];
    const native = toNativeSend(
      { ...wr, wrId: RoundTrip.wrIdFor(wr), signaled: true },
      keep,
      this.#takeWrId,
      this.#device,
    );
    return new RoundTrip(this, wr, keep, native, options);
  }

  /** Posts receive requests (one call); returns their wrIds. */
  postRecv(wrs: RecvWr | readonly RecvWr[]): bigint[] {
    if (this.srq !== undefined)
      throw new VerbsError(
        'EINVAL',
        22,
        'ibv_post_recv',
        this.#device,
        'the QP receives through its SRQ: post to srq.postRecv',
      );
    const rq = this.#recvQueue;
    if (!Array.isArray(wrs)) {
      // One request (a receive reposted per message): no list made around it, and its
      // packed record is its in-flight entry. A refusal posted nothing.
      const one = this.#recvPacker.packOne(wrs as RecvWr, recvName, this.#takeWrId);
      this.#recvPacker.post(this.native, 1);
      rq.push(one);
      return [one.wrId];
    }
    const packed = this.#recvPacker.pack(wrs as readonly RecvWr[], recvName, this.#takeWrId);
    try {
      this.#recvPacker.post(this.native, packed.length);
    } catch (e) {
      // The requests before the refused one were posted: track them.
      const posted = e instanceof VerbsError ? (e.badWrIndex ?? 0) : 0;
      for (let i = 0; i < posted; i++) rq.push(packed[i] as PackedRecv);
      throw e;
    }
    const ids: bigint[] = new Array(packed.length);
    for (let i = 0; i < packed.length; i++) {
      const p = packed[i] as PackedRecv;
      rq.push(p);
      ids[i] = p.wrId;
    }
    return ids;
  }

  /** @internal called by the CQ for each polled completion of this QP. */
  retire(wc: WorkCompletion): void {
    this.retireRaw(wc.ok, wc.opcodeCode, wc.wrId);
  }

  /** @internal `retire` of a successful completion from its poll words. */
  retireSucceeded(opcodeCode: number, wrIdLow: number, wrIdHigh: number): void {
    // A receive through the SRQ: the SRQ's prepared runs compare numbers, no bigint.
    if (
      (opcodeCode & WC_OPCODE.RECV) !== 0 &&
      this.srq !== undefined &&
      this.srq.retireWords(wrIdLow, wrIdHigh)
    )
      return;
    this.retireRaw(true, opcodeCode, wrIdOf(wrIdLow, wrIdHigh));
  }

  /** @internal `retire` from the completion's raw fields (no completion object). */
  retireRaw(ok: boolean, opcodeCode: number, wrId: bigint): void {
    // (The RECV bit directly: opcodeCode is a u32 the decoder read, not user input.)
    const fromRecv = ok && (opcodeCode & WC_OPCODE.RECV) !== 0;
    // A receive of an SRQ (or a flushed one: its status carries no opcode) is the SRQ's.
    if (this.srq !== undefined && (fromRecv || !ok) && this.srq.retire(wrId)) return;
    // (No closure or array per completion: this runs for every completion polled.)
    if (!fromRecv) {
      const sq = this.#sendQueue;
      const i = indexOfWrId(sq, wrId);
      if (i >= 0) {
        // Send queue: earlier unsignaled requests completed too (in-order retirement).
        if (i === 0) sq.shift();
        else sq.splice(0, i + 1);
        return;
      }
    }
    const rq = this.#recvQueue;
    const i = indexOfWrId(rq, wrId);
    if (i === 0) rq.shift();
    else if (i > 0) rq.splice(i, 1);
  }

  /**
   * @internal a round trip consumed this QP's next receive completion (receives of an RC
   * QP without SRQ complete in posting order).
   */
  retireOldestRecv(): void {
    this.#recvQueue.shift();
  }

  /** @internal the CQ `cq` failed (CQ_ERR): what it was to complete is lost. */
  abandon(cq: Cq): bigint[] {
    const lost: bigint[] = [];
    if (cq === this.sendCq) {
      lost.push(...this.#sendQueue.map((e) => e.wrId));
      this.#sendQueue.length = 0;
      this.#unsignaledRun = 0;
    }
    if (cq === this.recvCq) {
      lost.push(...this.#recvQueue.map((e) => e.wrId));
      this.#recvQueue.length = 0;
    }
    return lost;
  }

  protected override onClose(): void {
    const qpNum = this.qpNum;
    this.pd.context.untrackQp(qpNum);
    this.sendCq.detach(qpNum);
    this.recvCq.detach(qpNum);
    this.#sendQueue.length = 0;
    this.#recvQueue.length = 0;
    this.#unsignaledRun = 0;
  }

  /** The device name (for messages). */
  get device(): string {
    return this.#device;
  }
}
