/**
 * The whole native surface of the `rdma_interop` addon (native/*.cc), declared in one
 * place (the loader is ./load.ts). Numbers cross the boundary raw; `src/verbs/` names them.
 * Nothing outside `src/verbs/` should touch these classes directly: the TS classes there
 * own one native handle each and add validation, in-flight tracking and async waiting.
 */

import type { RECV_LAYOUT, SEND_LAYOUT, SEND_SGE_LAYOUT } from './request-layout.js';

/** One entry of `ibv_get_device_list()`. */
export interface NativeDeviceInfo {
  readonly name: string;
  /** Node GUID read big-endian, as `ibv_devinfo` prints it. */
  readonly nodeGuid: bigint;
  /** `enum ibv_transport_type`. */
  readonly transportType: number;
  /** `enum ibv_node_type`. */
  readonly nodeType: number;
}

/** The fields of `ibv_query_device_ex()` beyond `struct ibv_device_attr`. */
export interface NativeDeviceAttrEx {
  readonly deviceCapFlagsEx: bigint;
  readonly completionTimestampMask: bigint;
  readonly hcaCoreClock: bigint;
  readonly odpGeneralCaps: bigint;
  readonly maxDmSize: bigint;
  readonly pciAtomicFetchAdd: number;
  readonly pciAtomicSwap: number;
  readonly pciAtomicCompareSwap: number;
}

/** `struct ibv_device_attr` (all fields), plus `ex` when `ibv_query_device_ex` works. */
export interface NativeDeviceAttr {
  readonly fwVer: string;
  readonly nodeGuid: bigint;
  readonly sysImageGuid: bigint;
  readonly maxMrSize: bigint;
  readonly pageSizeCap: bigint;
  readonly vendorId: number;
  readonly vendorPartId: number;
  readonly hwVer: number;
  readonly maxQp: number;
  readonly maxQpWr: number;
  readonly deviceCapFlags: number;
  readonly maxSge: number;
  readonly maxSgeRd: number;
  readonly maxCq: number;
  readonly maxCqe: number;
  readonly maxMr: number;
  readonly maxPd: number;
  readonly maxQpRdAtom: number;
  readonly maxEeRdAtom: number;
  readonly maxResRdAtom: number;
  readonly maxQpInitRdAtom: number;
  readonly maxEeInitRdAtom: number;
  /** `enum ibv_atomic_cap`. */
  readonly atomicCap: number;
  readonly maxEe: number;
  readonly maxRdd: number;
  readonly maxMw: number;
  readonly maxRawIpv6Qp: number;
  readonly maxRawEthyQp: number;
  readonly maxMcastGrp: number;
  readonly maxMcastQpAttach: number;
  readonly maxTotalMcastQpAttach: number;
  readonly maxAh: number;
  readonly maxFmr: number;
  readonly maxMapPerFmr: number;
  readonly maxSrq: number;
  readonly maxSrqWr: number;
  readonly maxSrqSge: number;
  readonly maxPkeys: number;
  readonly localCaAckDelay: number;
  readonly physPortCnt: number;
  readonly ex?: NativeDeviceAttrEx;
}

/** `struct ibv_port_attr` (the fields a user of RC/UD QPs needs). */
export interface NativePortAttr {
  readonly state: number;
  readonly maxMtu: number;
  readonly activeMtu: number;
  readonly gidTblLen: number;
  readonly portCapFlags: number;
  readonly maxMsgSz: number;
  readonly pkeyTblLen: number;
  readonly lid: number;
  readonly smLid: number;
  readonly lmc: number;
  readonly maxVlNum: number;
  readonly activeWidth: number;
  readonly activeSpeed: number;
  readonly physState: number;
  readonly linkLayer: number;
}

/** One valid GID table entry (`struct ibv_gid_entry`). */
export interface NativeGidEntry {
  readonly index: number;
  readonly gid: Buffer;
  /** `enum ibv_gid_type`. */
  readonly gidType: number;
  readonly ifindex: number;
}

