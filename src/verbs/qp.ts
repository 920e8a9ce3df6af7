/**
 * Queue pairs: typed state transitions, posting (legacy `ibv_post_send` or the
 * extended `ibv_wr_*` path, one doorbell per list), receive posting, and in-flight
 * tracking: every MR a posted request uses stays referenced until its completion is
 * polled (unsignaled requests retire with the next signaled one, in send-queue order).
 */

import { describeValue } from '../arguments.js';
import {
  flagNames,
  MTU,
  type Mtu,
  nameOf,
  QP_TYPE,
  type QpType,
  SEND_FLAGS,
} from '../ibverbs/constants.js';
import { ACCESS_FLAGS, QP_STATE, WC_OPCODE, WR_OPCODE, type WrOpcode } from '../ibverbs/index.js';
import type {
  NativeAhAttrQuery,
  NativeQp,
  NativeQpQuery,
  NativeSendWr,
  NativeSge,
} from '../native/bindings.js';
import type { CmId } from './cm.js';
import { type WorkCompletion, wrIdOf } from './completion.js';
import type { CompletionSink, Cq } from './cq.js';
import { VerbsArgumentError, VerbsError } from './errors.js';
import { FLUSH_PLACEMENT, FLUSH_SELECTIVITY, type FlushSpec } from './flush.js';
import { Resource } from './lifetime.js';
import type { Access, RemoteRef, Sge } from './mr.js';
import { incRkey, type Mw, type MwBind, type MwBindRequest, nativeBindInfo } from './mw.js';
import type { Ah, Pd } from './pd.js';
import { type AddressVector, type QpAttr, type QpStateName, toNativeQpAttr } from './qp-attr.js';
import { type PackedRecv, RecvPacker } from './recv-packer.js';
import { RoundTrip, type RoundTripOptions } from './round-trip.js';
import { SendPacker } from './send-packer.js';
import type { Srq } from './srq.js';

/** A work-request opcode name (the C name without `IBV_WR_`), e.g. `'ATOMIC_FETCH_AND_ADD'`. */
export type SendOpcode = WrOpcode;

/**
 * An SGE given by raw address and key: no bounds check and no keep-alive (tests only).
 * Refused with `inline` (the provider would copy from that address in this process).
 */
export interface RawSge {
  readonly addr: bigint;
  readonly length: number;
  readonly lkey: number;
}

/** A send work request. */
export interface SendWr {
  /** Echoed in the completion; auto-numbered when absent. */
  readonly wrId?: bigint;
  readonly opcode: SendOpcode;
  readonly sgList?: readonly (Sge | RawSge)[];
  /** Ask for a completion (default true). */
  readonly signaled?: boolean;
  readonly solicited?: boolean;
  readonly fence?: boolean;
  /** Copy the payload into the WQE at post time. */
  readonly inline?: boolean;
  /** SEND_WITH_IMM / RDMA_WRITE_WITH_IMM: the 32-bit value (sent big-endian). */
  readonly immData?: number;
  /** RDMA and atomic operations: the target. */
  readonly remote?: RemoteRef;
  /** FETCH_AND_ADD: the addend. */
  readonly add?: bigint;
  /** CMP_AND_SWP: the compare value. */
  readonly compare?: bigint;
  /** CMP_AND_SWP: the swap value. */
  readonly swap?: bigint;
  /** ATOMIC_WRITE (extended path): the 8-byte value. */
  readonly atomicValue?: bigint;
  /** FLUSH (extended path, rdma-core >= 45, QP created with `flush`): what to flush. */
  readonly flush?: FlushSpec;
  /** UD QPs (SEND / SEND_WITH_IMM, legacy path): where the datagram goes. */
  readonly ud?: UdDestination;
  /** BIND_MW: the type 2 window, where it goes and its new rkey. */
  readonly bind?: MwBindRequest;
  /**
   * LOCAL_INV, SEND_WITH_INV: the rkey to invalidate, or the type 2 window whose
   * current rkey it is.
   */
  readonly invalidateRkey?: number | Mw;
}

/** Options of {@link Qp.bindMw}: where the type 1 window goes, and its request. */
export interface MwBindOptions extends MwBind {
  readonly wrId?: bigint;
  /** Ask for a completion (BIND_MW, default true). */
  readonly signaled?: boolean;
}

/** The destination of a UD send. */
export interface UdDestination {
  readonly ah: Ah;
  readonly remoteQpn: number;
  readonly remoteQkey: number;
}

/** A receive work request. */
export interface RecvWr {
  readonly wrId?: bigint;
  readonly sgList?: readonly (Sge | RawSge)[];
}

