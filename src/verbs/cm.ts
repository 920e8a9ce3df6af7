/**
 * rdma_cm (librdmacm): event channel and connection identifiers, with events delivered
 * on the libuv loop (the channel fd is non-blocking and watched, never read by a
 * blocked thread). Required for iWARP: siw QPs reach RTS only through the CM.
 * `disconnect()` runs `rdma_disconnect` on the libuv thread pool: it can block for a
 * long time on rxe (measured 100 s when both ends disconnect one after the other).
 */

import { CM_EVENT, type CmEventType, nameOf } from '../ibverbs/constants.js';
import type {
  NativeCmEvent,
  NativeCmId,
  NativeEventChannel,
  NativeFdWatcher,
} from '../native/bindings.js';
import type { Cq } from './cq.js';
import { Context } from './device.js';
import { VerbsArgumentError, VerbsError } from './errors.js';
import { Resource } from './lifetime.js';
import { addon } from './native.js';
import { checkQpOptions, type Pd, type QpOptions, sendOpsFlagsOf } from './pd.js';
import { Qp } from './qp.js';
import { type Pending, type WaitOptions, waitFor } from './wait.js';

/** An rdma_cm event, named. */
export interface CmEvent {
  readonly type: CmEventType;
  /** 0 on success; a negative errno or a reject reason otherwise. */
  readonly status: number;
  readonly privateData: Buffer;
  readonly responderResources: number;
  readonly initiatorDepth: number;
  /** CONNECT_REQUEST: the new connection's id (the caller owns it). */
  readonly id?: CmId;
}

/** `struct rdma_conn_param`. */
export interface ConnParams {
  /** Up to 56 bytes on RoCE, 512 minus MPA overhead on iWARP (the CM enforces). */
  readonly privateData?: Buffer;
  /** Incoming RDMA Reads / atomics this side accepts (IRD). */
  readonly responderResources?: number;
  /** Outstanding RDMA Reads / atomics this side may issue (ORD). */
  readonly initiatorDepth?: number;
  readonly retryCount?: number;
  readonly rnrRetryCount?: number;
}

interface CmWaiter extends Pending<CmEvent> {
  readonly accept: readonly CmEventType[];
  readonly fail: readonly CmEventType[];
}

/**
 * An `rdma_event_channel`: the source of every event of the ids made on it. Its
 * `close()` (`rdma_destroy_event_channel`) closes its live ids (each with its QP) first.
 */
export class EventChannel extends Resource<NativeEventChannel> {
  readonly #ids = new Map<bigint, CmId>();
  #watcher: NativeFdWatcher | undefined;
  #waiting = 0;

  constructor() {
    super(new (addon().NativeEventChannel)());
  }

  /** A new connection identifier (port space TCP, RC QPs). */
  createId(): CmId {
    const id = new CmId(new (addon().NativeCmId)(this.native), this);
    this.#ids.set(id.native.key, id);
    return id;
  }

  /** @internal */
  adopt(native: NativeCmId): CmId {
    const id = new CmId(native, this);
    this.#ids.set(native.key, id);
    return id;
  }

  /** @internal */
  forget(key: bigint): void {
    this.#ids.delete(key);
  }

