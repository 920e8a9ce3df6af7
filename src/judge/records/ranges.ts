/** The kernel and rdma-core ranges and scenario lists the records share. */
import type { VersionRange } from '../version-range.js';

/**
 * From Debian bookworm's 6.1, where the first records were taken (kernel-runtime.md), on:
 * measured unchanged on 6.1.192, 6.12.95 and 7.3.4 (docs/kernels.md). Open-ended, so that
 * a newer kernel that changes the behaviour fails its run instead of passing silently.
 */
export const SINCE_6_1: VersionRange = { from: '6.1' };
/** rdma-core from bookworm's 44 on: measured unchanged with 44.0 and 56.1. */
export const SINCE_RDMA_CORE_44: VersionRange = { from: '44' };
/**
 * siw's query_qp state: 6.1 up to the upstream fix "RDMA/siw: Set qp_state in
 * siw_query_qp" (the 6.8 cycle); measured on 6.1.192 (RESET) and 6.12.95 (the real state).
 */
export const SIW_QUERY_QP_STATE_UNSET: VersionRange = { from: '6.1', before: '6.8' };
/** siw's query_qp state from that fix on (measured on 6.12.95 and 7.3.4). */
export const SIW_QUERY_QP_STATE_REPORTED: VersionRange = { from: '6.8' };

/** The siw atomic-error programs (each refused by libsiw at its first post). */
export const SIW_ATOMIC_ERRORS: readonly string[] = [
  'siw-misaligned',
  'siw-no-remote-atomic',
  'siw-qp-atomic-removed',
  'siw-atomic-invalid-rkey',
  'siw-atomic-invalid-lkey',
  'siw-atomic-short-sge',
  'siw-atomic-no-sge',
  'siw-atomic-past-end',
];

/** The siw programs whose first request ends the stream with a Terminate. */
export const SIW_TERMINATED_STREAMS: readonly string[] = [
  'siw-misaligned',
  'siw-no-remote-atomic',
  'siw-atomic-invalid-rkey',
  'siw-atomic-past-end',
  'siw-send-no-recv',
];

/**
 * rxe before IBTA 1.5's memory placement operations: Debian's 6.1 up to the 6.2 merge of
 * "RDMA/rxe: Implement RC RDMA FLUSH service in requester side" and "RDMA/rxe: Support
 * RDMA Atomic Write operation" (measured on 6.1.192: docs/kernels.md).
 */
export const RXE_BEFORE_PLACEMENT: VersionRange = { from: '6.1', before: '6.2' };
/** rxe with ATOMIC WRITE and FLUSH: from 6.2 (measured on 6.12.95 and 7.3.4). */
export const RXE_WITH_PLACEMENT: VersionRange = { from: '6.2' };
/** rdma-core before ibv_wr_flush (45): bookworm's 44. */
export const RDMA_CORE_BEFORE_FLUSH: VersionRange = { from: '44', before: '45' };

/** The ibta15 family's ATOMIC WRITE programs (scenarios.ts). */
export const RXE_ATOMIC_WRITES: readonly string[] = ['rxe-atomic-write*-ex'];
/** The ibta15 family's FLUSH programs. */
export const RXE_FLUSHES: readonly string[] = ['rxe-flush-*-ex', 'rxe-write-then-flush-ex'];