/** An opened `ibv_context` (or, with `owned` false, librdmacm's context for a device). */
export interface NativeContext {
  readonly name: string;
  readonly closed: boolean;
  readonly owned: boolean;
  /** With `cascade`, live children are released first; without, they refuse it (EBUSY). */
  close(cascade?: boolean): void;
  queryDevice(): NativeDeviceAttr;
  queryPort(port: number): NativePortAttr;
  queryGidTable(port: number): NativeGidEntry[];
  /** The async event fd (made non-blocking on first use). */
  readonly asyncFd: number;
  /** One acknowledged `ibv_get_async_event`, or null when none is pending. */
  getAsyncEvent(): NativeAsyncEvent | null;
}

/** An `ibv_async_event`, acknowledged; the element that fits `eventType`. */
export interface NativeAsyncEvent {
  /** `enum ibv_event_type`. */
  readonly eventType: number;
  /** CQ_ERR: the CQ's key (`NativeCq.key`). */
  readonly cqKey?: bigint;
  /** QP events: the QP number. */
  readonly qpNum?: number;
  readonly srqKey?: bigint;
  readonly wqKey?: bigint;
  /** Port events. */
  readonly portNum?: number;
}

/** `ibv_pd`. */
export interface NativePd {
  readonly closed: boolean;
  /** With `cascade`, live children are released first; without, they refuse it (EBUSY). */
  close(cascade?: boolean): void;
}

/** `ibv_mr` over a Buffer (which it keeps alive until closed). */
export interface NativeMr {
  readonly closed: boolean;
  readonly lkey: number;
  readonly rkey: number;
  readonly addr: bigint;
  readonly length: number;
  /**
   * The memory the registration lies in (undefined once closed): the Buffer given, or a
   * Uint8Array over the addon's whole allocation (which a registered range may be a part
   * of; src/verbs/pd.ts makes it a Buffer).
   */
  readonly buffer: Uint8Array | undefined;
  /**
   * Whose memory it is: `'user'` (the Buffer given), `'external'` (allocated by the addon,
   * an external ArrayBuffer) or `'v8'` (allocated by V8, registered where it is):
   * native/js_memory.h.
   */
  readonly memory: 'user' | NativeMemoryPathName;
  close(): void;
}

/** How the addon allocates memory it shares with JS (native/js_memory.h). */
export type NativeMemoryPathName = 'external' | 'v8';

/** What `memoryPath()` returns (native/js_memory.cc). */
export interface NativeMemoryPath {
  readonly path: NativeMemoryPathName;
  /** Why: 'default', 'refused', 'compile-time', 'environment' or 'chosen'. */
  readonly reason: string;
  readonly externalAvailable: boolean;
}

/**
 * `struct ibv_wc` as `NativeCq.poll` lays it out: WC_WORDS u32 words per completion, at
 * these indices (wr_id split in two halves; imm_data raw, i.e. network-order bytes read
 * as a host u32).
 */
export const WC_LAYOUT = {
  wrIdLow: 0,
  wrIdHigh: 1,
  status: 2,
  opcode: 3,
  vendorErr: 4,
  byteLen: 5,
  immDataRaw: 6,
  qpNum: 7,
  srcQp: 8,
  wcFlags: 9,
  pkeyIndex: 10,
  slid: 11,
  sl: 12,
  dlidPathBits: 13,
} as const;

/** u32 words per completion in `NativeCq.poll`'s output (must match native/cq.cc). */
export const WC_WORDS = 14;

/** `ibv_cq`, optionally with its own non-blocking completion channel. */
/** {@link NativeCq.boundPoll}: the CQ's poll into the addon's memory. */
export interface BoundPoll {
  /** 256 completions of WC_WORDS u32 each. */
  readonly memory: ArrayBuffer;
  /**
   * As `NativeCq.poll(new Uint32Array(memory), max, spinLimit)`, busy-polling until
   * `atLeast` (at most `max`) completions came or `spinLimit` polls in a row found none;
   * returns how many came (at least one poll is made, even for `atLeast` 0).
   */
  poll(max: number, spinLimit: number, atLeast: number): number;
}

/** {@link NativeQp.boundPost}: the QP's packed post from the addon's memory. */
export interface BoundPost {
  /** The packed requests (SEND_LAYOUT), then the post's time stamp. */
  readonly memory: ArrayBuffer;
  /** As `NativeQp.postSend(new Uint32Array(memory), count, handles, ex)`. */
  post(count: number, ex: boolean, handles?: readonly NativeHandle[]): void;
}

