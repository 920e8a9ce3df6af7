/**
 * Work requests in verbs terms (`struct ibv_send_wr`), the input of the Requester and of
 * the verbs projection. 64-bit values are bigint; `immData` is the 32-bit immediate in
 * host order (what `ntohl(wr.imm_data)` gives).
 */
import type { FlushPlacement, FlushSelectivity } from '../verbs-model/flush.js';
import type { WrOpcode } from '../verbs-model/wr-opcode.js';

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

/** Checks the fields every encoding needs; undefined when fine. */
export function validateWorkRequest(wr: WorkRequest): InvalidWorkRequest | undefined {
  const bad = (field: string, detail: string): InvalidWorkRequest => ({
    reason: 'invalid-work-request',
    wrId: wr.wrId,
    field,
    detail,
  });
  const u64 = (v: bigint) => v >= 0n && v <= 0xffff_ffff_ffff_ffffn;
  const u32 = (v: number) => Number.isInteger(v) && v >= 0 && v <= 0xffff_ffff;
  if (!u64(wr.wrId)) return bad('wrId', 'not a 64-bit value');
  if ('remoteAddr' in wr && !u64(wr.remoteAddr)) return bad('remoteAddr', 'not a 64-bit value');
  if ('rkey' in wr && !u32(wr.rkey)) return bad('rkey', 'not a 32-bit value');
  if ('add' in wr && !u64(wr.add)) return bad('add', 'not a 64-bit value');
  if ('compare' in wr && !u64(wr.compare)) return bad('compare', 'not a 64-bit value');
  if ('swap' in wr && !u64(wr.swap)) return bad('swap', 'not a 64-bit value');
  if ('atomicValue' in wr && !u64(wr.atomicValue)) return bad('atomicValue', 'not a 64-bit value');
  if (wr.opcode === 'FLUSH' && !(wr.flush.length >= 0n && wr.flush.length <= 0xffff_ffffn))
    return bad('flush.length', 'not a 32-bit length (the RETH DMA Length)');
  if (wr.opcode === 'RDMA_WRITE_WITH_IMM' || wr.opcode === 'SEND_WITH_IMM') {
    if (wr.immData === undefined || !u32(wr.immData))
      return bad('immData', 'a 32-bit immediate is required');
  }
  if (wr.opcode === 'RDMA_READ' && (!u32(wr.length) || !u32(wr.localSTag)))
    return bad('length', 'length and local STag must be 32-bit values');
  return undefined;
}
