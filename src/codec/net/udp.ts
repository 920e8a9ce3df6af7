/**
 * UDP datagrams (RFC 768). The checksum covers a pseudo-header supplied by the caller
 * (see `checksum.ts`); it is verified and reported, not enforced.
 */

import { DecodeError, type DecodeResult, decoded, EncodeError, failed } from '../errors.js';
import { inRange, viewOf } from './bytes.js';
import { finishChecksum, onesComplementSum } from './checksum.js';
import { requireTransportArguments, transportHeaderMissing } from './transport-arguments.js';

/** A decoded UDP header. */
export interface UdpHeader {
  readonly sourcePort: number;
  readonly destinationPort: number;
  readonly length: number;
  readonly checksum: number;
  /**
   * `true`/`false` when verified against the pseudo-header; `undefined` when no
   * pseudo-header was given or the checksum is 0 (not computed, IPv4 only).
   */
  readonly checksumValid: boolean | undefined;
}

/** A UDP datagram split into header and payload. */
export interface UdpDatagram {
  readonly header: UdpHeader;
  readonly payloadOffset: number;
  readonly payload: Uint8Array;
}

/** Decodes a UDP datagram; `pseudoHeader` enables checksum verification. */
export function decodeUdp(bytes: Uint8Array, pseudoHeader?: Uint8Array): DecodeResult<UdpDatagram> {
  const missing = transportHeaderMissing('udp', bytes, pseudoHeader, 8);
  if (missing !== undefined) return missing;
  const v = viewOf(bytes);
  const length = v.getUint16(4);
  if (length < 8) return failed(new DecodeError('udp', 'length', 4, 'bad-length', `${length} < 8`));
  if (length > bytes.length)
    return failed(new DecodeError('udp', 'length', 4, 'truncated', `${length} > ${bytes.length}`));
  const checksum = v.getUint16(6);
  let checksumValid: boolean | undefined;
  if (pseudoHeader !== undefined && checksum !== 0)
    checksumValid =
      finishChecksum(
        onesComplementSum(bytes.subarray(0, length), onesComplementSum(pseudoHeader)),
      ) === 0;
  return decoded({
    header: {
      sourcePort: v.getUint16(0),
      destinationPort: v.getUint16(2),
      length,
      checksum,
      checksumValid,
    },
    payloadOffset: 8,
    payload: bytes.subarray(8, length),
  });
}

/** Input of {@link encodeUdp}. */
export interface UdpFields {
  readonly sourcePort: number;
  readonly destinationPort: number;
  /** Overrides the computed checksum (0 = none, allowed over IPv4 only). */
  readonly checksum?: number;
}

/**
 * Encodes a UDP datagram. With a pseudo-header the checksum is computed (RFC 768: a
 * computed 0 is sent as 0xffff); without one it is 0 unless given.
 */
export function encodeUdp(
  h: UdpFields,
  payload: Uint8Array,
  pseudoHeader?: Uint8Array,
): Uint8Array {
  requireTransportArguments('udp', h, payload, pseudoHeader);
  if (h.checksum !== undefined && !inRange(h.checksum, 0xffff))
    throw new EncodeError('udp', 'checksum', 'not 16-bit');
  const length = 8 + payload.length;
  if (length > 0xffff) throw new EncodeError('udp', 'length', `${length} > 65535`);
  const out = new Uint8Array(length);
  const v = viewOf(out);
  v.setUint16(0, h.sourcePort);
  v.setUint16(2, h.destinationPort);
  v.setUint16(4, length);
  out.set(payload, 8);
  if (h.checksum !== undefined) v.setUint16(6, h.checksum);
  else if (pseudoHeader !== undefined) {
    const c = finishChecksum(onesComplementSum(out, onesComplementSum(pseudoHeader)));
    v.setUint16(6, c === 0 ? 0xffff : c);
  }
  return out;
}
