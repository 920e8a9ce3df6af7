/**
 * rdma-interop: each layer is also importable on its own (`rdma-interop/codec`, ...).
 * Importing never loads the N-API addon: only the verbs layer's first call does.
 */

export type { DeviceReport } from './cli/commands/devices.js';
export * as codec from './codec/index.js';
export * as engine from './engine/index.js';
export {
  ArgumentError,
  type ErrorOrigin,
  isRdmaInteropError,
  RdmaInteropError,
  UnknownNameError,
} from './errors.js';
export * as interop from './interop/index.js';
export { AddonUnavailableError, type AddonUnavailableReason } from './native/load.js';
export * as runtime from './runtime/index.js';
export * as verbs from './verbs/index.js';
