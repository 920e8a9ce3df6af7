/**
 * Work requests in verbs terms (`struct ibv_send_wr`), the input of the Requester and of
 * the verbs projection. 64-bit values are bigint; `immData` is the 32-bit immediate in
 * host order (what `ntohl(wr.imm_data)` gives).
 */
import { describeValue, requireObject } from '../../arguments.js';
import {
  FLUSH_PLACEMENT,
  FLUSH_SELECTIVITY,
  type FlushPlacement,
  type FlushSelectivity,
} from '../../ibverbs/flush.js';
import type { WrOpcode } from '../../ibverbs/wr-opcode.js';

interface Base {
  /** The verbs `wr_id`. */
  readonly wrId: bigint;
}

/** A local scatter/gather element (verbs `struct ibv_sge`). */
export interface LocalSge {
  readonly lkey: number;
  readonly addr: bigint;
  readonly length: number;
}

/**
 * Where an atomic's original value lands (verbs `sg_list`): an SGE, `null` for no SGE at
 * all; omitted, the requester's local memory is not modelled for the request. Checked
 * when the response arrives (IBTA 10.7.3: local errors are found as data is placed, after
 * the responder has executed the atomic): an SGE list shorter than 8 bytes is
 * LOC_LEN_ERR, an lkey no local buffer has (or one without LOCAL_WRITE) LOC_PROT_ERR.
 */
interface AtomicLocal {
  readonly local?: LocalSge | null;
}

/** `ATOMIC_FETCH_AND_ADD`: add `add` to the 64-bit word at `remoteAddr` (verbs `compare_add`). */
export interface FetchAndAddRequest extends Base, AtomicLocal {
  readonly opcode: 'ATOMIC_FETCH_AND_ADD';
  readonly remoteAddr: bigint;
  readonly rkey: number;
  readonly add: bigint;
}

/** `ATOMIC_CMP_AND_SWP`: if the word equals `compare` (verbs `compare_add`), store `swap`. */
export interface CompareAndSwapRequest extends Base, AtomicLocal {
  readonly opcode: 'ATOMIC_CMP_AND_SWP';
  readonly remoteAddr: bigint;
  readonly rkey: number;
  readonly compare: bigint;
  readonly swap: bigint;
}

/** `RDMA_WRITE` / `RDMA_WRITE_WITH_IMM`. */
export interface RdmaWriteRequest extends Base {
  readonly opcode: 'RDMA_WRITE' | 'RDMA_WRITE_WITH_IMM';
  readonly remoteAddr: bigint;
  readonly rkey: number;
  readonly payload: Uint8Array;
  /** Required for `RDMA_WRITE_WITH_IMM`. */
  readonly immData?: number;
  /** IBV_SEND_SOLICITED (`RDMA_WRITE_WITH_IMM` only); see {@link SendRequest}. */
  readonly solicited?: boolean;
}

/** `SEND` / `SEND_WITH_IMM`. */
export interface SendRequest extends Base {
  readonly opcode: 'SEND' | 'SEND_WITH_IMM';
  readonly payload: Uint8Array;
  /** Required for `SEND_WITH_IMM`. */
  readonly immData?: number;
  /**
   * IBV_SEND_SOLICITED: ask the responder for a solicited event. iWARP carries it in the
   * opcode (Send with Solicited Event, RFC 5040 §5.3; Immediate Data with Solicited Event,
   * RFC 7306 §6), RoCE in the BTH SE bit of the last packet (IBTA 9.2.3).
   */
  readonly solicited?: boolean;
}

/**
 * `SEND_WITH_INV`: a Send that also invalidates the responder's STag `invalidateRkey`
 * when it is placed (IBTA 1.5 §9.4.1 Send with Invalidate, the IETH; RFC 5040 §4.1 and
 * §5.3: Send with Invalidate carries the STag in the Invalidate STag field). The
 * responder's receive completion carries WITH_INV and the rkey (IBTA 1.5 §11.4.2.1).
 */
export interface SendWithInvalidateRequest extends Base {
  readonly opcode: 'SEND_WITH_INV';
  readonly payload: Uint8Array;
  readonly invalidateRkey: number;
  /** IBV_SEND_SOLICITED (Send with Solicited Event and Invalidate, RFC 5040 §5.3). */
  readonly solicited?: boolean;
}

