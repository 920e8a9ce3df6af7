/**
 * Classic libpcap files (draft-ietf-opsawg-pcap): a 24-byte file header and records of a
 * 16-byte header plus captured bytes. Both byte orders and both timestamp precisions
 * (0xa1b2c3d4 microseconds, 0xa1b23c4d nanoseconds) are read; the writer emits the
 * writer's choice of precision in little-endian order, as libpcap does on x86.
 */
import { requireBytes } from '../../arguments.js';
import { DecodeError, type DecodeResult, decoded, EncodeError, failed } from '../errors.js';
import type { CaptureRecord } from './linktype.js';
import { checkWriteRecords, isValidOriginalLength, originalLengthError } from './record-length.js';

/** Magic number of microsecond-resolution files, as read in the file's own byte order. */
export const PCAP_MAGIC_MICRO = 0xa1b2c3d4;
/** Magic number of nanosecond-resolution files, as read in the file's own byte order. */
export const PCAP_MAGIC_NANO = 0xa1b23c4d;
const FILE_HEADER_LENGTH = 24;
const RECORD_HEADER_LENGTH = 16;

/** A decoded classic pcap file. */
export interface PcapFile {
  readonly format: 'pcap';
  readonly littleEndian: boolean;
  readonly precision: 'micro' | 'nano';
  readonly versionMajor: number;
  readonly versionMinor: number;
  readonly snapLength: number;
  /** LINKTYPE_* (low 16 bits of the network field; FCS bits are dropped). */
  readonly linkType: number;
  readonly records: readonly CaptureRecord[];
}

/** True when the bytes start with a classic pcap magic in either byte order. */
export function isPcap(bytes: Uint8Array): boolean {
  requireBytes('codec', 'bytes', bytes);
  if (bytes.length < 4) return false;
  const v = new DataView(bytes.buffer, bytes.byteOffset, 4);
  const be = v.getUint32(0, false);
  const le = v.getUint32(0, true);
  return [be, le].some((m) => m === PCAP_MAGIC_MICRO || m === PCAP_MAGIC_NANO);
}

/** Decodes a classic pcap file. Record bytes are views into `bytes`, not copies. */
export function decodePcap(bytes: Uint8Array): DecodeResult<PcapFile> {
  requireBytes('codec', 'bytes', bytes);
  // A Node Buffer's subarray is a Buffer; record data is always a plain Uint8Array view.
  bytes = new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (bytes.length < FILE_HEADER_LENGTH)
    return failed(new DecodeError('pcap', 'header', 0, 'truncated', `${bytes.length} < 24`));
  const v = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let littleEndian: boolean;
  let precision: 'micro' | 'nano';
  const be = v.getUint32(0, false);
  const le = v.getUint32(0, true);
  if (be === PCAP_MAGIC_MICRO || be === PCAP_MAGIC_NANO) {
    littleEndian = false;
    precision = be === PCAP_MAGIC_NANO ? 'nano' : 'micro';
  } else if (le === PCAP_MAGIC_MICRO || le === PCAP_MAGIC_NANO) {
    littleEndian = true;
    precision = le === PCAP_MAGIC_NANO ? 'nano' : 'micro';
  } else {
    return failed(new DecodeError('pcap', 'magic', 0, 'bad-value', `0x${be.toString(16)}`));
  }
  const versionMajor = v.getUint16(4, littleEndian);
  const versionMinor = v.getUint16(6, littleEndian);
  if (versionMajor !== 2)
    return failed(new DecodeError('pcap', 'versionMajor', 4, 'bad-value', `${versionMajor}`));
  const snapLength = v.getUint32(16, littleEndian);
  const linkType = v.getUint32(20, littleEndian) & 0xffff;
  const fractionsPerSecond = precision === 'nano' ? 1n : 1000n;
  const records: CaptureRecord[] = [];
  let at = FILE_HEADER_LENGTH;
  while (at < bytes.length) {
    if (at + RECORD_HEADER_LENGTH > bytes.length)
      return failed(new DecodeError('pcap', 'record', at, 'truncated', 'record header cut short'));
    const seconds = v.getUint32(at, littleEndian);
    const fraction = v.getUint32(at + 4, littleEndian);
    const includedLength = v.getUint32(at + 8, littleEndian);
    const originalLength = v.getUint32(at + 12, littleEndian);
    const limit = precision === 'nano' ? 1_000_000_000 : 1_000_000;
    if (fraction >= limit)
      return failed(new DecodeError('pcap', 'record.fraction', at + 4, 'bad-value', `${fraction}`));
    // Checked against the bytes present before any slicing.
    if (includedLength > bytes.length - at - RECORD_HEADER_LENGTH)
      return failed(
        new DecodeError('pcap', 'record.includedLength', at + 8, 'truncated', `${includedLength}`),
      );
    const lengths = originalLengthError(
      'pcap',
      'record.originalLength',
      at + 12,
      includedLength,
      originalLength,
    );
    if (lengths !== undefined) return failed(lengths);
    records.push({
      timestampNs: BigInt(seconds) * 1_000_000_000n + BigInt(fraction) * fractionsPerSecond,
      data: bytes.subarray(at + RECORD_HEADER_LENGTH, at + RECORD_HEADER_LENGTH + includedLength),
      originalLength,
      linkType,
      interfaceId: 0,
    });
    at += RECORD_HEADER_LENGTH + includedLength;
  }
  return decoded({
    format: 'pcap',
    littleEndian,
    precision,
    versionMajor,
    versionMinor,
    snapLength,
    linkType,
    records,
  });
}

