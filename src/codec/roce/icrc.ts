/**
 * The RoCEv2 Invariant CRC (IBTA Annex A17.3.3; Linux drivers/infiniband/sw/rxe/rxe_icrc.c
 * computes the same): CRC-32 with the Ethernet polynomial over
 *   8 bytes of 0xff (the "pseudo LRH" that RoCEv2 does not carry),
 *   the IP header with the fields that routers may change masked to ones
 *     (IPv4: Type of Service, TTL, header checksum; IPv6: traffic class, flow label,
 *     hop limit),
 *   the UDP header with its checksum masked to ones,
 *   the BTH with byte 4 (FECN, BECN, reserved bits; "resv8a") masked to ones,
 *   then the remaining transport headers, payload and pad bytes unchanged.
 * The CRC is transmitted least significant byte first (like the Ethernet FCS): it is
 * read and written little-endian.
 */

import { crc32 } from 'node:zlib';
import { requireBytes, requireInteger } from '../../arguments.js';
import { DecodeError, type DecodeResult, decoded, failed } from '../errors.js';

/** Bytes of 0xff standing in for the LRH (IBTA Annex A17.3.3). */
const PSEUDO_LRH = new Uint8Array(8).fill(0xff);

/**
 * The ICRC of a RoCEv2 packet. `ipPacket` starts at the IP header (version 4 or 6) and
 * ends just before the ICRC; `ipHeaderLength` is 20+options for IPv4, 40 for IPv6 (RoCEv2
 * IPv6 packets carry no extension headers). The input is not modified.
 */
export function computeRoceIcrc(ipPacket: Uint8Array, ipHeaderLength: number): number {
  requireBytes('codec', 'ipPacket', ipPacket);
  requireInteger('codec', 'ipHeaderLength', ipHeaderLength, 0, ipPacket.length);
  const masked = ipPacket.slice(0, ipHeaderLength + 8 + 12);
  const version = masked[0]! >> 4;
  if (version === 4) {
    masked[1] = 0xff; // Type of Service (DSCP + ECN)
    masked[8] = 0xff; // TTL
    masked[10] = 0xff; // header checksum
    masked[11] = 0xff;
  } else {
    // Traffic class (low nibble of byte 0, high nibble of byte 1) and flow label.
    masked[0] = (masked[0]! & 0xf0) | 0x0f;
    masked[1] = 0xff;
    masked[2] = 0xff;
    masked[3] = 0xff;
    masked[7] = 0xff; // hop limit
  }
  const udp = ipHeaderLength;
  masked[udp + 6] = 0xff; // UDP checksum
  masked[udp + 7] = 0xff;
  masked[udp + 8 + 4] = 0xff; // BTH byte 4: FECN, BECN, resv6
  let crc = crc32(PSEUDO_LRH);
  crc = crc32(masked, crc);
  crc = crc32(ipPacket.subarray(masked.length), crc);
  return crc >>> 0;
}

/** The stored and the computed ICRC of a RoCEv2 packet that ends with its ICRC. */
export interface IcrcCheck {
  readonly stored: number;
  readonly computed: number;
  readonly valid: boolean;
}

/** Bytes of the UDP header and the BTH, which the ICRC masks partly. */
const UDP_AND_BTH_LENGTH = 8 + 12;
const ICRC_FIELD_LENGTH = 4;

/**
 * Checks the ICRC of `ipPacket` (IP header through ICRC). A packet too short to hold the
 * IP header, the UDP header, the BTH and the 4-byte ICRC, or an IP header length that is
 * not 20 to 60 (IPv4) or 40 (IPv6), is a DecodeError, never an exception.
 */
export function checkRoceIcrc(
  ipPacket: Uint8Array,
  ipHeaderLength: number,
): DecodeResult<IcrcCheck> {
  if (!Number.isInteger(ipHeaderLength) || ipHeaderLength < 20 || ipHeaderLength > 60)
    return failed(
      new DecodeError(
        'roce',
        'ipHeaderLength',
        0,
        'bad-value',
        `${ipHeaderLength} is not an IP header length`,
      ),
    );
  const needed = ipHeaderLength + UDP_AND_BTH_LENGTH + ICRC_FIELD_LENGTH;
  if (ipPacket.length < needed)
    return failed(
      new DecodeError(
        'roce',
        'icrc',
        ipPacket.length,
        'truncated',
        `${ipPacket.length} bytes, the IP, UDP and BT headers and the ICRC need ${needed}`,
      ),
    );
  const end = ipPacket.length - ICRC_FIELD_LENGTH;
  const stored = new DataView(ipPacket.buffer, ipPacket.byteOffset + end, 4).getUint32(0, true);
  const computed = computeRoceIcrc(ipPacket.subarray(0, end), ipHeaderLength);
  return decoded({ stored, computed, valid: stored === computed });
}
