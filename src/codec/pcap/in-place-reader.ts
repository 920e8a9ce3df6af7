/**
 * Reading a capture file in place, as fast as it arrives: bytes of a pcap or pcapng file go
 * in (any chunk size) and each record comes out as a range of the bytes it arrived in, with
 * its link type, index and time; a classic pcap record is never copied unless a chunk cut
 * it (then only that record is). pcapng goes through CaptureRecordStream. The lazy capture
 * decoder (capture/lazy-decode.ts) reads with it.
 */
import { DecodeError } from '../errors.js';
import { CaptureRecordStream } from './record-stream.js';

/**
 * Receives one record: bytes[start, end), valid during the call only; the capture time as
 * whole seconds since the epoch and nanoseconds within the second.
 */
export type InPlaceRecord = (
  linkType: number,
  bytes: Uint8Array,
  start: number,
  end: number,
  frameIndex: number,
  seconds: number,
  nanoseconds: number,
) => void;

const PCAP_HEADER_LENGTH = 24;
const PCAP_RECORD_HEADER_LENGTH = 16;
/** Records larger than this are a corrupted length, not a packet. */
const MAX_RECORD = 64 * 1024 * 1024;

/** Reads a capture's records in place (see the module comment). */
export class InPlaceRecordReader {
  /** The file format once known. */
  format: 'pcap' | 'pcapng' | undefined;
  /** Why reading stopped (a bad or cut record), once it has. */
  end: DecodeError | undefined;
  // Classic pcap state.
  private carry = new Uint8Array(0);
  private fileOffset = 0;
  private littleEndian = true;
  private nanosecondTime = false;
  private linkType = 1;
  private recordsRead = 0;
  private pcapng: CaptureRecordStream | undefined;
  private fatal = false;

  constructor(private readonly onRecord: InPlaceRecord) {}

  /** Records read so far. */
  get recordCount(): number {
    return this.pcapng?.records ?? this.recordsRead;
  }

  /** Feeds the next bytes of the file. */
  push(chunk: Uint8Array): void {
    if (this.fatal) return;
    if (this.pcapng !== undefined) {
      this.pushPcapng(chunk);
      return;
    }
    let bytes = chunk;
    let at = 0;
    if (this.carry.length > 0 && this.format === 'pcap') {
      // Complete the record the previous chunk cut, copying only that record's bytes.
      while (this.carry.length > 0) {
        if (
          this.carry.length >= PCAP_RECORD_HEADER_LENGTH &&
          this.u32(this.carry, 8) > MAX_RECORD
        ) {
          this.readRecords(this.carry, 0); // reports the bad length
          return;
        }
        const want =
          this.carry.length < PCAP_RECORD_HEADER_LENGTH
            ? PCAP_RECORD_HEADER_LENGTH
            : PCAP_RECORD_HEADER_LENGTH + this.u32(this.carry, 8);
        const take = Math.min(want - this.carry.length, chunk.length - at);
        const joined = new Uint8Array(this.carry.length + take);
        joined.set(this.carry, 0);
        joined.set(chunk.subarray(at, at + take), this.carry.length);
        this.carry = joined;
        at += take;
        if (this.carry.length < want) return;
        if (want === PCAP_RECORD_HEADER_LENGTH) continue;
        const used = this.readRecords(this.carry, 0);
        if (this.fatal) return;
        this.carry = this.carry.subarray(used).slice();
      }
    } else if (this.carry.length > 0) {
      const joined = new Uint8Array(this.carry.length + chunk.length);
      joined.set(this.carry, 0);
      joined.set(chunk, this.carry.length);
      bytes = joined;
    }
    if (this.format === undefined) {
      if (bytes.length < 4) {
        this.carry = bytes.slice();
        return;
      }
      const magic = bytes[0]! | (bytes[1]! << 8) | (bytes[2]! << 16) | (bytes[3]! << 24);
      if (magic >>> 0 === 0x0a0d0d0a) {
        this.format = 'pcapng';
        this.pcapng = new CaptureRecordStream();
        this.carry = new Uint8Array(0);
        this.pushPcapng(bytes);
        return;
      }
      if (bytes.length < PCAP_HEADER_LENGTH) {
        this.carry = bytes.slice();
        return;
      }
      const le = magic >>> 0;
      const be = ((bytes[0]! << 24) | (bytes[1]! << 16) | (bytes[2]! << 8) | bytes[3]!) >>> 0;
      if (le === 0xa1b2c3d4 || le === 0xa1b23c4d) {
        this.littleEndian = true;
        this.nanosecondTime = le === 0xa1b23c4d;
      } else if (be === 0xa1b2c3d4 || be === 0xa1b23c4d) {
        this.littleEndian = false;
        this.nanosecondTime = be === 0xa1b23c4d;
      } else {
        this.fatal = true;
        this.end = new DecodeError('pcap', 'magic', 0, 'bad-value', 'neither pcap nor pcapng');
        return;
      }
      this.format = 'pcap';
      this.linkType = this.u32(bytes, 20) & 0x0fffffff;
      at = PCAP_HEADER_LENGTH;
      this.fileOffset = PCAP_HEADER_LENGTH;
    }
    if (this.fatal) return;
    at = this.readRecords(bytes, at);
    if (this.fatal) return;
    this.carry = at === bytes.length ? new Uint8Array(0) : bytes.slice(at);
  }