/** A packet to write: bytes and a timestamp; `originalLength` defaults to the byte count. */
export interface PcapWriteRecord {
  readonly timestampNs: bigint;
  readonly data: Uint8Array;
  readonly originalLength?: number;
}

/** Options of {@link encodePcap}. */
export interface PcapWriteOptions {
  /** LINKTYPE_*. */
  readonly linkType: number;
  /** ['nano'] */
  readonly precision?: 'micro' | 'nano';
  /** [262144] */
  readonly snapLength?: number;
  /** [true] */
  readonly littleEndian?: boolean;
}

/**
 * Writes a classic pcap file. Throws `EncodeError` for timestamps outside the 32-bit
 * seconds range, microsecond timestamps that are not whole microseconds, or lengths out
 * of range.
 */
export function encodePcap(
  options: PcapWriteOptions,
  records: readonly PcapWriteRecord[],
): Uint8Array {
  if (typeof options !== 'object' || options === null)
    throw new EncodeError('pcap', 'options', 'not an object');
  checkWriteRecords('pcap', records);
  const precision = options.precision ?? 'nano';
  const le = options.littleEndian ?? true;
  const snap = options.snapLength ?? 262144;
  if (precision !== 'nano' && precision !== 'micro')
    throw new EncodeError('pcap', 'precision', `unknown precision '${String(precision)}'`);
  if (typeof le !== 'boolean') throw new EncodeError('pcap', 'littleEndian', 'not a boolean');
  if (!Number.isInteger(snap) || snap < 0 || snap > 0xffff_ffff)
    throw new EncodeError('pcap', 'snapLength', `${snap} is not a 32-bit length`);
  if (!Number.isInteger(options.linkType) || options.linkType < 0 || options.linkType > 0xffff)
    throw new EncodeError('pcap', 'linkType', `${options.linkType}`);
  let total = FILE_HEADER_LENGTH;
  for (const r of records) {
    const seconds = r.timestampNs / 1_000_000_000n;
    if (r.timestampNs < 0n || seconds > 0xffffffffn)
      throw new EncodeError('pcap', 'record.timestamp', `${r.timestampNs} out of range`);
    if (precision === 'micro' && r.timestampNs % 1000n !== 0n)
      throw new EncodeError('pcap', 'record.timestamp', 'not a whole microsecond');
    const orig = r.originalLength ?? r.data.length;
    if (!isValidOriginalLength(r.data.length, orig) || orig > 0xffffffff)
      throw new EncodeError('pcap', 'record.originalLength', `${orig}`);
    total += RECORD_HEADER_LENGTH + r.data.length;
  }
  const out = new Uint8Array(total);
  const v = new DataView(out.buffer);
  v.setUint32(0, precision === 'nano' ? PCAP_MAGIC_NANO : PCAP_MAGIC_MICRO, le);
  v.setUint16(4, 2, le);
  v.setUint16(6, 4, le);
  v.setUint32(16, snap, le);
  v.setUint32(20, options.linkType, le);
  let at = FILE_HEADER_LENGTH;
  for (const r of records) {
    const seconds = r.timestampNs / 1_000_000_000n;
    const nanos = r.timestampNs % 1_000_000_000n;
    v.setUint32(at, Number(seconds), le);
    v.setUint32(at + 4, Number(precision === 'nano' ? nanos : nanos / 1000n), le);
    v.setUint32(at + 8, r.data.length, le);
    v.setUint32(at + 12, r.originalLength ?? r.data.length, le);
    out.set(r.data, at + RECORD_HEADER_LENGTH);
    at += RECORD_HEADER_LENGTH + r.data.length;
  }
  return out;
}
