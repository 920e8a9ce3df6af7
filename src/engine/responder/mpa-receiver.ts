/**
 * The MPA layer under a Responder (RFC 5044): takes the bytes of one TCP direction after
 * the MPA Request/Reply exchange, cuts them into FPDUs with the negotiated settings and
 * hands each ULPDU (a DDP segment) to the Responder. What the reference engine expects of
 * a peer that is sent a malformed stream:
 *
 * - an FPDU whose CRC does not match (CRC negotiated) is not delivered (RFC 5044 §7.2) and
 *   ends the stream with a Terminate, LLP layer / MPA / CRC Error (RFC 5044 §8);
 * - a ULPDU Length longer than the bytes that came: the receiver waits for the rest
 *   (RFC 5044 §7.2 reads the length first; nothing is delivered before the CRC is there),
 *   so there is no answer;
 * - a ULPDU Length shorter than the DDP header (an "underflow"): the ULPDU goes to DDP,
 *   which cannot decode it: the Responder's malformed-segment Terminate (RFC 7306 §8.2).
 *
 * Markers (RFC 5044 §5) are read when negotiated; markers sent where none were negotiated
 * are just bytes of the ULPDU Length, so they fall under the cases above.
 */
import { requireBytes, requireObject } from '../../arguments.js';
import type { MpaNegotiated, Terminate } from '../../codec/iwarp/messages.js';
import { decodeFpdu } from '../../codec/iwarp/mpa.js';
import type { EngineFailure } from '../errors/failure-table.js';
import { buildTerminate } from '../errors/terminate.js';
import type { Responder } from './responder.js';
import type { ResponderResult } from './types.js';

/** What the MPA receiver made of a stream. */
export interface MpaReceiveResult {
  /** The Responder's result for each FPDU delivered, in order. */
  readonly results: readonly ResponderResult[];
  /** A Terminate the MPA layer itself sent (CRC error), if any. */
  readonly terminate: Terminate | undefined;
  /** The failure that ended the stream at the MPA layer, if any. */
  readonly failure: EngineFailure | undefined;
  /** Bytes left over that do not make a whole FPDU yet (the receiver waits for more). */
  readonly waitingBytes: number;
}

/**
 * Feeds `bytes` (one direction's FPDUs, starting right after the MPA Reply) to
 * `responder` through the MPA layer negotiated as `negotiated`. `msn` is the next MSN of
 * the Terminate queue (QN 2) the MPA layer's own Terminate uses.
 */
export function receiveMpaStream(
  responder: Responder,
  bytes: Uint8Array,
  negotiated: MpaNegotiated,
  msn = 1,
): MpaReceiveResult {
  requireObject('engine', 'responder', responder);
  requireBytes('engine', 'bytes', bytes);
  requireObject('engine', 'negotiated', negotiated);
  const results: ResponderResult[] = [];
  let offset = 0;
  while (offset < bytes.length && !responder.terminated) {
    const fpdu = decodeFpdu(bytes, offset, { ...negotiated, position: offset });
    // Not whole yet (or a marker that does not point here): the receiver waits.
    if (!fpdu.ok)
      return {
        results,
        terminate: undefined,
        failure: undefined,
        waitingBytes: bytes.length - offset,
      };
    if (fpdu.value.crcState === 'invalid') {
      const terminate = buildTerminate(responder.profile, msn, 'mpa-crc-error', undefined);
      return { results, terminate, failure: 'mpa-crc-error', waitingBytes: 0 };
    }
    results.push(responder.receiveSegment(fpdu.value.fpdu.ulpdu));
    offset += fpdu.value.length;
  }
  return { results, terminate: undefined, failure: undefined, waitingBytes: 0 };
}
