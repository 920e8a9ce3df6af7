/**
 * `rdma-interop/verbs`: a typed wrapper over libibverbs and librdmacm (N-API addon in
 * `native/`). Every object owns one native handle; `close()` / `Symbol.dispose` are
 * explicit and idempotent, finalizers free what was forgotten. See docs/verbs.md.
 *
 * The curated public surface (issue 25): the conversions between the addon's raw records
 * and the typed ones, and the tables of C names the tests check, stay inside the package.
 * test/host/package/exports.test.ts pins the list.
 */
export { ArgumentError, UnknownNameError } from '../errors.js';
export {
  ASYNC_EVENT,
  type AsyncEventType,
  ATOMIC_CAP,
  type AtomicCap,
  CM_EVENT,
  type CmEventType,
  DEVICE_CAP_FLAGS,
  type DeviceCapFlag,
  GID_TYPE,
  type GidType,
  LINK_LAYER,
  type LinkLayer,
  MTU,
  type Mtu,
  MW_TYPE,
  type MwType,
  NODE_TYPE,
  type NodeType,
  PORT_STATE,
  type PortState,
  QP_TYPE,
  type QpAttrMaskBit,
  type QpType,
  SEND_FLAGS,
  type SendFlag,
  SRQ_ATTR_MASK,
  type SrqAttrMaskBit,
  TRANSPORT_TYPE,
  type TransportType,
} from '../ibverbs/constants.js';
export { type AsyncEvent, VerbsAsyncEventError } from './async-events.js';
export { type CmEvent, type CmId, type ConnParams, EventChannel } from './cm.js';
export { isReceiveCompletion, type WorkCompletion } from './completion.js';
export {
  connectPairByHand,
  connectRcByHand,
  type PairConnectParams,
  type PairSideParams,
  type RcConnectParams,
  type RcEndpoint,
  readyUd,
} from './connect.js';
export type { CompletionSink, Cq, NextOptions, WaitOptions } from './cq.js';
export {
  type CompletionEx,
  type CompletionTimestamp,
  type CqEx,
  type CqExOptions,
  createCqEx,
} from './cq-ex.js';
export {
  type Context,
  type DeviceAttr,
  type DeviceInfo,
  type GidEntry,
  listDevices,
  openDevice,
  type PortAttr,
} from './device.js';
export { isVerbsError, VerbsArgumentError, VerbsError } from './errors.js';
export {
  type Exchange,
  type ExchangeOptions,
  type ExchangeRequests,
  prepareExchange,
} from './exchange.js';
export {
  FLUSH_PLACEMENT,
  FLUSH_SELECTIVITY,
  type FlushPlacement,
  type FlushSelectivity,
  type FlushSpec,
  LibraryTooOldError,
  libibverbsVersion,
} from './flush.js';
export type { CloseOptions } from './lifetime.js';
export {
  type MemoryPath,
  type MemoryPathInfo,
  type MemoryPathReason,
  memoryPath,
  setMemoryPath,
} from './memory-path.js';
export {
  type Access,
  accessMaskOf,
  type Mr,
  type RegisteredRange,
  type RemoteRef,
  type Sge,
} from './mr.js';
export type { ReregChanges } from './mr-rereg.js';
export {
  attachMcast,
  detachMcast,
  type McastGid,
  MULTICAST_QPN,
  mcastGidBytes,
} from './multicast.js';
export { incRkey, type Mw, type MwBind, type MwBindRequest } from './mw.js';
export { type OdpCaps, OdpUnsupportedError, queryOdpCaps, regOdpMr } from './odp.js';
export type { Ah, Pd, QpOptions } from './pd.js';
export { type DeviceCapabilities, probeCapabilities } from './probe.js';
export type { Qp, QpInfo } from './qp.js';
export type { AddressVector, Grh, QpAttr, QpStateName } from './qp-attr.js';
export {
  prepareRecvRefill,
  type RecvRefill,
  type RepostUntilOptions,
} from './recv-refill.js';
export type { PreparedRecv } from './requests/prepared-recv.js';
export type { PreparedSend } from './requests/prepared-send.js';
export {
  type RepeatOptions,
  type RoundTrip,
  type RoundTripOptions,
  VerbsCompletionError,
} from './requests/round-trip.js';
export type {
  MwBindOptions,
  PostPath,
  RawSge,
  RecvWr,
  SendOpcode,
  SendWr,
  UdDestination,
} from './requests/wr.js';
export type { Srq, SrqAttr, SrqModify, SrqOptions } from './srq.js';