export interface NativeCq {
  readonly closed: boolean;
  /** The completion channel's fd, or -1. */
  readonly channelFd: number;
  readonly cqe: number;
  /** The CQ's identity in async events. */
  readonly key: bigint;
  /** With `cascade`, live children are released first; without, they refuse it (EBUSY). */
  close(cascade?: boolean): void;
  /**
   * Polls at most `max`, `words.length / WC_WORDS` and 256 completions into `words`;
   * returns the count. With `spinLimit`, busy-polls natively until at least one arrives or
   * `spinLimit` empty polls passed (then 0).
   */
  poll(words: Uint32Array, max?: number, spinLimit?: number): number;
  /**
   * `poll` as a bound call (native/bound_call.h) into memory of 256 completions the addon
   * owns: `poll(max, spinLimit)` writes into `memory`.
   */
  boundPoll(): BoundPoll;
  requestNotify(solicitedOnly: boolean): void;
  /**
   * `ibv_req_notify_cq` (any completion), then one poll as `poll(words, max)`: what a
   * waiter does before it sleeps, in one call.
   */
  armAndPoll(words: Uint32Array, max?: number): number;
  /** Reads (and acknowledges) one pending completion event; false if none. */
  getEvent(): boolean;
  /** Reads and acknowledges every pending completion event; returns how many. */
  getEvents(): number;
}

/** `struct ibv_srq_attr`. */
export interface NativeSrqAttr {
  readonly maxWr: number;
  readonly maxSge: number;
  readonly srqLimit: number;
}

/** `ibv_srq` (`ibv_create_srq`): a receive queue shared by the QPs created on it. */
export interface NativeSrq {
  readonly closed: boolean;
  /** The SRQ's identity in async events (`NativeAsyncEvent.srqKey`). */
  readonly key: bigint;
  /** What `ibv_create_srq` granted. */
  readonly attr: NativeSrqAttr;
  /** With `cascade`, live children (its QPs) are released first; without, EBUSY. */
  close(cascade?: boolean): void;
  /** `ibv_post_srq_recv` of `count` requests packed in `words` (RECV_LAYOUT), one call. */
  postRecv(words: Uint32Array, count: number): void;
  /**
   * `ibv_post_srq_recv` of the one request packed in `words`, `count` times (1 to 65535)
   * in one list, wrIds counting up from its own.
   */
  postRecvCopies(words: Uint32Array, count: number): void;
  /** `ibv_modify_srq` with `mask` (`SRQ_ATTR_MASK`). */
  modify(attr: { maxWr?: number; srqLimit?: number }, mask: number): void;
  /** `ibv_query_srq`. */
  query(): NativeSrqAttr;
}

/** `ibv_mw` (`ibv_alloc_mw`): a memory window. */
export interface NativeMw {
  readonly closed: boolean;
  /** `enum ibv_mw_type`. */
  readonly type: number;
  /** `mw->rkey` as libibverbs holds it (type 1: updated by `ibv_bind_mw`). */
  readonly rkey: number;
  close(): void;
}

/** `struct ibv_mw_bind_info` (the MR, the window's range and its access). */
export interface NativeMwBindInfo {
  mr: NativeMr;
  addr: bigint;
  length: bigint;
  /** `ibv_access_flags` mask. */
  access: number;
}

/** What a packed send request may name beside its words (SEND_LAYOUT.handle). */
export type NativeHandle = NativeAh | NativeMw | NativeMr;

/** `ibv_ah`: a UD destination. */
export interface NativeAh {
  readonly closed: boolean;
  close(): void;
}

/** `struct ibv_qp_init_attr(_ex)` as the addon reads it. */
export interface NativeQpInit {
  qpType?: number;
  sqSigAll?: boolean;
  maxSendWr?: number;
  maxRecvWr?: number;
  maxSendSge?: number;
  maxRecvSge?: number;
  maxInlineData?: number;
  /** Create with `ibv_create_qp_ex` and `send_ops_flags` (the `ibv_wr_*` path). */
  extended?: boolean;
  sendOpsFlags?: bigint;
  /** Receive through this SRQ (`maxRecvWr` and `maxRecvSge` are then ignored). */
  srq?: NativeSrq;
}

