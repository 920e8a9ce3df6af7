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
import {
  requireArray,
  requireBoolean,
  requireBytes,
  requireInteger,
  requireKnownOptions,
  requireObject,
} from '../../arguments.js';
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

const FPDU_OPTIONS = Object.keys({
  crc: true,
  markers: true,
  position: true,
} satisfies Record<keyof FpduOptions, true>);

/** FpduOptions from a plain-JavaScript caller: booleans and a whole non-negative position. */
function checkFpduOptions(options: FpduOptions): void {
  requireKnownOptions('codec', 'options', options, FPDU_OPTIONS);
  requireObject('codec', 'options', options);
  requireBoolean('codec', 'options.crc', options.crc);
  requireBoolean('codec', 'options.markers', options.markers);
  if (options.position !== undefined)
    requireInteger('codec', 'options.position', options.position, 0);
}

/** Pad length for a ULPDU of `ulpduLength` bytes (RFC 5044 §4.3: length field + ULPDU + pad ≡ 0 mod 4). */
export function mpaPadLength(ulpduLength: number): number {
  requireInteger('codec', 'ulpduLength', ulpduLength, 0, MPA_MAX_ULPDU_LENGTH);
  return (
    (MPA_ALIGNMENT - ((ulpduLength + MPA_ULPDU_LENGTH_LENGTH) % MPA_ALIGNMENT)) % MPA_ALIGNMENT
  );
}

/**
 * RFC 5044 §5 places markers in TCP sequence space, at every multiple of 512 from the first
 * FPDU, whatever FPDU field is there. A stream whose FPDUs start where RFC 5044 puts them
 * (4-aligned: FPDUs, markers and the grid are all multiples of 4) never has a field split
 * by a marker; an FPDU at another position (this API accepts any) gets its ULPDU Length or
 * CRC split around a marker like any other byte, and encode and decode agree on that.
 * A marker belongs to the FPDU when it precedes one of the FPDU's bytes: a marker at the
 * FPDU's first position leads it (FPDUPTR 0), a marker right after its last byte belongs
 * to the next FPDU.
 */
function markersBefore(position: number, unmarkedLength: number): number {
  // Stream positions of the marked FPDU grow by 4 per marker; count them by walking the
  // intervals (at most unmarkedLength / 508 + 1 steps).
  let pos = position;
  let left = unmarkedLength;
  let count = 0;
  while (left > 0) {
    if (pos % MPA_MARKER_INTERVAL === 0) {
      pos += MPA_MARKER_LENGTH;
      count++;
    }
    const chunk = Math.min(left, MPA_MARKER_INTERVAL - (pos % MPA_MARKER_INTERVAL));
    pos += chunk;
    left -= chunk;
  }
  return count;
}

/** The largest FPDUPTR (16 bits): a marker further into an FPDU cannot point back to it. */
const MPA_MAX_FPDU_POINTER = 0xffff;

/**
 * Encodes one FPDU carrying `ulpdu`, with markers inserted when `options.markers` (the
 * result's length then depends on `options.position`). The next FPDU's position is
 * `position + result.length`.
 */
export function encodeFpdu(ulpdu: Uint8Array, options: FpduOptions): Uint8Array {
  checkBytes('mpa', 'ulpdu', ulpdu);
  checkFpduOptions(options);
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
  // The unmarked FPDU (length, ULPDU, pad, CRC), then copied in around the markers.
  const unmarked = new Uint8Array(bodyLength + MPA_CRC_LENGTH);
  writeU16(unmarked, 0, ulpdu.length);
  unmarked.set(ulpdu, MPA_ULPDU_LENGTH_LENGTH);
  const out = new Uint8Array(
    unmarked.length + MPA_MARKER_LENGTH * markersBefore(position, unmarked.length),
  );
  let pos = position;
  let o = 0;
  let crcAt = 0;
  // Output offsets of the CRC field's bytes (a marker may split the field).
  const crcOffsets: number[] = [];
  for (let i = 0; i < unmarked.length; ) {
    if (pos % MPA_MARKER_INTERVAL === 0) {
      // RFC 5044 §5: FPDUPTR = octets from the FPDU's first octet to the marker.
      if (o > MPA_MAX_FPDU_POINTER) {
        throw new EncodeError(
          'mpa',
          'marker.fpduptr',
          `a marker ${o} octets into the FPDU does not fit the 16-bit FPDUPTR`,
        );
      }
      writeU16(out, o, 0);
      writeU16(out, o + 2, o);
      o += MPA_MARKER_LENGTH;
      pos += MPA_MARKER_LENGTH;
    }
    // The CRC covers everything before its field, a marker right before it included.
    if (i === bodyLength) crcAt = o;
    // Chunks end at the next marker and at the body/CRC boundary.
    const end = i < bodyLength ? bodyLength : unmarked.length;
    const chunk = Math.min(end - i, MPA_MARKER_INTERVAL - (pos % MPA_MARKER_INTERVAL));
    if (i >= bodyLength) for (let k = 0; k < chunk; k++) crcOffsets.push(o + k);
    out.set(unmarked.subarray(i, i + chunk), o);
    o += chunk;
    pos += chunk;
    i += chunk;
  }
  if (options.crc) {
    const field = new Uint8Array(MPA_CRC_LENGTH);
    writeCrcField(field, 0, crc32c(out.subarray(0, crcAt)));
    crcOffsets.forEach((at, k) => {
      out[at] = field[k]!;
    });
  }
  return out;
}

