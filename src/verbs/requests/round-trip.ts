/**
 * Round trips (issue 13): the loop a user writes by following the docs - post one request,
 * wait for its completion, read the result - in ONE native call per iteration. Under TCG
 * one N-API transition costs about 6.5 us against perftest's 18-35 us round trip, so the
 * general path (`postSend` + `cq.poll`, two transitions, a completion object, bigint wrIds)
 * cannot get near perftest; this one does (see `npm run bench`, docs/verbs.md "Which form").
 *
 * The request is validated and stored natively once (`Qp.prepareRoundTrip`). The fields
 * that change between posts (`add`, `compare`, `swap`, `remoteAddr`, `immData`) are written
 * here into memory the addon owns and copied into the request at post time; the awaited
 * completion comes back in that memory, and an atomic's fetched value is read from the
 * local MR through a typed-array view: no object and no bigint crosses N-API per call.
 * The addon re-checks on every run that the QP, the CQs and the MRs are live.
 */
import { endianness } from 'node:os';
import { nameOf } from '../../ibverbs/constants.js';
import { WC_STATUS, type WcStatus } from '../../ibverbs/index.js';
import { type NativeRoundTrip, ROUND_TRIP_LAYOUT, WC_LAYOUT } from '../../native/bindings.js';
import { decodeWorkCompletion, toWorkCompletion, type WorkCompletion } from '../completion.js';
import { VerbsArgumentError, VerbsError } from '../errors.js';
import type { Mr } from '../mr.js';
import { addon } from '../native.js';
import type { Qp } from '../qp.js';
import { packSendList } from './send-packer.js';
import type { NativeSendWr } from './send-wr.js';
import { u64 } from './sge.js';
import type { SendWr } from './wr.js';

/** Options of {@link Qp.prepareRoundTrip}. */
export interface RoundTripOptions {
  /**
   * Wait for the next receive completion of this QP (a ping-pong: a write-with-immediate
   * or a send landing at the peer) instead of the request's own completion. The request is
   * then signaled once every few posts (the rest unsignaled, as perftest does).
   */
  readonly untilReceiveOn?: Qp;
  /** How long one `run()` busy-polls before VerbsError ETIMEDOUT (default 5000 ms). */
  readonly timeoutMs?: number;
}

/** Options of {@link RoundTrip.repeat}. */
export interface RepeatOptions {
  /**
   * Requests outstanding at most (default: the send queue depth, at most 128, as
   * perftest's tx-depth). Atomics and reads beyond the QP's `maxRdAtomic` wait in the
   * device's queue, so a window above it gains nothing for them.
   */
  readonly window?: number;
  /**
   * Requests per doorbell (one `ibv_post_send` of a chain, the last one signaled): default
   * 16, at most `window`. Fewer doorbells and completions per request.
   */
  readonly batch?: number;
}

/** A completion that `RoundTrip.run()` awaited came back with an error status. */
export class VerbsCompletionError extends VerbsError {
  override readonly name: string = 'VerbsCompletionError';
  constructor(
    readonly status: WcStatus,
    readonly statusCode: number,
    readonly wrId: bigint,
    readonly vendorErr: number,
    device: string,
  ) {
    super('EIO', 5, 'ibv_poll_cq', device, `the awaited completion failed: ${status}`);
  }
}

const LITTLE_ENDIAN_HOST = endianness() === 'LE';
// Round trips get wrIds of their own (top bit set), apart from postSend's auto-numbering.
let nextTag = 1n;

/** The local 8 bytes an atomic's fetched value lands in, read without N-API. */
function fetchedView(mr: Mr, offset: number): () => bigint {
  const buf = mr.buffer;
  const at = buf.byteOffset + offset;
  if (at % 8 === 0) {
    const words = new BigUint64Array(buf.buffer, at, 1);
    return () => words[0] as bigint;
  }
  const view = new DataView(buf.buffer, at, 8);
  return () => view.getBigUint64(0, LITTLE_ENDIAN_HOST);
}

/**
 * A request prepared for the post-and-wait loop. `run()` posts it and busy-polls its CQ
 * until the awaited completion (one native call); an atomic's fetched value is then
 * `fetched`. Refused with VerbsError EBADF once released or once its QP, a CQ or an MR is
 * closed; a failed completion is a {@link VerbsCompletionError}; no completion within
 * `timeoutMs` is VerbsError ETIMEDOUT (the request stays awaited: the next `run()` waits
 * for it before posting again).
 */
