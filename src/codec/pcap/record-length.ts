/**
 * The one rule both capture formats share about a record's two lengths: the original
 * length is the packet's length on the wire, the captured length the part of it the file
 * holds, so the captured length is never larger (draft-ietf-opsawg-pcap §5 "Original
 * Packet Length" / "Captured Packet Length"; draft-ietf-opsawg-pcapng §4.3, Enhanced Packet
 * Block). Decoders refuse a record that breaks it; encoders refuse to write one.
 */
import { type CodecLayer, DecodeError, EncodeError } from '../errors.js';

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

/**
 * The records an encoder was given, checked before it writes anything (issue 25: a number
 * where the bigint timestamp belongs, a record that is no object, data that is no
 * Uint8Array): an EncodeError naming the record, never a raw TypeError.
 */
export function checkWriteRecords(
  layer: Extract<CodecLayer, 'pcap' | 'pcapng'>,
  records: unknown,
): void {
  if (!Array.isArray(records)) throw new EncodeError(layer, 'records', 'not an array');
  records.forEach((r: unknown, i) => {
    if (typeof r !== 'object' || r === null)
      throw new EncodeError(layer, `records[${i}]`, 'not an object');
    const { timestampNs, data, originalLength } = r as Record<string, unknown>;
    if (typeof timestampNs !== 'bigint')
      throw new EncodeError(
        layer,
        `records[${i}].timestampNs`,
        `${typeof timestampNs}, not a bigint`,
      );
    if (!(data instanceof Uint8Array))
      throw new EncodeError(layer, `records[${i}].data`, 'not a Uint8Array');
    if (originalLength !== undefined && !Number.isSafeInteger(originalLength))
      throw new EncodeError(layer, `records[${i}].originalLength`, 'not an integer');
  });
}
