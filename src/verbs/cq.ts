/**
 * Completion queues: synchronous `poll(n)`, and `await cq.next()` / `for await` driven by
 * the completion channel's fd on the libuv loop (no thread blocks, no busy loop).
 */

import type { AsyncEventType } from '../ibverbs/constants.js';
import { WC_STATUS } from '../ibverbs/index.js';
import { type NativeCq, type NativeFdWatcher, WC_LAYOUT, WC_WORDS } from '../native/bindings.js';
import { VerbsAsyncEventError } from './async-events.js';
import { completionAt, type WorkCompletion } from './completion.js';
import { resizeCq } from './cq-resize.js';
import type { Context } from './device.js';
import { VerbsArgumentError, VerbsError } from './errors.js';
import { Resource } from './lifetime.js';
import { addon } from './native.js';
import { VerbsCompletionError } from './requests/round-trip.js';
import { onNextTurn, type Pending, type WaitOptions, waitFor } from './wait.js';

export type { WaitOptions } from './wait.js';

/** A QP as the CQ sees it: where completions are routed to retire in-flight requests. */
export interface CompletionSink {
  /** @internal */
  retire(wc: WorkCompletion): void;
  /** @internal `retire` from the completion's raw fields. */
  retireRaw(ok: boolean, opcodeCode: number, wrId: bigint): void;
  /**
   * @internal `retire` of a successful completion from its poll words (the wrId as its
   * two u32 halves: no bigint made where the sink can do without).
   */
  retireSucceeded(opcodeCode: number, wrIdLow: number, wrIdHigh: number): void;
  /** @internal the CQ failed: drop (and return) the requests whose completions it lost. */
  abandon(cq: Cq): bigint[];
}

type Waiter = Pending<WorkCompletion>;

/** Options of {@link Cq.next}. */
export interface NextOptions extends WaitOptions {
  /**
   * Arm for solicited completions only (`ibv_req_notify_cq(cq, 1)`, IBTA 1.5 section
   * 11.4.2.2): only a receive completion of a request with the SE bit, or one in error,
   * wakes the wait. Completions already in the CQ do not (drain them with `poll()`
   * first); the wait then resolves with the oldest completion in the CQ.
   */
  readonly solicitedOnly?: boolean;
}

/** The arguments of the busy polls (pollUntil, pollUntilCount). */
function checkBusyPoll(count: number, spinLimit: number): void {
  if (!Number.isInteger(count) || count < 0)
    throw new VerbsArgumentError('count', 'must be a non-negative integer');
  if (!Number.isInteger(spinLimit) || spinLimit < 0 || spinLimit > 0xffffffff)
    throw new VerbsArgumentError('spinLimit', 'must be a u32');
}

/**
 * A completion queue (`ibv_cq`), optionally with a completion channel for async waits.
 * Its `close()` (`ibv_destroy_cq`) closes the live QPs that use it first; pending
 * `next()` calls are then rejected with EBADF.
 */
export class Cq extends Resource<NativeCq> {
  /** The device context (kept reachable while this CQ lives). */
  readonly context: Context;
  readonly #device: string;
  /** Its identity in async events (the addon's key reads 0 once closed). */
  readonly #key: bigint;
  #failure: VerbsAsyncEventError | undefined;
  readonly #waiters: Waiter[] = [];
  /** The waiters that asked for solicited completions only. */
  readonly #solicitedOnly = new WeakSet<Waiter>();
  readonly #sinks = new Map<number, WeakRef<CompletionSink>>();
  #watcher: NativeFdWatcher | undefined;
  // The native poll as a bound call, and its output area (256 completions, the addon's
  // memory): one N-API step per poll (native/bound_call.h).
  readonly #words: Uint32Array;
  readonly #poll: (max: number, spinLimit: number, atLeast: number) => number;
  // Whether the watcher keeps the loop alive, and whether a check that it still should
  // is due on the next turn of the loop.
  #watcherRefed = true;
  #idleCheck = false;
  // Completions a wake-up polled that no waiter took yet: [#readyHead, #readyEnd). The
  // array is reused, never truncated (`length = 0` drops its store, and the next wake-up
  // would pay about 150 bytes to grow a new one); taken slots are cleared.
  readonly #ready: (WorkCompletion | undefined)[] = [];
  #readyHead = 0;
  #readyEnd = 0;