export class RoundTrip {
  readonly #native: NativeRoundTrip;
  readonly #run: () => number;
  readonly #u64: BigUint64Array;
  readonly #u32: Uint32Array;
  readonly #posted: Float64Array;
  readonly #repeat: (count: number, window: number, batch: number) => number;
  readonly #depth: number;
  readonly #fetched: (() => bigint) | undefined;
  readonly #device: string;
  readonly #atomic: boolean;
  readonly #peer: Qp | undefined;
  /** @internal keeps the QPs (with their CQs) and the MRs reachable while this is. */
  readonly keep: readonly object[];
  #released = false;

  /** @internal use {@link Qp.prepareRoundTrip} */
  constructor(
    qp: Qp,
    wr: SendWr,
    keep: readonly object[],
    toNative: NativeSendWr,
    options: RoundTripOptions,
  ) {
    const timeoutMs = options.timeoutMs ?? 5000;
    if (!Number.isInteger(timeoutMs) || timeoutMs < 1 || timeoutMs > 0xffffffff)
      throw new VerbsArgumentError('timeoutMs', 'must be an integer in [1, 2^32 - 1]');
    const peer = options.untilReceiveOn;
    if (peer !== undefined && (typeof peer !== 'object' || peer === null || !('native' in peer)))
      throw new VerbsArgumentError('untilReceiveOn', 'must be a Qp');
    this.#atomic = wr.opcode === 'ATOMIC_FETCH_AND_ADD' || wr.opcode === 'ATOMIC_CMP_AND_SWP';
    if (this.#atomic && peer !== undefined)
      throw new VerbsArgumentError('untilReceiveOn', 'an atomic waits for its own completion');
    if (wr.ud !== undefined) throw new VerbsArgumentError('ud', 'a round trip is for RC QPs');
    const first = wr.sgList?.[0];
    if (this.#atomic) {
      if (first === undefined || !('mr' in first) || (wr.sgList?.length ?? 0) !== 1)
        throw new VerbsArgumentError(
          'sgList',
          'an atomic round trip needs one SGE over an Mr (where the fetched value lands)',
        );
      const offset = first.offset ?? 0;
      if ((first.length ?? first.mr.length - offset) < 8)
        throw new VerbsArgumentError('sgList[0]', 'needs 8 bytes for the fetched value');
      this.#fetched = fetchedView(first.mr, offset);
    }
    // Own sends signaled once per half queue at most: never more unsignaled than it holds.
    const depth = qp.native.cap.maxSendWr;
    const signalEvery = Math.max(1, Math.min(64, Math.floor(depth / 2)));
    this.#native = addon().createRoundTrip(
      qp.native,
      packSendList([toNative]).words,
      peer !== undefined ? peer.recvCq.native : qp.sendCq.native,
      peer !== undefined ? peer.qpNum : -1,
      timeoutMs,
      signalEvery,
    );
    this.#run = this.#native.run;
    this.#u64 = new BigUint64Array(this.#native.block, 0, 3);
    this.#u32 = new Uint32Array(this.#native.block, ROUND_TRIP_LAYOUT.immData, 2 + 14);
    this.#posted = new Float64Array(this.#native.block, ROUND_TRIP_LAYOUT.postedAtUs, 2);
    this.#repeat = this.#native.repeat;
    this.#depth = depth;
    this.#device = qp.device;
    this.#peer = peer;
    this.keep = peer !== undefined ? [...keep, qp, peer] : [...keep, qp];
  }

  /** Posts the request and waits for the awaited completion (one native call). */
  run(): void {
    const status = this.#run();
    if (status === 0) this.#peer?.retireOldestRecv();
    else this.#fail(status);
  }

