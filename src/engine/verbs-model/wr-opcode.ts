/**
 * `enum ibv_wr_opcode` of libibverbs (rdma-core `libibverbs/verbs.h`). Masked atomics are
 * not in this enum (only in the kernel's `ib_uverbs_wr_opcode`), so RFC 7306 masks are
 * reachable through verbs only as the all-ones / zero masks of the plain atomics.
 */
export const WR_OPCODE = {
  IBV_WR_RDMA_WRITE: 0,
  IBV_WR_RDMA_WRITE_WITH_IMM: 1,
  IBV_WR_SEND: 2,
  IBV_WR_SEND_WITH_IMM: 3,
  IBV_WR_RDMA_READ: 4,
  IBV_WR_ATOMIC_CMP_AND_SWP: 5,
  IBV_WR_ATOMIC_FETCH_AND_ADD: 6,
  IBV_WR_LOCAL_INV: 7,
  IBV_WR_BIND_MW: 8,
  IBV_WR_SEND_WITH_INV: 9,
  IBV_WR_TSO: 10,
  IBV_WR_DRIVER1: 11,
  IBV_WR_FLUSH: 14,
  IBV_WR_ATOMIC_WRITE: 15,
} as const;

/** A libibverbs work-request opcode name. */
export type WrOpcode = keyof typeof WR_OPCODE;