/** `struct ibv_global_route`. */
export interface NativeGrh {
  dgid: Buffer;
  flowLabel?: number;
  sgidIndex?: number;
  hopLimit?: number;
  trafficClass?: number;
}

/** `struct ibv_ah_attr`. */
export interface NativeAhAttr {
  dlid?: number;
  sl?: number;
  srcPathBits?: number;
  staticRate?: number;
  portNum?: number;
  grh?: NativeGrh;
}

/** `struct ibv_qp_attr` fields the addon reads for `ibv_modify_qp`. */
export interface NativeQpAttr {
  qpState?: number;
  curQpState?: number;
  pathMtu?: number;
  qkey?: number;
  rqPsn?: number;
  sqPsn?: number;
  destQpNum?: number;
  qpAccessFlags?: number;
  pkeyIndex?: number;
  portNum?: number;
  maxRdAtomic?: number;
  maxDestRdAtomic?: number;
  minRnrTimer?: number;
  timeout?: number;
  retryCnt?: number;
  rnrRetry?: number;
  ahAttr?: NativeAhAttr;
}

/** `struct ibv_ah_attr` as `ibv_query_qp` fills it. */
export interface NativeAhAttrQuery {
  readonly dlid: number;
  readonly sl: number;
  readonly srcPathBits: number;
  readonly staticRate: number;
  readonly portNum: number;
  readonly isGlobal: boolean;
  readonly grh: Required<NativeGrh>;
}

/** What `ibv_query_qp` returns: every field of `ibv_qp_attr`, and `ibv_qp_init_attr`'s. */
export interface NativeQpQuery {
  readonly qpState: number;
  readonly curQpState: number;
  readonly pathMtu: number;
  /** `enum ibv_mig_state`. */
  readonly pathMigState: number;
  readonly qkey: number;
  readonly rqPsn: number;
  readonly sqPsn: number;
  readonly destQpNum: number;
  readonly qpAccessFlags: number;
  readonly cap: NativeQpCap;
  readonly ahAttr: NativeAhAttrQuery;
  readonly altAhAttr: NativeAhAttrQuery;
  readonly pkeyIndex: number;
  readonly altPkeyIndex: number;
  readonly enSqdAsyncNotify: number;
  readonly sqDraining: number;
  readonly maxRdAtomic: number;
  readonly maxDestRdAtomic: number;
  readonly minRnrTimer: number;
  readonly portNum: number;
  readonly timeout: number;
  readonly retryCnt: number;
  readonly rnrRetry: number;
  readonly altPortNum: number;
  readonly altTimeout: number;
  readonly rateLimit: number;
  /** `ibv_qp_init_attr`: `enum ibv_qp_type`, `sq_sig_all`, whether it has an SRQ. */
  readonly qpType: number;
  readonly sqSigAll: boolean;
  readonly hasSrq: boolean;
}

/** `struct ibv_qp_cap` as granted. */
export interface NativeQpCap {
  readonly maxSendWr: number;
  readonly maxRecvWr: number;
  readonly maxSendSge: number;
  readonly maxRecvSge: number;
  readonly maxInlineData: number;
}

/** `ibv_qp` (made by `ibv_create_qp(_ex)` or adopted from `rdma_create_qp`). */
export interface NativeQp {
  readonly closed: boolean;
  readonly qpNum: number;
  readonly extended: boolean;
  readonly cmOwned: boolean;
  readonly cap: NativeQpCap;
  close(): void;
  modify(attr: NativeQpAttr, mask: number): void;
  query(): NativeQpQuery;
  /**
   * Posts `count` requests packed in `words` (SEND_LAYOUT), the objects they name in
   * `handles`, with one doorbell: through `ibv_post_send`, or with `ex` the `ibv_wr_*` path.
   */
  postSend(words: Uint32Array, count: number, handles: readonly NativeHandle[], ex: boolean): void;
  /**
   * `postSend` as a bound call (native/bound_call.h) over `words` u32 of memory the addon
   * owns: pack into `memory`, then `post(count, ex, handles)`. One N-API step per post.
   */
  boundPost(words: number): BoundPost;
  /** `ibv_post_recv` of `count` requests packed in `words` (RECV_LAYOUT). */
  postRecv(words: Uint32Array, count: number): void;
  /**
   * `ibv_bind_mw` of a type 1 window (one send-queue request `wrId`, `sendFlags`);
   * returns the window's new rkey.
   */
  bindMw(mw: NativeMw, wrId: bigint, sendFlags: number, info: NativeMwBindInfo): number;
  /** Parses a packed list once as a legacy chain; returns its id for `postPrepared`. */
  prepare(words: Uint32Array, count: number, handles: readonly NativeHandle[]): number;
  /** `ibv_post_send` of a prepared chain (no argument reading). */
  postPrepared(id: number): void;
  /** Forgets a prepared chain. */
  unprepare(id: number): void;
}

