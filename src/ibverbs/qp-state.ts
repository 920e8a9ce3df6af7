/** `enum ibv_qp_state` of libibverbs (rdma-core `libibverbs/verbs.h`).  *
 * Naming rule (the whole package): a key is the C name without its prefix (`IBV_QPS_`),
 * so C's `IBV_QPS_X` is `QP_STATE.X`; `C_NAME_PREFIX.QP_STATE` records the prefix.
 */
export const QP_STATE = {
  RESET: 0,
  INIT: 1,
  RTR: 2,
  RTS: 3,
  SQD: 4,
  SQE: 5,
  ERR: 6,
  UNKNOWN: 7,
} as const;

/** A libibverbs QP state name. */
export type QpState = keyof typeof QP_STATE;
