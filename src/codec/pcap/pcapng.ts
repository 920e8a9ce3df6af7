/**
 * pcapng files (draft-ietf-opsawg-pcapng): Section Header Blocks (both byte orders,
 * several sections), Interface Description Blocks (link type, snap length, if_tsresol),
 * Enhanced Packet Blocks and Simple Packet Blocks. Every other block is skipped by its
 * length. Lengths are checked against the bytes present before anything is sliced.
 */
import { requireBytes } from '../../arguments.js';
import { DecodeError, type DecodeResult, decoded, EncodeError, failed } from '../errors.js';
import type { CaptureRecord } from './linktype.js';
import { checkWriteRecords, isValidOriginalLength, originalLengthError } from './record-length.js';

/** Block type codes (pcapng §4). */
export const PcapngBlockType = {
  SECTION_HEADER: 0x0a0d0d0a,
  INTERFACE_DESCRIPTION: 0x00000001,
  SIMPLE_PACKET: 0x00000003,
  ENHANCED_PACKET: 0x00000006,
} as const;

const BYTE_ORDER_MAGIC = 0x1a2b3c4d;
/** Option code of if_tsresol in an IDB (pcapng §4.2). */
const IF_TSRESOL = 9;

/** An interface declared by an IDB. */
export interface PcapngInterface {
  readonly linkType: number;
  readonly snapLength: number;
  /** Timestamp units per second (from if_tsresol; 10^6 by default). */
  readonly unitsPerSecond: bigint;
}

/** A decoded pcapng file (all sections flattened). */
export interface PcapngFile {
  readonly format: 'pcapng';
  /** Byte order of the first section. */
  readonly littleEndian: boolean;
  /** Interfaces of all sections, in order (records refer to their section's own index). */
  readonly interfaces: readonly PcapngInterface[];
  readonly records: readonly CaptureRecord[];
  /** Number of blocks of other types that were skipped. */
  readonly skippedBlocks: number;
}

/** True when the bytes start with a pcapng Section Header Block. */
export function isPcapng(bytes: Uint8Array): boolean {
  requireBytes('codec', 'bytes', bytes);
  return (
    bytes.length >= 4 &&
    bytes[0] === 0x0a &&
    bytes[1] === 0x0d &&
    bytes[2] === 0x0d &&
    bytes[3] === 0x0a
  );
}

/** Reads the if_tsresol option from an IDB's options area. */
function readTsresol(v: DataView, start: number, end: number, le: boolean): DecodeResult<bigint> {
  let at = start;
  let units = 1_000_000n;
  while (at + 4 <= end) {
    const code = v.getUint16(at, le);
    const length = v.getUint16(at + 2, le);
    if (code === 0) break; // opt_endofopt
    const padded = (length + 3) & ~3;
    if (at + 4 + padded > end)
      return failed(new DecodeError('pcapng', 'idb.option', at, 'truncated', `code ${code}`));
    if (code === IF_TSRESOL && length >= 1) {
      const r = v.getUint8(at + 4);
      const exponent = BigInt(r & 0x7f);
      // The high bit selects a power of two, otherwise a power of ten (pcapng §4.2).
      if (exponent > 63n)
        return failed(new DecodeError('pcapng', 'idb.if_tsresol', at + 4, 'bad-value', `${r}`));
      units = r & 0x80 ? 1n << exponent : 10n ** exponent;
    }
    at += 4 + padded;
  }
  return decoded(units);
}

