/**
 * Verbs-level enums as data (one table each), names and numeric values from
 * rdma-core `libibverbs/verbs.h`. Shared with the N-API wrapper.
 */
export * from './access-flags.js';
export * from './qp-state.js';
export * from './wc-opcode.js';
export * from './wc-status.js';
export * from './wr-opcode.js';
