/**
 * IBTA 1.5 FLUSH and ATOMIC WRITE through libibverbs (`ibv_wr_flush`, `ibv_wr_atomic_write`):
 * RoCE operations of the InfiniBand Architecture Specification Release 1.5 (the memory
 * placement extensions), not iWARP's RFC 7306 (whose atomics are FetchAdd/CmpSwap only and
 * which siw does not implement). `ibv_wr_atomic_write` is in rdma-core 43+, `ibv_wr_flush`
 * only in rdma-core 45+: the addon reaches Flush through the 45 layout of `ibv_qp_ex` only
 * when the loaded library is 45 or later (native/flush.h), and this module refuses a Flush
 * QP on an older library with {@link LibraryTooOldError}. The names and values are
 * rdma-core's (`libibverbs/verbs.h` >= 45); test/host/verbs/flush-constants.test.ts checks
 * them against the addon and against that header.
 */

import { VerbsError } from './errors.js';
import { addon } from './native.js';

// The tables live with the engine's other verbs enums (one source for both layers).
export * from '../ibverbs/flush.js';

import type { FlushPlacement, FlushSelectivity } from '../ibverbs/flush.js';

/** The C names of the tables above (prefix `IBV_FLUSH_` for both). */
export const FLUSH_C_PREFIX = 'IBV_FLUSH_';

/** The first rdma-core with `ibv_wr_flush`. */
export const FLUSH_MIN_RDMA_CORE = 45;

/** A FLUSH work request's own fields. */
export interface FlushSpec {
  /** Bytes from `remote.addr` (RANGE); ignored by the responder for MR selectivity. */
  readonly length: bigint;
  /** Default `GLOBAL`. */
  readonly placement?: FlushPlacement;
  /** Default `RANGE`. */
  readonly selectivity?: FlushSelectivity;
}

/**
 * rdma-core's version of the libibverbs this process loaded (`'44.0'`, `'56.1'`), read
 * from the library's real file name by the addon; `'unknown'` when it cannot be told.
 */
export function libibverbsVersion(): string {
  const v = addon().libibverbsVersion();
  return v === '' ? 'unknown' : v;
}

/**
 * The loaded libibverbs predates a verbs call (e.g. `ibv_wr_flush`, rdma-core 45): nothing
 * was created or posted. A VerbsError with code `EOPNOTSUPP`, plus the call, the version
 * it needs and the one loaded.
 */
export class LibraryTooOldError extends VerbsError {
  override readonly name = 'LibraryTooOldError';
  constructor(
    readonly feature: string,
    readonly needs: string,
    readonly loaded: string,
    device: string | undefined,
  ) {
    super(
      'EOPNOTSUPP',
      95,
      feature,
      device,
      `${feature} needs rdma-core ${needs} or later; this process loaded libibverbs of rdma-core ${loaded}`,
    );
  }
}

/** Throws LibraryTooOldError unless the loaded libibverbs has `ibv_wr_flush`. */
export function requireFlushLibrary(device: string | undefined): void {
  const loaded = libibverbsVersion();
  const major = Number.parseInt(loaded, 10);
  if (!(major >= FLUSH_MIN_RDMA_CORE))
    throw new LibraryTooOldError('ibv_wr_flush', String(FLUSH_MIN_RDMA_CORE), loaded, device);
}
