/**
 * Devices: the list, and `Context` (an opened device) with its queries. Query results
 * carry names from the tables in `constants.ts` next to the raw values.
 */

import {
  ATOMIC_CAP,
  type AtomicCap,
  DEVICE_CAP_FLAGS,
  type DeviceCapFlag,
  flagNames,
  GID_TYPE,
  type GidType,
  LINK_LAYER,
  type LinkLayer,
  MTU,
  type Mtu,
  NODE_TYPE,
  type NodeType,
  nameOf,
  PORT_STATE,
  type PortState,
  TRANSPORT_TYPE,
  type TransportType,
} from '../ibverbs/constants.js';
import type {
  NativeContext,
  NativeDeviceAttr,
  NativeFdWatcher,
  NativePortAttr,
} from '../native/bindings.js';
import { type AsyncEvent, toAsyncEvent } from './async-events.js';
import { Cq } from './cq.js';
import { VerbsArgumentError, VerbsError } from './errors.js';
import { type CloseOptions, Resource } from './lifetime.js';
import { addon } from './native.js';
import { Pd } from './pd.js';
import type { Qp } from './qp.js';
import type { Srq } from './srq.js';
import { onNextTurn } from './wait.js';

/** One RDMA device as `ibv_get_device_list()` reports it. */
export interface DeviceInfo {
  readonly name: string;
  /** Node GUID (read big-endian, as ibv_devinfo prints it). */
  readonly nodeGuid: bigint;
  /** The node GUID in ibv_devinfo's `xxxx:xxxx:xxxx:xxxx` form. */
  readonly nodeGuidHex: string;
  readonly transport: TransportType;
  readonly nodeType: NodeType;
}

/** `xxxx:xxxx:xxxx:xxxx`, as ibv_devinfo prints a GUID. */
export function formatGuid(guid: bigint): string {
  const hex = guid.toString(16).padStart(16, '0');
  return `${hex.slice(0, 4)}:${hex.slice(4, 8)}:${hex.slice(8, 12)}:${hex.slice(12, 16)}`;
}

/** Every RDMA device on this machine; an empty list (not an error) when there are none. */
export function listDevices(): DeviceInfo[] {
  return addon()
    .listDevices()
    .map((d) => ({
      name: d.name,
      nodeGuid: d.nodeGuid,
      nodeGuidHex: formatGuid(d.nodeGuid),
      transport: nameOf(TRANSPORT_TYPE, d.transportType) ?? 'UNKNOWN',
      nodeType: nameOf(NODE_TYPE, d.nodeType) ?? 'UNKNOWN',
    }));
}

/** `ibv_query_device(_ex)` with named enums next to the raw numbers. */
export interface DeviceAttr extends NativeDeviceAttr {
  /** `atomic_cap` named: NONE, HCA or GLOB. */
  readonly atomic: AtomicCap;
  /** Names of the bits set in `deviceCapFlags`. */
  readonly capabilities: DeviceCapFlag[];
}

/** `ibv_query_port` with named state, MTUs and link layer. */
export interface PortAttr extends NativePortAttr {
  readonly stateName: PortState | undefined;
  readonly maxMtuBytes: Mtu | undefined;
  readonly activeMtuBytes: Mtu | undefined;
  readonly linkLayerName: LinkLayer | undefined;
}

/** One GID table entry. */
export interface GidEntry {
  readonly index: number;
  /** The 16 GID bytes. */
  readonly gid: Buffer;
  /** The GID as an IPv6 text (`::ffff:192.0.2.1` for IPv4-mapped RoCE v2 GIDs). */
  readonly text: string;
  readonly type: GidType | undefined;
  /** For an IPv4-mapped GID, the IPv4 address. */
  readonly ipv4: string | undefined;
  /** The netdev's ifindex (0 for IB). */
  readonly ifindex: number;
}

/** The IPv6 text of 16 GID bytes, and the IPv4 address when it is `::ffff:a.b.c.d`. */
export function gidText(gid: Buffer): { text: string; ipv4: string | undefined } {
  const mapped = gid.subarray(0, 10).every((b) => b === 0) && gid[10] === 0xff && gid[11] === 0xff;
  if (mapped) {
    const ipv4 = `${gid[12]}.${gid[13]}.${gid[14]}.${gid[15]}`;
    return { text: `::ffff:${ipv4}`, ipv4 };
  }
  const groups: string[] = [];
  for (let i = 0; i < 16; i += 2) groups.push(gid.readUInt16BE(i).toString(16));
  return { text: groups.join(':'), ipv4: undefined };
}

