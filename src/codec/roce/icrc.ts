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
 * The bytes the ICRC masks to ones (IBTA Annex A17.3.3), by header, as offsets from the
 * header's start; `ipv6FirstByte` masks the low nibble of IPv6 byte 0 (the traffic class's
 * high bits). computeRoceIcrc and the Wireshark plugin (src/wireshark/) both read this.
 */
export const ICRC_MASKED_BYTES = {
  /** Type of Service (DSCP + ECN), TTL, header checksum. */
  ipv4: [1, 8, 10, 11],
  /** Traffic class (low nibble), flow label, hop limit. */
  ipv6: [1, 2, 3, 7],
  ipv6FirstByte: 0x0f,
  /** The UDP checksum. */
  udp: [6, 7],
  /** BTH byte 4: FECN, BECN, resv6 ("resv8a"). */
  bth: [4],
} as const;

/** The pseudo LRH's length (IBTA Annex A17.3.3: 8 bytes of ones). */
export const ICRC_PSEUDO_LRH_LENGTH = PSEUDO_LRH.length;

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
    for (const i of ICRC_MASKED_BYTES.ipv4) masked[i] = 0xff;
  } else {
    masked[0] = masked[0]! | ICRC_MASKED_BYTES.ipv6FirstByte;
    for (const i of ICRC_MASKED_BYTES.ipv6) masked[i] = 0xff;
  }
  const udp = ipHeaderLength;
  for (const i of ICRC_MASKED_BYTES.udp) masked[udp + i] = 0xff;
  for (const i of ICRC_MASKED_BYTES.bth) masked[udp + 8 + i] = 0xff;
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
