/**
 * MPA FPDUs (RFC 5044 §4): ULPDU Length (16 bits), ULPDU, pad to a multiple of 4, CRC32c;
 * and markers (RFC 5044 §5): a 4-byte marker (16 reserved bits, 16-bit FPDUPTR) at every
 * 512 octets of TCP sequence space counted from the first FPDU of the direction.
 *
 * Positions: `position` is the offset, in the marked stream, of a byte from the first
 * octet of the first FPDU of this direction (TCP sequence minus the first FPDU's sequence).
 * A marker sits at every position that is a multiple of 512, so the first FPDU starts
 * with one. A marker that falls at the start of an FPDU belongs to that FPDU (it precedes
 * the ULPDU Length; FPDUPTR 0) and, like every marker inside the FPDU, is covered by the
 * FPDU's CRC (the CRC is computed over the FPDU as sent, markers included; Wireshark's
 * packet-iwarp-mpa.c checks it the same way).
 */
import { crc32c } from '../crc32c.js';
import { DecodeError, type DecodeResult, decoded, EncodeError, failed } from '../errors.js';
import type { MpaCrcState, MpaFpdu, MpaMarker } from './messages.js';
import { checkBytes, readU16, readU32, writeU16 } from './wire.js';

/**
 * The CRC field carries the CRC32c value least significant byte first, the iSCSI
 * convention MPA adopts (RFC 3720 §12.1 and its B.4 vectors; RFC 5044 §4.4). Linux siw
 * writes it with the crypto API's little-endian final, and Wireshark checks it the same way.
 */
function writeCrcField(b: Uint8Array, at: number, crc: number): void {
  b[at] = crc & 0xff;
  b[at + 1] = (crc >>> 8) & 0xff;
  b[at + 2] = (crc >>> 16) & 0xff;
  b[at + 3] = crc >>> 24;
}

/** The CRC32c value a CRC field holds (see `writeCrcField`). */
export function crcFieldValue(field: number): number {
  return (
    (((field & 0xff) << 24) |
      ((field & 0xff00) << 8) |
      ((field >>> 8) & 0xff00) |
      (field >>> 24)) >>>
    0
  );
}

/** Marker spacing in TCP sequence space (RFC 5044 §5). */
export const MPA_MARKER_INTERVAL = 512;
/** Marker length: 16 reserved bits and the 16-bit FPDUPTR. */
export const MPA_MARKER_LENGTH = 4;
/** ULPDU Length field length. */
export const MPA_ULPDU_LENGTH_LENGTH = 2;
/** CRC field length. */
export const MPA_CRC_LENGTH = 4;
/** FPDUs are padded to this alignment (RFC 5044 §4.3). */
export const MPA_ALIGNMENT = 4;
/** The largest ULPDU the 16-bit length field can describe. */
export const MPA_MAX_ULPDU_LENGTH = 0xffff;

/** Options of FPDU encoding and decoding for one direction. */
export interface FpduOptions {
  /** CRC in use (RFC 5044 §7.1: negotiated by the C bits); when false the CRC field is zero. */
  readonly crc: boolean;
  /** Markers in use for this direction. */
  readonly markers: boolean;
  /** Position of the FPDU's first byte (see the module comment); default 0. Only used with markers. */
  readonly position?: number;
}

/** Pad length for a ULPDU of `ulpduLength` bytes (RFC 5044 §4.3: length field + ULPDU + pad ≡ 0 mod 4). */
export function mpaPadLength(ulpduLength: number): number {
  return (
    (MPA_ALIGNMENT - ((ulpduLength + MPA_ULPDU_LENGTH_LENGTH) % MPA_ALIGNMENT)) % MPA_ALIGNMENT
  );
}

/** Number of marker bytes inserted in `length` unmarked bytes starting at `position`. */
function markedLength(position: number, unmarkedLength: number): number {
  let pos = position;
  let left = unmarkedLength;
  let total = 0;
  while (left > 0) {
    if (pos % MPA_MARKER_INTERVAL === 0) {
      pos += MPA_MARKER_LENGTH;
      total += MPA_MARKER_LENGTH;
    }
    const chunk = Math.min(left, MPA_MARKER_INTERVAL - (pos % MPA_MARKER_INTERVAL));
    pos += chunk;
    total += chunk;
    left -= chunk;
  }
  return total;
}

