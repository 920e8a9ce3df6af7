/**
 * DDP segment headers (RFC 5041 §4): the control byte (T, L, Resrv, DV), then for tagged
 * segments RsvdULP (8 bits), STag (32), TO (64) = 14 bytes; for untagged segments RsvdULP
 * (40 bits), QN (32), MSN (32), MO (32) = 18 bytes.
 */

import { requireBytes } from '../../arguments.js';
import { requireFields } from '../encode-arguments.js';
import { DecodeError, type DecodeResult, decoded, EncodeError, failed } from '../errors.js';
import {
  checkField,
  DDP_TAGGED_LAYOUT,
  DDP_UNTAGGED_LAYOUT,
  fieldAccess,
  type HeaderLayout,
  layoutField,
  readField,
  readFieldBigint,
  readFieldNumber,
  writeField,
} from './layouts.js';
import type { DdpHeader, DdpSegment } from './messages.js';
import { checkBytes } from './wire.js';

/** Tagged DDP header length (RFC 5041 §4.2). */
export const DDP_TAGGED_HEADER_LENGTH = DDP_TAGGED_LAYOUT.length;
/** Untagged DDP header length (RFC 5041 §4.3). */
export const DDP_UNTAGGED_HEADER_LENGTH = DDP_UNTAGGED_LAYOUT.length;
/** The only DDP version defined (RFC 5041 §4.1: DV = 01b). */
export const DDP_VERSION = 1;

/**
 * The DDP header's fields (RFC 5041 §4.1-4.3), from its layouts: the control byte's are the
 * same in both; RsvdULP is the RDMAP control octet (octet 1) and, untagged, the Invalidate
 * STag after it (RFC 5040 §4.2).
 */
export const DDP_FIELDS = {
  tagged: layoutField(DDP_TAGGED_LAYOUT, 'tagged'),
  last: layoutField(DDP_TAGGED_LAYOUT, 'last'),
  ddpReserved: layoutField(DDP_TAGGED_LAYOUT, 'ddpReserved'),
  ddpVersion: layoutField(DDP_TAGGED_LAYOUT, 'ddpVersion'),
  rdmaVersion: layoutField(DDP_TAGGED_LAYOUT, 'rdmaVersion'),
  stag: layoutField(DDP_TAGGED_LAYOUT, 'stag'),
  taggedOffset: layoutField(DDP_TAGGED_LAYOUT, 'taggedOffset'),
  invalidateSTag: layoutField(DDP_UNTAGGED_LAYOUT, 'invalidateSTag'),
  queueNumber: layoutField(DDP_UNTAGGED_LAYOUT, 'queueNumber'),
  messageSequenceNumber: layoutField(DDP_UNTAGGED_LAYOUT, 'messageSequenceNumber'),
  messageOffset: layoutField(DDP_UNTAGGED_LAYOUT, 'messageOffset'),
} as const;

/** The DDP fields compiled for the per-segment paths (rdmap.ts). */
export const DDP_ACCESS = {
  tagged: fieldAccess(DDP_FIELDS.tagged),
  last: fieldAccess(DDP_FIELDS.last),
  ddpReserved: fieldAccess(DDP_FIELDS.ddpReserved),
  ddpVersion: fieldAccess(DDP_FIELDS.ddpVersion),
  rdmaVersion: fieldAccess(DDP_FIELDS.rdmaVersion),
  stag: fieldAccess(DDP_FIELDS.stag),
  taggedOffset: fieldAccess(DDP_FIELDS.taggedOffset),
  invalidateSTag: fieldAccess(DDP_FIELDS.invalidateSTag),
  queueNumber: fieldAccess(DDP_FIELDS.queueNumber),
  messageSequenceNumber: fieldAccess(DDP_FIELDS.messageSequenceNumber),
  messageOffset: fieldAccess(DDP_FIELDS.messageOffset),
} as const;

/** RsvdULP's first octet (the RDMAP control octet, RFC 5040 §4.2): the DDP view of octet 1. */
const RSVD_ULP_OCTET = { ...DDP_FIELDS.rdmaVersion, name: 'rsvdUlp', bits: 8, shift: 0 } as const;

/** The DDP header layout of a segment whose first byte (the DDP control byte) is `control`. */
export function ddpLayoutOf(control: number): HeaderLayout {
  const t = DDP_FIELDS.tagged;
  return (control >>> t.shift) & 1 ? DDP_TAGGED_LAYOUT : DDP_UNTAGGED_LAYOUT;
}

/** Header length for a segment whose first byte is `control`. */
export function ddpHeaderLength(control: number): number {
  return ddpLayoutOf(control).length;
}

/** Writes the DDP control byte's four fields into `out[0]` (zero there; range-checked before). */
export function writeDdpControl(
  out: Uint8Array,
  tagged: boolean,
  last: boolean,
  control: { readonly ddpReserved: number; readonly ddpVersion: number },
): void {
  DDP_ACCESS.tagged.write(out, 0, tagged);
  DDP_ACCESS.last.write(out, 0, last);
  DDP_ACCESS.ddpReserved.write(out, 0, control.ddpReserved);
  DDP_ACCESS.ddpVersion.write(out, 0, control.ddpVersion);
}

