/**
 * A whole RoCEv2 transport packet, i.e. the UDP payload (IBTA Annex A17.4): BTH, the
 * extension headers its opcode calls for (from the opcode table), payload, pad bytes
 * (BTH PadCnt) and the 4-byte ICRC.
 */
import { requireBytes } from '../../arguments.js';
import { DecodeError, type DecodeResult, decoded, EncodeError, failed } from '../errors.js';
import { type AethSyndrome, decodeAethSyndrome } from './aeth.js';
import { BTH_LENGTH, type Bth, type BthFields, decodeBth, makeBth, writeBth } from './bth.js';
import {
  decodeExtensionHeader,
  type ExtensionHeaders,
  type ExtensionHeaderValue,
  writeExtensionHeader,
} from './headers.js';
import {
  type BthOpcodeInfo,
  bthOpcodeInfo,
  EXTENSION_HEADER_LENGTH,
  type ExtensionHeader,
} from './opcodes.js';

/** The UDP destination port of RoCEv2 (IANA "roce"). */
export const ROCE_V2_UDP_PORT = 4791;
/** Length of the ICRC trailer. */
export const ICRC_LENGTH = 4;

/** A decoded RoCEv2 transport packet. */
export interface RocePacket {
  readonly bth: Bth;
  /** The opcode table row for `bth.opcode`. */
  readonly opcode: BthOpcodeInfo;
  readonly headers: ExtensionHeaders;
  /** The AETH syndrome decoded to names, when the packet has an AETH. */
  readonly aethSyndrome?: AethSyndrome;
  /** Payload without pad bytes. */
  readonly payload: Uint8Array;
  /** The PadCnt pad bytes (normally zero). */
  readonly pad: Uint8Array;
  /** The ICRC as transmitted (read little-endian). */
  readonly icrc: number;
}

/**
 * Decodes a RoCEv2 transport packet (the UDP payload). Offsets in errors are relative to
 * the UDP payload. The ICRC is not verified here: it covers the IP and UDP headers, see
 * `checkRoceIcrc`.
 */
export function decodeRocePacket(bytes: Uint8Array): DecodeResult<RocePacket> {
  requireBytes('codec', 'bytes', bytes);
  const bth = decodeBth(bytes);
  if (!bth.ok) return bth;
  const info = bthOpcodeInfo(bth.value.opcode);
  if (info === undefined)
    return failed(
      new DecodeError(
        'bth',
        'opcode',
        0,
        'unknown-opcode',
        `0x${bth.value.opcode.toString(16).padStart(2, '0')} is reserved`,
      ),
    );
  let at = BTH_LENGTH;
  const headers: Record<string, unknown> = {};
  let aethSyndrome: AethSyndrome | undefined;
  for (const h of info.headers) {
    const value = decodeExtensionHeader(h, bytes, at);
    if (!value.ok) return value;
    headers[h] = value.value;
    if (h === 'AETH') {
      const s = decodeAethSyndrome((value.value as ExtensionHeaderValue<'AETH'>).syndrome, at);
      if (!s.ok) return s;
      aethSyndrome = s.value;
    }
    at += EXTENSION_HEADER_LENGTH[h];
  }
  if (bytes.length < at + ICRC_LENGTH)
    return failed(new DecodeError('roce', 'icrc', at, 'truncated', 'no room for the ICRC'));
  const end = bytes.length - ICRC_LENGTH;
  const padCount = bth.value.padCount;
  if ((end - BTH_LENGTH) % 4 !== 0)
    return failed(
      new DecodeError('roce', 'payload', at, 'bad-length', 'packet is not a multiple of 4 bytes'),
    );
  if (end - at < padCount)
    return failed(new DecodeError('bth', 'padCount', 1, 'bad-length', `no room for ${padCount}`));
  if (!info.hasPayload && end !== at)
    return failed(
      new DecodeError('roce', 'payload', at, 'bad-length', `${info.name} carries no payload`),
    );
  const packet: { -readonly [K in keyof RocePacket]: RocePacket[K] } = {
    bth: bth.value,
    opcode: info,
    headers: headers as ExtensionHeaders,
    payload: bytes.subarray(at, end - padCount),
    pad: bytes.subarray(end - padCount, end),
    // The ICRC is stored least significant byte first (rxe_icrc.c).
    icrc:
      (bytes[end]! | (bytes[end + 1]! << 8) | (bytes[end + 2]! << 16) | (bytes[end + 3]! << 24)) >>>
      0,
  };
  // Set only when present (no spread of a temporary object on this per-packet path).
  if (aethSyndrome !== undefined) packet.aethSyndrome = aethSyndrome;
  return decoded(packet);
}