/**
 * An opened RDMA device (`ibv_context`). Its `close()` closes its live PDs (with their
 * QPs, AHs and MRs), then its CQs, then the device.
 */
export class Context extends Resource<NativeContext> {
  // The objects async events name, held weakly (an event never keeps one alive).
  readonly #cqs = new Map<bigint, WeakRef<Cq>>();
  readonly #qps = new Map<number, WeakRef<Qp>>();
  readonly #srqs = new Map<bigint, WeakRef<Srq>>();
  readonly #listeners = new Set<(event: AsyncEvent) => void>();
  // Watched only while someone waits (an iterator, a cq.next()): between waits the
  // watcher is stopped, not closed (a wait then costs no uv handle made and closed). Its
  // callback holds this context weakly, which must stay collectable.
  #asyncWatcher: NativeFdWatcher | undefined;
  #asyncWatching = false;
  #asyncIdleCheck = false;
  #asyncWaiters = 0;

  /** @internal use {@link openDevice} */
  constructor(native: NativeContext) {
    super(native);
  }

  /** @internal a CQ of this context, to be found by CQ_ERR events. */
  trackCq(cq: Cq): void {
    this.#cqs.set(cq.native.key, new WeakRef(cq));
  }
  /** @internal */
  untrackCq(key: bigint): void {
    this.#cqs.delete(key);
  }
  /** @internal a QP of this context, to be found by QP events. */
  trackQp(qp: Qp): void {
    this.#qps.set(qp.qpNum, new WeakRef(qp));
  }
  /** @internal */
  untrackQp(qpNum: number): void {
    this.#qps.delete(qpNum);
  }
  /** @internal an SRQ of this context, to be found by SRQ events. */
  trackSrq(key: bigint, srq: Srq): void {
    this.#srqs.set(key, new WeakRef(srq));
  }
  /** @internal */
  untrackSrq(key: bigint): void {
    this.#srqs.delete(key);
  }

  /** @internal someone starts (+1) or stops (-1) waiting for async events. */
  watchAsyncEvents(delta: 1 | -1): void {
    this.#asyncWaiters = Math.max(0, this.#asyncWaiters + delta);
    if (this.closed) return;
    if (this.#asyncWaiters > 0 && !this.#asyncWatching) {
      if (this.#asyncWatcher === undefined) {
        const context = new WeakRef(this);
        this.#asyncWatcher = new (addon().NativeFdWatcher)(this.native.asyncFd, () =>
          context.deref()?.pollAsyncEvents(),
        );
      }
      this.#asyncWatcher.start();
      this.#asyncWatching = true;
    } else if (this.#asyncWaiters === 0 && this.#asyncWatching && !this.#asyncIdleCheck) {
      // Stopped from the next turn of the loop: a loop that awaits again at once (each
      // `await cq.next()` registers here) pays no native call and no epoll_ctl for it.
      this.#asyncIdleCheck = true;
      onNextTurn(() => {
        this.#asyncIdleCheck = false;
        if (this.#asyncWaiters > 0 || !this.#asyncWatching) return;
        this.#asyncWatcher?.stop();
        this.#asyncWatching = false;
      });
    }
  }

