/**
 * IPv6 headers (RFC 8200) with skipping of the common extension headers (Hop-by-Hop,
 * Routing, Destination Options: length in 8-octet units after the first 8). A Fragment
 * header is reported, not reassembled.
 */

import { requireBytes } from '../../arguments.js';
import { requireFields, requirePayload } from '../encode-arguments.js';
import { DecodeError, type DecodeResult, decoded, EncodeError, failed } from '../errors.js';
import { formatIpv6, parseIpv6 } from './address.js';
import { inRange, viewOf } from './bytes.js';

/** Extension header numbers this decoder skips (RFC 8200 §4). */
const SKIPPABLE = new Set([0, 43, 60]);
/** The Fragment extension header (RFC 8200 §4.5). */
export const IPV6_FRAGMENT_HEADER = 44;
/** Bound on the number of extension headers walked, so the walk always ends early. */
const MAX_EXTENSION_HEADERS = 8;

/** A decoded IPv6 header. */
export interface Ipv6Header {
  readonly trafficClass: number;
  readonly flowLabel: number;
  readonly payloadLength: number;
  /** Next Header of the fixed header. */
  readonly nextHeader: number;
  readonly hopLimit: number;
  readonly source: string;
  readonly destination: string;
  /** Extension header types skipped, in order. */
  readonly extensionHeaders: readonly number[];
  /** The upper-layer protocol after the extension headers. */
  readonly upperProtocol: number;
}

/** An IPv6 packet split into header and upper-layer payload. */
export interface Ipv6Packet {
  readonly header: Ipv6Header;
  readonly payloadOffset: number;
  readonly payload: Uint8Array;
  readonly sourceBytes: Uint8Array;
  readonly destinationBytes: Uint8Array;
}

/** Decodes an IPv6 header and skips extension headers. */
export function decodeIpv6(bytes: Uint8Array): DecodeResult<Ipv6Packet> {
  requireBytes('codec', 'bytes', bytes);
  if (bytes.length < 40)
    return failed(new DecodeError('ipv6', 'header', 0, 'truncated', `${bytes.length} < 40`));
  const v = viewOf(bytes);
  const first = v.getUint32(0);
  if (first >>> 28 !== 6)
    return failed(new DecodeError('ipv6', 'version', 0, 'bad-value', `version ${first >>> 28}`));
  const payloadLength = v.getUint16(4);
  const end = 40 + payloadLength;
  if (end > bytes.length)
    return failed(
      new DecodeError('ipv6', 'payloadLength', 4, 'truncated', `${end} > ${bytes.length}`),
    );
  const nextHeader = bytes[6]!;
  const extensionHeaders: number[] = [];
  let protocol = nextHeader;
  let at = 40;
  while (SKIPPABLE.has(protocol) || protocol === IPV6_FRAGMENT_HEADER) {
    if (extensionHeaders.length === MAX_EXTENSION_HEADERS)
      return failed(new DecodeError('ipv6', 'extension', at, 'bad-value', 'too many headers'));
    if (at + 8 > end)
      return failed(new DecodeError('ipv6', 'extension', at, 'truncated', 'header cut short'));
    const length = protocol === IPV6_FRAGMENT_HEADER ? 8 : (bytes[at + 1]! + 1) * 8;
    if (at + length > end)
      return failed(new DecodeError('ipv6', 'extension', at + 1, 'truncated', 'length too big'));
    extensionHeaders.push(protocol);
    protocol = bytes[at]!;
    at += length;
  }
  const sourceBytes = bytes.slice(8, 24);
  const destinationBytes = bytes.slice(24, 40);
  return decoded({
    header: {
      trafficClass: (first >>> 20) & 0xff,
      flowLabel: first & 0xfffff,
      payloadLength,
      nextHeader,
      hopLimit: bytes[7]!,
      source: formatIpv6(sourceBytes),
      destination: formatIpv6(destinationBytes),
      extensionHeaders,
      upperProtocol: protocol,
    },
    payloadOffset: at,
    payload: bytes.subarray(at, end),
    sourceBytes,
    destinationBytes,
  });
}

/** Input of {@link encodeIpv6} (no extension headers). */
export interface Ipv6Fields {
  readonly source: string;
  readonly destination: string;
  readonly nextHeader: number;
  /** [64] */
  readonly hopLimit?: number;
  /** [0] */
  readonly trafficClass?: number;
  /** [0] */
  readonly flowLabel?: number;
}

/** Encodes an IPv6 packet without extension headers. */
export function encodeIpv6(h: Ipv6Fields, payload: Uint8Array): Uint8Array {
  requireFields('ipv6', 'fields', h);
  requirePayload('ipv6', 'payload', payload);
  const src = parseIpv6(h.source);
  const dst = parseIpv6(h.destination);
  const tc = h.trafficClass ?? 0;
  const flow = h.flowLabel ?? 0;
  const hop = h.hopLimit ?? 64;
  if (!inRange(tc, 255)) throw new EncodeError('ipv6', 'trafficClass', 'not 8-bit');
  if (!inRange(flow, 0xfffff)) throw new EncodeError('ipv6', 'flowLabel', 'not 20-bit');
  if (!inRange(hop, 255)) throw new EncodeError('ipv6', 'hopLimit', 'not 8-bit');
  if (!inRange(h.nextHeader, 255)) throw new EncodeError('ipv6', 'nextHeader', 'not 8-bit');
  if (payload.length > 0xffff) throw new EncodeError('ipv6', 'payloadLength', 'jumbograms');
  const out = new Uint8Array(40 + payload.length);
  const v = viewOf(out);
  v.setUint32(0, ((6 << 28) | (tc << 20) | flow) >>> 0);
  v.setUint16(4, payload.length);
  out[6] = h.nextHeader;
  out[7] = hop;
  out.set(src, 8);
  out.set(dst, 24);
  out.set(payload, 40);
  return out;
}
