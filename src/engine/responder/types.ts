/** Values the Responder takes and returns. */
import type { RdmapMessage, Terminate } from '../../codec/iwarp/messages.js';
import type { RdmapMessageKind } from '../../codec/iwarp/opcodes.js';
import type { EngineFailure } from '../errors/failure-table.js';

/** An untagged receive buffer posted on QN 0 (a verbs receive work request). */
export interface ReceiveBuffer {
  /** The verbs `wr_id`. */
  readonly id: bigint;
  /** Capacity in bytes. */
  readonly length: number;
}

/** A message Delivered to the Responder's ULP, consuming one receive buffer. */
export interface ReceiveCompletion {
  readonly receiveId: bigint;
  /** The RDMAP message kind that completed (Send variant, Immediate Data, ...). */
  readonly messageKind: RdmapMessageKind;
  /** Bytes placed in the receive buffer. */
  readonly byteLength: number;
  /** The placed bytes. */
  readonly data: Uint8Array;
  /** Immediate Data (RFC 7306 §6, V2 draft §5.3), when the message carried it. */
  readonly immediateData: bigint | undefined;
  /** STag invalidated by a Send with Invalidate variant. */
  readonly invalidatedSTag: number | undefined;
  /** Solicited Event requested. */
  readonly solicitedEvent: boolean;
}

/** A tagged placement performed at the Responder (RDMA Write). */
export interface Placement {
  readonly stag: number;
  readonly taggedOffset: bigint;
  readonly length: number;
}

/** Why a message was not processed at all. */
export type IgnoredReason = 'stream-terminated';

/** What one call into the Responder produced. */
export interface ResponderResult {
  /**
   * `accepted`: processed (possibly only queued); `terminated`: a failure was detected and
   * `terminate` is the Terminate sent; `peer-terminated`: the message was the peer's
   * Terminate; `ignored`: the stream was already closed.
   */
  readonly outcome: 'accepted' | 'terminated' | 'peer-terminated' | 'ignored';
  /** Messages to transmit, in order (Atomic / Read Responses, then any Terminate). */
  readonly sent: readonly RdmapMessage[];
  readonly completions: readonly ReceiveCompletion[];
  readonly placements: readonly Placement[];
  readonly failure: EngineFailure | undefined;
  readonly terminate: Terminate | undefined;
  readonly ignoredReason: IgnoredReason | undefined;
}
