/**
 * The one rule both capture formats share about a record's two lengths: the original
 * length is the packet's length on the wire, the captured length the part of it the file
 * holds, so the captured length is never larger (draft-ietf-opsawg-pcap §5 "Original
 * Packet Length" / "Captured Packet Length"; draft-ietf-opsawg-pcapng §4.3, Enhanced Packet
 * Block). Decoders refuse a record that breaks it; encoders refuse to write one.
 */
import { type CodecLayer, DecodeError } from '../errors.js';

/** True when a record of `capturedLength` bytes may claim `originalLength` on the wire. */
export function isValidOriginalLength(capturedLength: number, originalLength: number): boolean {
  return Number.isInteger(originalLength) && originalLength >= capturedLength;
}

/** The error a decoder returns for a record whose original length is below its captured length. */
export function originalLengthError(
  layer: Extract<CodecLayer, 'pcap' | 'pcapng'>,
  field: string,
  offset: number,
  capturedLength: number,
  originalLength: number,
): DecodeError | undefined {
  if (isValidOriginalLength(capturedLength, originalLength)) return undefined;
  return new DecodeError(
    layer,
    field,
    offset,
    'bad-length',
    `original length ${originalLength} is below the captured length ${capturedLength}`,
  );
}
