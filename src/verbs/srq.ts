/**
 * Shared receive queues (`ibv_srq`): one receive queue that every QP created with
 * `{ srq }` consumes from. The SRQ keeps the MRs of its posted receives until their
 * completions are polled (on the receive CQ of whichever QP consumed them), and reports
 * its limit event (IBV_EVENT_SRQ_LIMIT_REACHED, IBTA 1.5 section 10.2.9.2 / 11.6.3.3)
 * through {@link Srq.limitReached}.
 */

import { SRQ_ATTR_MASK } from '../ibverbs/constants.js';
import type { NativeSrq } from '../native/bindings.js';
import type { AsyncEvent } from './async-events.js';
import { wrIdOf } from './completion.js';
import type { Cq } from './cq.js';
import { VerbsArgumentError, VerbsError } from './errors.js';
import { Resource } from './lifetime.js';
import type { Pd } from './pd.js';
import { withProviderCause } from './provider-causes.js';
import { PreparedRecv, type RecvRunSink } from './requests/prepared-recv.js';
import { type PackedRecv, RecvPacker } from './requests/recv-packer.js';
import type { RecvWr } from './requests/wr.js';
import { type Pending, type WaitOptions, waitFor } from './wait.js';

/** Options of {@link Pd.createSrq} (`struct ibv_srq_init_attr`). */
export interface SrqOptions {
  /** Receive requests it holds at least (`max_wr`). */
  readonly maxWr: number;
  /** Scatter/gather elements per receive request at most (`max_sge`). */
  readonly maxSge: number;
  /**
   * The limit (`srq_limit`): when fewer receives than this remain, the device raises
   * SRQ_LIMIT_REACHED once and disarms it (0, the default: not armed). Whether a limit
   * given at creation arms the event is the provider's choice (ibv_create_srq(3)); arm it
   * with {@link Srq.modify}, as the tests do.
   */
  readonly limit?: number;
}

/** `struct ibv_srq_attr` (as `ibv_query_srq` reads it, or as granted). */
export interface SrqAttr {
  readonly maxWr: number;
  readonly maxSge: number;
  /** 0 when not armed (after the event fired, too). */
  readonly limit: number;
}

/** What {@link Srq.modify} changes (`ibv_modify_srq`; only the fields given). */
export interface SrqModify {
  /** Resize (IBV_SRQ_MAX_WR; siw refuses it: EOPNOTSUPP). */
  readonly maxWr?: number;
  /** Arm the limit event (IBV_SRQ_LIMIT). */
  readonly limit?: number;
}

function wrName(i: number): string {
  return `wrs[${i}]`;
}

function u32(name: string, v: unknown, min = 0): number {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > 0xffffffff)
    throw new VerbsArgumentError(name, `must be an integer in [${min}, 2^32 - 1]`);
  return v;
}

/** @internal validated `ibv_srq_init_attr` of {@link Pd.createSrq}. */
export function srqInitOf(options: SrqOptions): {
  maxWr: number;
  maxSge: number;
  srqLimit: number;
} {
  if (typeof options !== 'object' || options === null)
    throw new VerbsArgumentError('options', 'must be { maxWr, maxSge, limit? }');
  return {
    maxWr: u32('maxWr', options.maxWr, 1),
    maxSge: u32('maxSge', options.maxSge, 1),
    srqLimit: u32('limit', options.limit ?? 0),
  };
}

/** Receives posted by one `PreparedRecv.post`: wrIds [first, end), `left` not completed. */
interface RecvRun {
  readonly first: bigint;
  readonly end: bigint;
  // The same bounds as numbers (exact: see #bigRuns), which retireWords compares.
  readonly firstNumber: number;
  readonly endNumber: number;
  left: number;
  readonly keep: readonly Resource[];
}

/**
 * What the SRQ knows of a receive refill (recv-refill.ts) posting to it: the receives it
 * holds, and a completion of one of them that another poll took.
 */