  /** @internal a CmId starts or stops waiting; the fd is watched only while someone waits. */
  wait(delta: 1 | -1): void {
    this.#waiting += delta;
    if (this.#waiting > 0) {
      if (this.#watcher === undefined)
        this.#watcher = new (addon().NativeFdWatcher)(this.native.fd, () => this.drain());
      this.#watcher.start();
    } else {
      // Dropped, not just stopped: its callback reference would keep this channel alive.
      this.#watcher?.close();
      this.#watcher = undefined;
    }
  }

  /** @internal reads every pending event and hands each to its id. */
  drain(): void {
    for (;;) {
      let ev: NativeCmEvent | null;
      try {
        ev = this.native.getEvent();
      } catch (e) {
        for (const id of this.#ids.values()) id.fail(e);
        return;
      }
      if (ev === null) return;
      const type = nameOf(CM_EVENT, ev.event) ?? 'CONNECT_ERROR';
      const newId = ev.newId !== undefined ? this.adopt(ev.newId) : undefined;
      const event: CmEvent = {
        type,
        status: ev.status,
        privateData: ev.privateData,
        responderResources: ev.responderResources,
        initiatorDepth: ev.initiatorDepth,
        ...(newId !== undefined ? { id: newId } : {}),
      };
      const target = type === 'CONNECT_REQUEST' ? this.#ids.get(ev.listenId) : this.#ids.get(ev.id);
      target?.deliver(event);
    }
  }

  protected override onClosing(): void {
    this.#watcher?.close();
    this.#watcher = undefined;
  }
}

function eventError(call: string, ev: CmEvent): VerbsError {
  const errno = ev.type === 'REJECTED' ? 111 : Math.abs(ev.status) || 5;
  const code = ev.type === 'REJECTED' ? 'ECONNREFUSED' : (addon().errnoName(errno) ?? `E${errno}`);
  return new VerbsError(code, errno, call, undefined, `${call}: ${ev.type} (status ${ev.status})`);
}

/**
 * An `rdma_cm_id`. Its `close()` (`rdma_destroy_id`) closes its QP first; pending waits
 * are then rejected with EBADF. VerbsError EBUSY while a `disconnect()` runs.
 */
export class CmId extends Resource<NativeCmId> {
  readonly channel: EventChannel;
  /** Its identity in events (the addon's key reads on after close). */
  readonly #key: bigint;
  readonly #events: CmEvent[] = [];
  readonly #waiters: CmWaiter[] = [];
  #context: Context | undefined;
  #disconnecting = 0;

  /** @internal use `EventChannel.createId` */
  constructor(native: NativeCmId, channel: EventChannel) {
    super(native, 'CmId', [channel]);
    this.channel = channel;
    this.#key = native.key;
  }
  /** The local TCP port (after bind / resolve). */
  get localPort(): number {
    return this.native.localPort;
  }

  /** @internal */
  deliver(ev: CmEvent): void {
    const i = this.#waiters.findIndex(
      (w) => w.accept.includes(ev.type) || w.fail.includes(ev.type),
    );
    const w = i >= 0 ? this.#waiters[i] : undefined;
    if (w === undefined) {
      this.#events.push(ev);
      return;
    }
    if (w.accept.includes(ev.type)) w.resolve(ev);
    else w.reject(eventError(`rdma_cm ${w.accept.join('/')}`, ev));
  }

  /** @internal */
  fail(e: unknown): void {
    for (const w of [...this.#waiters]) w.reject(e);
  }

  /** Waits for one of `accept` (rejecting on one of `fail`), from the queue or the channel. */
  waitFor(
    accept: readonly CmEventType[],
    fail: readonly CmEventType[] = [],
    options: WaitOptions = {},
  ): Promise<CmEvent> {
    const queued = this.#events.findIndex((e) => accept.includes(e.type) || fail.includes(e.type));
    if (queued >= 0) {
      const [ev] = this.#events.splice(queued, 1);
      if (ev !== undefined) {
        return accept.includes(ev.type)
          ? Promise.resolve(ev)
          : Promise.reject(eventError(`rdma_cm ${accept.join('/')}`, ev));
      }
    }
    return waitFor<CmEvent>(
      options,
      { call: 'rdma_get_cm_event', device: undefined, what: accept.join('/'), owner: this },
      (pending) => {
        const waiter: CmWaiter = { accept, fail, ...pending };
        this.#waiters.push(waiter);
        this.channel.wait(1);
        this.channel.drain();
        return () => {
          const i = this.#waiters.indexOf(waiter);
          if (i >= 0) {
            this.#waiters.splice(i, 1);
            this.channel.wait(-1);
          }
        };
      },
    );
  }

  /** `rdma_bind_addr` on an IPv4/IPv6 literal (port 0: any). */
  bindAddr(address: string, port = 0): void {
    this.native.bindAddr(address, port);
  }

  /** `rdma_listen`. */
  listen(backlog = 16): void {
    this.native.listen(backlog);
  }

  /** `rdma_resolve_addr`, awaiting ADDR_RESOLVED. */
  async resolveAddr(
    dst: string,
    port: number,
    options: { src?: string; timeoutMs?: number } = {},
  ): Promise<void> {
    const timeoutMs = options.timeoutMs ?? 2000;
    this.native.resolveAddr(options.src, dst, port, timeoutMs);
    await this.waitFor(['ADDR_RESOLVED'], ['ADDR_ERROR'], { timeoutMs: timeoutMs + 5000 });
  }

  /** `rdma_resolve_route`, awaiting ROUTE_RESOLVED. */
  async resolveRoute(timeoutMs = 2000): Promise<void> {
    this.native.resolveRoute(timeoutMs);
    await this.waitFor(['ROUTE_RESOLVED'], ['ROUTE_ERROR'], { timeoutMs: timeoutMs + 5000 });
  }

  /** The device this id is bound to (librdmacm's context: closing it is a no-op). */
  context(): Context {
    if (this.#context === undefined || this.#context.closed)
      this.#context = new Context(this.native.context());
    return this.#context;
  }

  /**
   * `rdma_create_qp_ex`: an RC QP the CM moves through its states (on rxe and siw alike);
   * with `extended` for the `ibv_wr_*` API (rxe), with `srq` to receive there.
   */
  createQp(pd: Pd, options: QpOptions): Qp {
    const sendCq: Cq = options.sendCq;
    const recvCq: Cq = options.recvCq ?? sendCq;
    const sqSigAll = options.sqSigAll ?? false;
    const srq = checkQpOptions(pd, options);
    if (options.type !== undefined && options.type !== 'RC')
      throw new VerbsArgumentError('type', 'this rdma_cm id (RDMA_PS_TCP) makes RC QPs only');
    const native = this.native.createQp(pd.native, sendCq.native, recvCq.native, {
      sqSigAll,
      maxSendWr: options.maxSendWr ?? 64,
      maxRecvWr: options.maxRecvWr ?? 64,
      maxSendSge: options.maxSendSge ?? 1,
      maxRecvSge: options.maxRecvSge ?? 1,
      maxInlineData: options.maxInlineData ?? 0,
      extended: options.extended ?? false,
      sendOpsFlags: sendOpsFlagsOf(options),
      ...(srq !== undefined ? { srq: srq.native } : {}),
    });
    return new Qp(native, pd, sendCq, recvCq, pd.context.name, sqSigAll, this, srq);
  }

  /** `rdma_connect`, awaiting ESTABLISHED; resolves with the peer's private data. */
  async connect(params: ConnParams = {}, options: WaitOptions = {}): Promise<CmEvent> {
    this.native.connect(params);
    return this.waitFor(['ESTABLISHED'], ['REJECTED', 'UNREACHABLE', 'CONNECT_ERROR'], {
      timeoutMs: 30_000,
      ...options,
    });
  }

  /** On a listening id: the next CONNECT_REQUEST (its `id` is the new connection). */
  async nextConnectRequest(options: WaitOptions = {}): Promise<CmEvent & { id: CmId }> {
    const ev = await this.waitFor(['CONNECT_REQUEST'], [], options);
    if (ev.id === undefined)
      throw new VerbsError('EPROTO', 71, 'rdma_get_cm_event', undefined, 'request without an id');
    return ev as CmEvent & { id: CmId };
  }

  /** `rdma_accept`, awaiting ESTABLISHED. */
  async accept(params: ConnParams = {}, options: WaitOptions = {}): Promise<CmEvent> {
    this.native.accept(params);
    return this.waitFor(['ESTABLISHED'], ['CONNECT_ERROR', 'UNREACHABLE'], {
      timeoutMs: 30_000,
      ...options,
    });
  }

  /** `rdma_reject` with optional private data. */
  reject(privateData?: Buffer): void {
    this.native.reject(privateData);
  }

  /** `rdma_disconnect` on the thread pool (never blocks the event loop). */
  disconnect(): Promise<void> {
    const done = this.native.disconnect();
    this.#disconnecting += 1;
    return done.finally(() => {
      this.#disconnecting -= 1;
    });
  }

  // The addon pins the id while rdma_disconnect runs; its QP must not go first either.
  protected override assertClosable(): void {
    if (this.#disconnecting > 0)
      throw new VerbsError(
        'EBUSY',
        16,
        'rdma_destroy_id',
        undefined,
        'a disconnect is in progress',
      );
  }

  protected override onClose(): void {
    this.channel.forget(this.#key);
    this.fail(new VerbsError('EBADF', 9, 'rdma_get_cm_event', undefined, 'the cm_id was closed'));
  }
}
