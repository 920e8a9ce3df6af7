/**
 * Decoding one direction of an iWARP TCP connection: the MPA Request or Reply, then the
 * FPDUs that follow, honouring the negotiated CRC and marker settings, each ULPDU decoded
 * as an RDMAP message. The bytes are one TCP direction already reassembled (by the TCP
 * reassembly of src/codec/net/); `startSequence` is the TCP sequence number of bytes[0].
 */

import { requireBytes } from '../../arguments.js';
import { requireFields } from '../encode-arguments.js';
import type { DecodeError, DecodeResult } from '../errors.js';
import { decoded, EncodeError, failed } from '../errors.js';
import type { MpaNegotiated, MpaRequestReply, RdmapMessage } from './messages.js';
import { type DecodedFpdu, decodeFpdu, encodeFpdu } from './mpa.js';
import { decodeMpaFrame, encodeMpaFrame } from './mpa-frames.js';
import type { IwarpProfile } from './profiles.js';
import { requireProfileOptions } from './profiles.js';
import { decodeRdmapMessage, encodeRdmapMessage } from './rdmap.js';

/**
 * The settings one direction uses, from the frame this direction sent and, when known,
 * the frame the peer sent. RFC 5044 §7.1: CRC is used in both directions if either side
 * sets C; markers are sent towards a receiver that set M in its own frame (so this
 * direction uses markers iff the peer's frame has M). Without the peer's frame, this
 * direction's own M bit is taken as the answer (as when both sides asked the same).
 */
export function negotiateMpa(
  own: MpaRequestReply,
  peer: MpaRequestReply | undefined,
): MpaNegotiated {
  requireFields('mpa', 'own', own);
  if (peer !== undefined) requireFields('mpa', 'peer', peer);
  return {
    crc: own.crc || (peer?.crc ?? false),
    markers: peer === undefined ? own.markers : peer.markers,
  };
}

/** Options of `decodeMpaStream`. */
export interface MpaStreamOptions {
  /** TCP sequence number of bytes[0] (only differences matter; wraps modulo 2^32). */
  readonly startSequence?: number;
  /** RDMAP profile for the ULPDUs (default `rfc7306`). */
  readonly profile?: IwarpProfile;
  /** The frame the other direction sent, to combine flags (see `negotiateMpa`). */
  readonly peerFrame?: MpaRequestReply;
  /**
   * Settings to use instead of negotiating. Required when the stream does not start with
   * a Request/Reply (capture started mid-connection); then `firstFpduSequence` says where
   * the marker grid starts (default: `startSequence`).
   */
  readonly negotiated?: MpaNegotiated;
  /** TCP sequence number of the first FPDU of this direction (marker reference). */
  readonly firstFpduSequence?: number;
}

/** One FPDU of the stream and the RDMAP message its ULPDU holds. */
export interface StreamFpdu extends DecodedFpdu {
  /** TCP sequence number of the FPDU's first byte. */
  readonly sequence: number;
  /** The ULPDU decoded as an RDMAP message (or why it could not be). */
  readonly message: DecodeResult<RdmapMessage>;
}

/** A decoded direction. */
export interface MpaStream {
  /** The Request or Reply the direction began with (undefined when decoding mid-stream). */
  readonly frame: MpaRequestReply | undefined;
  readonly negotiated: MpaNegotiated;
  readonly fpdus: readonly StreamFpdu[];
  /** Why decoding stopped before the end of the input (offset relative to bytes[0]), if it did. */
  readonly error: DecodeError | undefined;
}

/**
 * Decodes one direction. Fails only when the leading frame is malformed (or when neither a
 * frame nor `negotiated` is present); FPDU-level problems stop decoding and are reported
 * in `error`, with everything decoded before them kept.
 */
export function decodeMpaStream(
  bytes: Uint8Array,
  options: MpaStreamOptions = {},
): DecodeResult<MpaStream> {
  requireBytes('codec', 'bytes', bytes);
  requireProfileOptions(options, MPA_STREAM_OPTIONS);
  const startSequence = options.startSequence ?? 0;
  let offset = 0;
  let frame: MpaRequestReply | undefined;
  let negotiated = options.negotiated;
  if (negotiated === undefined) {
    const f = decodeMpaFrame(bytes, 0);
    if (!f.ok) return failed(f.error);
    frame = f.value.frame;
    offset = f.value.length;
    negotiated = negotiateMpa(frame, options.peerFrame);
  }
  const firstFpduSequence = options.firstFpduSequence ?? (startSequence + offset) >>> 0;
  const fpdus: StreamFpdu[] = [];
  let error: DecodeError | undefined;
  // A rejected connection carries no FPDUs (RFC 5044 §7.1.5).
  while (offset < bytes.length && frame?.reject !== true) {
    const sequence = (startSequence + offset) >>> 0;
    const position = (sequence - firstFpduSequence) >>> 0;
    const r = decodeFpdu(bytes, offset, { ...negotiated, position });
    if (!r.ok) {
      error = r.error;
      break;
    }
    const message = decodeRdmapMessage(
      r.value.fpdu.ulpdu,
      options.profile === undefined ? {} : { profile: options.profile },
    );
    fpdus.push({ ...r.value, sequence, message });
    offset += r.value.length;
  }
  return decoded({ frame, negotiated, fpdus, error });
}

/** Options of `encodeMpaStream`. */
export interface MpaStreamEncodeOptions {
  readonly profile?: IwarpProfile;
  /** Settings for this direction (default: `negotiateMpa(frame, peerFrame)`). */
  readonly negotiated?: MpaNegotiated;
  readonly peerFrame?: MpaRequestReply;
}

const MPA_STREAM_OPTIONS = Object.keys({
  startSequence: true,
  profile: true,
  peerFrame: true,
  negotiated: true,
  firstFpduSequence: true,
} satisfies Record<keyof MpaStreamOptions, true>);
const MPA_STREAM_ENCODE_OPTIONS = Object.keys({
  profile: true,
  negotiated: true,
  peerFrame: true,
} satisfies Record<keyof MpaStreamEncodeOptions, true>);

/** One direction encoded: the frame bytes and one byte array per FPDU (e.g. one TCP segment each). */
export interface EncodedMpaStream {
  readonly frame: Uint8Array;
  readonly fpdus: readonly Uint8Array[];
}

/** Encodes a frame followed by FPDUs carrying `messages`. Throws `EncodeError` on bad fields. */
export function encodeMpaStream(
  frame: MpaRequestReply,
  messages: readonly RdmapMessage[],
  options: MpaStreamEncodeOptions = {},
): EncodedMpaStream {
  requireFields('mpa', 'frame', frame);
  if (!Array.isArray(messages)) throw new EncodeError('rdmap', 'messages', 'not an array');
  requireProfileOptions(options, MPA_STREAM_ENCODE_OPTIONS);
  const negotiated = options.negotiated ?? negotiateMpa(frame, options.peerFrame);
  const frameBytes = encodeMpaFrame(frame);
  const ulpdus = messages.map((m) =>
    encodeRdmapMessage(m, options.profile === undefined ? {} : { profile: options.profile }),
  );
  let position = 0;
  const fpdus = ulpdus.map((u) => {
    const b = encodeFpdu(u, { ...negotiated, position });
    position += b.length;
    return b;
  });
  return { frame: frameBytes, fpdus };
}