/**
 * Encodes one FPDU carrying `ulpdu`, with markers inserted when `options.markers` (the
 * result's length then depends on `options.position`). The next FPDU's position is
 * `position + result.length`.
 */
export function encodeFpdu(ulpdu: Uint8Array, options: FpduOptions): Uint8Array {
  checkBytes('mpa', 'ulpdu', ulpdu);
  if (ulpdu.length > MPA_MAX_ULPDU_LENGTH) {
    throw new EncodeError('mpa', 'ulpduLength', `${ulpdu.length} bytes do not fit 16 bits`);
  }
  const position = options.position ?? 0;
  if (!Number.isInteger(position) || position < 0) {
    throw new EncodeError('mpa', 'position', `${String(position)} is not a non-negative integer`);
  }
  const pad = mpaPadLength(ulpdu.length);
  const bodyLength = MPA_ULPDU_LENGTH_LENGTH + ulpdu.length + pad;
  if (!options.markers) {
    const out = new Uint8Array(bodyLength + MPA_CRC_LENGTH);
    writeU16(out, 0, ulpdu.length);
    out.set(ulpdu, MPA_ULPDU_LENGTH_LENGTH);
    if (options.crc) writeCrcField(out, bodyLength, crc32c(out.subarray(0, bodyLength)));
    return out;
  }
  // Unmarked body (length, ULPDU, pad), then copy it in around the markers.
  const body = new Uint8Array(bodyLength);
  writeU16(body, 0, ulpdu.length);
  body.set(ulpdu, MPA_ULPDU_LENGTH_LENGTH);
  const markedBody = markedLength(position, bodyLength);
  // A marker may also fall right before the CRC (Wireshark's pad_offset covers this case).
  const crcPos = position + markedBody;
  const crcMarker = crcPos % MPA_MARKER_INTERVAL === 0 ? MPA_MARKER_LENGTH : 0;
  const out = new Uint8Array(markedBody + crcMarker + MPA_CRC_LENGTH);
  let pos = position;
  let o = 0;
  let i = 0;
  const putMarker = (): void => {
    // RFC 5044 §5: FPDUPTR = octets from the FPDU's first octet to the marker.
    writeU16(out, o, 0);
    writeU16(out, o + 2, pos - position);
    o += MPA_MARKER_LENGTH;
    pos += MPA_MARKER_LENGTH;
  };
  while (i < bodyLength) {
    if (pos % MPA_MARKER_INTERVAL === 0) putMarker();
    const chunk = Math.min(bodyLength - i, MPA_MARKER_INTERVAL - (pos % MPA_MARKER_INTERVAL));
    out.set(body.subarray(i, i + chunk), o);
    o += chunk;
    pos += chunk;
    i += chunk;
  }
  if (crcMarker > 0) putMarker();
  if (options.crc) writeCrcField(out, o, crc32c(out.subarray(0, o)));
  return out;
}

/** Encodes several FPDUs back to back, returning each one (e.g. one per TCP segment). */
export function encodeFpdus(ulpdus: readonly Uint8Array[], options: FpduOptions): Uint8Array[] {
  let position = options.position ?? 0;
  const out: Uint8Array[] = [];
  for (const ulpdu of ulpdus) {
    const fpdu = encodeFpdu(ulpdu, { ...options, position });
    out.push(fpdu);
    position += fpdu.length;
  }
  return out;
}

/** One FPDU decoded from a stream. */
export interface DecodedFpdu {
  readonly fpdu: MpaFpdu;
  /** Markers inside this FPDU (offsets relative to the decoder's input). */
  readonly markers: readonly MpaMarker[];
  readonly crcState: MpaCrcState;
  /** Offset of the FPDU's first byte (its leading marker, if any) in the input. */
  readonly offset: number;
  /** Bytes the FPDU occupies in the input, markers included. */
  readonly length: number;
}

