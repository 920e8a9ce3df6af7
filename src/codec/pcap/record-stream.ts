/**
 * Reading a capture incrementally: bytes go in as they are read (any chunk size), records
 * come out as soon as they are complete, and only the record being assembled is held, so
 * memory does not grow with the file. Each record is checked by the whole-file decoders
 * (decodePcap / decodePcapng run on the file header, or section header and interface
 * blocks, followed by that one record), so both paths apply the same rules; error offsets
 * are file offsets.
 */
import { DecodeError, type DecodeResult, decoded, failed } from '../errors.js';
import { appendPending, type PendingBytes } from '../pending-bytes.js';
import type { CaptureRecord } from './linktype.js';
import { decodePcap, isPcap } from './pcap.js';
import { decodePcapng, isPcapng, PcapngBlockType } from './pcapng.js';

const PCAP_HEADER_LENGTH = 24;
const PCAP_RECORD_HEADER_LENGTH = 16;
const PCAPNG_BLOCK_HEADER_LENGTH = 12;
const BYTE_ORDER_MAGIC = 0x1a2b3c4d;
/**
 * The largest record (pcap) or block (pcapng) a stream holds while it assembles it: a
 * corrupted length must not make the reader buffer the rest of a gigabyte file.
 */
export const MAX_STREAMED_RECORD = 64 * 1024 * 1024;

function tooLarge(layer: 'pcap' | 'pcapng', field: string, at: number, n: number): DecodeError {
  return new DecodeError(
    layer,
    field,
    at,
    'bad-length',
    `${n} bytes, more than the ${MAX_STREAMED_RECORD} a streamed record may have`,
  );
}

/** Bytes not consumed yet, appended to by `push`, consumed from the front. */
class ByteQueue implements PendingBytes {
  buf = new Uint8Array(64 * 1024);
  head = 0;
  tail = 0;
  /** File offset of the first unconsumed byte. */
  offset = 0;

  get length(): number {
    return this.tail - this.head;
  }

  push(chunk: Uint8Array): void {
    appendPending(this, chunk);
  }

  /** A view of the first `n` bytes (valid until the next push). */
  peek(n: number): Uint8Array {
    return this.buf.subarray(this.head, this.head + n);
  }

  /** A copy of the first `n` bytes, removed from the queue. */
  take(n: number): Uint8Array {
    const out = this.buf.slice(this.head, this.head + n);
    this.head += n;
    this.offset += n;
    return out;
  }
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length + b.length);
  out.set(a, 0);
  out.set(b, a.length);
  return out;
}

/** A record and its 0-based index in the file. */
export interface StreamedRecord extends CaptureRecord {
  readonly frameIndex: number;
}

/** Reads the records of a pcap or pcapng file from chunks of bytes. */
export class CaptureRecordStream {
  private readonly queue = new ByteQueue();
  private format: 'pcap' | 'pcapng' | undefined;
  /** pcap: the file header; pcapng: the current section header and interface blocks. */
  private prefix: Uint8Array = new Uint8Array(0);
  private littleEndian = true;
  private count = 0;
  private error: DecodeError | undefined;

  /** The file's format, once its first bytes have been seen. */
  get fileFormat(): 'pcap' | 'pcapng' | undefined {
    return this.format;
  }

  /** Records completed so far. */
  get records(): number {
    return this.count;
  }

  /**
   * Adds bytes; returns the records they complete, or the DecodeError that makes the rest
   * of the file unreadable (after which nothing more is returned).
   */
  push(chunk: Uint8Array): DecodeResult<StreamedRecord[]> {
    if (this.error !== undefined) return failed(this.error);
    this.queue.push(chunk);
    const out: StreamedRecord[] = [];
    for (;;) {
      const r = this.next();
      if (r === undefined) return decoded(out);
      if (!r.ok) {
        this.error = r.error;
        return out.length > 0 ? decoded(out) : failed(r.error);
      }
      out.push(r.value);
    }
  }

  /**
   * Called at the end of the file: undefined when it ended between records, else the
   * truncation (a capture cut in mid-record) or the error that stopped reading.
   */
  finish(): DecodeError | undefined {
    if (this.error !== undefined) return this.error;
    const q = this.queue;
    if (this.format === undefined) {
      if (q.length === 0 && this.count === 0)
        return new DecodeError('pcap', 'magic', 0, 'truncated', 'empty file');
      return new DecodeError('pcap', 'magic', 0, 'bad-value', 'neither pcap nor pcapng');
    }
    if (q.length === 0) return undefined;
    return new DecodeError(
      this.format,
      this.format === 'pcap' ? 'record' : 'block',
      q.offset,
      'truncated',
      `the file ends ${q.length} bytes into a record`,
    );
  }