  /**
   * The form for a message rate: posts the request `count` times as a pipelined stream and
   * returns when all completed, in ONE native call (no allocation or N-API transition per
   * request). The same request each time (the fields set before the call); at most
   * `window` outstanding, `batch` per doorbell with one signaled completion each. An
   * atomic's fetched values all land in the same local 8 bytes (`fetched`: the last one's).
   * `postedAt` / `completedAt` bracket the stream. Refused (VerbsArgumentError) for a round
   * trip with `untilReceiveOn`; a failed completion stops it (VerbsCompletionError).
   */
  repeat(count: number, options: RepeatOptions = {}): void {
    if (!Number.isSafeInteger(count) || count < 1)
      throw new VerbsArgumentError('count', 'must be an integer >= 1');
    if (typeof options !== 'object' || options === null)
      throw new VerbsArgumentError('options', 'must be an object');
    if (this.#peer !== undefined)
      throw new VerbsArgumentError(
        'untilReceiveOn',
        'a round trip waiting for a receive does not repeat',
      );
    const window = options.window ?? Math.min(this.#depth, 128);
    if (!Number.isInteger(window) || window < 1 || window > this.#depth)
      throw new VerbsArgumentError(
        'window',
        `must be an integer in [1, ${this.#depth}] (the send queue depth)`,
      );
    const batch = options.batch ?? Math.min(16, window);
    if (!Number.isInteger(batch) || batch < 1 || batch > window)
      throw new VerbsArgumentError('batch', `must be an integer in [1, window = ${window}]`);
    const status = this.#repeat(count, window, batch);
    if (status !== 0) this.#fail(status);
  }

  #fail(status: number): never {
    const wc = this.#lastRaw();
    if (this.#peer !== undefined && wc.qpNum === this.#peer.qpNum) this.#peer.retireOldestRecv();
    throw new VerbsCompletionError(
      nameOf(WC_STATUS, status) ?? 'GENERAL_ERR',
      status,
      wc.wrId,
      wc.vendorErr,
      this.#device,
    );
  }

  /** Atomics: the value the target held before the last `run()` (read from the local MR). */
  get fetched(): bigint {
    if (this.#fetched === undefined)
      throw new VerbsArgumentError('fetched', 'only an atomic round trip fetches a value');
    return this.#fetched();
  }

  /** FETCH_AND_ADD: the addend of the next posts. */
  set add(v: bigint) {
    this.#u64[0] = u64('add', v);
  }
  get add(): bigint {
    return this.#u64[0] as bigint;
  }
  /** CMP_AND_SWP: the compare value of the next posts. */
  set compare(v: bigint) {
    this.#u64[0] = u64('compare', v);
  }
  get compare(): bigint {
    return this.#u64[0] as bigint;
  }
  /** CMP_AND_SWP: the swap value of the next posts. */
  set swap(v: bigint) {
    this.#u64[1] = u64('swap', v);
  }
  get swap(): bigint {
    return this.#u64[1] as bigint;
  }
  /** RDMA and atomic requests: the remote address of the next posts (same rkey). */
  set remoteAddr(v: bigint) {
    this.#u64[2] = u64('remoteAddr', v);
  }
  get remoteAddr(): bigint {
    return this.#u64[2] as bigint;
  }
  /** `*_WITH_IMM`: the 32-bit immediate of the next posts (host order; sent big-endian). */
  set immData(v: number) {
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v > 0xffffffff)
      throw new VerbsArgumentError('immData', 'must be an integer in [0, 2^32 - 1]');
    this.#u32[0] = v;
  }
  get immData(): number {
    return this.#u32[0] as number;
  }

  #lastRaw() {
    return decodeWorkCompletion(this.#u32.subarray(2), 0);
  }

  /** The last awaited completion, as an object (allocates: for checks, not for the loop). */
  get completion(): WorkCompletion {
    return toWorkCompletion(this.#lastRaw());
  }

  /**
   * When `run()` last posted, in microseconds of the monotonic clock: differences between
   * runs are the loop's period with no timer call in it (as perftest stamps its posts).
   */
  get postedAt(): number {
    return this.#posted[0] as number;
  }

  /** When the last `repeat()` saw its last completion (microseconds, as `postedAt`). */
  get completedAt(): number {
    return this.#posted[1] as number;
  }

  /** The last awaited completion's byte count (a receive: how much landed). */
  get byteLen(): number {
    return this.#u32[2 + WC_LAYOUT.byteLen] as number;
  }

  /** Frees the stored request; later runs are refused (EBADF). Idempotent. */
  release(): void {
    if (this.#released) return;
    this.#released = true;
    this.#native.release();
  }

  /** True once released. */
  get released(): boolean {
    return this.#released;
  }

  /** Same as {@link release}. */
  [Symbol.dispose](): void {
    this.release();
  }

  /** @internal */
  static wrIdFor(wr: SendWr): bigint {
    return wr.wrId ?? (1n << 63n) | nextTag++;
  }
}
