/**
 * `enum ibv_wr_opcode` of libibverbs (rdma-core `libibverbs/verbs.h`). Masked atomics are
 * not in this enum (only in the kernel's `ib_uverbs_wr_opcode`), so RFC 7306 masks are
 * reachable through verbs only as the all-ones / zero masks of the plain atomics.
 *
 * Naming rule (the whole package): a key is the C name without its prefix (`IBV_WR_`),
 * so C's `IBV_WR_X` is `WR_OPCODE.X`; `C_NAME_PREFIX.WR_OPCODE` records the prefix.
 */
export const WR_OPCODE = {
  RDMA_WRITE: 0,
  RDMA_WRITE_WITH_IMM: 1,
  SEND: 2,
  SEND_WITH_IMM: 3,
  RDMA_READ: 4,
  ATOMIC_CMP_AND_SWP: 5,
  ATOMIC_FETCH_AND_ADD: 6,
  LOCAL_INV: 7,
  BIND_MW: 8,
  SEND_WITH_INV: 9,
  TSO: 10,
  DRIVER1: 11,
  FLUSH: 14,
  ATOMIC_WRITE: 15,
} as const;

/** A libibverbs work-request opcode name. */
export type WrOpcode = keyof typeof WR_OPCODE;
