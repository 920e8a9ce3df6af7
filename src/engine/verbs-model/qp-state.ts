/** `enum ibv_qp_state` of libibverbs (rdma-core `libibverbs/verbs.h`). */
export const QP_STATE = {
  IBV_QPS_RESET: 0,
  IBV_QPS_INIT: 1,
  IBV_QPS_RTR: 2,
  IBV_QPS_RTS: 3,
  IBV_QPS_SQD: 4,
  IBV_QPS_SQE: 5,
  IBV_QPS_ERR: 6,
  IBV_QPS_UNKNOWN: 7,
} as const;

/** A libibverbs QP state name. */
export type QpState = keyof typeof QP_STATE;