/**
 * Decodes the FPDU starting at `bytes[offset]`. With markers, `options.position` is the
 * position of `bytes[offset]`. Never throws; a short input gives a 'truncated' error, a
 * marker whose FPDUPTR does not point at the FPDU start gives 'bad-value'. A CRC mismatch
 * is not an error here: it is reported as `crcState: 'invalid'`.
 */
export function decodeFpdu(
  bytes: Uint8Array,
  offset: number,
  options: FpduOptions,
): DecodeResult<DecodedFpdu> {
  const position = options.position ?? 0;
  const markers: MpaMarker[] = [];
  let i = offset;
  let pos = position;
  const atMarker = (): boolean => options.markers && pos % MPA_MARKER_INTERVAL === 0;
  const takeMarker = (): DecodeError | undefined => {
    if (bytes.length - i < MPA_MARKER_LENGTH) {
      return new DecodeError('mpa', 'marker', i, 'truncated', 'marker cut off');
    }
    const fpduPointer = readU16(bytes, i + 2);
    if (fpduPointer !== pos - position) {
      return new DecodeError(
        'mpa',
        'marker.fpduptr',
        i + 2,
        'bad-value',
        `FPDUPTR ${fpduPointer}, the FPDU starts ${pos - position} octets before the marker`,
      );
    }
    markers.push({ offset: i, reserved: readU16(bytes, i), fpduPointer });
    i += MPA_MARKER_LENGTH;
    pos += MPA_MARKER_LENGTH;
    return undefined;
  };
  if (atMarker()) {
    const e = takeMarker();
    if (e !== undefined) return failed(e);
  }
  if (bytes.length - i < MPA_ULPDU_LENGTH_LENGTH) {
    return failed(new DecodeError('mpa', 'ulpduLength', i, 'truncated', 'FPDU header cut off'));
  }
  // The FPDU is 4-aligned, so the 2-byte length never straddles a marker.
  const ulpduLength = readU16(bytes, i);
  const pad = mpaPadLength(ulpduLength);
  i += MPA_ULPDU_LENGTH_LENGTH;
  pos += MPA_ULPDU_LENGTH_LENGTH;
  const rest = ulpduLength + pad;
  // Check against the bytes present before allocating anything (markers only add bytes).
  if (bytes.length - i < rest + MPA_CRC_LENGTH) {
    return failed(
      new DecodeError(
        'mpa',
        'ulpdu',
        i,
        'truncated',
        `ULPDU Length ${ulpduLength} (+${pad} pad, 4 CRC), ${bytes.length - i} bytes present`,
      ),
    );
  }
  let ulpdu: Uint8Array;
  let padBytes: Uint8Array;
  if (!options.markers) {
    ulpdu = bytes.subarray(i, i + ulpduLength);
    padBytes = bytes.subarray(i + ulpduLength, i + rest);
    i += rest;
  } else {
    const body = new Uint8Array(rest);
    let got = 0;
    while (got < rest) {
      if (atMarker()) {
        const e = takeMarker();
        if (e !== undefined) return failed(e);
      }
      const chunk = Math.min(rest - got, MPA_MARKER_INTERVAL - (pos % MPA_MARKER_INTERVAL));
      if (bytes.length - i < chunk) {
        return failed(new DecodeError('mpa', 'ulpdu', i, 'truncated', 'FPDU cut off'));
      }
      body.set(bytes.subarray(i, i + chunk), got);
      got += chunk;
      i += chunk;
      pos += chunk;
    }
    if (atMarker()) {
      const e = takeMarker();
      if (e !== undefined) return failed(e);
    }
    ulpdu = body.subarray(0, ulpduLength);
    padBytes = body.subarray(ulpduLength);
  }
  if (bytes.length - i < MPA_CRC_LENGTH) {
    return failed(new DecodeError('mpa', 'crc', i, 'truncated', 'CRC cut off'));
  }
  const crc = readU32(bytes, i);
  let crcState: MpaCrcState = 'not-in-use';
  if (options.crc) {
    crcState = crc32c(bytes.subarray(offset, i)) === crcFieldValue(crc) ? 'valid' : 'invalid';
  }
  i += MPA_CRC_LENGTH;
  return decoded({
    fpdu: { ulpduLength, ulpdu, pad: padBytes, crc },
    markers,
    crcState,
    offset,
    length: i - offset,
  });
}
