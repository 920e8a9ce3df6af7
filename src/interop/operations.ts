/**
 * The operation kinds a scenario can post, as one table of traits. Every side of the
 * suite reads it: the engine side (expected.ts) builds the engine's WorkRequest from it
 * (which the link prediction encodes, engine/projection/roce-exchange.ts), the device side
 * (kernel/device-side.ts) the verbs SendWr, the bring-up (kernel/execute.ts) the requester
 * QP's creation flags, the scenario tables their receives. Adding an operation kind is
 * one row here; no side checks a kind by name.
 */

import type { OrderedOperation } from '../engine/ordering/rules.js';
import type { FlushTarget, ModelledWrOpcode } from '../engine/requester/work-request.js';
import type { WcOpcode } from '../ibverbs/wc-opcode.js';
import type { Access } from '../verbs/mr.js';
import type { QpOptions } from '../verbs/pd.js';

/** The operands a work request can carry besides its memory references. */
export type Operand = 'add' | 'compare' | 'swap' | 'immData' | 'atomicValue' | 'flush';

/**
 * What the request's local SGE holds: the bytes it carries out (`payload`), the bytes a
 * Read brings back (`read-data`), the original value an atomic fetches
 * (`atomic-original`), or nothing (`none`: ATOMIC WRITE carries its 8 bytes in the work
 * request itself, ibv_wr_atomic_write; FLUSH carries no data).
 */
export type LocalData = 'payload' | 'read-data' | 'atomic-original' | 'none';

/** The receive an operation consumes at the responder (a post-recv step's `for`). */
export type ReceiveUse = 'send' | 'write-imm';

/** A requester QP creation flag (ibv_create_qp_ex send_ops_flags) the operation needs. */
export type QpCreateFlag = keyof Pick<QpOptions, 'atomicWrite' | 'flush' | 'memoryWindowOps'>;

export interface OperationTraits {
  /** The work-request opcode: the same name in the engine and in libibverbs (`IBV_WR_*`). */
  readonly opcode: ModelledWrOpcode;
  /** The requester's completion opcode (`IBV_WC_*`) when it succeeds. */
  readonly completes: WcOpcode;
  /** Targets remote memory (carries remote_addr and rkey). */
  readonly remote: boolean;
  /** What the local SGE holds (see {@link LocalData}). */
  readonly localData: LocalData;
  /** Brings 8 bytes back into the local buffer (Read data, the atomic's original value). */
  readonly fetches: boolean;
  /** Is an 8-byte atomic (RFC 7306 §5.1 / IBTA 9.4.5): alignment and REMOTE_ATOMIC apply. */
  readonly atomic: boolean;
  /**
   * The creation flag an extended requester QP needs for it (send_ops_flags): an IBTA 1.5
   * memory placement operation (Annex A19: ATOMIC WRITE, FLUSH; not RFC 7306; RoCE only,
   * posted through ibv_wr_*), or the memory-window operations (SEND_WITH_INV:
   * IBV_QP_EX_WITH_SEND_WITH_INV); null for every other operation.
   */
  readonly createFlag: QpCreateFlag | null;
  /**
   * Invalidates the scenario's memory window at the responder when it is placed (Send
   * with Invalidate: IBTA 1.5 §9.4.1 and §10.6.7.2.4, RFC 5040 §5.3): the request
   * carries the window's rkey.
   */
  readonly invalidatesWindow: boolean;
  /**
   * The remote rights it uses that the responder QP must enable as well as the MR (IBTA
   * 10.6.3.3; for FLUSH IBTA 1.5 Annex A19: rxe_resp.c check_qp_attr_access checks the
   * placement type's IB_ACCESS_FLUSH_* on the QP). The engine grants an MR right only
   * when the QP enables it too.
   */
  readonly qpGatedRights: readonly Access[];
  /** The receive it consumes at the responder, or null. */
  readonly consumesReceive: ReceiveUse | null;
  /** The operands copied from the scenario's operation into the work request. */
  readonly operands: readonly Operand[];
  /** The requester completion's byte_len is meaningful (IBTA: atomics report 8). */
  readonly reportsByteLen: boolean;
  /** Its row in the ordering rules (RFC 7306 §7, RFC 5040 §5.5). */
  readonly ordering: OrderedOperation;
}