/** Which posting API to use. */
export type PostPath = 'legacy' | 'ex';

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

interface InFlight {
  readonly wrId: bigint;
  readonly signaled: boolean;
  /** What the request needs until it completes (MRs, a UD address handle). */
  readonly keep: readonly Resource[];
}

const U64_MAX = (1n << 64n) - 1n;

/** `enum ibv_wr_opcode` by name, own names only. */
const SEND_OPCODE_CODES: ReadonlyMap<string, number> = new Map(Object.entries(WR_OPCODE));

/** @internal a u64 argument, checked. */
export function u64(name: string, v: unknown): bigint {
  if (typeof v !== 'bigint' || v < 0n || v > U64_MAX)
    throw new VerbsArgumentError(name, 'must be a bigint in [0, 2^64 - 1]');
  return v;
}

function u32(name: string, v: unknown): number {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v > 0xffffffff)
    throw new VerbsArgumentError(name, 'must be an integer in [0, 2^32 - 1]');
  return v;
}

function isRawSge(s: Sge | RawSge): s is RawSge {
  return typeof (s as RawSge).addr === 'bigint';
}

/** @internal validates SGEs and collects the MRs to keep alive (QPs and SRQs). */
export function nativeSges(
  list: readonly (Sge | RawSge)[] | undefined,
  keep: KeepSink,
  inline = false,
): NativeSge[] {
  if (list === undefined) return [];
  if (!Array.isArray(list)) throw new VerbsArgumentError('sgList', 'must be an array');
  const out: NativeSge[] = new Array(list.length);
  for (let i = 0; i < list.length; i++) out[i] = nativeSge(list[i], i, keep, inline);
  return out;
}

/** @internal one SGE of {@link nativeSges}, checked; its MR goes to `keep`. */
export function nativeSge(
  s: Sge | RawSge | undefined,
  i: number,
  keep: KeepSink,
  inline: boolean,
): NativeSge {
  const out: MutableSge = { addr: 0n, length: 0, lkey: 0 };
  sgeInto(s, i, keep, inline, out);
  return out;
}

/** @internal a checked SGE as the packers write it (one reused per packer). */
export interface MutableSge {
  addr: bigint;
  length: number;
  lkey: number;
}

/**
 * @internal checks one SGE into `out` (the packers reuse one: no object per SGE); its MR
 * goes to `keep`.
 */
export function sgeInto(
  s: Sge | RawSge | undefined,
  i: number,
  keep: KeepSink,
  inline: boolean,
  out: MutableSge,
): void {
  if (typeof s !== 'object' || s === null)
    throw new VerbsArgumentError(`sgList[${i}]`, 'must be an object');
  if (isRawSge(s)) {
    if (inline)
      throw new VerbsArgumentError(
        `sgList[${i}]`,
        'inline data must come from an Mr (a raw address is refused with inline)',
      );
    out.addr = u64('sge.addr', s.addr);
    out.length = u32('sge.length', s.length);
    out.lkey = u32('sge.lkey', s.lkey);
    return;
  }
  const mr = s.mr;
  if (mr === undefined || typeof mr !== 'object' || !('native' in mr))
    throw new VerbsArgumentError(`sgList[${i}].mr`, 'must be an Mr (register the Buffer first)');
  if (mr.closed)
    throw new VerbsError('EBADF', 9, 'ibv_post_send', undefined, `sgList[${i}] uses a closed MR`);
  const offset = s.offset ?? 0;
  if (!Number.isInteger(offset) || offset < 0)
    throw new VerbsArgumentError(`sgList[${i}].offset`, 'must be a non-negative integer');
  const length = s.length ?? mr.length - offset;
  if (!Number.isInteger(length) || length < 0)
    throw new VerbsArgumentError(`sgList[${i}].length`, 'must be a non-negative integer');
  if (offset + length > mr.length)
    throw new VerbsArgumentError(
      `sgList[${i}]`,
      `[${offset}, ${offset + length}) runs past the end of the MR (length ${mr.length})`,
    );
  keep.push(mr);
  out.addr = offset === 0 ? mr.addr : mr.addr + BigInt(offset);
  out.length = length;
  out.lkey = mr.lkey;
}

/** @internal where a check collects what a request keeps alive while in flight. */
export interface KeepSink {
  push(resource: Resource): unknown;
}

const NO_KEEP: readonly Resource[] = Object.freeze([]);

/**
 * @internal a reused KeepSink: `take()` copies what was collected at its size (the shared
 * empty list when nothing was). A fresh `[]` per request reserves 17 slots on its first
 * push (about 150 bytes, per request and per SGE list), and an array emptied with
 * `length = 0` drops its store, so this one keeps a count instead.
 */
