/**
 * Work requests, apart from the queue pair that posts them (as pyverbs keeps wr.pyx
 * apart from qp.pyx): the send and receive request types a caller builds. Their checks
 * and packing for the addon are in sge.ts and send-wr.ts.
 */

import type { WrOpcode } from '../../ibverbs/index.js';
import type { FlushSpec } from '../flush.js';
import type { Resource } from '../lifetime.js';
import type { RemoteRef, Sge } from '../mr.js';
import type { Mw, MwBind, MwBindRequest } from '../mw.js';
import type { Ah } from '../pd.js';

/** A work-request opcode name (the C name without `IBV_WR_`), e.g. `'ATOMIC_FETCH_AND_ADD'`. */
export type SendOpcode = WrOpcode;

/**
 * An SGE given by raw address and key: no bounds check and no keep-alive (tests only).
 * Refused with `inline` (the provider would copy from that address in this process).
 */
export interface RawSge {
  readonly addr: bigint;
  readonly length: number;
  readonly lkey: number;
}

/** A send work request. */
export interface SendWr {
  /** Echoed in the completion; auto-numbered when absent. */
  readonly wrId?: bigint;
  readonly opcode: SendOpcode;
  readonly sgList?: readonly (Sge | RawSge)[];
  /** Ask for a completion (default true). */
  readonly signaled?: boolean;
  readonly solicited?: boolean;
  readonly fence?: boolean;
  /** Copy the payload into the WQE at post time. */
  readonly inline?: boolean;
  /** SEND_WITH_IMM / RDMA_WRITE_WITH_IMM: the 32-bit value (sent big-endian). */
  readonly immData?: number;
  /** RDMA and atomic operations: the target. */
  readonly remote?: RemoteRef;
  /** FETCH_AND_ADD: the addend. */
  readonly add?: bigint;
  /** CMP_AND_SWP: the compare value. */
  readonly compare?: bigint;
  /** CMP_AND_SWP: the swap value. */
  readonly swap?: bigint;
  /** ATOMIC_WRITE (extended path): the 8-byte value. */
  readonly atomicValue?: bigint;
  /** FLUSH (extended path, rdma-core >= 45, QP created with `flush`): what to flush. */
  readonly flush?: FlushSpec;
  /** UD QPs (SEND / SEND_WITH_IMM, legacy path): where the datagram goes. */
  readonly ud?: UdDestination;
  /** BIND_MW: the type 2 window, where it goes and its new rkey. */
  readonly bind?: MwBindRequest;
  /**
   * LOCAL_INV, SEND_WITH_INV: the rkey to invalidate, or the type 2 window whose
   * current rkey it is.
   */
  readonly invalidateRkey?: number | Mw;
}

/** Options of {@link Qp.bindMw}: where the type 1 window goes, and its request. */
export interface MwBindOptions extends MwBind {
  readonly wrId?: bigint;
  /** Ask for a completion (BIND_MW, default true). */
  readonly signaled?: boolean;
}

/** The destination of a UD send. */
export interface UdDestination {
  readonly ah: Ah;
  readonly remoteQpn: number;
  readonly remoteQkey: number;
}

/** A receive work request. */
export interface RecvWr {
  readonly wrId?: bigint;
  readonly sgList?: readonly (Sge | RawSge)[];
}

/** Which posting API to use. */
export type PostPath = 'legacy' | 'ex';

/** @internal a posted request until its completion is polled. */
export interface InFlight {
  readonly wrId: bigint;
  readonly signaled: boolean;
  /** What the request needs until it completes (MRs, a UD address handle). */
  readonly keep: readonly Resource[];
}