export const OPERATION_TRAITS = {
  RDMA_WRITE: {
    opcode: 'RDMA_WRITE',
    completes: 'RDMA_WRITE',
    remote: true,
    localData: 'payload',
    fetches: false,
    atomic: false,
    createFlag: null,
    invalidatesWindow: false,
    qpGatedRights: ['REMOTE_WRITE'],
    consumesReceive: null,
    operands: [],
    reportsByteLen: false,
    ordering: 'write',
  },
  RDMA_WRITE_WITH_IMM: {
    opcode: 'RDMA_WRITE_WITH_IMM',
    completes: 'RDMA_WRITE',
    remote: true,
    localData: 'payload',
    fetches: false,
    atomic: false,
    createFlag: null,
    invalidatesWindow: false,
    qpGatedRights: ['REMOTE_WRITE'],
    consumesReceive: 'write-imm',
    operands: ['immData'],
    reportsByteLen: false,
    ordering: 'immediate',
  },
  SEND: {
    opcode: 'SEND',
    completes: 'SEND',
    remote: false,
    localData: 'payload',
    fetches: false,
    atomic: false,
    createFlag: null,
    invalidatesWindow: false,
    qpGatedRights: [],
    consumesReceive: 'send',
    operands: [],
    reportsByteLen: false,
    ordering: 'send',
  },
  SEND_WITH_IMM: {
    opcode: 'SEND_WITH_IMM',
    completes: 'SEND',
    remote: false,
    localData: 'payload',
    fetches: false,
    atomic: false,
    createFlag: null,
    invalidatesWindow: false,
    qpGatedRights: [],
    consumesReceive: 'send',
    operands: ['immData'],
    reportsByteLen: false,
    ordering: 'send',
  },
  SEND_WITH_INV: {
    opcode: 'SEND_WITH_INV',
    completes: 'SEND',
    remote: false,
    localData: 'payload',
    fetches: false,
    atomic: false,
    createFlag: 'memoryWindowOps',
    invalidatesWindow: true,
    qpGatedRights: [],
    consumesReceive: 'send',
    operands: [],
    reportsByteLen: false,
    ordering: 'send',
  },
  RDMA_READ: {
    opcode: 'RDMA_READ',
    completes: 'RDMA_READ',
    remote: true,
    localData: 'read-data',
    fetches: true,
    atomic: false,
    createFlag: null,
    invalidatesWindow: false,
    qpGatedRights: ['REMOTE_READ'],
    consumesReceive: null,
    operands: [],
    reportsByteLen: false,
    ordering: 'read',
  },
  ATOMIC_FETCH_AND_ADD: {
    opcode: 'ATOMIC_FETCH_AND_ADD',
    completes: 'FETCH_ADD',
    remote: true,
    localData: 'atomic-original',
    fetches: true,
    atomic: true,
    createFlag: null,
    invalidatesWindow: false,
    qpGatedRights: ['REMOTE_ATOMIC'],
    consumesReceive: null,
    operands: ['add'],
    reportsByteLen: true,
    ordering: 'atomic',
  },
  ATOMIC_CMP_AND_SWP: {
    opcode: 'ATOMIC_CMP_AND_SWP',
    completes: 'COMP_SWAP',
    remote: true,
    localData: 'atomic-original',
    fetches: true,
    atomic: true,
    createFlag: null,
    invalidatesWindow: false,
    qpGatedRights: ['REMOTE_ATOMIC'],
    consumesReceive: null,
    operands: ['compare', 'swap'],
    reportsByteLen: true,
    ordering: 'atomic',
  },
  ATOMIC_WRITE: {
    opcode: 'ATOMIC_WRITE',
    completes: 'ATOMIC_WRITE',
    remote: true,
    // The 8 bytes ride in the work request itself (ibv_wr_atomic_write), not in an SGE.
    localData: 'none',
    fetches: false,
    // Aligned like an atomic (A19), but needs Remote Write, not Remote Atomic.
    atomic: false,
    createFlag: 'atomicWrite',
    invalidatesWindow: false,
    qpGatedRights: ['REMOTE_WRITE'],
    consumesReceive: null,
    operands: ['atomicValue'],
    reportsByteLen: true,
    // Acknowledged like an RDMA Write (an ACK, no data back).
    ordering: 'write',
  },
  FLUSH: {
    opcode: 'FLUSH',
    completes: 'FLUSH',
    remote: true,
    localData: 'none',
    fetches: false,
    atomic: false,
    createFlag: 'flush',
    invalidatesWindow: false,
    qpGatedRights: ['FLUSH_GLOBAL', 'FLUSH_PERSISTENT'],
    consumesReceive: null,
    operands: ['flush'],
    reportsByteLen: true,
    // Answered by an RDMA READ Response (no data) after the earlier requests are placed.
    ordering: 'read',
  },
} as const satisfies Record<string, OperationTraits>;

export type OperationKind = keyof typeof OPERATION_TRAITS;

/** The traits of `kind`. */
export function traitsOf(kind: OperationKind): OperationTraits {
  return OPERATION_TRAITS[kind];
}

/** The operand values of an operation, by the traits' operand names. */
export type OperandValues = {
  readonly add?: bigint;
  readonly compare?: bigint;
  readonly swap?: bigint;
  readonly immData?: number;
  /** ATOMIC_WRITE: the 8 bytes, as a little-endian host holds this value. */
  readonly atomicValue?: bigint;
  /** FLUSH: length, placement type, selectivity level (the same shape on both sides). */
  readonly flush?: FlushTarget;
};

/** Copies the operands the traits name from `operation` (nothing else). */
export function operandsOf(kind: OperationKind, operation: OperandValues): OperandValues {
  const out: Record<string, OperandValues[Operand]> = {};
  for (const name of traitsOf(kind).operands) {
    const value = operation[name];
    if (value === undefined) throw new RangeError(`${kind} needs its operand '${name}'`);
    out[name] = value;
  }
  return out as OperandValues;
}
