/**
 * The operation kinds a scenario can post, as one table of traits. Both sides of the
 * suite read it: the engine side (expected.ts) builds the engine's WorkRequest from it,
 * the device side (kernel/execute.ts) the verbs SendWr. Adding an operation kind is one
 * row here; neither side has a switch over kinds.
 */

import type { OrderedOperation } from '../engine/ordering/rules.js';
import type { FlushTarget, ModelledWrOpcode } from '../engine/requester/work-request.js';
import type { WcOpcode } from '../engine/verbs-model/wc-opcode.js';

/** The operands a work request can carry besides its memory references. */
export type Operand = 'add' | 'compare' | 'swap' | 'immData' | 'atomicValue' | 'flush';

export interface OperationTraits {
  /** The work-request opcode: the same name in the engine and in libibverbs (`IBV_WR_*`). */
  readonly opcode: ModelledWrOpcode;
  /** The requester's completion opcode (`IBV_WC_*`) when it succeeds. */
  readonly completes: WcOpcode;
  /** Targets remote memory (carries remote_addr and rkey). */
  readonly remote: boolean;
  /** Carries the local buffer's 8 bytes to the responder. */
  readonly carriesPayload: boolean;
  /** Brings 8 bytes back into the local buffer (Read data, the atomic's original value). */
  readonly fetches: boolean;
  /** Is an 8-byte atomic (RFC 7306 §5.1 / IBTA 9.4.5): alignment and REMOTE_ATOMIC apply. */
  readonly atomic: boolean;
  /**
   * An IBTA 1.5 memory placement operation (Annex A19: ATOMIC WRITE, FLUSH; not RFC
   * 7306): RoCE only, posted through ibv_wr_* on a QP created for it (send_ops_flags).
   */
  readonly placement: boolean;
  /** Consumes a receive at the responder. */
  readonly consumesReceive: boolean;
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
    carriesPayload: true,
    fetches: false,
    atomic: false,
    placement: false,
    consumesReceive: false,
    operands: [],
    reportsByteLen: false,
    ordering: 'write',
  },
  RDMA_WRITE_WITH_IMM: {
    opcode: 'RDMA_WRITE_WITH_IMM',
    completes: 'RDMA_WRITE',
    remote: true,
    carriesPayload: true,
    fetches: false,
    atomic: false,
    placement: false,
    consumesReceive: true,
    operands: ['immData'],
    reportsByteLen: false,
    ordering: 'immediate',
  },
  SEND: {
    opcode: 'SEND',
    completes: 'SEND',
    remote: false,
    carriesPayload: true,
    fetches: false,
    atomic: false,
    placement: false,
    consumesReceive: true,
    operands: [],
    reportsByteLen: false,
    ordering: 'send',
  },
  SEND_WITH_IMM: {
    opcode: 'SEND_WITH_IMM',
    completes: 'SEND',
    remote: false,
    carriesPayload: true,
    fetches: false,
    atomic: false,
    placement: false,
    consumesReceive: true,
    operands: ['immData'],
    reportsByteLen: false,
    ordering: 'send',
  },
  RDMA_READ: {
    opcode: 'RDMA_READ',
    completes: 'RDMA_READ',
    remote: true,
    carriesPayload: false,
    fetches: true,
    atomic: false,
    placement: false,
    consumesReceive: false,
    operands: [],
    reportsByteLen: false,
    ordering: 'read',
  },
  ATOMIC_FETCH_AND_ADD: {
    opcode: 'ATOMIC_FETCH_AND_ADD',
    completes: 'FETCH_ADD',
    remote: true,
    carriesPayload: false,
    fetches: true,
    atomic: true,
    placement: false,
    consumesReceive: false,
    operands: ['add'],
    reportsByteLen: true,
    ordering: 'atomic',
  },
  ATOMIC_CMP_AND_SWP: {
    opcode: 'ATOMIC_CMP_AND_SWP',
    completes: 'COMP_SWAP',
    remote: true,
    carriesPayload: false,
    fetches: true,
    atomic: true,
    placement: false,
    consumesReceive: false,
    operands: ['compare', 'swap'],
    reportsByteLen: true,
    ordering: 'atomic',
  },
  ATOMIC_WRITE: {
    opcode: 'ATOMIC_WRITE',
    completes: 'ATOMIC_WRITE',
    remote: true,
    // The 8 bytes ride in the work request itself (ibv_wr_atomic_write), not in an SGE.
    carriesPayload: false,
    fetches: false,
    // Aligned like an atomic (A19), but needs Remote Write, not Remote Atomic.
    atomic: false,
    placement: true,
    consumesReceive: false,
    operands: ['atomicValue'],
    reportsByteLen: true,
    // Acknowledged like an RDMA Write (an ACK, no data back).
    ordering: 'write',
  },
  FLUSH: {
    opcode: 'FLUSH',
    completes: 'FLUSH',
    remote: true,
    carriesPayload: false,
    fetches: false,
    atomic: false,
    placement: true,
    consumesReceive: false,
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
