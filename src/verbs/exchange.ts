/**
 * Send/Receive exchanges (issue 34): the step of a message ping-pong, "repost the receive
 * the last message consumed, send the next message, wait for the peer's answer", in ONE
 * native call (native/exchange.cc), busy-polling (`run`) or on completion events
 * (`await runAsync()`: one call to post and arm, one per wake-up of the CQ's channel).
 * Written with `postRecv` + `postSend` + `pollUntil` the same step is four native calls
 * and two completion objects; under emulation that was 3.4x rdma-core's `ibv_rc_pingpong`
 * at 64 bytes (docs/figures.md).
 *
 * The two requests get the checks `postSend` and `postRecv` make, once
 * (`prepareExchange`); each call re-checks natively that the QP, its CQs and the MRs are
 * live. The receive completion is read from memory the addon writes (`byteLen`,
 * `immData`, `completion`): nothing is allocated per exchange.
 */

import { WC_FLAGS, WC_STATUS } from '../ibverbs/index.js';
import { WC_LAYOUT, WC_WORDS } from '../native/bindings.js';
import {
  decodeWorkCompletion,
  ntohl,
  toWorkCompletion,
  type WorkCompletion,
} from './completion.js';
import { VerbsArgumentError, VerbsError } from './errors.js';
import {
  EXCHANGE_LAYOUT,
  EXCHANGE_OP,
  exchangeAddon,
  type NativeExchange,
} from './exchange-native.js';
import { wrapperObject } from './ext-native.js';
import type { Resource } from './lifetime.js';
import { addon } from './native.js';
import type { Qp } from './qp.js';
import { RecvPacker } from './requests/recv-packer.js';
import { VerbsCompletionError } from './requests/round-trip.js';
import { packSendList } from './requests/send-packer.js';
import { refuseBindMw, toNativeSend } from './requests/send-wr.js';
import { KeepList } from './requests/sge.js';
import type { RecvWr, SendWr } from './requests/wr.js';
import { onNextTurn, type WaitOptions, waitFor } from './wait.js';

/** The two requests of an exchange (neither with a `wrId`: the exchange numbers them). */
export interface ExchangeRequests {
  /** What each step sends: `SEND`, `SEND_WITH_IMM` or `RDMA_WRITE_WITH_IMM`. */
  readonly send: SendWr;
  /** The receive each consumed one is replaced by. */
  readonly recv: RecvWr;
}

/** Options of {@link prepareExchange}. */
export interface ExchangeOptions {
  /** How long one busy `run()` / `receive()` polls before VerbsError ETIMEDOUT (default 5000 ms). */
  readonly timeoutMs?: number;
  /**
   * One signaled send every this many, at most the send queue's depth; the others are
   * unsignaled (a failed one still completes, with its error). Default as a round trip's
   * (`untilReceiveOn`): half the send queue's depth, at most 64, at least 1 (a queue of
   * one: every send signaled and awaited, as `ibv_rc_pingpong`). A send completion is
   * what else a step waits for: on events, each one can cost a wake-up of its own.
   */
  readonly signalEvery?: number;
}

const SEND_OPCODES: ReadonlySet<string> = new Set(['SEND', 'SEND_WITH_IMM', 'RDMA_WRITE_WITH_IMM']);
const NOT_YET = EXCHANGE_LAYOUT.notYet;
// setTimeout's range.
const MAX_DELAY = 2 ** 31 - 1;
// run's flags (native/exchange.cc): post the send; wait for it alone.
const POST = 1;
const SEND_ONLY = POST | 2;
// Exchanges number their requests apart from postSend's and round trips' (bits 63 and 62).
let nextTag = 1n;
const TAG = (1n << 63n) | (1n << 62n);

function recvName(): string {
  return 'recv';
}

/**
 * Prepares a Send/Receive exchange on a connected RC (or UC) QP that receives through its
 * own receive queue: the requests are checked once, as `postSend` and `postRecv` check
 * them. Post the receive window with {@link Exchange.postReceives}, then each
 * {@link Exchange.run} reposts the receive the last one consumed, sends, and waits.
 */