/**
 * A send request prepared for the post-and-wait loop (native/round_trip.cc): `run()` posts
 * it and busy-polls for the awaited completion in one native call, returning that
 * completion's status; its fields land in `block` (ROUND_TRIP_LAYOUT), where JS also
 * writes the fields that change between posts.
 */
export interface NativeRoundTrip {
  run(): number;
  /** Posts the request `count` times, at most `window` outstanding, `batch` per doorbell. */
  repeat(count: number, window: number, batch: number): number;
  release(): void;
  readonly block: ArrayBuffer;
}

/** Byte offsets in `NativeRoundTrip.block` (must match native/round_trip.cc). */
export const ROUND_TRIP_LAYOUT = {
  compareAdd: 0,
  swap: 8,
  remoteAddr: 16,
  immData: 24,
  wc: 32,
  postedAtUs: 32 + 4 * WC_WORDS,
  completedAtUs: 32 + 4 * WC_WORDS + 8,
  bytes: 32 + 4 * WC_WORDS + 16,
} as const;

/** A libuv readability watcher on a file descriptor. */
export interface NativeFdWatcher {
  readonly active: boolean;
  start(): void;
  stop(): void;
  close(): void;
  /** Keep the event loop alive while watching (the default) or not. */
  ref(): void;
  unref(): void;
}

/** An `rdma_cm_event`, copied and already acknowledged. */
export interface NativeCmEvent {
  /** `enum rdma_cm_event_type`. */
  readonly event: number;
  readonly status: number;
  /** The `rdma_cm_id` address (matches `NativeCmId.key`). */
  readonly id: bigint;
  readonly listenId: bigint;
  readonly privateData: Buffer;
  readonly responderResources: number;
  readonly initiatorDepth: number;
  /** For CONNECT_REQUEST: the new id, owned by the caller. */
  readonly newId?: NativeCmId;
}

/** A non-blocking `rdma_event_channel`. */
export interface NativeEventChannel {
  readonly fd: number;
  readonly closed: boolean;
  /** With `cascade`, live children are released first; without, they refuse it (EBUSY). */
  close(cascade?: boolean): void;
  getEvent(): NativeCmEvent | null;
}

/** `struct rdma_conn_param`. */
export interface NativeConnParam {
  privateData?: Buffer;
  responderResources?: number;
  initiatorDepth?: number;
  retryCount?: number;
  rnrRetryCount?: number;
}

/** An `rdma_cm_id` (port space TCP, RC). */
export interface NativeCmId {
  readonly key: bigint;
  readonly closed: boolean;
  readonly localPort: number;
  /** With `cascade`, live children are released first; without, they refuse it (EBUSY). */
  close(cascade?: boolean): void;
  bindAddr(address: string, port: number): void;
  listen(backlog: number): void;
  resolveAddr(src: string | undefined, dst: string, port: number, timeoutMs: number): void;
  resolveRoute(timeoutMs: number): void;
  context(): NativeContext;
  createQp(pd: NativePd, sendCq: NativeCq, recvCq: NativeCq, init: NativeQpInit): NativeQp;
  connect(param: NativeConnParam): void;
  accept(param: NativeConnParam): void;
  reject(privateData?: Buffer): void;
  disconnect(): Promise<void>;
}

/** The constructor the addon uses to throw typed errors. */
/** The argument error class native code throws (src/verbs/errors.ts VerbsArgumentError). */
export type VerbsArgumentErrorConstructor = new (field: string, message: string) => Error;

export type VerbsErrorConstructor = new (
  code: string,
  errno: number,
  call: string,
  device: string | undefined,
  message: string,
  badWrIndex: number | undefined,
) => Error;

