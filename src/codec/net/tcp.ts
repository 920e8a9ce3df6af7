/**
 * TCP segment headers (RFC 9293 §3.1): ports, sequence and acknowledgement numbers,
 * flags, window, urgent pointer, options (parsed into kind/data records, bounded by the
 * header). The checksum is verified against a caller-supplied pseudo-header and reported.
 */

import { DecodeError, type DecodeResult, decoded, EncodeError, failed } from '../errors.js';
import { inRange, viewOf } from './bytes.js';
import { finishChecksum, onesComplementSum } from './checksum.js';
import { requireTransportArguments, transportHeaderMissing } from './transport-arguments.js';

/** TCP flag bits (RFC 9293 §3.1, RFC 3168 for CWR/ECE). */
export const TcpFlag = {
  FIN: 0x01,
  SYN: 0x02,
  RST: 0x04,
  PSH: 0x08,
  ACK: 0x10,
  URG: 0x20,
  ECE: 0x40,
  CWR: 0x80,
} as const;

/** One TCP option: kind and its data (without kind and length bytes). */
export interface TcpOption {
  readonly kind: number;
  readonly data: Uint8Array;
}

/** A decoded TCP header. */
export interface TcpHeader {
  readonly sourcePort: number;
  readonly destinationPort: number;
  /** Unsigned 32-bit. */
  readonly sequenceNumber: number;
  readonly acknowledgementNumber: number;
  readonly headerLength: number;
  /** Bits of {@link TcpFlag}. */
  readonly flags: number;
  readonly window: number;
  readonly checksum: number;
  /** `undefined` without a pseudo-header. */
  readonly checksumValid: boolean | undefined;
  readonly urgentPointer: number;
  readonly options: readonly TcpOption[];
}

/** A TCP segment split into header and payload. */
export interface TcpSegment {
  readonly header: TcpHeader;
  readonly payloadOffset: number;
  readonly payload: Uint8Array;
}

/** Parses the options area; options are bounded by the area, so the loop always ends. */
function decodeOptions(area: Uint8Array, base: number): DecodeResult<TcpOption[]> {
  const options: TcpOption[] = [];
  let at = 0;
  while (at < area.length) {
    const kind = area[at]!;
    if (kind === 0) break; // End of Option List
    if (kind === 1) {
      options.push({ kind, data: new Uint8Array(0) });
      at += 1;
      continue;
    }
    if (at + 1 >= area.length)
      return failed(new DecodeError('tcp', 'option.length', base + at, 'truncated', 'no length'));
    const length = area[at + 1]!;
    if (length < 2 || at + length > area.length)
      return failed(
        new DecodeError('tcp', 'option.length', base + at + 1, 'bad-length', `length ${length}`),
      );
    options.push({ kind, data: area.slice(at + 2, at + length) });
    at += length;
  }
  return decoded(options);
}

/** Decodes a TCP segment (`bytes` is the IP payload); `pseudoHeader` enables checksum checks. */
export function decodeTcp(bytes: Uint8Array, pseudoHeader?: Uint8Array): DecodeResult<TcpSegment> {
  const missing = transportHeaderMissing('tcp', bytes, pseudoHeader, 20);
  if (missing !== undefined) return missing;
  const v = viewOf(bytes);
  const headerLength = (bytes[12]! >> 4) * 4;
  if (headerLength < 20)
    return failed(new DecodeError('tcp', 'dataOffset', 12, 'bad-length', `${headerLength} < 20`));
  if (headerLength > bytes.length)
    return failed(new DecodeError('tcp', 'options', 20, 'truncated', `needs ${headerLength}`));
  const options = decodeOptions(bytes.subarray(20, headerLength), 20);
  if (!options.ok) return options;
  const checksumValid =
    pseudoHeader === undefined
      ? undefined
      : finishChecksum(onesComplementSum(bytes, onesComplementSum(pseudoHeader))) === 0;
  return decoded({
    header: {
      sourcePort: v.getUint16(0),
      destinationPort: v.getUint16(2),
      sequenceNumber: v.getUint32(4),
      acknowledgementNumber: v.getUint32(8),
      headerLength,
      flags: bytes[13]!,
      window: v.getUint16(14),
      checksum: v.getUint16(16),
      checksumValid,
      urgentPointer: v.getUint16(18),
      options: options.value,
    },
    payloadOffset: headerLength,
    payload: bytes.subarray(headerLength),
  });
}

