/**
 * `enum ibv_wc_opcode` of libibverbs (rdma-core `libibverbs/verbs.h`). Receive-side
 * opcodes start at `RECV = 1 << 7`.
 *
 * Naming rule (the whole package): a key is the C name without its prefix (`IBV_WC_`),
 * so C's `IBV_WC_X` is `WC_OPCODE.X`; `C_NAME_PREFIX.WC_OPCODE` records the prefix.
 */
import { requireArray, requireName } from '../arguments.js';

export const WC_OPCODE = {
  SEND: 0,
  RDMA_WRITE: 1,
  RDMA_READ: 2,
  COMP_SWAP: 3,
  FETCH_ADD: 4,
  BIND_MW: 5,
  LOCAL_INV: 6,
  TSO: 7,
  FLUSH: 8,
  ATOMIC_WRITE: 9,
  RECV: 128,
  RECV_RDMA_WITH_IMM: 129,
  TM_ADD: 130,
  TM_DEL: 131,
  TM_SYNC: 132,
  TM_RECV: 133,
  TM_NO_TAG: 134,
  DRIVER1: 135,
  DRIVER2: 136,
  DRIVER3: 137,
} as const;

/** A libibverbs work-completion opcode name, e.g. `RECV_RDMA_WITH_IMM`. */
export type WcOpcode = keyof typeof WC_OPCODE;

/**
 * `enum ibv_wc_flags` bits (verbs.h): `GRH = 1 << 0`, `WITH_IMM = 1 << 1`,
 * `IP_CSUM_OK = 1 << 2`, `WITH_INV = 1 << 3`.
 */
export const WC_FLAGS = {
  GRH: 1,
  WITH_IMM: 2,
  IP_CSUM_OK: 4,
  WITH_INV: 8,
} as const;

/** A libibverbs work-completion flag name. */
export type WcFlag = keyof typeof WC_FLAGS;

/** The numeric `wc_flags` value of a set of flag names. */
export function wcFlagsValue(flags: readonly WcFlag[]): number {
  let value = 0;
  requireArray('engine', 'flags', flags).forEach((flag, i) => {
    value |= WC_FLAGS[requireName('engine', 'work-completion flag', WC_FLAGS, flag, `flags[${i}]`)];
  });
  return value;
}
