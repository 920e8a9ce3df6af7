/**
 * `enum ibv_wc_status` of libibverbs (rdma-core `libibverbs/verbs.h`), names and values.
 * Checked against rdma-core's verbs.h (SUCCESS = 0 ... TM_RNDV_INCOMPLETE = 23).
 *
 * Naming rule (the whole package): a key is the C name without its prefix (`IBV_WC_`),
 * so C's `IBV_WC_X` is `WC_STATUS.X`; `C_NAME_PREFIX.WC_STATUS` records the prefix.
 */
export const WC_STATUS = {
  SUCCESS: 0,
  LOC_LEN_ERR: 1,
  LOC_QP_OP_ERR: 2,
  LOC_EEC_OP_ERR: 3,
  LOC_PROT_ERR: 4,
  WR_FLUSH_ERR: 5,
  MW_BIND_ERR: 6,
  BAD_RESP_ERR: 7,
  LOC_ACCESS_ERR: 8,
  REM_INV_REQ_ERR: 9,
  REM_ACCESS_ERR: 10,
  REM_OP_ERR: 11,
  RETRY_EXC_ERR: 12,
  RNR_RETRY_EXC_ERR: 13,
  LOC_RDD_VIOL_ERR: 14,
  REM_INV_RD_REQ_ERR: 15,
  REM_ABORT_ERR: 16,
  INV_EECN_ERR: 17,
  INV_EEC_STATE_ERR: 18,
  FATAL_ERR: 19,
  RESP_TIMEOUT_ERR: 20,
  GENERAL_ERR: 21,
  TM_ERR: 22,
  TM_RNDV_INCOMPLETE: 23,
} as const;

/** A libibverbs work-completion status name, e.g. `REM_ACCESS_ERR`. */
export type WcStatus = keyof typeof WC_STATUS;