  /** The next complete record, undefined when more bytes are needed. */
  private next(): DecodeResult<StreamedRecord> | undefined {
    const q = this.queue;
    if (this.format === undefined) {
      if (q.length < 4) return undefined;
      const head = q.peek(4);
      if (isPcapng(head)) this.format = 'pcapng';
      else if (isPcap(head)) this.format = 'pcap';
      else
        return failed(new DecodeError('pcap', 'magic', 0, 'bad-value', 'neither pcap nor pcapng'));
    }
    return this.format === 'pcap' ? this.nextPcap() : this.nextPcapng();
  }

  private withFileOffsets<T>(r: DecodeResult<T>, at: number): DecodeResult<T> {
    if (r.ok) return r;
    const e = r.error;
    // Offsets inside the prefix are file offsets already (pcap header; pcapng blocks are
    // re-based below); offsets in the record part move to where the record is in the file.
    const offset = e.offset < this.prefix.length ? e.offset : at + e.offset - this.prefix.length;
    const prefix = `${e.layer}.${e.field} at offset ${e.offset}: ${e.reason}: `;
    const detail = e.message.startsWith(prefix) ? e.message.slice(prefix.length) : e.message;
    return failed(new DecodeError(e.layer, e.field, offset, e.reason, detail));
  }

  private nextPcap(): DecodeResult<StreamedRecord> | undefined {
    const q = this.queue;
    if (this.prefix.length === 0) {
      if (q.length < PCAP_HEADER_LENGTH) return undefined;
      const header = q.take(PCAP_HEADER_LENGTH);
      const r = decodePcap(header);
      if (!r.ok) return r;
      this.prefix = header;
      this.littleEndian = r.value.littleEndian;
    }
    if (q.length < PCAP_RECORD_HEADER_LENGTH) return undefined;
    const h = q.peek(PCAP_RECORD_HEADER_LENGTH);
    const included = new DataView(h.buffer, h.byteOffset, PCAP_RECORD_HEADER_LENGTH).getUint32(
      8,
      this.littleEndian,
    );
    if (included > MAX_STREAMED_RECORD)
      return failed(tooLarge('pcap', 'record.includedLength', q.offset + 8, included));
    if (q.length < PCAP_RECORD_HEADER_LENGTH + included) return undefined;
    const at = q.offset;
    const record = q.take(PCAP_RECORD_HEADER_LENGTH + included);
    const r = this.withFileOffsets(decodePcap(concat(this.prefix, record)), at);
    if (!r.ok) return r;
    const only = r.value.records[0];
    if (only === undefined) return undefined;
    return decoded({ ...only, frameIndex: this.count++ });
  }

  private nextPcapng(): DecodeResult<StreamedRecord> | undefined {
    for (;;) {
      const q = this.queue;
      if (q.length < PCAPNG_BLOCK_HEADER_LENGTH) return undefined;
      const h = q.peek(PCAPNG_BLOCK_HEADER_LENGTH);
      const v = new DataView(h.buffer, h.byteOffset, PCAPNG_BLOCK_HEADER_LENGTH);
      const isSection = v.getUint32(0, true) === PcapngBlockType.SECTION_HEADER;
      let le = this.littleEndian;
      if (isSection) le = v.getUint32(8, true) === BYTE_ORDER_MAGIC;
      const total = v.getUint32(4, le);
      const at = q.offset;
      // Let the whole-file decoder name a bad length (it reads the same header).
      const bad = total < PCAPNG_BLOCK_HEADER_LENGTH || total % 4 !== 0;
      if (total > MAX_STREAMED_RECORD)
        return failed(tooLarge('pcapng', 'block.totalLength', at + 4, total));
      if (!bad && q.length < total) return undefined;
      const block = q.take(bad ? PCAPNG_BLOCK_HEADER_LENGTH : total);
      if (isSection) {
        const r = decodePcapng(block);
        if (!r.ok) return this.rebase(r, at, 0);
        this.littleEndian = r.value.littleEndian;
        this.prefix = block;
        continue;
      }
      const mini = concat(this.prefix, block);
      const r = decodePcapng(mini);
      if (!r.ok) return this.rebase(r, at, this.prefix.length);
      const type = v.getUint32(0, this.littleEndian);
      if (type === PcapngBlockType.INTERFACE_DESCRIPTION) {
        this.prefix = mini;
        continue;
      }
      const only = r.value.records[0];
      if (only === undefined) continue; // a block that carries no packet
      return decoded({ ...only, frameIndex: this.count++ });
    }
  }

  private rebase<T>(r: DecodeResult<T>, at: number, blockStart: number): DecodeResult<T> {
    if (r.ok) return r;
    const e = r.error;
    const offset = e.offset >= blockStart ? at + e.offset - blockStart : e.offset;
    const prefix = `${e.layer}.${e.field} at offset ${e.offset}: ${e.reason}: `;
    const detail = e.message.startsWith(prefix) ? e.message.slice(prefix.length) : e.message;
    return failed(new DecodeError(e.layer, e.field, offset, e.reason, detail));
  }
}