  /** Decodes the complete records of `bytes` from `at`; returns where the first incomplete one starts. */
  private readRecords(bytes: Uint8Array, at: number): number {
    for (;;) {
      if (bytes.length - at < PCAP_RECORD_HEADER_LENGTH) break;
      const included = this.u32(bytes, at + 8);
      if (included > MAX_RECORD) {
        this.fatal = true;
        this.end = new DecodeError(
          'pcap',
          'includedLength',
          this.fileOffset + 8,
          'bad-length',
          `${included} bytes, more than the ${MAX_RECORD} a record may have`,
        );
        return at;
      }
      if (bytes.length - at < PCAP_RECORD_HEADER_LENGTH + included) break;
      const seconds = this.u32(bytes, at);
      const fraction = this.u32(bytes, at + 4);
      const start = at + PCAP_RECORD_HEADER_LENGTH;
      this.onRecord(
        this.linkType,
        bytes,
        start,
        start + included,
        this.recordsRead++,
        seconds,
        this.nanosecondTime ? fraction : fraction * 1000,
      );
      at = start + included;
      this.fileOffset += PCAP_RECORD_HEADER_LENGTH + included;
    }
    return at;
  }

  private pushPcapng(chunk: Uint8Array): void {
    const r = this.pcapng!.push(chunk);
    if (!r.ok) {
      this.fatal = true;
      this.end = r.error;
      return;
    }
    for (const rec of r.value) {
      const ns = rec.timestampNs;
      this.onRecord(
        rec.linkType,
        rec.data,
        0,
        rec.data.length,
        rec.frameIndex,
        Number(ns / 1_000_000_000n),
        Number(ns % 1_000_000_000n),
      );
    }
  }

  private u32(b: Uint8Array, at: number): number {
    return this.littleEndian
      ? (b[at]! | (b[at + 1]! << 8) | (b[at + 2]! << 16) | (b[at + 3]! << 24)) >>> 0
      : ((b[at]! << 24) | (b[at + 1]! << 16) | (b[at + 2]! << 8) | b[at + 3]!) >>> 0;
  }

  /** The end of the file: sets `end` when it was cut or bad. */
  finish(): void {
    if (this.pcapng !== undefined) {
      this.end ??= this.pcapng.finish();
    } else if (!this.fatal) {
      if (this.format === undefined)
        this.end =
          this.carry.length === 0
            ? new DecodeError('pcap', 'magic', 0, 'truncated', 'empty file')
            : new DecodeError('pcap', 'magic', 0, 'truncated', 'shorter than a file header');
      else if (this.carry.length > 0)
        this.end = new DecodeError(
          'pcap',
          'record',
          this.fileOffset,
          'truncated',
          `the last record is cut short (${this.carry.length} bytes of it present)`,
        );
    }
  }
}