/** `RDMA_READ` of `length` bytes into the local buffer `localSTag` at `localAddr`. */
export interface RdmaReadRequestWr extends Base {
  readonly opcode: 'RDMA_READ';
  readonly remoteAddr: bigint;
  readonly rkey: number;
  readonly length: number;
  readonly localSTag: number;
  readonly localAddr: bigint;
  /**
   * Use RDMA Read V2 (V2 draft §6: no Data Sink STag on the wire, untagged response on
   * QN 3). Only in the `v2-draft` profile.
   */
  readonly readV2?: boolean;
}

/**
 * `ATOMIC_WRITE` (IBTA 1.5 Vol. 1 Annex A19, Memory Placement Extensions; NOT RFC 7306):
 * place the 8 bytes `atomicValue` at `remoteAddr` as one indivisible write. verbs
 * `ibv_wr_atomic_write` takes a pointer to the 8 bytes; the suite passes the value's
 * little-endian form (the host's), which is what lands in memory.
 */
export interface AtomicWriteRequest extends Base {
  readonly opcode: 'ATOMIC_WRITE';
  readonly remoteAddr: bigint;
  readonly rkey: number;
  readonly atomicValue: bigint;
}

/** What a FLUSH asks for (the fields of `ibv_wr_flush`; names as src/verbs/flush.ts). */
export interface FlushTarget {
  /** Bytes from `remoteAddr` (RANGE selectivity). */
  readonly length: bigint;
  /** Default `GLOBAL`. */
  readonly placement?: FlushPlacement;
  /** Default `RANGE`. */
  readonly selectivity?: FlushSelectivity;
}

/**
 * `FLUSH` (IBTA 1.5 Vol. 1 Annex A19; NOT RFC 7306): make the data placed by earlier
 * requests reach the placement type asked (global visibility, persistence), for a byte
 * range or the whole MR. Changes no byte.
 */
export interface FlushRequest extends Base {
  readonly opcode: 'FLUSH';
  readonly remoteAddr: bigint;
  readonly rkey: number;
  readonly flush: FlushTarget;
}

/** The IBTA 1.5 memory placement requests (RoCE only; src/engine/ibta15/). */
export type PlacementRequest = AtomicWriteRequest | FlushRequest;

/** True for the IBTA 1.5 memory placement requests. */
export function isPlacementRequest(wr: WorkRequest): wr is PlacementRequest {
  return wr.opcode === 'ATOMIC_WRITE' || wr.opcode === 'FLUSH';
}

/** Every work request the engine models. */
export type WorkRequest =
  | FetchAndAddRequest
  | CompareAndSwapRequest
  | RdmaWriteRequest
  | SendRequest
  | SendWithInvalidateRequest
  | RdmaReadRequestWr
  | AtomicWriteRequest
  | FlushRequest;

/** The opcodes above (a subset of `WR_OPCODE`). */
export type ModelledWrOpcode = WorkRequest['opcode'] & WrOpcode;

/** A work request the transport / profile cannot carry (typed result, not an exception). */
export interface NotExpressible {
  readonly reason: 'not-expressible';
  readonly wrId: bigint;
  readonly opcode: ModelledWrOpcode;
  /** Why, with the spec section. */
  readonly detail: string;
}

/** A work request with out-of-range fields (e.g. a 33-bit immediate). */
export interface InvalidWorkRequest {
  readonly reason: 'invalid-work-request';
  readonly wrId: bigint;
  readonly field: string;
  readonly detail: string;
}

/** Why a work request could not be turned into wire messages. */
export type WorkRequestError = NotExpressible | InvalidWorkRequest;

/**
 * What each modelled opcode needs besides `wrId` (one table, read by validateWorkRequest):
 * `u64` a bigint in [0, 2^64), `u32` an integer in [0, 2^32), `bytes` a Uint8Array.
 */
const REQUIRED_FIELDS: Readonly<
  Record<WorkRequest['opcode'], Readonly<Record<string, 'u64' | 'u32' | 'bytes'>>>