/** Decodes a pcapng file. Packet bytes are views into `bytes`. */
export function decodePcapng(bytes: Uint8Array): DecodeResult<PcapngFile> {
  requireBytes('codec', 'bytes', bytes);
  // A Node Buffer's subarray is a Buffer; record data is always a plain Uint8Array view.
  bytes = new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const v = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (!isPcapng(bytes) || bytes.length < 28)
    return failed(
      new DecodeError(
        'pcapng',
        'shb',
        0,
        isPcapng(bytes) ? 'truncated' : 'bad-value',
        'no Section Header Block',
      ),
    );
  let le = true;
  let firstLe: boolean | undefined;
  const allInterfaces: PcapngInterface[] = [];
  let section: PcapngInterface[] = [];
  const records: CaptureRecord[] = [];
  let skippedBlocks = 0;
  let at = 0;
  while (at < bytes.length) {
    if (at + 12 > bytes.length)
      return failed(new DecodeError('pcapng', 'block', at, 'truncated', 'block header cut short'));
    const rawType = v.getUint32(at, le);
    if (rawType === PcapngBlockType.SECTION_HEADER) {
      const magicLe = v.getUint32(at + 8, true);
      if (magicLe === BYTE_ORDER_MAGIC) le = true;
      else if (v.getUint32(at + 8, false) === BYTE_ORDER_MAGIC) le = false;
      else
        return failed(
          new DecodeError(
            'pcapng',
            'shb.byteOrderMagic',
            at + 8,
            'bad-value',
            `0x${magicLe.toString(16)}`,
          ),
        );
      firstLe ??= le;
      section = [];
    }
    const type = v.getUint32(at, le);
    const total = v.getUint32(at + 4, le);
    if (total < 12 || total % 4 !== 0)
      return failed(
        new DecodeError('pcapng', 'block.totalLength', at + 4, 'bad-length', `${total}`),
      );
    if (total > bytes.length - at)
      return failed(
        new DecodeError('pcapng', 'block.totalLength', at + 4, 'truncated', `${total}`),
      );
    if (v.getUint32(at + total - 4, le) !== total)
      return failed(
        new DecodeError(
          'pcapng',
          'block.trailingLength',
          at + total - 4,
          'bad-length',
          'does not repeat the leading length',
        ),
      );
    const body = at + 8;
    const bodyEnd = at + total - 4;
    switch (type) {
      case PcapngBlockType.SECTION_HEADER: {
        if (total < 28)
          return failed(new DecodeError('pcapng', 'shb', at, 'bad-length', `${total} < 28`));
        const major = v.getUint16(body + 4, le);
        if (major !== 1)
          return failed(
            new DecodeError('pcapng', 'shb.majorVersion', body + 4, 'bad-value', `${major}`),
          );
        break;
      }
      case PcapngBlockType.INTERFACE_DESCRIPTION: {
        if (total < 20)
          return failed(new DecodeError('pcapng', 'idb', at, 'bad-length', `${total} < 20`));
        const units = readTsresol(v, body + 8, bodyEnd, le);
        if (!units.ok) return units;
        const iface = {
          linkType: v.getUint16(body, le),
          snapLength: v.getUint32(body + 4, le),
          unitsPerSecond: units.value,
        };
        section.push(iface);
        allInterfaces.push(iface);
        break;
      }
      case PcapngBlockType.ENHANCED_PACKET: {
        if (total < 32)
          return failed(new DecodeError('pcapng', 'epb', at, 'bad-length', `${total} < 32`));
        const interfaceId = v.getUint32(body, le);
        const iface = section[interfaceId];
        if (iface === undefined)
          return failed(
            new DecodeError(
              'pcapng',
              'epb.interfaceId',
              body,
              'bad-value',
              `no interface ${interfaceId}`,
            ),
          );
        const ts = (BigInt(v.getUint32(body + 4, le)) << 32n) | BigInt(v.getUint32(body + 8, le));
        const captured = v.getUint32(body + 12, le);
        const original = v.getUint32(body + 16, le);
        if (captured > bodyEnd - (body + 20))
          return failed(
            new DecodeError('pcapng', 'epb.capturedLength', body + 12, 'bad-length', `${captured}`),
          );
        const lengths = originalLengthError(
          'pcapng',
          'epb.originalLength',
          body + 16,
          captured,
          original,
        );
        if (lengths !== undefined) return failed(lengths);
        records.push({
          timestampNs: (ts * 1_000_000_000n) / iface.unitsPerSecond,
          data: bytes.subarray(body + 20, body + 20 + captured),
          originalLength: original,
          linkType: iface.linkType,
          interfaceId,
        });
        break;
      }
      case PcapngBlockType.SIMPLE_PACKET: {
        const iface = section[0];
        if (iface === undefined)
          return failed(new DecodeError('pcapng', 'spb', at, 'bad-value', 'no interface 0'));
        const original = v.getUint32(body, le);
        const room = bodyEnd - (body + 4);
        // pcapng §4.4: captured length is min(original length, snap length), bounded by the block.
        let captured = Math.min(original, iface.snapLength === 0 ? original : iface.snapLength);
        if (captured > room)
          return failed(
            new DecodeError('pcapng', 'spb.originalLength', body, 'bad-length', `${original}`),
          );
        captured = Math.max(0, captured);
        records.push({
          timestampNs: 0n,
          data: bytes.subarray(body + 4, body + 4 + captured),
          originalLength: original,
          linkType: iface.linkType,
          interfaceId: 0,
        });
        break;
      }
      default:
        skippedBlocks++;
    }
    at += total;
  }
  return decoded({
    format: 'pcapng',
    littleEndian: firstLe ?? true,
    interfaces: allInterfaces,
    records,
    skippedBlocks,
  });
}

/** A packet to write into a pcapng file. */
export interface PcapngWriteRecord {
  readonly timestampNs: bigint;
  readonly data: Uint8Array;
  readonly originalLength?: number;
  /** [0] */
  readonly interfaceId?: number;
}

/** Options of {@link encodePcapng}. */
export interface PcapngWriteOptions {
  /** One IDB per entry; timestamps are written in nanoseconds (if_tsresol = 9). */
  readonly interfaces: readonly { readonly linkType: number; readonly snapLength?: number }[];
  /** Write Simple Packet Blocks (no timestamp, interface 0 only) instead of EPBs. [false] */
  readonly simplePackets?: boolean;
  /** [true] */
  readonly littleEndian?: boolean;
}

