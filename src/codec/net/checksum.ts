/**
 * The Internet checksum (RFC 1071): one's-complement sum of 16-bit big-endian words,
 * used by IPv4 (RFC 791), UDP (RFC 768) and TCP (RFC 9293) with the pseudo-header.
 */
import { requireBytes } from '../../arguments.js';

/** Adds `bytes` to a running one's-complement sum (not yet folded or inverted). */
export function onesComplementSum(bytes: Uint8Array, initial = 0): number {
  let sum = initial;
  const even = bytes.length & ~1;
  for (let i = 0; i < even; i += 2) sum += (bytes[i]! << 8) | bytes[i + 1]!;
  // RFC 1071 §4.1: an odd trailing byte is padded with a zero byte.
  if (even !== bytes.length) sum += bytes[even]! << 8;
  // Fold early so the number stays a small integer even for large inputs.
  while (sum > 0xffff) sum = (sum & 0xffff) + (sum >>> 16);
  return sum;
}

/** Folds and inverts a running sum into the 16-bit checksum field value. */
export function finishChecksum(sum: number): number {
  let s = sum;
  while (s > 0xffff) s = (s & 0xffff) + (s >>> 16);
  return ~s & 0xffff;
}

/** The Internet checksum of the concatenation of `parts`, each of even length but the last. */
export function internetChecksum(...parts: Uint8Array[]): number {
  parts.forEach((p, i) => {
    requireBytes('codec', `parts[${i}]`, p);
  });
  let sum = 0;
  for (const part of parts) sum = onesComplementSum(part, sum);
  return finishChecksum(sum);
}

/** The pseudo-header of UDP/TCP over IPv4 (RFC 768, RFC 9293 §3.1). */
export function ipv4PseudoHeader(
  source: Uint8Array,
  destination: Uint8Array,
  protocol: number,
  length: number,
): Uint8Array {
  const p = new Uint8Array(12);
  p.set(source, 0);
  p.set(destination, 4);
  p[9] = protocol;
  p[10] = (length >> 8) & 0xff;
  p[11] = length & 0xff;
  return p;
}

/** The pseudo-header of UDP/TCP over IPv6 (RFC 8200 §8.1). */
export function ipv6PseudoHeader(
  source: Uint8Array,
  destination: Uint8Array,
  nextHeader: number,
  length: number,
): Uint8Array {
  const p = new Uint8Array(40);
  p.set(source, 0);
  p.set(destination, 16);
  new DataView(p.buffer).setUint32(32, length >>> 0);
  p[39] = nextHeader;
  return p;
}