export function prepareExchange(
  qp: Qp,
  requests: ExchangeRequests,
  options: ExchangeOptions = {},
): Exchange {
  wrapperObject<Qp>(qp, 'qp', 'a Qp');
  if (qp.closed)
    throw new VerbsError('EBADF', 9, 'ibv_post_send', qp.device, 'queue pair is closed');
  if (typeof requests !== 'object' || requests === null)
    throw new VerbsArgumentError('requests', 'must be { send, recv }');
  if (typeof options !== 'object' || options === null)
    throw new VerbsArgumentError('options', 'must be an object');
  const { send, recv } = requests;
  if (typeof send !== 'object' || send === null || Array.isArray(send))
    throw new VerbsArgumentError('send', 'must be one work request object');
  if (typeof recv !== 'object' || recv === null || Array.isArray(recv))
    throw new VerbsArgumentError('recv', 'must be one receive request object');
  if (!SEND_OPCODES.has(send.opcode as string))
    throw new VerbsArgumentError(
      'send.opcode',
      'an exchange sends SEND, SEND_WITH_IMM or RDMA_WRITE_WITH_IMM (what makes a receive completion at the peer)',
    );
  if (send.wrId !== undefined || recv.wrId !== undefined)
    throw new VerbsArgumentError('wrId', 'the exchange numbers its requests: leave wrId out');
  if (send.ud !== undefined)
    throw new VerbsArgumentError('send.ud', 'an exchange is for connected QPs');
  if (qp.srq !== undefined)
    throw new VerbsArgumentError(
      'qp',
      'the QP receives through an SRQ: an exchange reposts on its own queue',
    );
  const timeoutMs = options.timeoutMs ?? 5000;
  if (!Number.isInteger(timeoutMs) || timeoutMs < 1 || timeoutMs > 0xffffffff)
    throw new VerbsArgumentError('timeoutMs', 'must be an integer in [1, 2^32 - 1]');
  const depth = qp.native.cap.maxSendWr;
  const signalEvery = options.signalEvery ?? Math.max(1, Math.min(64, Math.floor(depth / 2)));
  if (!Number.isInteger(signalEvery) || signalEvery < 1 || signalEvery > depth)
    throw new VerbsArgumentError(
      'signalEvery',
      `must be an integer in [1, ${depth}] (the send queue depth)`,
    );
  refuseBindMw(send);
  nextTag += 2n;
  const tag = TAG | nextTag;
  const keep = new KeepList();
  const native = toNativeSend({ ...send, wrId: tag }, keep, () => tag, qp.device);
  const sendKeep = keep.take();
  const packer = new RecvPacker();
  const packed = packer.packOne(recv, recvName, () => tag + 1n);
  const packedSend = packSendList([native]);
  let made: NativeExchange | undefined;
  packer.post(
    {
      postRecv: (words: Uint32Array) => {
        made = exchangeAddon().createExchange(
          qp.native,
          packedSend.words,
          packedSend.handles,
          words,
          timeoutMs,
          signalEvery,
        );
      },
    },
    1,
  );
  return new Exchange(qp, made as NativeExchange, [...sendKeep, ...packed.keep], packed.wrId);
}

/**
 * A prepared Send/Receive exchange ({@link prepareExchange}). After each step the
 * received message's completion is readable (`byteLen`, `immData`, `completion`) and its
 * bytes are in the receive's memory; the next step reposts that receive, so read them
 * before it.
 * Refused with VerbsError EBADF once released or once the QP, a CQ or an MR is closed;
 * a failed completion is a {@link VerbsCompletionError}; EBUSY while an async step waits.
 */
export class Exchange {
  readonly #qp: Qp;
  readonly #call: (op: number, arg: number) => number;
  readonly #wc: Uint32Array;
  readonly #imm: Uint32Array;
  readonly #posted: Float64Array;
  readonly #recvTagLow: number;
  readonly #recvTagHigh: number;
  /** @internal the MRs of both requests and the QP, reachable while this is. */
  readonly keep: readonly object[];
  #released = false;
  #waiting = false;
  #watcher: ReturnType<typeof makeWatcher> | undefined;
  #pending: { resolve(v: undefined): void; reject(e: unknown): void } | undefined;
  #refed = false;
  #idleCheck = false;
  #wakeUps = 0;
  #timer: NodeJS.Timeout | undefined;
  #timerMs = 0;
  #timeoutMs = 0;

  /** @internal use {@link prepareExchange} */
  constructor(qp: Qp, native: NativeExchange, keep: readonly Resource[], recvTag: bigint) {
    this.#qp = qp;
    this.#call = native.call;
    this.#wc = new Uint32Array(native.memory, EXCHANGE_LAYOUT.wc, WC_WORDS);
    this.#imm = new Uint32Array(native.memory, EXCHANGE_LAYOUT.immData, 1);
    this.#posted = new Float64Array(native.memory, EXCHANGE_LAYOUT.postedAtUs, 1);
    this.#recvTagLow = Number(recvTag & 0xffffffffn);
    this.#recvTagHigh = Number(recvTag >> 32n);
    this.keep = [...keep, qp];
  }

  /** Posts `count` copies of the receive (1 to 65535) in one `ibv_post_recv`: the window. */
  postReceives(count: number): void {
    if (!Number.isInteger(count) || count < 1 || count > 0xffff)
      throw new VerbsArgumentError('count', 'must be an integer in [1, 65535]');
    this.#idle();
    this.#call(EXCHANGE_OP.postReceives, count);
  }

