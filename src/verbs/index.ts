/**
 * `rdma-interop/verbs`: a typed wrapper over libibverbs and librdmacm (N-API addon in
 * `native/`). Every object owns one native handle; `close()` / `Symbol.dispose` are
 * explicit and idempotent, finalizers free what was forgotten. See docs/verbs.md.
 */
export * from './async-events.js';
export * from './cm.js';
export * from './completion.js';
export * from './connect.js';
export * from './constants.js';
export * from './cq.js';
export * from './device.js';
export * from './errors.js';
export type { CloseOptions } from './lifetime.js';
export * from './mr.js';
export * from './pd.js';
export * from './probe.js';
export * from './qp.js';
export * from './qp-attr.js';
export * from './round-trip.js';
