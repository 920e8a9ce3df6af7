/**
 * Text forms of link and network addresses, as tshark prints them: MAC `aa:bb:cc:dd:ee:ff`,
 * IPv4 dotted quad, IPv6 in the RFC 5952 canonical form. Parsers throw `EncodeError`.
 */

import { requireBytes, requireString } from '../../arguments.js';
import { ArgumentError } from '../../errors.js';
import { EncodeError } from '../errors.js';

/** Two-digit lowercase hex of every byte value (formatting is on every frame's path). */
const HEX2: readonly string[] = Array.from({ length: 256 }, (_, b) =>
  b.toString(16).padStart(2, '0'),
);

/** `00:11:22:33:44:55` from six bytes (any length is accepted and joined the same way). */
export function formatMac(bytes: Uint8Array): string {
  requireBytes('codec', 'bytes', bytes);
  let out = '';
  for (let i = 0; i < bytes.length; i++) out += i === 0 ? HEX2[bytes[i]!] : `:${HEX2[bytes[i]!]}`;
  return out;
}

/** Six bytes from `00:11:22:33:44:55`. */
export function parseMac(text: string): Uint8Array {
  requireString('codec', 'text', text);
  const parts = text.split(':');
  if (parts.length !== 6 || parts.some((p) => !/^[0-9a-fA-F]{2}$/.test(p)))
    throw new EncodeError('ethernet', 'address', `not a MAC address: ${text}`);
  return Uint8Array.from(parts, (p) => Number.parseInt(p, 16));
}

/** `192.0.2.1` from four bytes. */
export function formatIpv4(bytes: Uint8Array): string {
  requireBytes('codec', 'bytes', bytes);
  if (bytes.length !== 4)
    throw new ArgumentError('codec', 'bytes', `${bytes.length} bytes, an IPv4 address has 4`);
  return `${bytes[0]}.${bytes[1]}.${bytes[2]}.${bytes[3]}`;
}

/** Four bytes from `192.0.2.1`. */
export function parseIpv4(text: string): Uint8Array {
  requireString('codec', 'text', text);
  const parts = text.split('.');
  if (parts.length !== 4 || parts.some((p) => !/^\d{1,3}$/.test(p) || Number(p) > 255))
    throw new EncodeError('ipv4', 'address', `not an IPv4 address: ${text}`);
  return Uint8Array.from(parts, Number);
}

/** RFC 5952 text form of sixteen bytes (longest run of >= 2 zero groups becomes `::`). */
export function formatIpv6(bytes: Uint8Array): string {
  requireBytes('codec', 'bytes', bytes);
  const groups: number[] = [];
  for (let i = 0; i < 16; i += 2) groups.push((bytes[i]! << 8) | bytes[i + 1]!);
  let bestStart = -1;
  let bestLen = 0;
  for (let i = 0; i < 8; ) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLen && j - i >= 2) {
      bestStart = i;
      bestLen = j - i;
    }
    i = j;
  }
  const hex = (g: number[]) => g.map((x) => x.toString(16)).join(':');
  if (bestStart < 0) return hex(groups);
  return `${hex(groups.slice(0, bestStart))}::${hex(groups.slice(bestStart + bestLen))}`;
}

/** Sixteen bytes from an IPv6 text form (no embedded IPv4, no zone). */
export function parseIpv6(text: string): Uint8Array {
  requireString('codec', 'text', text);
  const bad = () => new EncodeError('ipv6', 'address', `not an IPv6 address: ${text}`);
  const halves = text.split('::');
  if (halves.length > 2) throw bad();
  const parse = (s: string) => (s === '' ? [] : s.split(':'));
  const head = parse(halves[0]!);
  const tail = halves.length === 2 ? parse(halves[1]!) : [];
  const missing = 8 - head.length - tail.length;
  if ((halves.length === 1 && missing !== 0) || (halves.length === 2 && missing < 1)) throw bad();
  const groups = [...head, ...Array<string>(halves.length === 2 ? missing : 0).fill('0'), ...tail];
  const out = new Uint8Array(16);
  groups.forEach((g, i) => {
    if (!/^[0-9a-fA-F]{1,4}$/.test(g)) throw bad();
    const v = Number.parseInt(g, 16);
    out[2 * i] = v >> 8;
    out[2 * i + 1] = v & 0xff;
  });
  return out;
}