  /**
   * Reposts the receive(s) consumed since the last step, posts the send, and busy-polls
   * until the next receive completion of the QP and the send's completion (when it is
   * signaled): one native call.
   */
  run(): void {
    this.#idle();
    this.#settle(this.#call(EXCHANGE_OP.run, POST));
  }

  /** `run()` without sending: reposts, then waits for the next message (a server's first step). */
  receive(): void {
    this.#idle();
    this.#settle(this.#call(EXCHANGE_OP.run, 0));
  }

  /**
   * `run()` without waiting for a message: reposts, posts the send and busy-polls for its
   * completion when it is signaled (a server's last step). The completion fields then
   * still describe the last message received.
   */
  send(): void {
    this.#idle();
    const status = this.#call(EXCHANGE_OP.run, SEND_ONLY);
    if (status !== 0) this.#settle(status);
  }

  /**
   * `run()` on completion events (the QP's one CQ, created with a channel): posts, arms
   * the CQ and polls in one native call, then sleeps on the channel's fd; each wake-up
   * reads the events and polls in one call. Do not `await cq.next()` on that CQ meanwhile.
   */
  runAsync(options: WaitOptions = {}): Promise<void> {
    return this.#async(POST, options);
  }

  /** `receive()` on completion events, as `runAsync`. */
  receiveAsync(options: WaitOptions = {}): Promise<void> {
    return this.#async(0, options);
  }

  #async(flags: number, options: WaitOptions): Promise<void> {
    // Everything is checked before the step posts: a refusal leaves nothing half-done.
    const timeoutMs = options?.timeoutMs;
    try {
      if (typeof options !== 'object' || options === null)
        throw new VerbsArgumentError('options', 'must be an object');
      if (
        timeoutMs !== undefined &&
        (!Number.isInteger(timeoutMs) || timeoutMs < 1 || timeoutMs > MAX_DELAY)
      )
        throw new VerbsArgumentError('timeoutMs', `must be an integer in [1, ${MAX_DELAY}]`);
      if (options.signal?.aborted) return Promise.reject(options.signal.reason);
      this.#idle();
      if (this.#qp.sendCq !== this.#qp.recvCq || !this.#qp.recvCq.hasChannel)
        throw new VerbsArgumentError(
          'qp',
          'waiting with events needs the QP to send and receive on one CQ with a channel',
        );
      const status = this.#call(EXCHANGE_OP.start, flags);
      if (status !== NOT_YET) {
        this.#settle(status);
        return Promise.resolve();
      }
    } catch (e) {
      return Promise.reject(e);
    }
    this.#waiting = true;
    // The timeout is this exchange's own timer, re-armed per wait (below); the signal
    // goes through the wrapper's one wait.
    return waitFor<undefined>(
      options.signal === undefined ? {} : { signal: options.signal },
      {
        call: 'ibv_get_cq_event',
        device: this.#qp.device,
        what: 'receive completion',
        owner: this,
      },
      (pending) => {
        this.#pending = pending;
        this.#watch();
        if (timeoutMs !== undefined) this.#armTimeout(timeoutMs);
        return () => {
          this.#pending = undefined;
          this.#timeoutMs = 0;
          this.#waiting = false;
          this.#unwatchLater();
        };
      },
    );
  }

