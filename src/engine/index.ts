/**
 * `rdma-interop/engine`: the reference RNIC for RFC 7306 (iWARP Atomics and Immediate
 * Data) and the V2 draft — Responder, Requester, Terminate generation, ordering rules,
 * and the verbs-level outcome of work requests on iWARP and RoCEv2. Pure TypeScript,
 * deterministic, no I/O.
 *
 * The curated public surface (issue 25): the requirement extraction and traceability of
 * the docs tooling, the trace recorder and the encoders' building blocks stay inside the
 * package. test/host/package/exports.test.ts pins the list.
 */
export { ArgumentError, UnknownNameError } from '../errors.js';
export {
  ACCESS_FLAGS,
  type AccessFlag,
  accessMask,
  hasAccess,
} from '../ibverbs/access-flags.js';
export * from '../ibverbs/flush.js';
export { QP_STATE, type QpState } from '../ibverbs/qp-state.js';
export {
  WC_FLAGS,
  WC_OPCODE,
  type WcFlag,
  type WcOpcode,
  wcFlagsValue,
} from '../ibverbs/wc-opcode.js';
export { WC_STATUS, type WcStatus } from '../ibverbs/wc-status.js';
export { WR_OPCODE, type WrOpcode } from '../ibverbs/wr-opcode.js';
export {
  maskedCompareSwap,
  maskedFetchAdd,
  maskedFetchAddBitwise,
  swap,
} from './atomic/masked-arith.js';
export {
  type EngineFailure,
  FAILURE_TABLE,
  type FailureRow,
  failureRow,
  terminateCodeOf,
} from './errors/failure-table.js';
export { buildTerminate, type TerminatedSegment } from './errors/terminate.js';
export {
  type StreamIdentity,
  type TaggedAccess,
  type TaggedAccessFailure,
  type TaggedAccessResult,
  type TaggedBuffer,
  type TaggedBufferRegistration,
  TaggedBufferRegistrationError,
  TaggedBufferTable,
} from './memory/tagged-buffer.js';
export {
  checkOrdering,
  type OrderingVerdict,
  type OrderingViolation,
  type TracedEvent,
  type TracedOperation,
  type TraceError,
} from './ordering/checker.js';
export {
  type HappensBefore,
  ORDERING_RULES,
  type OrderedOperation,
  type OrderingConstraint,
  type OrderingEventKind,
  type OrderingRule,
  orderingRules,
} from './ordering/rules.js';
export {
  projectIwarp,
  projectRoce,
  projectVerbs,
  type TransportOutcome,
  type VerbsScenario,
  type WireMessage,
} from './projection/project.js';
export { type TerminateStatusModel, terminateStatus } from './projection/terminate-status.js';
export {
  type ImmediateValue,
  immediateValue,
  type SideOutcome,
  type WorkCompletion,
} from './projection/work-completion.js';
export { Requester, type RequesterOptions, type RequesterResult } from './requester/requester.js';
export { type IwarpEncoding, workRequestToIwarp } from './requester/to-iwarp.js';
export { type RoceEncoding, workRequestToRoce } from './requester/to-roce.js';
export {
  type AtomicWriteRequest,
  type CompareAndSwapRequest,
  type FetchAndAddRequest,
  type FlushRequest,
  type FlushTarget,
  type InvalidWorkRequest,
  type LocalSge,
  type ModelledWrOpcode,
  type NotExpressible,
  type PlacementRequest,
  type RdmaReadRequestWr,
  type RdmaWriteRequest,
  type SendRequest,
  validateWorkRequest,
  type WorkRequest,
  type WorkRequestError,
} from './requester/work-request.js';
export {
  type AtomicExecution,
  type AtomicOperands,
  executeAtomic,
} from './responder/execute-atomic.js';
export { Responder, type ResponderOptions } from './responder/responder.js';
export type {
  IgnoredReason,
  Placement,
  ReceiveBuffer,
  ReceiveCompletion,
  ResponderResult,
} from './responder/types.js';
/**
 * The reference RNIC pair as a step-by-step session (post, poll, query, modify, advance,
 * SRQ limit, memory, wire): what the scenario interpreter's engine side drives.
 */
export * from './session/session.js';
export { makeReadV2Request, makeReadV2Response } from './wire/build.js';
