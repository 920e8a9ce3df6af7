/**
 * IPv4 headers (RFC 791). Options are kept as raw bytes; the header checksum is verified
 * and reported, not enforced (sender-side captures carry offloaded checksums).
 * Fragments decode as headers; the frame decoder refuses to interpret their payload.
 */

import { requireBytes } from '../../arguments.js';
import { requireFields, requirePayload } from '../encode-arguments.js';
import { DecodeError, type DecodeResult, decoded, EncodeError, failed } from '../errors.js';
import { formatIpv4, parseIpv4 } from './address.js';
import { inRange, viewOf } from './bytes.js';
import { internetChecksum } from './checksum.js';

/** IP protocol numbers this codec follows (IANA). */
export const IpProtocol = {
  TCP: 6,
  UDP: 17,
} as const;

/** A decoded IPv4 header. */
export interface Ipv4Header {
  /** Header length in bytes (IHL * 4). */
  readonly headerLength: number;
  /** Differentiated Services code point (6 bits, RFC 2474). */
  readonly dscp: number;
  /** Explicit Congestion Notification (2 bits, RFC 3168). */
  readonly ecn: number;
  readonly totalLength: number;
  readonly identification: number;
  readonly dontFragment: boolean;
  readonly moreFragments: boolean;
  /** Reserved flag bit (must be zero, RFC 791 §3.1). */
  readonly reservedFlag: boolean;
  /** In 8-byte units. */
  readonly fragmentOffset: number;
  readonly ttl: number;
  readonly protocol: number;
  readonly checksum: number;
  /** Whether `checksum` matches the header. */
  readonly checksumValid: boolean;
  readonly source: string;
  readonly destination: string;
  readonly options: Uint8Array;
}

/** An IPv4 packet split into header and payload. */
export interface Ipv4Packet {
  readonly header: Ipv4Header;
  readonly payloadOffset: number;
  /** The payload up to `totalLength` (Ethernet padding excluded). */
  readonly payload: Uint8Array;
  /** Raw source and destination addresses, for pseudo-headers. */
  readonly sourceBytes: Uint8Array;
  readonly destinationBytes: Uint8Array;
}

/** True when the packet is a fragment (MF set or a non-zero offset). */
export function isIpv4Fragment(h: Ipv4Header): boolean {
  return h.moreFragments || h.fragmentOffset !== 0;
}

/** Decodes an IPv4 header and delimits its payload by Total Length. */
export function decodeIpv4(bytes: Uint8Array): DecodeResult<Ipv4Packet> {
  requireBytes('codec', 'bytes', bytes);
  if (bytes.length < 20)
    return failed(new DecodeError('ipv4', 'header', 0, 'truncated', `${bytes.length} < 20`));
  const v = viewOf(bytes);
  const version = bytes[0]! >> 4;
  if (version !== 4)
    return failed(new DecodeError('ipv4', 'version', 0, 'bad-value', `version ${version}`));
  const headerLength = (bytes[0]! & 0xf) * 4;
  if (headerLength < 20)
    return failed(new DecodeError('ipv4', 'ihl', 0, 'bad-length', `IHL ${headerLength / 4} < 5`));
  if (bytes.length < headerLength)
    return failed(
      new DecodeError('ipv4', 'options', 20, 'truncated', `header needs ${headerLength} bytes`),
    );
  const totalLength = v.getUint16(2);
  if (totalLength < headerLength)
    return failed(
      new DecodeError('ipv4', 'totalLength', 2, 'bad-length', `${totalLength} < header`),
    );
  if (totalLength > bytes.length)
    return failed(
      new DecodeError('ipv4', 'totalLength', 2, 'truncated', `${totalLength} > ${bytes.length}`),
    );
  const flagsFrag = v.getUint16(6);
  const sourceBytes = bytes.slice(12, 16);
  const destinationBytes = bytes.slice(16, 20);
  return decoded({
    header: {
      headerLength,
      dscp: bytes[1]! >> 2,
      ecn: bytes[1]! & 0x3,
      totalLength,
      identification: v.getUint16(4),
      reservedFlag: (flagsFrag & 0x8000) !== 0,
      dontFragment: (flagsFrag & 0x4000) !== 0,
      moreFragments: (flagsFrag & 0x2000) !== 0,
      fragmentOffset: flagsFrag & 0x1fff,
      ttl: bytes[8]!,
      protocol: bytes[9]!,
      checksum: v.getUint16(10),
      checksumValid: internetChecksum(bytes.subarray(0, headerLength)) === 0,
      source: formatIpv4(sourceBytes),
      destination: formatIpv4(destinationBytes),
      options: bytes.slice(20, headerLength),
    },
    payloadOffset: headerLength,
    payload: bytes.subarray(headerLength, totalLength),
    sourceBytes,
    destinationBytes,
  });
}