export class KeepList implements KeepSink {
  readonly #items: (Resource | undefined)[] = [];
  #n = 0;

  push(resource: Resource): void {
    this.#items[this.#n++] = resource;
  }

  take(): readonly Resource[] {
    const n = this.#n;
    if (n === 0) return NO_KEEP;
    if (n === 1) {
      // The everyday request keeps one MR: a literal, cheaper than a slice.
      const only = this.#items[0] as Resource;
      this.#items[0] = undefined;
      this.#n = 0;
      return [only];
    }
    const out = this.#items.slice(0, n) as Resource[];
    // Drop the references: the scratch must not keep the last request's MRs reachable.
    for (let i = 0; i < n; i++) this.#items[i] = undefined;
    this.#n = 0;
    return out;
  }
}

/**
 * @internal a reused SGE list for one request at a time ({@link nativeSges} without an
 * array and an object per SGE per post): `fill` checks `list` into it and returns it.
 */
export class SgeScratch {
  readonly #pool: MutableSge[] = [];
  #list: MutableSge[] = [];

  fill(list: readonly (Sge | RawSge)[] | undefined, keep: KeepSink, inline: boolean): NativeSge[] {
    if (list !== undefined && !Array.isArray(list))
      throw new VerbsArgumentError('sgList', 'must be an array');
    const n = list === undefined ? 0 : list.length;
    // Made at its size, and again only when a request has another SGE count.
    if (this.#list.length !== n) this.#list = new Array(n);
    for (let i = 0; i < n; i++) {
      let sge = this.#pool[i];
      if (sge === undefined) {
        sge = { addr: 0n, length: 0, lkey: 0 };
        this.#pool[i] = sge;
      }
      sgeInto((list as readonly (Sge | RawSge)[])[i], i, keep, inline, sge);
      this.#list[i] = sge;
    }
    return this.#list;
  }
}

/** A send request with every field present, to be filled by `Qp.#toNativeSend`. */
function blankSendWr(): NativeSendWr {
  return {
    wrId: 0n,
    opcode: 0,
    sendFlags: 0,
    sgList: [],
    immData: undefined,
    remoteAddr: undefined,
    rkey: undefined,
    compareAdd: undefined,
    swap: undefined,
    atomicValue: undefined,
    flushLength: undefined,
    flushType: undefined,
    flushLevel: undefined,
    invalidateRkey: undefined,
    mw: undefined,
    bindRkey: undefined,
    bindInfo: undefined,
    ah: undefined,
    remoteQpn: undefined,
    remoteQkey: undefined,
  };
}

function recvName(): string {
  return 'wr';
}

function recvEntry(p: PackedRecv): InFlight {
  return { wrId: p.wrId, signaled: true, keep: p.keep };
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
    const native = this.#checkMw(mw, 1, 'mw');
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

  // A window of `type`, open, of this QP's PD.
  #checkMw(mw: Mw, type: 1 | 2, field: string): Mw['native'] {
    if (typeof mw !== 'object' || mw === null || !('native' in mw) || !('setRkey' in mw))
      throw new VerbsArgumentError(field, 'must be an Mw (pd.allocMw)');
    if (mw.closed)
      throw new VerbsError('EBADF', 9, 'ibv_bind_mw', this.#device, `${field} is closed`);
    if (mw.type !== type)
      throw new VerbsArgumentError(
        field,
        type === 1
          ? 'a type 2 window is bound by a BIND_MW work request (postSend), not by bindMw'
          : 'a type 1 window is bound by qp.bindMw (ibv_bind_mw), not by a work request',
      );
    return mw.native;
  }

  // The checked request; whether it is signaled is in its sendFlags (or sq_sig_all).
  #toNativeSend(
    wr: SendWr,
    keep: KeepSink,
    native: NativeSendWr = blankSendWr(),
    sges?: SgeScratch,
  ): NativeSendWr {
    if (typeof wr !== 'object' || wr === null)
      throw new VerbsArgumentError('wr', 'a work request must be an object');
    // By own name only (a lookup in WR_OPCODE itself would take 'toString' from its
    // prototype), and without String() of the value (an object's throwing toString).
    const name = wr.opcode;
    const opcode = typeof name === 'string' ? SEND_OPCODE_CODES.get(name) : undefined;
    if (opcode === undefined)
      throw new VerbsArgumentError('opcode', `unknown opcode ${describeValue(name)}`);
    const wrId = wr.wrId === undefined ? this.#nextWrId++ : u64('wrId', wr.wrId);
    const signaled = wr.signaled ?? true;
    const sendFlags =
      (signaled ? SEND_FLAGS.SIGNALED : 0) |
      (wr.solicited ? SEND_FLAGS.SOLICITED : 0) |
      (wr.fence ? SEND_FLAGS.FENCE : 0) |
      (wr.inline ? SEND_FLAGS.INLINE : 0);
    // Every field present (undefined when absent: the addon reads that as absent), so that
    // every request has one shape and the code reading them stays monomorphic; a reused
    // request has every field reset.
    native.wrId = wrId;
    native.opcode = opcode;
    native.sendFlags = sendFlags;
    native.sgList =
      sges === undefined
        ? nativeSges(wr.sgList, keep, wr.inline === true)
        : sges.fill(wr.sgList, keep, wr.inline === true);
    native.immData = undefined;
    native.remoteAddr = undefined;
    native.rkey = undefined;
    native.compareAdd = undefined;
    native.swap = undefined;
    native.atomicValue = undefined;
    native.flushLength = undefined;
    native.flushType = undefined;
    native.flushLevel = undefined;
    native.invalidateRkey = undefined;
    native.mw = undefined;
    native.bindRkey = undefined;
    native.bindInfo = undefined;
    native.ah = undefined;
    native.remoteQpn = undefined;
    native.remoteQkey = undefined;
    if (wr.immData !== undefined) native.immData = u32('immData', wr.immData);
    if (wr.remote !== undefined) {
      native.remoteAddr = u64('remote.addr', wr.remote.addr);
      native.rkey = u32('remote.rkey', wr.remote.rkey);
    }
    if (wr.add !== undefined) native.compareAdd = u64('add', wr.add);
    if (wr.compare !== undefined) native.compareAdd = u64('compare', wr.compare);
    if (wr.swap !== undefined) native.swap = u64('swap', wr.swap);
    if (wr.atomicValue !== undefined) native.atomicValue = u64('atomicValue', wr.atomicValue);
    if (wr.flush !== undefined) {
      native.flushLength = u64('flush.length', wr.flush.length);
      const placement = FLUSH_PLACEMENT[wr.flush.placement ?? 'GLOBAL'];
      const selectivity = FLUSH_SELECTIVITY[wr.flush.selectivity ?? 'RANGE'];
      if (placement === undefined)
        throw new VerbsArgumentError('flush.placement', `unknown '${String(wr.flush.placement)}'`);
      if (selectivity === undefined)
        throw new VerbsArgumentError(
          'flush.selectivity',
          `unknown '${String(wr.flush.selectivity)}'`,
        );
      native.flushType = placement;
      native.flushLevel = selectivity;
    }
    if (wr.opcode === 'BIND_MW') {
      const bind = wr.bind;
      if (typeof bind !== 'object' || bind === null)
        throw new VerbsArgumentError(
          'bind',
          'BIND_MW needs bind: { mw, mr, addr?, length?, access }',
        );
      native.mw = this.#checkMw(bind.mw, 2, 'bind.mw');
      native.bindRkey =
        bind.rkey === undefined ? incRkey(bind.mw.rkey) : u32('bind.rkey', bind.rkey);
      native.bindInfo = nativeBindInfo(bind, keep, 'bind');
      keep.push(bind.mw);
    } else if (wr.bind !== undefined) {
      throw new VerbsArgumentError(
        'bind',
        `only a BIND_MW request binds (not ${String(wr.opcode)})`,
      );
    }
    if (wr.opcode === 'LOCAL_INV' || wr.opcode === 'SEND_WITH_INV') {
      const target = wr.invalidateRkey;
      if (typeof target === 'object' && target !== null) {
        this.#checkMw(target, 2, 'invalidateRkey');
        native.invalidateRkey = target.rkey;
      } else if (target === undefined) {
        throw new VerbsArgumentError('invalidateRkey', `${wr.opcode} needs the rkey to invalidate`);
      } else {
        native.invalidateRkey = u32('invalidateRkey', target);
      }
    } else if (wr.invalidateRkey !== undefined) {
      throw new VerbsArgumentError(
        'invalidateRkey',
        `only LOCAL_INV and SEND_WITH_INV invalidate (not ${String(wr.opcode)})`,
      );
    }
    if (wr.ud !== undefined) {
      const ah = wr.ud.ah;
      if (typeof ah !== 'object' || ah === null || !('native' in ah))
        throw new VerbsArgumentError('ud.ah', 'must be an Ah (Pd.createAh)');
      if (ah.closed)
        throw new VerbsError('EBADF', 9, 'ibv_post_send', this.#device, 'ud.ah is closed');
      native.ah = ah.native;
      native.remoteQpn = u32('ud.remoteQpn', wr.ud.remoteQpn);
      native.remoteQkey = u32('ud.remoteQkey', wr.ud.remoteQkey);
      keep.push(ah);
    }
    return native;
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
    const native = this.#toNativeSend(wr, this.#keep);
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
      // The packed form (no N-API property read per field) takes every opcode it knows;
      // a UD destination or another opcode goes through the object form.
      if (this.#packer.pack(natives)) this.#packer.post(usePath === 'ex');
      else if (usePath === 'ex') this.native.postSendEx(natives);
      else this.native.postSend(natives);
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
      native = this.#toNativeSend(wr, keep, this.#scratch, this.#scratchSges);
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
      if (this.#packer.pack1(native)) this.#packer.post(usePath === 'ex');
      else if (usePath === 'ex') this.native.postSendEx([native]);
      else this.native.postSend([native]);
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
    const id = this.native.prepare(natives);
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
    const native = this.#toNativeSend({ ...wr, wrId: RoundTrip.wrIdFor(wr), signaled: true }, keep);
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
    const list = Array.isArray(wrs) ? (wrs as readonly RecvWr[]) : [wrs as RecvWr];
    const packed = this.#recvPacker.pack(list, recvName, this.#takeWrId);
    const rq = this.#recvQueue;
    try {
      this.#recvPacker.post(this.native, packed.length);
    } catch (e) {
      // The requests before the refused one were posted: track them.
      const posted = e instanceof VerbsError ? (e.badWrIndex ?? 0) : 0;
      for (let i = 0; i < posted; i++) rq.push(recvEntry(packed[i] as PackedRecv));
      throw e;
    }
    const ids: bigint[] = [];
    for (const p of packed) {
      rq.push(recvEntry(p));
      ids.push(p.wrId);
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

const SEND_LIST_OF = (wrs: SendWr | readonly SendWr[]): readonly SendWr[] =>
  Array.isArray(wrs) ? (wrs as readonly SendWr[]) : [wrs as SendWr];

/** A posted BIND_MW gave its window the rkey it carried (the first `count` requests). */
// (No array or closure per call: this runs for every postSend.)
function applyBinds(wrs: SendWr | readonly SendWr[], natives: NativeSendWr[], count: number): void {
  for (let i = 0; i < count; i++) {
    const rkey = natives[i]?.bindRkey;
    if (rkey === undefined) continue;
    const wr = Array.isArray(wrs) ? (wrs as readonly SendWr[])[i] : (wrs as SendWr);
    wr?.bind?.mw.setRkey(rkey);
  }
}

/** A BIND_MW changes its window's rkey each time: posted with postSend only. */
function refuseBindMw(wrs: SendWr | readonly SendWr[]): void {
  if (SEND_LIST_OF(wrs).some((wr) => typeof wr === 'object' && wr?.opcode === 'BIND_MW'))
    throw new VerbsArgumentError(
      'opcode',
      'a BIND_MW request gives its window a new rkey each time: post it with postSend',
    );
}

/** A send list parsed once by {@link Qp.prepare}; `post()` rings one doorbell for it. */
export class PreparedSend {
  readonly #qp: Qp;
  readonly #id: number;
  readonly #entries: readonly InFlight[];
  readonly #track: (entries: readonly InFlight[]) => void;
  #released = false;

  /** @internal */
  constructor(
    qp: Qp,
    id: number,
    entries: readonly InFlight[],
    track: (e: readonly InFlight[]) => void,
  ) {
    this.#qp = qp;
    this.#id = id;
    this.#entries = entries;
    this.#track = track;
  }

  /** The wrIds of the list. */
  get wrIds(): bigint[] {
    return this.#entries.map((e) => e.wrId);
  }

  /** `ibv_post_send` of the whole list. EBADF if released or if one of its MRs was closed. */
  post(): void {
    if (this.#released)
      throw new VerbsError(
        'EBADF',
        9,
        'ibv_post_send',
        this.#qp.device,
        'the prepared list was released',
      );
    for (const e of this.#entries)
      for (const mr of e.keep)
        if (mr.closed)
          throw new VerbsError(
            'EBADF',
            9,
            'ibv_post_send',
            this.#qp.device,
            'a prepared request uses a closed MR',
          );
    this.#qp.checkUnsignaled(this.#entries);
    this.#qp.native.postPrepared(this.#id);
    this.#track(this.#entries);
  }

  /** Frees the parsed list; idempotent. */
  release(): void {
    if (this.#released) return;
    this.#released = true;
    if (!this.#qp.closed) this.#qp.native.unprepare(this.#id);
  }

  /** Same as {@link release}. */
  [Symbol.dispose](): void {
    this.release();
  }
}
