/** rdma-interop: each layer is also importable on its own (`rdma-interop/codec`, ...). */

export * as codec from './codec/index.js';
export * as engine from './engine/index.js';
export { type ErrorOrigin, isRdmaInteropError, RdmaInteropError } from './errors.js';
export * as interop from './interop/index.js';
export * as runtime from './runtime/index.js';
export * as verbs from './verbs/index.js';