/** Input of {@link encodeIpv4}. Omitted fields take the defaults in brackets. */
export interface Ipv4Fields {
  readonly source: string;
  readonly destination: string;
  readonly protocol: number;
  /** [64] */
  readonly ttl?: number;
  /** [0] */
  readonly dscp?: number;
  /** [0] */
  readonly ecn?: number;
  /** [0] */
  readonly identification?: number;
  /** [true] */
  readonly dontFragment?: boolean;
  /** [false] */
  readonly moreFragments?: boolean;
  /** [0], in 8-byte units */
  readonly fragmentOffset?: number;
  /** Raw options, padded by the caller to a multiple of 4 bytes. [none] */
  readonly options?: Uint8Array;
  /** Overrides the computed checksum (to write captures with bad checksums). */
  readonly checksum?: number;
}

/** Encodes an IPv4 packet; Total Length and checksum are computed. */
export function encodeIpv4(h: Ipv4Fields, payload: Uint8Array): Uint8Array {
  requireFields('ipv4', 'fields', h);
  requirePayload('ipv4', 'payload', payload);
  const src = parseIpv4(h.source);
  const dst = parseIpv4(h.destination);
  const options = h.options ?? new Uint8Array(0);
  const ttl = h.ttl ?? 64;
  const dscp = h.dscp ?? 0;
  const ecn = h.ecn ?? 0;
  const id = h.identification ?? 0;
  const fragOff = h.fragmentOffset ?? 0;
  if (options.length % 4 !== 0 || options.length > 40)
    throw new EncodeError('ipv4', 'options', 'length must be a multiple of 4, at most 40');
  const headerLength = 20 + options.length;
  const total = headerLength + payload.length;
  if (total > 0xffff) throw new EncodeError('ipv4', 'totalLength', `${total} > 65535`);
  if (!inRange(h.protocol, 255)) throw new EncodeError('ipv4', 'protocol', 'not 8-bit');
  if (!inRange(ttl, 255)) throw new EncodeError('ipv4', 'ttl', 'not 8-bit');
  if (!inRange(dscp, 63)) throw new EncodeError('ipv4', 'dscp', 'not 6-bit');
  if (!inRange(ecn, 3)) throw new EncodeError('ipv4', 'ecn', 'not 2-bit');
  if (!inRange(id, 0xffff)) throw new EncodeError('ipv4', 'identification', 'not 16-bit');
  if (!inRange(fragOff, 0x1fff)) throw new EncodeError('ipv4', 'fragmentOffset', 'not 13-bit');
  if (h.checksum !== undefined && !inRange(h.checksum, 0xffff))
    throw new EncodeError('ipv4', 'checksum', 'not 16-bit');
  const out = new Uint8Array(total);
  const v = viewOf(out);
  out[0] = 0x40 | (headerLength / 4);
  out[1] = (dscp << 2) | ecn;
  v.setUint16(2, total);
  v.setUint16(4, id);
  v.setUint16(
    6,
    ((h.dontFragment ?? true) ? 0x4000 : 0) | ((h.moreFragments ?? false) ? 0x2000 : 0) | fragOff,
  );
  out[8] = ttl;
  out[9] = h.protocol;
  out.set(src, 12);
  out.set(dst, 16);
  out.set(options, 20);
  v.setUint16(10, h.checksum ?? internetChecksum(out.subarray(0, headerLength)));
  out.set(payload, headerLength);
  return out;
}