function pad4(n: number): number {
  return (n + 3) & ~3;
}

/** Writes a one-section pcapng file. Throws `EncodeError` on bad fields. */
export function encodePcapng(
  o: PcapngWriteOptions,
  records: readonly PcapngWriteRecord[],
): Uint8Array {
  if (typeof o !== 'object' || o === null)
    throw new EncodeError('pcapng', 'options', 'not an object');
  if (!Array.isArray(o.interfaces)) throw new EncodeError('pcapng', 'interfaces', 'not an array');
  checkWriteRecords('pcapng', records);
  const le = o.littleEndian ?? true;
  if (typeof le !== 'boolean') throw new EncodeError('pcapng', 'littleEndian', 'not a boolean');
  for (const i of o.interfaces) {
    if (typeof i !== 'object' || i === null)
      throw new EncodeError('pcapng', 'idb', 'not an object');
    const snap = i.snapLength ?? 262144;
    if (!Number.isInteger(snap) || snap < 0 || snap > 0xffff_ffff)
      throw new EncodeError('pcapng', 'idb.snapLength', `${snap} is not a 32-bit length`);
    if (!Number.isInteger(i.linkType) || i.linkType < 0 || i.linkType > 0xffff)
      throw new EncodeError('pcapng', 'idb.linkType', `${i.linkType}`);
  }
  let total = 28;
  total += o.interfaces.length * 32; // IDB: 20 + if_tsresol option (8) + opt_endofopt (4)
  for (const r of records) {
    const id = r.interfaceId ?? 0;
    if (!Number.isInteger(id) || id < 0 || id >= o.interfaces.length)
      throw new EncodeError('pcapng', 'interfaceId', `${id}`);
    if (o.simplePackets && id !== 0)
      throw new EncodeError('pcapng', 'interfaceId', 'SPB uses interface 0');
    if (r.timestampNs < 0n || r.timestampNs > 0xffffffffffffffffn)
      throw new EncodeError('pcapng', 'timestamp', `${r.timestampNs}`);
    const orig = r.originalLength ?? r.data.length;
    if (!isValidOriginalLength(r.data.length, orig) || orig > 0xffffffff)
      throw new EncodeError('pcapng', 'originalLength', `${orig}`);
    if (o.simplePackets && orig !== r.data.length)
      throw new EncodeError('pcapng', 'originalLength', 'SPB cannot record truncation');
    total += (o.simplePackets ? 16 : 32) + pad4(r.data.length);
  }
  const out = new Uint8Array(total);
  const v = new DataView(out.buffer);
  let at = 0;
  v.setUint32(at, PcapngBlockType.SECTION_HEADER, le);
  v.setUint32(at + 4, 28, le);
  v.setUint32(at + 8, BYTE_ORDER_MAGIC, le);
  v.setUint16(at + 12, 1, le);
  v.setUint16(at + 14, 0, le);
  v.setBigInt64(at + 16, -1n, le); // section length not specified
  v.setUint32(at + 24, 28, le);
  at += 28;
  for (const i of o.interfaces) {
    v.setUint32(at, PcapngBlockType.INTERFACE_DESCRIPTION, le);
    v.setUint32(at + 4, 32, le);
    v.setUint16(at + 8, i.linkType, le);
    v.setUint32(at + 12, i.snapLength ?? 262144, le);
    v.setUint16(at + 16, IF_TSRESOL, le);
    v.setUint16(at + 18, 1, le);
    v.setUint8(at + 20, 9); // 10^-9 s
    v.setUint32(at + 28, 32, le);
    at += 32;
  }
  for (const r of records) {
    const padded = pad4(r.data.length);
    if (o.simplePackets) {
      const length = 16 + padded;
      v.setUint32(at, PcapngBlockType.SIMPLE_PACKET, le);
      v.setUint32(at + 4, length, le);
      v.setUint32(at + 8, r.data.length, le);
      out.set(r.data, at + 12);
      v.setUint32(at + length - 4, length, le);
      at += length;
      continue;
    }
    const length = 32 + padded;
    v.setUint32(at, PcapngBlockType.ENHANCED_PACKET, le);
    v.setUint32(at + 4, length, le);
    v.setUint32(at + 8, r.interfaceId ?? 0, le);
    v.setUint32(at + 12, Number(r.timestampNs >> 32n), le);
    v.setUint32(at + 16, Number(r.timestampNs & 0xffffffffn), le);
    v.setUint32(at + 20, r.data.length, le);
    v.setUint32(at + 24, r.originalLength ?? r.data.length, le);
    out.set(r.data, at + 28);
    v.setUint32(at + length - 4, length, le);
    at += length;
  }
  return out;
}
