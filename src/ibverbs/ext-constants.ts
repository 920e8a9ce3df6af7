/**
 * libibverbs enums of the verbs added for issue 34 (names and values from rdma-core's
 * `libibverbs/verbs.h`, rdma-core 44): `ibv_rereg_mr`'s flags and return codes, the
 * `ibv_create_cq_ex` completion fields, and the on-demand paging capabilities of
 * `ibv_query_device_ex`. test/host/verbs/ext-constants.test.ts checks every value
 * against the addon's copy read from the header at compile time.
 *
 * Naming rule (as every table here): a key is the C name without its prefix;
 * `EXT_C_NAME_PREFIX` records the prefix.
 */

/** `enum ibv_rereg_mr_flags`: what `ibv_rereg_mr` changes. */
export const REREG_MR_FLAGS = {
  TRANSLATION: 1,
  PD: 2,
  ACCESS: 4,
} as const;
/** A part of an MR that `ibv_rereg_mr` changes. */
export type ReregMrFlag = keyof typeof REREG_MR_FLAGS;

/** `enum ibv_rereg_mr_err_code`: `ibv_rereg_mr`'s return values (errno says why). */
export const REREG_MR_ERR = {
  INPUT: -1,
  DONT_FORK_NEW: -2,
  DO_FORK_OLD: -3,
  CMD: -4,
  CMD_AND_DO_FORK_NEW: -5,
} as const;

/** `enum ibv_create_cq_wc_flags`: the fields an extended CQ's completions carry. */
export const CREATE_CQ_WC_FLAGS = {
  BYTE_LEN: 1 << 0,
  IMM: 1 << 1,
  QP_NUM: 1 << 2,
  SRC_QP: 1 << 3,
  SLID: 1 << 4,
  SL: 1 << 5,
  DLID_PATH_BITS: 1 << 6,
  COMPLETION_TIMESTAMP: 1 << 7,
  CVLAN: 1 << 8,
  FLOW_TAG: 1 << 9,
  TM_INFO: 1 << 10,
  COMPLETION_TIMESTAMP_WALLCLOCK: 1 << 11,
} as const;

/** `enum ibv_odp_general_caps`. */
export const ODP_GENERAL_CAPS = { SUPPORT: 1 << 0, SUPPORT_IMPLICIT: 1 << 1 } as const;
/** An ODP general capability name. */
export type OdpGeneralCap = keyof typeof ODP_GENERAL_CAPS;

/** `enum ibv_odp_transport_cap_bits`: what ODP memory may take part in, per transport. */
export const ODP_TRANSPORT_CAPS = {
  SEND: 1 << 0,
  RECV: 1 << 1,
  WRITE: 1 << 2,
  READ: 1 << 3,
  ATOMIC: 1 << 4,
  SRQ_RECV: 1 << 5,
} as const;
/** An ODP per-transport capability name. */
export type OdpTransportCap = keyof typeof ODP_TRANSPORT_CAPS;

/** The C prefix of each table's names. */
export const EXT_C_NAME_PREFIX = {
  REREG_MR_FLAGS: 'IBV_REREG_MR_CHANGE_',
  REREG_MR_ERR: 'IBV_REREG_MR_ERR_',
  CREATE_CQ_WC_FLAGS: 'IBV_WC_EX_WITH_',
  ODP_GENERAL_CAPS: 'IBV_ODP_',
  ODP_TRANSPORT_CAPS: 'IBV_ODP_SUPPORT_',
} as const;

/** The names of a bitmask's set bits in `table` (unknown bits are left out). */
export function flagNamesOf<K extends string>(
  table: Readonly<Record<K, number>>,
  mask: number,
): K[] {
  return (Object.keys(table) as K[]).filter((k) => (mask & table[k]) !== 0);
}
