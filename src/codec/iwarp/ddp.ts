/**
 * DDP segment headers (RFC 5041 §4): the control byte (T, L, Resrv, DV), then for tagged
 * segments RsvdULP (8 bits), STag (32), TO (64) = 14 bytes; for untagged segments RsvdULP
 * (40 bits), QN (32), MSN (32), MO (32) = 18 bytes.
 */

import { requireBytes } from '../../arguments.js';
import { requireFields } from '../encode-arguments.js';
import { DecodeError, type DecodeResult, decoded, EncodeError, failed } from '../errors.js';
import type { DdpHeader, DdpSegment } from './messages.js';
import {
  checkBool,
  checkBytes,
  checkUint,
  checkUint64,
  readU32,
  readU64,
  writeU32,
  writeU64,
} from './wire.js';

/** Tagged DDP header length (RFC 5041 §4.2). */
export const DDP_TAGGED_HEADER_LENGTH = 14;
/** Untagged DDP header length (RFC 5041 §4.3). */
export const DDP_UNTAGGED_HEADER_LENGTH = 18;
/** The only DDP version defined (RFC 5041 §4.1: DV = 01b). */
export const DDP_VERSION = 1;

/** Masks of the DDP control byte (RFC 5041 §4.1). */
export const DDP_CONTROL = {
  tagged: 0x80,
  last: 0x40,
  reservedShift: 2,
  reservedMask: 0x0f,
  versionMask: 0x03,
} as const;

/** Header length for a segment whose first byte is `control`. */
export function ddpHeaderLength(control: number): number {
  return control & DDP_CONTROL.tagged ? DDP_TAGGED_HEADER_LENGTH : DDP_UNTAGGED_HEADER_LENGTH;
}

/** Builds the DDP control byte. Fields must already be range-checked. */
export function ddpControlByte(
  tagged: boolean,
  last: boolean,
  reserved: number,
  version: number,
): number {
  return (
    (tagged ? DDP_CONTROL.tagged : 0) |
    (last ? DDP_CONTROL.last : 0) |
    (reserved << DDP_CONTROL.reservedShift) |
    version
  );
}

/** Range-checks and encodes a DDP segment (header + payload). */
export function encodeDdpSegment(segment: DdpSegment): Uint8Array {
  requireFields('ddp', 'segment', segment);
  requireFields('ddp', 'header', segment.header);
  const h = segment.header;
  checkBool('ddp', 'tagged', h.tagged);
  checkBool('ddp', 'last', h.last);
  checkUint('ddp', 'ddpReserved', h.ddpReserved, 4);
  checkUint('ddp', 'ddpVersion', h.ddpVersion, 2);
  checkBytes('ddp', 'payload', segment.payload);
  if (h.tagged) {
    checkUint('ddp', 'rsvdUlp', h.rsvdUlp, 8);
    checkUint('ddp', 'stag', h.stag, 32);
    checkUint64('ddp', 'taggedOffset', h.taggedOffset);
  } else {
    if (!Number.isInteger(h.rsvdUlp) || h.rsvdUlp < 0 || h.rsvdUlp > 0xff_ffff_ffff) {
      throw new EncodeError(
        'ddp',
        'rsvdUlp',
        `${String(h.rsvdUlp)} is not an unsigned 40-bit integer`,
      );
    }
    checkUint('ddp', 'queueNumber', h.queueNumber, 32);
    checkUint('ddp', 'messageSequenceNumber', h.messageSequenceNumber, 32);
    checkUint('ddp', 'messageOffset', h.messageOffset, 32);
  }
  const headerLength = h.tagged ? DDP_TAGGED_HEADER_LENGTH : DDP_UNTAGGED_HEADER_LENGTH;
  const out = new Uint8Array(headerLength + segment.payload.length);
  out[0] = ddpControlByte(h.tagged, h.last, h.ddpReserved, h.ddpVersion);
  if (h.tagged) {
    out[1] = h.rsvdUlp;
    writeU32(out, 2, h.stag);
    writeU64(out, 6, h.taggedOffset);
  } else {
    out[1] = Math.floor(h.rsvdUlp / 0x1_0000_0000);
    writeU32(out, 2, h.rsvdUlp % 0x1_0000_0000);
    writeU32(out, 6, h.queueNumber);
    writeU32(out, 10, h.messageSequenceNumber);
    writeU32(out, 14, h.messageOffset);
  }
  out.set(segment.payload, headerLength);
  return out;
}

/**
 * Decodes a DDP segment. The payload is a view into `bytes` (no copy). Fails on a short
 * header or a DDP version other than 1 (RFC 5041 §7.2: "Invalid DDP version").
 */
export function decodeDdpSegment(bytes: Uint8Array): DecodeResult<DdpSegment> {
  requireBytes('codec', 'bytes', bytes);
  if (bytes.length < 1) {
    return failed(new DecodeError('ddp', 'control', 0, 'truncated', 'empty segment'));
  }
  const control = bytes[0]!;
  const headerLength = ddpHeaderLength(control);
  if (bytes.length < headerLength) {
    return failed(
      new DecodeError(
        'ddp',
        'header',
        0,
        'truncated',
        `${bytes.length} bytes, a ${control & DDP_CONTROL.tagged ? 'tagged' : 'untagged'} header needs ${headerLength}`,
      ),
    );
  }
  const ddpVersion = control & DDP_CONTROL.versionMask;
  if (ddpVersion !== DDP_VERSION) {
    return failed(
      new DecodeError('ddp', 'dv', 0, 'bad-value', `DDP version ${ddpVersion}, expected 1`),
    );
  }
  const last = (control & DDP_CONTROL.last) !== 0;
  const ddpReserved = (control >> DDP_CONTROL.reservedShift) & DDP_CONTROL.reservedMask;
  const payload = bytes.subarray(headerLength);
  const header: DdpHeader =
    control & DDP_CONTROL.tagged
      ? {
          tagged: true,
          last,
          ddpReserved,
          ddpVersion,
          rsvdUlp: bytes[1]!,
          stag: readU32(bytes, 2),
          taggedOffset: readU64(bytes, 6),
        }
      : {
          tagged: false,
          last,
          ddpReserved,
          ddpVersion,
          rsvdUlp: bytes[1]! * 0x1_0000_0000 + readU32(bytes, 2),
          queueNumber: readU32(bytes, 6),
          messageSequenceNumber: readU32(bytes, 10),
          messageOffset: readU32(bytes, 14),
        };
  return decoded({ header, payload });
}