  /**
   * Reads every pending asynchronous event now (non-blocking) and dispatches it: a
   * CQ_ERR fails its CQ (see {@link VerbsAsyncEventError}), then iterators get it. The
   * wrapper calls this itself while it waits; call it when only polling synchronously.
   */
  pollAsyncEvents(): AsyncEvent[] {
    const out: AsyncEvent[] = [];
    if (this.closed) return out;
    for (;;) {
      const raw = this.native.getAsyncEvent();
      if (raw === null) break;
      const event = toAsyncEvent(
        raw,
        (key) => this.#cqs.get(key)?.deref(),
        (qpNum) => this.#qps.get(qpNum)?.deref(),
        (key) => this.#srqs.get(key)?.deref(),
      );
      if (event.type === 'CQ_ERR') event.cq?.fail(event.type);
      event.srq?.onAsyncEvent(event);
      out.push(event);
      for (const listener of [...this.#listeners]) listener(event);
    }
    return out;
  }

  /**
   * The asynchronous events of this device, as they come (`for await`); ends when
   * `signal` aborts or the context is closed. Events are delivered to the iterators
   * active when they arrive. Keeps the process alive while iterating, like a socket.
   */
  async *asyncEvents(options: { readonly signal?: AbortSignal } = {}): AsyncGenerator<AsyncEvent> {
    const { signal } = options;
    const queue: AsyncEvent[] = [];
    let wake: (() => void) | undefined;
    const listener = (event: AsyncEvent): void => {
      queue.push(event);
      wake?.();
    };
    const onAbort = (): void => wake?.();
    this.#listeners.add(listener);
    signal?.addEventListener('abort', onAbort);
    this.watchAsyncEvents(1);
    try {
      while (!this.closed && signal?.aborted !== true) {
        const event = queue.shift();
        if (event !== undefined) {
          yield event;
          continue;
        }
        await new Promise<void>((resolve) => {
          wake = resolve;
        });
        wake = undefined;
      }
    } finally {
      signal?.removeEventListener('abort', onAbort);
      this.#listeners.delete(listener);
      this.watchAsyncEvents(-1);
    }
  }

  /** Opens a device by name; VerbsError ENODEV when it does not exist. */
  static open(name: string): Context {
    if (typeof name !== 'string')
      throw new VerbsArgumentError('name', 'device name must be a string');
    return new Context(new (addon().NativeContext)(name));
  }

  /** The device name. */
  get name(): string {
    return this.native.name;
  }

  /** `ibv_query_device_ex` (falls back to `ibv_query_device`). */
  queryDevice(): DeviceAttr {
    const a = this.native.queryDevice();
    return {
      ...a,
      atomic: nameOf(ATOMIC_CAP, a.atomicCap) ?? 'NONE',
      capabilities: flagNames(DEVICE_CAP_FLAGS, a.deviceCapFlags),
    };
  }

  /** `ibv_query_port` (ports count from 1). */
  queryPort(port = 1): PortAttr {
    const p = this.native.queryPort(port);
    return {
      ...p,
      stateName: nameOf(PORT_STATE, p.state),
      maxMtuBytes: nameOf(MTU, p.maxMtu),
      activeMtuBytes: nameOf(MTU, p.activeMtu),
      linkLayerName: nameOf(LINK_LAYER, p.linkLayer),
    };
  }

  /** The port's valid GIDs with their types (`ibv_query_gid_ex`). */
  gidTable(port = 1): GidEntry[] {
    return this.native.queryGidTable(port).map((e) => ({
      index: e.index,
      gid: e.gid,
      ...gidText(e.gid),
      type: nameOf(GID_TYPE, e.gidType),
      ifindex: e.ifindex,
    }));
  }

  /** The first GID of `type` (RoCE v2 by default) whose address is IPv4-mapped. */
  findGid(options: { port?: number; type?: GidType; ipv4?: string } = {}): GidEntry {
    const type = options.type ?? 'RoCEv2';
    const found = this.gidTable(options.port ?? 1).find(
      (g) =>
        g.type === type &&
        (options.ipv4 === undefined ? g.ipv4 !== undefined : g.ipv4 === options.ipv4),
    );
    if (found === undefined)
      throw new VerbsError('ENOENT', 2, 'ibv_query_gid_ex', this.name, `no ${type} GID found`);
    return found;
  }

  /** Allocates a protection domain. */
  allocPd(): Pd {
    return new Pd(new (addon().NativePd)(this.native), this);
  }

  /**
   * Creates a completion queue of at least `cqe` entries; with `channel` (default true)
   * it gets its own completion channel so that `await cq.next()` works.
   */
  createCq(options: { cqe?: number; channel?: boolean } = {}): Cq {
    const cqe = options.cqe ?? 256;
    if (!Number.isInteger(cqe) || cqe < 1 || cqe > 0x7fffffff)
      throw new VerbsArgumentError('cqe', 'must be an integer in [1, 2^31 - 1]');
    const native = new (addon().NativeCq)(this.native, cqe, options.channel ?? true);
    const cq = new Cq(native, this, this.name);
    this.trackCq(cq);
    return cq;
  }

  /** Re-arms the async events' watcher when the close was refused. */
  override close(options: CloseOptions = {}): void {
    try {
      super.close(options);
    } finally {
      if (!this.closed && this.#asyncWaiters > 0) {
        this.#asyncWaiters -= 1;
        this.watchAsyncEvents(1);
      }
    }
  }

  // Stop watching before the async fd goes away (re-armed if the close is refused).
  protected override onClosing(): void {
    this.#asyncWatcher?.close();
    this.#asyncWatcher = undefined;
    this.#asyncWatching = false;
  }

  protected override onClose(): void {
    for (const listener of [...this.#listeners]) listener(CLOSED_SENTINEL);
  }
}

/** Wakes iterators on close (never yielded: the loop sees `closed` first). */
const CLOSED_SENTINEL: AsyncEvent = { type: 'DEVICE_FATAL', typeCode: -1 };

/** Opens a device by name. */
export function openDevice(name: string): Context {
  return Context.open(name);
}