/** Everything the addon exports. */
export interface NativeAddon {
  /** The classes native code throws: failures, and (optional) wrong arguments. */
  setVerbsErrorClass(
    ctor: VerbsErrorConstructor,
    argumentCtor?: VerbsArgumentErrorConstructor,
  ): void;
  errnoName(errno: number): string | undefined;
  listDevices(): NativeDeviceInfo[];
  NativeContext: new (deviceName: string) => NativeContext;
  NativePd: new (context: NativeContext) => NativePd;
  /**
   * A Buffer registers it in place; a length allocates that many bytes the addon owns and
   * registers `[offset, offset + registeredLength)` of them (all by default).
   */
  NativeMr: new (
    pd: NativePd,
    memory: Buffer | number,
    access: number,
    offset?: number,
    registeredLength?: number,
  ) => NativeMr;
  NativeCq: new (context: NativeContext, cqe: number, withChannel: boolean) => NativeCq;
  NativeQp: new (pd: NativePd, sendCq: NativeCq, recvCq: NativeCq, init: NativeQpInit) => NativeQp;
  NativeFdWatcher: new (fd: number, onReadable: (status: number) => void) => NativeFdWatcher;
  NativeEventChannel: new () => NativeEventChannel;
  NativeAh: new (pd: NativePd, attr: NativeAhAttr) => NativeAh;
  /** `ibv_create_srq(pd, { max_wr, max_sge, srq_limit })`. */
  NativeSrq: new (
    pd: NativePd,
    attr: { maxWr: number; maxSge: number; srqLimit: number },
  ) => NativeSrq;
  /** `ibv_alloc_mw(pd, type)`. */
  NativeMw: new (
    pd: NativePd,
    type: number,
  ) => NativeMw;
  NativeCmId: new (channel: NativeEventChannel) => NativeCmId;
  /**
   * The libibverbs / librdmacm constants read from the headers at compile time, grouped
   * by the TypeScript table that names them: `constants.WC_STATUS.IBV_WC_REM_ACCESS_ERR`.
   */
  readonly constants: Readonly<Record<string, Readonly<Record<string, number>>>>;
  /**
   * A round trip on `qp`: `waitQpNum` -1 waits for the request's own completion on
   * `waitCq`, else for the next receive completion of that QP there (one signaled send
   * every `signalEvery`).
   */
  createRoundTrip(
    qp: NativeQp,
    words: Uint32Array,
    waitCq: NativeCq,
    waitQpNum: number,
    timeoutMs: number,
    signalEvery: number,
  ): NativeRoundTrip;
  readonly roundTripLayout: Readonly<Record<keyof typeof ROUND_TRIP_LAYOUT, number>>;
  /** The completion layout NativeCq.poll writes: WC_LAYOUT's indices plus `words`. */
  readonly wcLayout: Readonly<Record<keyof typeof WC_LAYOUT | 'words', number>>;
  /** What NativeQp.postSend reads: SEND_LAYOUT and SEND_SGE_LAYOUT, with their sizes. */
  readonly sendLayout: Readonly<
    Record<keyof typeof SEND_LAYOUT | keyof typeof SEND_SGE_LAYOUT | 'words' | 'sgeWords', number>
  >;
  /** What postRecv reads: RECV_LAYOUT with its size (the SGEs as sendLayout's). */
  readonly recvLayout: Readonly<Record<keyof typeof RECV_LAYOUT | 'words', number>>;
  /**
   * The rdma-core >= 45 FLUSH names the addon uses although its headers (44) lack them
   * (native/flush.h), C name -> value.
   */
  readonly rdmaCore45Constants: Readonly<Record<string, number>>;
  /** How memory shared with JS is allocated now, and why (native/js_memory.h). */
  memoryPath(): NativeMemoryPath;
  /** Chooses it for memory allocated from now on ('external' throws where unavailable). */
  setMemoryPath(path: NativeMemoryPathName): void;
  /** What marks each V8-allocated ArrayBuffer untransferable (node:worker_threads'). */
  setUntransferableMarker(mark: (buffer: ArrayBuffer) => void): void;
  /** rdma-core's version of the libibverbs this process loaded (`'44.0'`), or `''`. */
  libibverbsVersion(): string;
}
