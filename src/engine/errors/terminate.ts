/**
 * Building the Terminate message for a failure (RFC 5040 §4.8 layout, RFC 7306 §8 rules):
 * Layer / Error Type / Error Code from the failure table, and the header-copy rules of
 * RFC 7306 §8.1 — errors on an incoming new-opcode message copy the Terminated DDP
 * Header only (D = 1, R = 0); errors detected while creating a message copy nothing.
 * RFC 5040 §4.8 copies the RDMA header of a failed RDMA Read Request as well.
 */
import {
  makeTerminate,
  type TerminatedHeaders,
  terminatedHeadersOf,
} from '../../codec/iwarp/build.js';
import type { RdmapMessage, Terminate } from '../../codec/iwarp/messages.js';
import type { IwarpProfile } from '../../codec/iwarp/profiles.js';
import { encodeRdmapMessage } from '../../codec/iwarp/rdmap.js';
import { type EngineFailure, failureRow, terminateCodeOf } from './failure-table.js';

/** The incoming segment a Terminate reports on. */
export interface TerminatedSegment {
  /** The decoded message; absent when the segment could not be decoded. */
  readonly message?: RdmapMessage;
  /** The raw DDP segment as received, when the caller has it (preferred for the copy). */
  readonly bytes?: Uint8Array;
}

/** The segment's bytes: as received, else re-encoded (non-strict: it may be invalid). */
function segmentBytes(segment: TerminatedSegment, profile: IwarpProfile): Uint8Array | undefined {
  if (segment.bytes !== undefined) return segment.bytes;
  if (segment.message === undefined) return undefined;
  try {
    return encodeRdmapMessage(segment.message, { profile, strict: false });
  } catch {
    // A field out of range cannot have come off the wire; nothing to copy then.
    return undefined;
  }
}

/**
 * The Terminate for `failure` on `segment` (RFC 7306 §8.1 item 2), or for a failure not
 * tied to an incoming message when `segment` is undefined (§8.1 item 1: headers zero).
 * `msn` is the sender's next MSN on QN 2.
 */
export function buildTerminate(
  profile: IwarpProfile,
  msn: number,
  failure: EngineFailure,
  segment: TerminatedSegment | undefined,
): Terminate {
  const row = failureRow(failure);
  const code = terminateCodeOf(failure);
  let headers: TerminatedHeaders | undefined;
  if (segment !== undefined && row.copiesDdpHeader) {
    const bytes = segmentBytes(segment, profile);
    headers = bytes === undefined ? undefined : terminatedHeadersOf(bytes);
  }
  return makeTerminate(
    {
      messageSequenceNumber: msn,
      layer: code.layer,
      errorType: code.errorType,
      errorCode: code.errorCode,
      ...(headers === undefined ? {} : { headers }),
      // RFC 7306 §8.1 item 2: the Terminated RDMA Header is zero for the new messages;
      // RFC 5040 §4.8 keeps it for a Read Request (the only case the codec copies it).
      includeRdmaHeader:
        row.copiesRdmaHeader ||
        (segment !== undefined &&
          (segment.message === undefined || segment.message.kind === 'rdma-read-request')),
    },
    profile,
  );
}
