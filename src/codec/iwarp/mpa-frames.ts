/**
 * MPA Request and Reply frames (RFC 5044 §7.1): the 16-byte key ("MPA ID Req Frame" or
 * "MPA ID Rep Frame"), a flags octet (M, C, R, then RFC 6581's enhanced bit and 4 reserved
 * bits), Rev (8 bits), PD_Length (16 bits, at most 512) and the private data. With
 * revision 2 and the enhanced bit, the private data starts with RFC 6581 §5's IRD/ORD
 * words carrying the peer-to-peer and RTR-type bits.
 */

import { requireBytes, requireInteger, requireName, requireObject } from '../../arguments.js';
import { requireFields } from '../encode-arguments.js';
import { DecodeError, type DecodeResult, decoded, EncodeError, failed } from '../errors.js';
import type { MpaEnhancedParameters, MpaRequestReply } from './messages.js';
import { checkBool, checkBytes, checkUint, readU16, writeU16 } from './wire.js';

/** The Request key (RFC 5044 §7.1). */
export const MPA_REQUEST_KEY = 'MPA ID Req Frame';
/** The Reply key (RFC 5044 §7.1). */
export const MPA_REPLY_KEY = 'MPA ID Rep Frame';
/** Key length. */
export const MPA_KEY_LENGTH = 16;
/** Key, flags, Rev and PD_Length. */
export const MPA_FRAME_HEADER_LENGTH = 20;
/** RFC 5044 §7.1: "PD_Length ... MUST NOT be larger than 512". */
export const MPA_MAX_PRIVATE_DATA_LENGTH = 512;
/** Length of the RFC 6581 IRD/ORD words. */
export const MPA_ENHANCED_PARAMETERS_LENGTH = 4;
/** Revisions defined: 1 (RFC 5044), 2 (RFC 6581). */
export const MPA_REVISIONS: readonly number[] = [1, 2];

/** Flag bits of the flags octet. */
export const MPA_FLAGS = {
  markers: 0x80,
  crc: 0x40,
  reject: 0x20,
  // RFC 6581 §5: enhanced RDMA connection establishment.
  enhanced: 0x10,
  reservedMask: 0x0f,
} as const;

/** Bits of the RFC 6581 IRD and ORD words. */
export const MPA_ENHANCED_BITS = {
  // IRD word.
  peerToPeer: 0x8000,
  sendRtr: 0x4000,
  // ORD word.
  writeRtr: 0x8000,
  readRtr: 0x4000,
  valueMask: 0x3fff,
} as const;

const KEY_BYTES = {
  'mpa-request': new TextEncoder().encode(MPA_REQUEST_KEY),
  'mpa-reply': new TextEncoder().encode(MPA_REPLY_KEY),
} as const;

function keyMatches(bytes: Uint8Array, at: number, key: Uint8Array): boolean {
  for (let k = 0; k < MPA_KEY_LENGTH; k++) if (bytes[at + k] !== key[k]) return false;
  return true;
}

/** Which frame, if any, starts at `bytes[at]` (looks at the key only). */
export function mpaFrameKind(bytes: Uint8Array, at = 0): MpaRequestReply['kind'] | undefined {
  requireBytes('codec', 'bytes', bytes);
  requireInteger('codec', 'at', at, 0);
  if (bytes.length - at < MPA_KEY_LENGTH) return undefined;
  if (keyMatches(bytes, at, KEY_BYTES['mpa-request'])) return 'mpa-request';
  if (keyMatches(bytes, at, KEY_BYTES['mpa-reply'])) return 'mpa-reply';
  return undefined;
}

/** Encodes a Request or Reply frame; throws `EncodeError` for out-of-range fields. */
export function encodeMpaFrame(f: MpaRequestReply): Uint8Array {
  requireFields('mpa', 'frame', f);
  const key = KEY_BYTES[f.kind];
  if (key === undefined)
    throw new EncodeError('mpa', 'kind', `unknown frame kind '${String(f.kind)}'`);
  checkBool('mpa', 'markers', f.markers);
  checkBool('mpa', 'crc', f.crc);
  checkBool('mpa', 'reject', f.reject);
  checkBool('mpa', 'enhanced', f.enhanced);
  checkUint('mpa', 'reserved', f.reserved, 4);
  checkUint('mpa', 'revision', f.revision, 8);
  checkBytes('mpa', 'privateData', f.privateData);
  const withParams = f.revision === 2 && f.enhanced;
  if (withParams !== (f.enhancedParameters !== undefined)) {
    throw new EncodeError(
      'mpa',
      'enhancedParameters',
      'present exactly when revision is 2 and the enhanced bit is set (RFC 6581 §5)',
    );
  }
  const p = f.enhancedParameters;
  if (p !== undefined) {
    checkUint('mpa', 'ird', p.ird, 14);
    checkUint('mpa', 'ord', p.ord, 14);
    checkBool('mpa', 'peerToPeer', p.peerToPeer);
    checkBool('mpa', 'sendRtr', p.sendRtr);
    checkBool('mpa', 'writeRtr', p.writeRtr);
    checkBool('mpa', 'readRtr', p.readRtr);
  }
  const pdLength = (p === undefined ? 0 : MPA_ENHANCED_PARAMETERS_LENGTH) + f.privateData.length;
  if (pdLength > MPA_MAX_PRIVATE_DATA_LENGTH) {
    throw new EncodeError(
      'mpa',
      'privateData',
      `PD_Length ${pdLength} exceeds 512 (RFC 5044 §7.1)`,
    );
  }
  const out = new Uint8Array(MPA_FRAME_HEADER_LENGTH + pdLength);
  out.set(key, 0);
  out[16] =
    (f.markers ? MPA_FLAGS.markers : 0) |
    (f.crc ? MPA_FLAGS.crc : 0) |
    (f.reject ? MPA_FLAGS.reject : 0) |
    (f.enhanced ? MPA_FLAGS.enhanced : 0) |
    f.reserved;
  out[17] = f.revision;
  writeU16(out, 18, pdLength);
  let at = MPA_FRAME_HEADER_LENGTH;
  if (p !== undefined) {
    const b = MPA_ENHANCED_BITS;
    writeU16(out, at, (p.peerToPeer ? b.peerToPeer : 0) | (p.sendRtr ? b.sendRtr : 0) | p.ird);
    writeU16(out, at + 2, (p.writeRtr ? b.writeRtr : 0) | (p.readRtr ? b.readRtr : 0) | p.ord);
    at += MPA_ENHANCED_PARAMETERS_LENGTH;
  }
  out.set(f.privateData, at);
  return out;
}