/** Range-checks and encodes a DDP segment (header + payload). */
export function encodeDdpSegment(segment: DdpSegment): Uint8Array {
  requireFields('ddp', 'segment', segment);
  requireFields('ddp', 'header', segment.header);
  const h = segment.header;
  const layout = h.tagged === true ? DDP_TAGGED_LAYOUT : DDP_UNTAGGED_LAYOUT;
  checkField(layout, DDP_FIELDS.tagged, h.tagged);
  checkField(layout, DDP_FIELDS.last, h.last);
  checkField(layout, DDP_FIELDS.ddpReserved, h.ddpReserved);
  checkField(layout, DDP_FIELDS.ddpVersion, h.ddpVersion);
  checkBytes('ddp', 'payload', segment.payload);
  if (h.tagged) {
    checkField(layout, RSVD_ULP_OCTET, h.rsvdUlp);
    checkField(layout, DDP_FIELDS.stag, h.stag);
    checkField(layout, DDP_FIELDS.taggedOffset, h.taggedOffset);
  } else {
    // RsvdULP, 40 bits: octet 1 and the 32 bits after it (RFC 5041 §4.3).
    if (!Number.isInteger(h.rsvdUlp) || h.rsvdUlp < 0 || h.rsvdUlp > 0xff_ffff_ffff) {
      throw new EncodeError(
        'ddp',
        'rsvdUlp',
        `${String(h.rsvdUlp)} is not an unsigned 40-bit integer`,
      );
    }
    checkField(layout, DDP_FIELDS.queueNumber, h.queueNumber);
    checkField(layout, DDP_FIELDS.messageSequenceNumber, h.messageSequenceNumber);
    checkField(layout, DDP_FIELDS.messageOffset, h.messageOffset);
  }
  const out = new Uint8Array(layout.length + segment.payload.length);
  writeDdpControl(out, h.tagged, h.last, h);
  if (h.tagged) {
    writeField(out, 0, RSVD_ULP_OCTET, h.rsvdUlp);
    writeField(out, 0, DDP_FIELDS.stag, h.stag);
    writeField(out, 0, DDP_FIELDS.taggedOffset, h.taggedOffset);
  } else {
    writeField(out, 0, RSVD_ULP_OCTET, Math.floor(h.rsvdUlp / 0x1_0000_0000));
    writeField(out, 0, DDP_FIELDS.invalidateSTag, h.rsvdUlp % 0x1_0000_0000);
    writeField(out, 0, DDP_FIELDS.queueNumber, h.queueNumber);
    writeField(out, 0, DDP_FIELDS.messageSequenceNumber, h.messageSequenceNumber);
    writeField(out, 0, DDP_FIELDS.messageOffset, h.messageOffset);
  }
  out.set(segment.payload, layout.length);
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
  const layout = ddpLayoutOf(bytes[0]!);
  const tagged = layout === DDP_TAGGED_LAYOUT;
  if (bytes.length < layout.length) {
    return failed(
      new DecodeError(
        'ddp',
        'header',
        0,
        'truncated',
        `${bytes.length} bytes, a ${tagged ? 'tagged' : 'untagged'} header needs ${layout.length}`,
      ),
    );
  }
  const ddpVersion = readFieldNumber(bytes, 0, DDP_FIELDS.ddpVersion);
  if (ddpVersion !== DDP_VERSION) {
    return failed(
      new DecodeError('ddp', 'dv', 0, 'bad-value', `DDP version ${ddpVersion}, expected 1`),
    );
  }
  const last = readField(bytes, 0, DDP_FIELDS.last) === true;
  const ddpReserved = readFieldNumber(bytes, 0, DDP_FIELDS.ddpReserved);
  const rsvdUlp = readFieldNumber(bytes, 0, RSVD_ULP_OCTET);
  const payload = bytes.subarray(layout.length);
  const header: DdpHeader = tagged
    ? {
        tagged: true,
        last,
        ddpReserved,
        ddpVersion,
        rsvdUlp,
        stag: readFieldNumber(bytes, 0, DDP_FIELDS.stag),
        taggedOffset: readFieldBigint(bytes, 0, DDP_FIELDS.taggedOffset),
      }
    : {
        tagged: false,
        last,
        ddpReserved,
        ddpVersion,
        rsvdUlp: rsvdUlp * 0x1_0000_0000 + readFieldNumber(bytes, 0, DDP_FIELDS.invalidateSTag),
        queueNumber: readFieldNumber(bytes, 0, DDP_FIELDS.queueNumber),
        messageSequenceNumber: readFieldNumber(bytes, 0, DDP_FIELDS.messageSequenceNumber),
        messageOffset: readFieldNumber(bytes, 0, DDP_FIELDS.messageOffset),
      };
  return decoded({ header, payload });
}