/** Input of {@link encodeRocePacket}. */
export interface RocePacketFields {
  /** PadCnt is computed from the payload when omitted. */
  readonly bth: BthFields;
  /** Exactly the extension headers the opcode calls for. */
  readonly headers: ExtensionHeaders;
  /** [empty] */
  readonly payload?: Uint8Array;
  /** Pad byte values; zeros when omitted. */
  readonly pad?: Uint8Array;
  /** The ICRC to write [0]; frame builders compute the real one. */
  readonly icrc?: number;
}

/**
 * Encodes a RoCEv2 transport packet (UDP payload). Throws `EncodeError` for a reserved
 * opcode, missing or extra extension headers, out-of-range fields, or a payload on an
 * opcode that carries none.
 */
export function encodeRocePacket(p: RocePacketFields): Uint8Array {
  if (typeof p !== 'object' || p === null) throw new EncodeError('roce', 'packet', 'not an object');
  if (typeof p.bth !== 'object' || p.bth === null)
    throw new EncodeError('bth', 'header', 'not an object');
  if (typeof p.headers !== 'object' || p.headers === null)
    throw new EncodeError('roce', 'headers', 'not an object');
  for (const field of ['payload', 'pad'] as const) {
    const value = p[field];
    if (value !== undefined && !(value instanceof Uint8Array))
      throw new EncodeError('roce', field, 'not a Uint8Array');
  }
  for (const [name, value] of Object.entries(p.headers)) {
    if (typeof value !== 'object' || value === null)
      throw new EncodeError('roce', name, 'not an object of header fields');
  }
  const info = bthOpcodeInfo(p.bth.opcode);
  if (info === undefined) throw new EncodeError('bth', 'opcode', `${p.bth.opcode} is reserved`);
  const payload = p.payload ?? new Uint8Array(0);
  if (!info.hasPayload && payload.length > 0)
    throw new EncodeError('roce', 'payload', `${info.name} carries no payload`);
  const padCount = p.bth.padCount ?? (4 - (payload.length % 4)) % 4;
  if (!Number.isInteger(padCount) || padCount < 0 || padCount > 3)
    throw new EncodeError('bth', 'padCount', `${String(padCount)} not in 0..3`);
  const bth = makeBth({ ...p.bth, padCount });
  if ((payload.length + padCount) % 4 !== 0)
    throw new EncodeError('bth', 'padCount', `${padCount} does not round ${payload.length} to 4`);
  const pad = p.pad ?? new Uint8Array(padCount);
  if (pad.length !== padCount) throw new EncodeError('roce', 'pad', 'length must equal PadCnt');
  for (const key of Object.keys(p.headers))
    if (!info.headers.includes(key as ExtensionHeader))
      throw new EncodeError('roce', key, `${info.name} does not carry ${key}`);
  let length = BTH_LENGTH;
  for (const h of info.headers) {
    if (p.headers[h] === undefined) throw new EncodeError('roce', h, `${info.name} needs ${h}`);
    length += EXTENSION_HEADER_LENGTH[h];
  }
  const icrc = p.icrc ?? 0;
  if (!Number.isInteger(icrc) || icrc < 0 || icrc > 0xffffffff)
    throw new EncodeError('roce', 'icrc', `${icrc} not u32`);
  const out = new Uint8Array(length + payload.length + padCount + ICRC_LENGTH);
  writeBth(bth, out, 0);
  let at = BTH_LENGTH;
  for (const h of info.headers) {
    writeExtensionHeader(h, p.headers[h] as ExtensionHeaderValue<typeof h>, out, at);
    at += EXTENSION_HEADER_LENGTH[h];
  }
  out.set(payload, at);
  out.set(pad, at + payload.length);
  new DataView(out.buffer).setUint32(out.length - ICRC_LENGTH, icrc, true);
  return out;
}
