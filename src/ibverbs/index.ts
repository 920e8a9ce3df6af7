/**
 * The libibverbs ABI as data, the neutral home both the engine (src/engine/) and the verbs
 * wrapper (src/verbs/) import, so neither imports the other: the work-request, completion,
 * access and QP-state tables (one table each), the other enums the wrapper names
 * (constants.ts), names and numeric values from rdma-core `libibverbs/verbs.h` and
 * `librdmacm/rdma_cma.h`. Tests check every value against the constants the addon exports.
 */
export * from './access-flags.js';
export * from './constants.js';
export * from './flush.js';
export * from './qp-state.js';
export * from './wc-opcode.js';
export * from './wc-status.js';
export * from './wr-opcode.js';

/**
 * The C prefix each table's keys drop (one naming rule for the whole package: names are the
 * libibverbs names without their prefix). Tests rebuild the C names from it to check every
 * value against the constants the addon exports from `verbs.h`.
 */
export const C_NAME_PREFIX = {
  ACCESS_FLAGS: 'IBV_ACCESS_',
  QP_STATE: 'IBV_QPS_',
  WC_FLAGS: 'IBV_WC_',
  WC_OPCODE: 'IBV_WC_',
  WC_STATUS: 'IBV_WC_',
  WR_OPCODE: 'IBV_WR_',
} as const;