export interface RefillSink {
  readonly outstanding: number;
  /** @internal true if `wrId` is one of the refill's (then no longer outstanding). */
  retireElsewhere(wrId: bigint): boolean;
}

/** The QPs of an SRQ as a refill's check sees them. */
interface SrqQp {
  readonly closed: boolean;
  readonly recvCq: Cq;
}

/** 2^32, to put a wrId together from its halves as a number. */
const HIGH_WORD = 0x1_0000_0000;

/**
 * A shared receive queue (`ibv_srq`). `close()` is `ibv_destroy_srq`; its QPs close
 * first (with `{ cascade: false }`: EBUSY while one is open).
 */
export class Srq extends Resource<NativeSrq> implements RecvRunSink {
  /** The PD (kept reachable while this SRQ lives). */
  readonly pd: Pd;
  readonly #device: string;
  readonly #key: bigint;
  readonly #maxSge: number;
  readonly #posted: PackedRecv[] = [];
  // What prepared receives posted, a run per post (no entry per receive).
  readonly #runs: RecvRun[] = [];
  #runsLeft = 0;
  #bigRuns = false;
  readonly #limitWaiters: Pending<AsyncEvent>[] = [];
  // A limit event the context read while nobody waited (the watcher of another waiter, a
  // pollAsyncEvents, the read just after a wait timed out): the next limitReached gets it.
  #unclaimedLimit: AsyncEvent | undefined;
  #nextWrId = 1n;
  readonly #packer = new RecvPacker();
  // The refills posting here (they keep their MRs: kept reachable while this SRQ is),
  // and the QPs receiving through it (weakly).
  readonly #refills = new Set<RefillSink>();
  readonly #qps: WeakRef<SrqQp>[] = [];
  readonly #takeWrId = (): bigint => this.#nextWrId++;