/** Encodes several FPDUs back to back, returning each one (e.g. one per TCP segment). */
export function encodeFpdus(ulpdus: readonly Uint8Array[], options: FpduOptions): Uint8Array[] {
  requireArray('codec', 'ulpdus', ulpdus);
  checkFpduOptions(options);
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
 * Reads the unmarked bytes of one FPDU from a marked stream, taking out the markers at
 * every multiple of 512 of stream position (see `markersBefore`) and checking that each
 * points back to the FPDU's first octet.
 */
class MarkedReader {
  readonly markers: MpaMarker[] = [];
  private pos: number;
  constructor(
    private readonly bytes: Uint8Array,
    /** Input offset of the next byte. */
    public at: number,
    private readonly fpduStart: number,
    position: number,
    private readonly marked: boolean,
  ) {
    this.pos = position;
  }

  /** Takes the marker at the current position, if one is due there. */
  takeDueMarker(): DecodeError | undefined {
    if (!this.marked || this.pos % MPA_MARKER_INTERVAL !== 0) return undefined;
    const { bytes, at } = this;
    if (bytes.length - at < MPA_MARKER_LENGTH) {
      return new DecodeError('mpa', 'marker', at, 'truncated', 'marker cut off');
    }
    const fpduPointer = readU16(bytes, at + 2);
    if (fpduPointer !== at - this.fpduStart) {
      return new DecodeError(
        'mpa',
        'marker.fpduptr',
        at + 2,
        'bad-value',
        `FPDUPTR ${fpduPointer}, the FPDU starts ${at - this.fpduStart} octets before the marker`,
      );
    }
    this.markers.push({ offset: at, reserved: readU16(bytes, at), fpduPointer });
    this.at += MPA_MARKER_LENGTH;
    this.pos += MPA_MARKER_LENGTH;
    return undefined;
  }

  /**
   * The next `n` unmarked bytes: a view of the input when no marker interrupts them, else
   * a copy. `field` names them in a truncation error.
   */
  take(n: number, field: string): DecodeResult<Uint8Array> {
    const out: Uint8Array[] = [];
    let got = 0;
    while (got < n) {
      const e = this.takeDueMarker();
      if (e !== undefined) return failed(e);
      const chunk = Math.min(n - got, MPA_MARKER_INTERVAL - (this.pos % MPA_MARKER_INTERVAL));
      const want = this.marked ? chunk : n - got;
      if (this.bytes.length - this.at < want) {
        return failed(
          new DecodeError(
            'mpa',
            field,
            this.at,
            'truncated',
            `${n} bytes needed, cut off after ${got + this.bytes.length - this.at}`,
          ),
        );
      }
      out.push(this.bytes.subarray(this.at, this.at + want));
      got += want;
      this.at += want;
      this.pos += want;
    }
    if (out.length === 1) return decoded(out[0]!);
    const joined = new Uint8Array(n);
    let o = 0;
    for (const part of out) {
      joined.set(part, o);
      o += part.length;
    }
    return decoded(joined);
  }
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
  requireBytes('codec', 'bytes', bytes);
  requireInteger('codec', 'offset', offset, 0);
  checkFpduOptions(options);
  const reader = new MarkedReader(bytes, offset, offset, options.position ?? 0, options.markers);
  const lengthField = reader.take(MPA_ULPDU_LENGTH_LENGTH, 'ulpduLength');
  if (!lengthField.ok) return lengthField;
  const ulpduLength = readU16(lengthField.value, 0);
  const pad = mpaPadLength(ulpduLength);
  const rest = ulpduLength + pad;
  // Check against the bytes present before copying anything (markers only add bytes).
  if (bytes.length - reader.at < rest + MPA_CRC_LENGTH) {
    return failed(
      new DecodeError(
        'mpa',
        'ulpdu',
        reader.at,
        'truncated',
        `ULPDU Length ${ulpduLength} (+${pad} pad, 4 CRC), ${bytes.length - reader.at} bytes present`,
      ),
    );
  }
  const body = reader.take(rest, 'ulpdu');
  if (!body.ok) return body;
  // The CRC covers everything before its field, a marker right before it included.
  const markerBeforeCrc = reader.takeDueMarker();
  if (markerBeforeCrc !== undefined) return failed(markerBeforeCrc);
  const crcCovers = reader.at;
  const crcField = reader.take(MPA_CRC_LENGTH, 'crc');
  if (!crcField.ok) return crcField;
  const crc = readU32(crcField.value, 0);
  let crcState: MpaCrcState = 'not-in-use';
  if (options.crc) {
    crcState =
      crc32c(bytes.subarray(offset, crcCovers)) === crcFieldValue(crc) ? 'valid' : 'invalid';
  }
  return decoded({
    fpdu: {
      ulpduLength,
      ulpdu: body.value.subarray(0, ulpduLength),
      pad: body.value.subarray(ulpduLength),
      crc,
    },
    markers: reader.markers,
    crcState,
    offset,
    length: reader.at - offset,
  });
}