/** A decoded frame and the number of bytes it occupied. */
export interface DecodedMpaFrame {
  readonly frame: MpaRequestReply;
  readonly length: number;
}

/** Decodes a Request or Reply frame at `bytes[at]`. Never throws. */
export function decodeMpaFrame(bytes: Uint8Array, at = 0): DecodeResult<DecodedMpaFrame> {
  requireBytes('codec', 'bytes', bytes);
  requireInteger('codec', 'at', at, 0);
  if (bytes.length - at < MPA_FRAME_HEADER_LENGTH) {
    return failed(
      new DecodeError('mpa', 'frame', at, 'truncated', 'an MPA Request/Reply needs 20 bytes'),
    );
  }
  const kind = mpaFrameKind(bytes, at);
  if (kind === undefined) {
    return failed(
      new DecodeError(
        'mpa',
        'key',
        at,
        'bad-value',
        'neither "MPA ID Req Frame" nor "MPA ID Rep Frame"',
      ),
    );
  }
  const flags = bytes[at + 16]!;
  const revision = bytes[at + 17]!;
  if (!MPA_REVISIONS.includes(revision)) {
    return failed(
      new DecodeError('mpa', 'rev', at + 17, 'bad-value', `revision ${revision}, expected 1 or 2`),
    );
  }
  const pdLength = readU16(bytes, at + 18);
  if (pdLength > MPA_MAX_PRIVATE_DATA_LENGTH) {
    return failed(
      new DecodeError(
        'mpa',
        'pdLength',
        at + 18,
        'bad-length',
        `PD_Length ${pdLength} exceeds 512`,
      ),
    );
  }
  const pdAt = at + MPA_FRAME_HEADER_LENGTH;
  if (bytes.length - pdAt < pdLength) {
    return failed(
      new DecodeError(
        'mpa',
        'privateData',
        pdAt,
        'truncated',
        `PD_Length ${pdLength}, ${bytes.length - pdAt} present`,
      ),
    );
  }
  const enhanced = (flags & MPA_FLAGS.enhanced) !== 0;
  let enhancedParameters: MpaEnhancedParameters | undefined;
  let privateData = bytes.subarray(pdAt, pdAt + pdLength);
  if (revision === 2 && enhanced) {
    if (pdLength < MPA_ENHANCED_PARAMETERS_LENGTH) {
      return failed(
        new DecodeError(
          'mpa',
          'enhancedParameters',
          pdAt,
          'truncated',
          'revision 2 enhanced mode needs IRD/ORD',
        ),
      );
    }
    const ird = readU16(bytes, pdAt);
    const ord = readU16(bytes, pdAt + 2);
    const b = MPA_ENHANCED_BITS;
    enhancedParameters = {
      ird: ird & b.valueMask,
      ord: ord & b.valueMask,
      peerToPeer: (ird & b.peerToPeer) !== 0,
      sendRtr: (ird & b.sendRtr) !== 0,
      writeRtr: (ord & b.writeRtr) !== 0,
      readRtr: (ord & b.readRtr) !== 0,
    };
    privateData = privateData.subarray(MPA_ENHANCED_PARAMETERS_LENGTH);
  }
  return decoded({
    frame: {
      kind,
      markers: (flags & MPA_FLAGS.markers) !== 0,
      crc: (flags & MPA_FLAGS.crc) !== 0,
      reject: (flags & MPA_FLAGS.reject) !== 0,
      enhanced,
      reserved: flags & MPA_FLAGS.reservedMask,
      revision,
      privateData,
      enhancedParameters,
    },
    length: MPA_FRAME_HEADER_LENGTH + pdLength,
  });
}

/** A Request or Reply with transmit defaults (revision 1, no private data). */
export function makeMpaFrame(
  kind: MpaRequestReply['kind'],
  f: Partial<Omit<MpaRequestReply, 'kind'>> = {},
): MpaRequestReply {
  requireName('codec', 'MPA frame kind', { 'mpa-request': 0, 'mpa-reply': 0 }, kind, 'kind');
  requireObject('codec', 'fields', f);
  return {
    kind,
    markers: f.markers ?? false,
    crc: f.crc ?? false,
    reject: f.reject ?? false,
    enhanced: f.enhanced ?? f.enhancedParameters !== undefined,
    reserved: f.reserved ?? 0,
    revision: f.revision ?? (f.enhancedParameters !== undefined ? 2 : 1),
    privateData: f.privateData ?? new Uint8Array(0),
    enhancedParameters: f.enhancedParameters,
  };
}