> = {
  ATOMIC_FETCH_AND_ADD: { remoteAddr: 'u64', rkey: 'u32', add: 'u64' },
  ATOMIC_CMP_AND_SWP: { remoteAddr: 'u64', rkey: 'u32', compare: 'u64', swap: 'u64' },
  RDMA_WRITE: { remoteAddr: 'u64', rkey: 'u32', payload: 'bytes' },
  RDMA_WRITE_WITH_IMM: { remoteAddr: 'u64', rkey: 'u32', payload: 'bytes', immData: 'u32' },
  SEND: { payload: 'bytes' },
  SEND_WITH_IMM: { payload: 'bytes', immData: 'u32' },
  SEND_WITH_INV: { payload: 'bytes', invalidateRkey: 'u32' },
  RDMA_READ: { remoteAddr: 'u64', rkey: 'u32', length: 'u32', localSTag: 'u32', localAddr: 'u64' },
  ATOMIC_WRITE: { remoteAddr: 'u64', rkey: 'u32', atomicValue: 'u64' },
  FLUSH: { remoteAddr: 'u64', rkey: 'u32' },
};

const WHAT = {
  u64: 'not a 64-bit value (a bigint in [0, 2^64))',
  u32: 'not a 32-bit value (an integer in [0, 2^32))',
  bytes: 'not a Uint8Array',
} as const;

function fits(kind: 'u64' | 'u32' | 'bytes', v: unknown): boolean {
  if (kind === 'u64') return typeof v === 'bigint' && v >= 0n && v <= 0xffff_ffff_ffff_ffffn;
  if (kind === 'u32')
    return typeof v === 'number' && Number.isInteger(v) && v >= 0 && v <= 0xffff_ffff;
  return v instanceof Uint8Array;
}

/**
 * Checks the fields of a work request: the opcode is one the engine models, every field
 * the opcode needs is there with its type and range (64-bit values are bigints, 32-bit
 * ones integers), the optional ones too when given. Returns the first problem, or
 * `undefined` when the request is well-formed. `wr` that is no object at all is an
 * ArgumentError (there is no wrId to report).
 */
export function validateWorkRequest(wr: WorkRequest): InvalidWorkRequest | undefined {
  const w = requireObject('engine', 'wr', wr) as Readonly<Record<string, unknown>>;
  const wrId = typeof w.wrId === 'bigint' ? w.wrId : 0n;
  const bad = (field: string, detail: string): InvalidWorkRequest => ({
    reason: 'invalid-work-request',
    wrId,
    field,
    detail,
  });
  if (!fits('u64', w.wrId)) return bad('wrId', WHAT.u64);
  const opcode = w.opcode;
  if (typeof opcode !== 'string' || !Object.hasOwn(REQUIRED_FIELDS, opcode)) {
    return bad(
      'opcode',
      `${describeValue(opcode)} is not an opcode the engine models (${Object.keys(REQUIRED_FIELDS).join(', ')})`,
    );
  }
  const required = REQUIRED_FIELDS[opcode as WorkRequest['opcode']];
  for (const [field, kind] of Object.entries(required)) {
    if (!fits(kind, w[field])) return bad(field, WHAT[kind]);
  }
  if (w.immData !== undefined && !fits('u32', w.immData)) return bad('immData', WHAT.u32);
  for (const flag of ['solicited', 'readV2'] as const) {
    if (w[flag] !== undefined && typeof w[flag] !== 'boolean') return bad(flag, 'not a boolean');
  }
  if (w.local !== undefined && w.local !== null) {
    const local = w.local as Readonly<Record<string, unknown>>;
    if (typeof local !== 'object') return bad('local', 'not a scatter/gather element');
    for (const [field, kind] of [
      ['lkey', 'u32'],
      ['addr', 'u64'],
      ['length', 'u32'],
    ] as const) {
      if (!fits(kind, local[field])) return bad(`local.${field}`, WHAT[kind]);
    }
  }
  if (opcode === 'FLUSH') {
    const flush = w.flush as Readonly<Record<string, unknown>> | undefined;
    if (typeof flush !== 'object' || flush === null) return bad('flush', 'not an object');
    const length = flush.length;
    if (typeof length !== 'bigint' || length < 0n || length > 0xffff_ffffn)
      return bad('flush.length', 'not a 32-bit length (the RETH DMA Length)');
    if (flush.placement !== undefined && !Object.hasOwn(FLUSH_PLACEMENT, String(flush.placement)))
      return bad('flush.placement', `unknown placement ${describeValue(flush.placement)}`);
    if (
      flush.selectivity !== undefined &&
      !Object.hasOwn(FLUSH_SELECTIVITY, String(flush.selectivity))
    )
      return bad('flush.selectivity', `unknown selectivity ${describeValue(flush.selectivity)}`);
  }
  return undefined;
}