  /** @internal use `Pd.createSrq` */
  constructor(native: NativeSrq, pd: Pd) {
    super(native, 'Srq', [pd]);
    this.pd = pd;
    this.#device = pd.context.name;
    this.#key = native.key;
    // Fixed at creation (ibv_modify_srq changes max_wr and the limit only): read once,
    // not through an N-API getter per post.
    this.#maxSge = native.attr.maxSge;
    pd.context.trackSrq(this.#key, this);
  }

  /** Receive requests it holds, as granted (`max_wr`, at least what was asked). */
  get maxWr(): number {
    return this.native.attr.maxWr;
  }
  /** SGEs per receive request, as granted. */
  get maxSge(): number {
    return this.#maxSge;
  }
  /** Receives posted whose completions were not polled yet. */
  get inFlight(): number {
    let n = this.#posted.length + this.#runsLeft;
    for (const r of this.#refills) n += r.outstanding;
    return n;
  }

  /** @internal a QP receives through this SRQ. */
  attachQp(qp: SrqQp): void {
    for (let i = this.#qps.length - 1; i >= 0; i--)
      if (this.#qps[i]?.deref() === undefined) this.#qps.splice(i, 1);
    this.#qps.push(new WeakRef(qp));
  }

  /** @internal true when an open QP of this SRQ has `cq` as its receive CQ. */
  receivesOn(cq: Cq): boolean {
    return this.#qps.some((r) => {
      const qp = r.deref();
      return qp !== undefined && !qp.closed && qp.recvCq === cq;
    });
  }

  /** @internal a receive refill posts here. */
  trackRefill(refill: RefillSink): void {
    this.#refills.add(refill);
  }

  /** @internal the device name (for messages). */
  get device(): string {
    return this.#device;
  }

  /**
   * Checks a receive request once for {@link PreparedRecv.post}, which posts copies of
   * it in one call (a refill with no JavaScript work per receive). The copies' wrIds are
   * numbered by the SRQ (a request with `wrId` is refused); its SGEs are checked against
   * {@link maxSge} as `postRecv`'s.
   */
  prepareRecv(wr: RecvWr): PreparedRecv {
    if (this.closed)
      throw new VerbsError('EBADF', 9, 'ibv_post_srq_recv', this.#device, 'the SRQ is closed');
    return new PreparedRecv(this, wr);
  }

  /** @internal */
  takeWrIds(count: number): bigint {
    const first = this.#nextWrId;
    this.#nextWrId += BigInt(count);
    return first;
  }

  /** @internal */
  trackRun(first: bigint, count: number, keep: readonly Resource[]): void {
    const end = first + BigInt(count);
    // Past 2^53 a number no longer holds every wrId exactly (after 9e15 receives).
    if (end > BigInt(Number.MAX_SAFE_INTEGER)) this.#bigRuns = true;
    const firstNumber = Number(first);
    this.#runs.push({ first, end, firstNumber, endNumber: firstNumber + count, left: count, keep });
    this.#runsLeft += count;
  }

  /**
   * `ibv_post_srq_recv` of a list (one call); returns the wrIds. A request with more
   * SGEs than {@link maxSge} is refused before anything is posted (VerbsArgumentError).
   */
  postRecv(wrs: RecvWr | readonly RecvWr[]): bigint[] {
    const list = Array.isArray(wrs) ? (wrs as readonly RecvWr[]) : [wrs as RecvWr];
    const packed = this.#packer.pack(list, wrName, this.#takeWrId, this.maxSge);
    try {
      this.#packer.post(this.native, packed.length);
    } catch (e) {
      const posted = e instanceof VerbsError ? (e.badWrIndex ?? 0) : 0;
      for (let i = 0; i < posted; i++) this.#posted.push(packed[i] as PackedRecv);
      throw e;
    }
    const ids: bigint[] = [];
    for (const p of packed) {
      this.#posted.push(p);
      ids.push(p.wrId);
    }
    return ids;
  }

  /** `ibv_modify_srq`: resize (`maxWr`) and/or arm the limit event (`limit`). */
  modify(attr: SrqModify): void {
    if (typeof attr !== 'object' || attr === null)
      throw new VerbsArgumentError('attr', 'must be { maxWr?, limit? }');
    const native: { maxWr?: number; srqLimit?: number } = {};
    let mask = 0;
    for (const key of Object.keys(attr))
      if (key !== 'maxWr' && key !== 'limit')
        throw new VerbsArgumentError(key, 'unknown SRQ attribute (maxWr, limit)');
    if (attr.maxWr !== undefined) {
      native.maxWr = u32('maxWr', attr.maxWr, 1);
      mask |= SRQ_ATTR_MASK.MAX_WR;
    }
    if (attr.limit !== undefined) {
      native.srqLimit = u32('limit', attr.limit);
      mask |= SRQ_ATTR_MASK.LIMIT;
    }
    if (mask === 0) throw new VerbsArgumentError('attr', 'give maxWr or limit');
    const rearm = native.srqLimit !== undefined && native.srqLimit > 0;
    // An event of the previous arming may wait in the async queue: read it first, so that
    // it is dropped with the unclaimed one rather than taken for the new arming's.
    if (rearm) this.pd.context.pollAsyncEvents();
    this.native.modify(native, mask);
    if (rearm) this.#unclaimedLimit = undefined;
  }

  /**
   * `ibv_query_srq`. On siw: VerbsError EOPNOTSUPP naming the cause (libsiw implements
   * no query_srq).
   */
  query(): SrqAttr {
    let a: ReturnType<NativeSrq['query']>;
    try {
      a = this.native.query();
    } catch (e) {
      throw withProviderCause(e, this.#device);
    }
    return { maxWr: a.maxWr, maxSge: a.maxSge, limit: a.srqLimit };
  }

  /**
   * The next SRQ_LIMIT_REACHED of this SRQ (arm it first with `modify({ limit })`; the
   * device disarms it when it fires). An event the context read while nobody waited is
   * kept (one per SRQ) and returned by the next call at once; arming the limit again
   * (a non-zero `modify({ limit })`) or closing the SRQ drops it. Rejects with EBADF if
   * the SRQ closes first.
   */
  limitReached(options: WaitOptions = {}): Promise<AsyncEvent> {
    if (this.closed)
      return Promise.reject(
        new VerbsError('EBADF', 9, 'ibv_get_async_event', this.#device, 'the SRQ is closed'),
      );
    const kept = this.#unclaimedLimit;
    if (kept !== undefined && options.signal?.aborted !== true) {
      this.#unclaimedLimit = undefined;
      return Promise.resolve(kept);
    }
    const context = this.pd.context;
    return waitFor<AsyncEvent>(
      options,
      { call: 'ibv_get_async_event', device: this.#device, what: 'SRQ_LIMIT_REACHED', owner: this },
      (pending) => {
        this.#limitWaiters.push(pending);
        context.watchAsyncEvents(1);
        context.pollAsyncEvents();
        return () => {
          context.watchAsyncEvents(-1);
          const i = this.#limitWaiters.indexOf(pending);
          if (i >= 0) this.#limitWaiters.splice(i, 1);
        };
      },
    );
  }

  /** @internal the context read an async event naming this SRQ. */
  onAsyncEvent(event: AsyncEvent): void {
    if (event.type !== 'SRQ_LIMIT_REACHED') return;
    if (this.#limitWaiters.length === 0) this.#unclaimedLimit = event;
    else for (const w of [...this.#limitWaiters]) w.resolve(event);
  }

  /** @internal a receive completion of one of its QPs: release what that receive kept. */
  retire(wrId: bigint): boolean {
    // (No closure per completion: receives complete in posting order, so mostly i = 0.)
    const posted = this.#posted;
    let i = 0;
    while (i < posted.length && (posted[i] as PackedRecv).wrId !== wrId) i++;
    if (i === posted.length) return this.#retireFromRun(wrId) || this.#retireFromRefill(wrId);
    if (i === 0) posted.shift();
    else posted.splice(i, 1);
    return true;
  }

  /**
   * @internal `retire` of a successful receive from its wrId's halves: a receive of a
   * prepared run is found by comparing numbers (no bigint made per completion, which under
   * emulation held the receiver of a stream back); anything else as `retire`.
   */
  retireWords(low: number, high: number): boolean {
    if (this.#posted.length > 0 || this.#bigRuns) return this.retire(wrIdOf(low, high));
    const id = high * HIGH_WORD + low;
    const runs = this.#runs;
    for (let r = 0; r < runs.length; r++) {
      const run = runs[r] as RecvRun;
      if (id < run.firstNumber || id >= run.endNumber) continue;
      this.#retireAt(r, run);
      return true;
    }
    return false;
  }

  // Run `r` (`run`) had one of its receives complete.
  #retireAt(r: number, run: RecvRun): void {
    this.#runsLeft--;
    if (--run.left === 0) {
      if (r === 0) this.#runs.shift();
      else this.#runs.splice(r, 1);
    }
  }

  // A refill's receive that another poll took (cq.poll after the refill stopped).
  #retireFromRefill(wrId: bigint): boolean {
    for (const r of this.#refills) if (r.retireElsewhere(wrId)) return true;
    return false;
  }

  // A receive of a prepared receive's run (runs complete in posting order, mostly the
  // first; comparisons only: no bigint made per completion).
  #retireFromRun(wrId: bigint): boolean {
    const runs = this.#runs;
    for (let r = 0; r < runs.length; r++) {
      const run = runs[r] as RecvRun;
      if (wrId < run.first || wrId >= run.end) continue;
      this.#retireAt(r, run);
      return true;
    }
    return false;
  }

  protected override onClose(): void {
    this.#posted.length = 0;
    this.#runs.length = 0;
    this.#runsLeft = 0;
    this.#refills.clear();
    this.#unclaimedLimit = undefined;
    this.pd.context.untrackSrq(this.#key);
    const err = new VerbsError(
      'EBADF',
      9,
      'ibv_get_async_event',
      this.#device,
      'the SRQ was closed',
    );
    for (const w of [...this.#limitWaiters]) w.reject(err);
  }
}