/** Input of {@link encodeTcp}. */
export interface TcpFields {
  readonly sourcePort: number;
  readonly destinationPort: number;
  readonly sequenceNumber: number;
  /** [0] */
  readonly acknowledgementNumber?: number;
  /** Bits of {@link TcpFlag}. [ACK] */
  readonly flags?: number;
  /** [65535] */
  readonly window?: number;
  /** [0] */
  readonly urgentPointer?: number;
  /** Encoded in order, then padded with End of Option List to a multiple of 4. [none] */
  readonly options?: readonly TcpOption[];
  /** Overrides the computed checksum. */
  readonly checksum?: number;
}

/** Encodes a TCP segment; the checksum is computed when a pseudo-header is given. */
export function encodeTcp(
  h: TcpFields,
  payload: Uint8Array,
  pseudoHeader?: Uint8Array,
): Uint8Array {
  requireTransportArguments('tcp', h, payload, pseudoHeader);
  const ack = h.acknowledgementNumber ?? 0;
  const flags = h.flags ?? TcpFlag.ACK;
  const window = h.window ?? 0xffff;
  const urgent = h.urgentPointer ?? 0;
  if (!inRange(h.sequenceNumber, 0xffffffff))
    throw new EncodeError('tcp', 'sequenceNumber', 'not 32-bit');
  if (!inRange(ack, 0xffffffff))
    throw new EncodeError('tcp', 'acknowledgementNumber', 'not 32-bit');
  if (!inRange(flags, 0xff)) throw new EncodeError('tcp', 'flags', 'not 8-bit');
  if (!inRange(window, 0xffff)) throw new EncodeError('tcp', 'window', 'not 16-bit');
  if (!inRange(urgent, 0xffff)) throw new EncodeError('tcp', 'urgentPointer', 'not 16-bit');
  if (h.checksum !== undefined && !inRange(h.checksum, 0xffff))
    throw new EncodeError('tcp', 'checksum', 'not 16-bit');
  let optionLength = 0;
  for (const o of h.options ?? []) {
    if (!inRange(o.kind, 255)) throw new EncodeError('tcp', 'option.kind', 'not 8-bit');
    if (o.kind <= 1 && o.data.length > 0)
      throw new EncodeError('tcp', 'option.data', 'EOL/NOP carry no data');
    if (o.data.length > 253) throw new EncodeError('tcp', 'option.data', 'too long');
    optionLength += o.kind <= 1 ? 1 : 2 + o.data.length;
  }
  const headerLength = 20 + Math.ceil(optionLength / 4) * 4;
  if (headerLength > 60) throw new EncodeError('tcp', 'options', 'more than 40 bytes');
  const out = new Uint8Array(headerLength + payload.length);
  const v = viewOf(out);
  v.setUint16(0, h.sourcePort);
  v.setUint16(2, h.destinationPort);
  v.setUint32(4, h.sequenceNumber);
  v.setUint32(8, ack);
  out[12] = (headerLength / 4) << 4;
  out[13] = flags;
  v.setUint16(14, window);
  v.setUint16(18, urgent);
  let at = 20;
  for (const o of h.options ?? []) {
    out[at++] = o.kind;
    if (o.kind > 1) {
      out[at++] = 2 + o.data.length;
      out.set(o.data, at);
      at += o.data.length;
    }
  }
  out.set(payload, headerLength);
  if (h.checksum !== undefined) v.setUint16(16, h.checksum);
  else if (pseudoHeader !== undefined)
    v.setUint16(16, finishChecksum(onesComplementSum(out, onesComplementSum(pseudoHeader))));
  return out;
}
