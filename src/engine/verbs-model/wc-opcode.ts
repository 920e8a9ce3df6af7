/**
 * `enum ibv_wc_opcode` of libibverbs (rdma-core `libibverbs/verbs.h`). Receive-side
 * opcodes start at `IBV_WC_RECV = 1 << 7`.
 */
export const WC_OPCODE = {
  IBV_WC_SEND: 0,
  IBV_WC_RDMA_WRITE: 1,
  IBV_WC_RDMA_READ: 2,
  IBV_WC_COMP_SWAP: 3,
  IBV_WC_FETCH_ADD: 4,
  IBV_WC_BIND_MW: 5,
  IBV_WC_LOCAL_INV: 6,
  IBV_WC_TSO: 7,
  IBV_WC_FLUSH: 8,
  IBV_WC_ATOMIC_WRITE: 9,
  IBV_WC_RECV: 128,
  IBV_WC_RECV_RDMA_WITH_IMM: 129,
  IBV_WC_TM_ADD: 130,
  IBV_WC_TM_DEL: 131,
  IBV_WC_TM_SYNC: 132,
  IBV_WC_TM_RECV: 133,
  IBV_WC_TM_NO_TAG: 134,
  IBV_WC_DRIVER1: 135,
  IBV_WC_DRIVER2: 136,
  IBV_WC_DRIVER3: 137,
} as const;

/** A libibverbs work-completion opcode name, e.g. `IBV_WC_RECV_RDMA_WITH_IMM`. */
export type WcOpcode = keyof typeof WC_OPCODE;

/**
 * `enum ibv_wc_flags` bits (verbs.h): `IBV_WC_GRH = 1 << 0`, `IBV_WC_WITH_IMM = 1 << 1`,
 * `IBV_WC_IP_CSUM_OK = 1 << 2`, `IBV_WC_WITH_INV = 1 << 3`.
 */
export const WC_FLAGS = {
  IBV_WC_GRH: 1,
  IBV_WC_WITH_IMM: 2,
  IBV_WC_IP_CSUM_OK: 4,
  IBV_WC_WITH_INV: 8,
} as const;

/** A libibverbs work-completion flag name. */
export type WcFlag = keyof typeof WC_FLAGS;

/** The numeric `wc_flags` value of a set of flag names. */
export function wcFlagsValue(flags: readonly WcFlag[]): number {
  let value = 0;
  for (const flag of flags) value |= WC_FLAGS[flag];
  return value;
}