  /** @internal use `Context.createCq` */
  constructor(native: NativeCq, context: Context, device: string) {
    super(native, 'Cq', [context]);
    this.context = context;
    this.#device = device;
    this.#key = native.key;
    const bound = native.boundPoll();
    this.#words = new Uint32Array(bound.memory);
    this.#poll = bound.poll;
  }

  /** The number of entries the provider granted. */
  get cqe(): number {
    return this.native.cqe;
  }
  /** True when created with a completion channel (async waits possible). */
  get hasChannel(): boolean {
    return this.native.channelFd >= 0;
  }

  /**
   * The error the device reported for this CQ (CQ_ERR, e.g. an overrun), once it did:
   * pending and later `next()` calls reject with it.
   */
  get error(): VerbsAsyncEventError | undefined {
    return this.#failure;
  }

  /**
   * @internal the device reported `event` (CQ_ERR) for this CQ: the in-flight requests
   * of its QPs are lost; release them and reject every wait with one error naming them.
   */
  fail(event: AsyncEventType): void {
    const lost: bigint[] = [];
    for (const sink of this.#sinks.values()) lost.push(...(sink.deref()?.abandon(this) ?? []));
    const error = new VerbsAsyncEventError(event, this.#device, lost);
    this.#failure ??= error;
    for (const w of [...this.#waiters]) w.reject(error);
  }

  /** @internal a QP registers itself to have its in-flight requests retired. */
  attach(qpNum: number, sink: CompletionSink): void {
    this.#sinks.set(qpNum, new WeakRef(sink));
  }
  /** @internal */
  detach(qpNum: number): void {
    this.#sinks.delete(qpNum);
  }
  /** @internal retires `wc` in its QP (a completion polled another way: cq-ex.ts). */
  retire(wc: WorkCompletion): void {
    this.#sinkOf(wc.qpNum)?.retire(wc);
  }

  /**
   * `ibv_resize_cq`: asks for room for `cqe` completions; returns the entries granted
   * (`cqe` from now on), at least as many as asked. EOPNOTSUPP on siw (src/verbs/cq-resize.ts).
   */
  resize(cqe: number): number {
    return resizeCq(this, cqe);
  }

  // The QP that completions of `qpNum` retire in (undefined: none attached, or
  // collected). (Measured in the guest, 2026-11-29: a cache of the last one, cleared by a
  // microtask as WeakRef.deref's own keep-alive is, cost more than the deref it saved:
  // postSend + pollUntil 36-38 us with it, 33-35 without; the event loop 43-47 and 36.)
  #sinkOf(qpNum: number): CompletionSink | undefined {
    return this.#sinks.get(qpNum)?.deref();
  }

  // Decodes completions [0, n) of the poll output, retiring each in its QP, into `out`
  // from index `at`; returns the index after them. (Results are written by index into
  // arrays made at their size where it is known: an empty array's first push reserves
  // 17 slots, about 150 bytes per pollUntil(1).)
  #take(n: number, out: WorkCompletion[], at: number): number {
    for (let i = 0; i < n; i++) {
      const wc = completionAt(this.#words, i);
      this.#sinkOf(wc.qpNum)?.retire(wc);
      out[at++] = wc;
    }
    return at;
  }

  // Moves up to `max` completions a wake-up polled and no waiter took into `out`: they
  // came before anything the device still holds.
  #takeReady(max: number, out: WorkCompletion[], at: number): number {
    while (at < max && this.#readyHead < this.#readyEnd) out[at++] = this.#takeSlot();
    this.#rewindReady();
    return at;
  }

  /** Up to `max` completions, without waiting (`ibv_poll_cq`). */
  poll(max = 16): WorkCompletion[] {
    if (!Number.isInteger(max) || max < 1 || max > 65536)
      throw new VerbsArgumentError('max', 'must be an integer in [1, 65536]');
    const out: WorkCompletion[] = [];
    let got = this.#takeReady(max, out, 0);
    while (got < max) {
      const want = Math.min(max - got, 256);
      const n = this.#poll(want, 0, 0);
      got = this.#take(n, out, got);
      if (n < want) break;
    }
    return out;
  }

  // One busy poll of the pollUntil forms: up to `left` (and 256) completions in one native
  // call, the addon waiting for each as it spins; how many came (at least one), or the
  // CQ's failure (an overrun the device reported) or ETIMEDOUT when none came.
  #pollBusy(left: number, spinLimit: number): number {
    const want = Math.min(left, 256);
    const n = this.#poll(want, spinLimit, want);
    if (n > 0) return n;
    this.context.pollAsyncEvents();
    if (this.#failure !== undefined) throw this.#failure;
    throw new VerbsError('ETIMEDOUT', 110, 'ibv_poll_cq', this.#device, 'no completion');
  }

  /** Busy-polls until `count` completions arrived (or `spinLimit` empty polls passed). */
  pollUntil(count: number, spinLimit = 50_000_000): WorkCompletion[] {
    checkBusyPoll(count, spinLimit);
    const out: WorkCompletion[] = new Array(count);
    let got = this.#readyHead === this.#readyEnd ? 0 : this.#takeReady(count, out, 0);
    // The addon spins in C++ until something arrives: no N-API transition per empty poll.
    while (got < count) {
      got = this.#take(this.#pollBusy(count - got, spinLimit), out, got);
    }
    return out;
  }

  /**
   * Busy-polls until `count` completions arrived, as `pollUntil`, retiring each, without
   * making completion objects: for loops that need only that their requests completed
   * (an SRQ refill counts its receives). A completion that is not `SUCCESS` throws a
   * `VerbsCompletionError` naming it, once `count` were polled (the first failed one is
   * named; every completion polled is retired). ETIMEDOUT as `pollUntil`.
   */
  pollUntilCount(count: number, spinLimit = 50_000_000): void {
    checkBusyPoll(count, spinLimit);
    let got = 0;
    let failed: WorkCompletion | undefined;
    // What a wake-up of next() polled comes first (already retired).
    while (got < count && this.#readyHead !== this.#readyEnd) {
      const wc = this.#takeSlot();
      got++;
      if (!wc.ok) failed ??= wc;
    }
    this.#rewindReady();
    const words = this.#words;
    while (got < count) {
      const n = this.#pollBusy(count - got, spinLimit);
      for (let i = 0; i < n; i++) {
        const base = i * WC_WORDS;
        if (words[base + WC_LAYOUT.status] !== WC_STATUS.SUCCESS) {
          const wc = completionAt(words, i);
          this.#sinkOf(wc.qpNum)?.retire(wc);
          failed ??= wc;
          continue;
        }
        this.#sinkOf(words[base + WC_LAYOUT.qpNum] ?? 0)?.retireSucceeded(
          words[base + WC_LAYOUT.opcode] ?? 0,
          words[base + WC_LAYOUT.wrIdLow] ?? 0,
          words[base + WC_LAYOUT.wrIdHigh] ?? 0,
        );
      }
      got += n;
    }
    if (failed !== undefined)
      throw new VerbsCompletionError(
        failed.status,
        failed.statusCode,
        failed.wrId,
        failed.vendorErr,
        this.#device,
      );
  }

  /**
   * The next completion. Uses the completion channel: arms the CQ, re-polls (a
   * completion may have slipped in before arming), then waits for the channel's fd. A
   * wake-up polls every completion there is (up to 256): the next calls take them
   * without a native call, so a batch costs one wake-up.
   */
  next(options: NextOptions = {}): Promise<WorkCompletion> {
    const solicitedOnly = options.solicitedOnly === true;
    // A solicited-only wait takes nothing already there: only the next solicited event.
    if (!solicitedOnly) {
      if (this.#readyHead === this.#readyEnd) this.#fill(false);
      const first = this.#shiftReady();
      if (first !== undefined) return Promise.resolve(first);
    }
    if (this.#failure !== undefined) return Promise.reject(this.#failure);
    if (!this.hasChannel)
      return Promise.reject(
        new VerbsError('EINVAL', 22, 'ibv_req_notify_cq', this.#device, 'the CQ has no channel'),
      );
    return waitFor<WorkCompletion>(
      options,
      { call: 'ibv_get_cq_event', device: this.#device, what: 'completion', owner: this },
      (pending) => {
        this.#waiters.push(pending);
        if (solicitedOnly) this.#solicitedOnly.add(pending);
        // A CQ_ERR (overrun) arrives on the context's async fd, not on the channel.
        this.context.watchAsyncEvents(1);
        try {
          this.#arm();
        } catch (e) {
          pending.reject(e);
        }
        return () => {
          this.context.watchAsyncEvents(-1);
          const i = this.#waiters.indexOf(pending);
          if (i >= 0) this.#waiters.splice(i, 1);
          // Idle, the watcher stays (no uv handle made and closed per wait) but no longer
          // keeps the process alive: from the next turn of the loop, so that a loop that
          // awaits again at once pays no native call for it.
          if (this.#waiters.length === 0 && !this.#idleCheck) {
            this.#idleCheck = true;
            onNextTurn(() => {
              this.#idleCheck = false;
              if (this.#waiters.length === 0) this.#watcherRef(false);
            });
          }
        };
      },
    );
  }

  /** Completions forever (until the CQ is closed, which ends the iteration). */
  async *[Symbol.asyncIterator](): AsyncGenerator<WorkCompletion> {
    while (!this.closed) {
      try {
        yield await this.next();
      } catch (e) {
        if (this.closed) return;
        throw e;
      }
    }
  }

  #shiftReady(): WorkCompletion | undefined {
    if (this.#readyHead === this.#readyEnd) return undefined;
    const wc = this.#takeSlot();
    this.#rewindReady();
    return wc;
  }

  #takeSlot(): WorkCompletion {
    const wc = this.#ready[this.#readyHead] as WorkCompletion;
    this.#ready[this.#readyHead++] = undefined;
    return wc;
  }

  #rewindReady(): void {
    if (this.#readyHead !== this.#readyEnd) return;
    this.#readyHead = 0;
    this.#readyEnd = 0;
  }

  // One poll of up to 256 completions into the ready queue (with `arm`, after arming the
  // CQ in the same native call).
  #fill(arm: boolean): void {
    const n = arm ? this.native.armAndPoll(this.#words) : this.#poll(256, 0, 0);
    this.#readyEnd = this.#take(n, this.#ready as WorkCompletion[], this.#readyEnd);
  }

  // Watch the channel, arm the CQ and deliver whatever is already there.
  #arm(): void {
    if (this.#watcher === undefined) {
      // The callback holds the CQ weakly: the watcher lives as long as the CQ does and
      // must not keep a forgotten CQ from being collected (it closes when finalized).
      const cq = new WeakRef(this);
      this.#watcher = new (addon().NativeFdWatcher)(this.native.channelFd, () => {
        const self = cq.deref();
        if (self !== undefined) self.#onReadable();
      });
      this.#watcher.start();
    }
    this.#watcherRef(true);
    this.#rearm();
  }

  // Arm for what the waiters wait for. Solicited-only while every waiter asked for it
  // (one normal waiter arms for all): no poll, since what is already there must not end
  // the wait. Otherwise arm and poll in one call, and deliver what slipped in before.
  #rearm(): void {
    if (this.#waiters.length > 0 && this.#waiters.every((w) => this.#solicitedOnly.has(w))) {
      this.native.requestNotify(true);
      return;
    }
    this.#fill(true);
    this.#deliver();
  }

  #watcherRef(ref: boolean): void {
    if (this.#watcher === undefined || this.#watcherRefed === ref) return;
    if (ref) this.#watcher.ref();
    else this.#watcher.unref();
    this.#watcherRefed = ref;
  }

  #onReadable(): void {
    try {
      this.native.getEvents();
      // No waiter (it timed out or took a completion polled directly): nothing to do
      // until the next wait arms again.
      if (this.#waiters.length === 0) return;
      this.#fill(false);
      this.#deliver();
      if (this.#waiters.length > 0) this.#rearm();
    } catch (e) {
      for (const w of [...this.#waiters]) w.reject(e);
    }
  }

  #deliver(): void {
    while (this.#waiters.length > 0) {
      const wc = this.#shiftReady();
      if (wc === undefined) return;
      this.#waiters[0]?.resolve(wc);
    }
  }

  // Stop watching before the channel fd goes away (recreated lazily if close refuses).
  protected override onClosing(): void {
    this.#watcher?.close();
    this.#watcher = undefined;
    this.#watcherRefed = true;
  }

  protected override onClose(): void {
    this.#ready.length = 0;
    this.#readyHead = 0;
    this.#readyEnd = 0;
    this.context.untrackCq(this.#key);
    const err = new VerbsError('EBADF', 9, 'ibv_get_cq_event', this.#device, 'the CQ was closed');
    for (const w of [...this.#waiters]) w.reject(err);
  }
}