  // One Node timer per exchange, refreshed at each wait: Timeout.refresh() counts from the
  // loop's cached time, where a deadline of the shared timer (wait.ts) reads the clock, and
  // a clock read costs 18 us in the guest (the hpet clocksource: docs/figures.md), about a
  // tenth of an exchange on events. The timer may fire after its wait ended: it then finds
  // no wait, or a later one whose own refresh moved it. (It may fire early by the time the
  // current turn of the loop has run, as every Node timer counts from the cached time.)
  #armTimeout(ms: number): void {
    this.#timeoutMs = ms;
    if (this.#timer !== undefined && this.#timerMs === ms) {
      this.#timer.refresh();
      return;
    }
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    const self = new WeakRef(this);
    this.#timer = setTimeout(() => {
      const exchange = self.deref();
      if (exchange !== undefined) exchange.#onTimer();
    }, ms);
    // The watcher keeps the process alive while a wait is pending.
    this.#timer.unref();
    this.#timerMs = ms;
  }

  #onTimer(): void {
    const pending = this.#pending;
    const ms = this.#timeoutMs;
    if (pending === undefined || ms === 0) return;
    pending.reject(
      new VerbsError(
        'ETIMEDOUT',
        110,
        'ibv_get_cq_event',
        this.#qp.device,
        `no receive completion in ${ms} ms`,
      ),
    );
  }

  #watch(): void {
    if (this.#watcher === undefined) {
      // The callback holds the exchange weakly: a forgotten exchange is collected (its
      // watcher closes when finalized).
      const self = new WeakRef(this);
      this.#watcher = makeWatcher(this.#qp.recvCq.native.channelFd, () => {
        const exchange = self.deref();
        if (exchange !== undefined) exchange.#onReadable();
      });
      this.#watcher.start();
      this.#refed = true;
    } else if (!this.#refed) {
      this.#watcher.ref();
      this.#refed = true;
    }
  }

  // Idle, the watcher stops keeping the process alive, from the next turn of the loop:
  // a loop that waits again at once pays no native call for it.
  #unwatchLater(): void {
    if (this.#idleCheck) return;
    this.#idleCheck = true;
    onNextTurn(() => {
      this.#idleCheck = false;
      if (this.#pending === undefined && this.#refed && this.#watcher !== undefined) {
        this.#watcher.unref();
        this.#refed = false;
      }
    });
  }

  #onReadable(): void {
    this.#wakeUps++;
    const pending = this.#pending;
    if (pending === undefined) return;
    try {
      const status = this.#call(EXCHANGE_OP.resume, 0);
      if (status === NOT_YET) return;
      this.#settle(status);
      pending.resolve(undefined);
    } catch (e) {
      pending.reject(e);
    }
  }

  #idle(): void {
    if (this.#waiting)
      throw new VerbsError(
        'EBUSY',
        16,
        'ibv_post_send',
        this.#qp.device,
        'an async step of the exchange is waiting',
      );
    if (this.#released)
      throw new VerbsError(
        'EBADF',
        9,
        'ibv_post_send',
        this.#qp.device,
        'the exchange was released',
      );
  }

  // The step ended: retire a receive that was not the exchange's (one postRecv posted
  // earlier), throw a failed completion.
  #settle(status: number): void {
    const w = this.#wc;
    if (
      (w[WC_LAYOUT.wrIdLow] !== this.#recvTagLow || w[WC_LAYOUT.wrIdHigh] !== this.#recvTagHigh) &&
      w[WC_LAYOUT.qpNum] === this.#qp.qpNum
    ) {
      const wc = this.completion;
      if (wc.wrId >> 62n !== 3n) this.#qp.retireRaw(wc.ok, wc.opcodeCode, wc.wrId);
    }
    if (status === 0) return;
    const wc = this.completion;
    throw new VerbsCompletionError(wc.status, status, wc.wrId, wc.vendorErr, this.#qp.device);
  }

  /** The last received message's length in bytes. */
  get byteLen(): number {
    return this.#wc[WC_LAYOUT.byteLen] as number;
  }

  /** The last received message's immediate (host order), undefined without one. */
  get immData(): number | undefined {
    const w = this.#wc;
    return ((w[WC_LAYOUT.wcFlags] as number) & WC_FLAGS.WITH_IMM) !== 0
      ? ntohl(w[WC_LAYOUT.immDataRaw] as number)
      : undefined;
  }

  /** The immediate the next sends carry (`*_WITH_IMM`; host order, sent big-endian). */
  get sendImmData(): number {
    return this.#imm[0] as number;
  }
  set sendImmData(v: number) {
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v > 0xffffffff)
      throw new VerbsArgumentError('sendImmData', 'must be an integer in [0, 2^32 - 1]');
    this.#imm[0] = v;
  }

  /** The last step's receive completion (or its failed one) as an object (allocates). */
  get completion(): WorkCompletion {
    return toWorkCompletion(decodeWorkCompletion(this.#wc, 0));
  }

  /** True when the last step's completion succeeded. */
  get ok(): boolean {
    return this.#wc[WC_LAYOUT.status] === WC_STATUS.SUCCESS;
  }

  /** When the last send was posted (microseconds, as `RoundTrip.postedAt`). */
  get postedAt(): number {
    return this.#posted[0] as number;
  }

  /** Forgets the requests; later steps are refused (EBADF). Idempotent. */
  release(): void {
    if (this.#released) return;
    this.#released = true;
    this.#call(EXCHANGE_OP.release, 0);
    this.#watcher?.close();
    this.#watcher = undefined;
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#pending?.reject(
      new VerbsError('EBADF', 9, 'ibv_get_cq_event', this.#qp.device, 'the exchange was released'),
    );
  }

  /**
   * @internal how often the channel's fd woke an async step up (the benchmark's profile of
   * the event path: wake-ups per exchange).
   */
  get wakeUps(): number {
    return this.#wakeUps;
  }

  /** True once released. */
  get released(): boolean {
    return this.#released;
  }

  [Symbol.dispose](): void {
    this.release();
  }
}

function makeWatcher(fd: number, onReadable: () => void) {
  return new (addon().NativeFdWatcher)(fd, onReadable);
}
