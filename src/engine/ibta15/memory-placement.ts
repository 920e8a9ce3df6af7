/**
 * The memory placement extensions of the InfiniBand Architecture Specification Vol. 1
 * Release 1.5 on RoCE: ATOMIC WRITE and FLUSH, as a verbs program on the requester sees
 * them (completion status, opcode and length, the responder's memory, the QP state).
 * These are IBTA 1.5 operations, NOT RFC 7306: iWARP's extension (RFC 7306) has only
 * FetchAdd and CmpSwap atomics and no Flush, and siw implements neither; the iWARP side
 * of the engine therefore never sees them. rxe implements both from kernel 6.2.
 *
 * The checks, in the order a responder makes them (IBTA 1.5 §9.4.x, §10.6.3.3 for the QP
 * enables; the NAK codes of §9.7.5.2.8 mapped to verbs statuses as for the other RC
 * operations, failure-table.ts):
 *   1. the responder QP's remote access enables: ATOMIC WRITE needs Remote Write, FLUSH
 *      the enable of its placement type (Global, Persistent). A missing QP enable is an
 *      operation this QP does not support, NAK Invalid Request (REM_INV_REQ_ERR), not a
 *      protection fault of the MR: rxe_resp.c check_op_valid -> check_qp_attr_access ->
 *      RESPST_ERR_UNSUPPORTED_OPCODE, as for Reads, Writes and atomics;
 *   2. the R_Key: a key never issued, or an MR without the right (ATOMIC WRITE: Remote
 *      Write; FLUSH: FLUSH_GLOBAL / FLUSH_PERSISTENT for the placement asked), or a range
 *      outside the MR: NAK Remote Access Error (REM_ACCESS_ERR);
 *   3. ATOMIC WRITE only: the target must be 8-byte aligned, like every atomic
 *      (IBTA o9-21): NAK Invalid Request (REM_INV_REQ_ERR).
 * A failure moves the requester QP to ERR and leaves memory untouched. ATOMIC WRITE
 * places its 8 bytes as the requester's buffer holds them (`ibv_wr_atomic_write` takes a
 * pointer to 8 bytes: on a little-endian host, the value's little-endian form); FLUSH
 * changes no byte and completes with byte_len = the length asked.
 */

import type { AccessFlag } from '../../ibverbs/access-flags.js';
import type { WcStatus } from '../../ibverbs/wc-status.js';
import type { EngineFailure } from '../errors/failure-table.js';

/** The responder's memory region as the operation finds it. */
export interface PlacementRegion {
  /** The MR's bytes (not modified: the outcome carries a copy). */
  readonly contents: Uint8Array;
  /** The MR's access rights. */
  readonly access: readonly AccessFlag[];
  /** The responder QP's remote access enables (`qp_access_flags`). */
  readonly qpAccess: readonly AccessFlag[];
}

/** ATOMIC WRITE of `value` at MR offset `offset`. */
export interface AtomicWriteOperation {
  readonly kind: 'ATOMIC_WRITE';
  readonly offset: number;
  readonly value: bigint;
  /** `invalid`: an R_Key the responder never issued. */
  readonly rkey?: 'valid' | 'invalid';
}

/** FLUSH of `length` bytes at MR offset `offset` (RANGE), or of the whole MR (MR). */
export interface FlushOperation {
  readonly kind: 'FLUSH';
  readonly offset: number;
  readonly length: number;
  readonly placement: 'GLOBAL' | 'PERSISTENT';
  readonly selectivity: 'RANGE' | 'MR';
  readonly rkey?: 'valid' | 'invalid';
}

export type PlacementOperation = AtomicWriteOperation | FlushOperation;

/** What the requester's verbs program sees, and the memory afterwards. */
export interface PlacementOutcome {
  readonly status: WcStatus;
  /** The completion opcode (`IBV_WC_*`); undefined on error (ibv_poll_cq(3)). */
  readonly opcode: 'ATOMIC_WRITE' | 'FLUSH' | undefined;
  readonly byteLen: number;
  readonly requesterState: 'RTS' | 'ERR';
  /** The MR's bytes after the operation. */
  readonly memory: Uint8Array;
  /** The check that failed, for reports. */
  readonly failedCheck?: 'qp-enable' | 'r-key' | 'alignment';
  /**
   * The failure-table row the NAK comes from (failure-table.ts): the same rows as a
   * FetchAdd's access and alignment failures, whose NAK codes IBTA 1.5 reuses.
   */
  readonly failure?: EngineFailure;
}

/** Which failure-table row each check stands for. */
const FAILURE_OF_CHECK: Readonly<
  Record<NonNullable<PlacementOutcome['failedCheck']>, EngineFailure>
> = {
  'qp-enable': 'qp-access-disabled',
  'r-key': 'access-rights',
  alignment: 'misaligned-atomic',
};

const WORD = 8;

/** The MR right (and QP enable) a FLUSH of `placement` needs. */
export function flushRight(placement: FlushOperation['placement']): AccessFlag {
  return placement === 'GLOBAL' ? 'FLUSH_GLOBAL' : 'FLUSH_PERSISTENT';
}

function failed(
  region: PlacementRegion,
  status: WcStatus,
  failedCheck: NonNullable<PlacementOutcome['failedCheck']>,
): PlacementOutcome {
  return {
    status,
    opcode: undefined,
    byteLen: 0,
    requesterState: 'ERR',
    memory: region.contents.slice(),
    failedCheck,
    failure: FAILURE_OF_CHECK[failedCheck],
  };
}

/** Executes one IBTA 1.5 placement operation against `region` (see the module comment). */
export function executePlacement(
  op: PlacementOperation,
  region: PlacementRegion,
): PlacementOutcome {
  const right: AccessFlag = op.kind === 'ATOMIC_WRITE' ? 'REMOTE_WRITE' : flushRight(op.placement);
  if (!region.qpAccess.includes(right)) return failed(region, 'REM_INV_REQ_ERR', 'qp-enable');
  if (op.rkey === 'invalid' || !region.access.includes(right))
    return failed(region, 'REM_ACCESS_ERR', 'r-key');
  const span =
    op.kind === 'ATOMIC_WRITE'
      ? { at: op.offset, length: WORD }
      : op.selectivity === 'MR'
        ? { at: 0, length: region.contents.length }
        : { at: op.offset, length: op.length };
  if (span.at < 0 || span.at + span.length > region.contents.length)
    return failed(region, 'REM_ACCESS_ERR', 'r-key');
  if (op.kind === 'FLUSH')
    return {
      status: 'SUCCESS',
      opcode: 'FLUSH',
      byteLen: op.length,
      requesterState: 'RTS',
      memory: region.contents.slice(),
    };
  // The MR's address is 8-aligned (a registered Buffer's is), so the offset decides.
  if (op.offset % WORD !== 0) return failed(region, 'REM_INV_REQ_ERR', 'alignment');
  const memory = region.contents.slice();
  new DataView(memory.buffer, memory.byteOffset, memory.byteLength).setBigUint64(
    op.offset,
    BigInt.asUintN(64, op.value),
    true,
  );
  return {
    status: 'SUCCESS',
    opcode: 'ATOMIC_WRITE',
    byteLen: WORD,
    requesterState: 'RTS',
    memory,
  };
}
