/**
 * One TCP direction as a streaming capture decoder sees it: segments go in as frames are
 * read, in-order byte ranges come out, each with the frame that carried it. The sequence
 * arithmetic of both streaming decoders (stream-decode.ts for the tree and JSON outputs,
 * lazy-decode.ts for the line outputs) is this one.
 *
 * Rules (RFC 9293 §3.4 sequence space, 32-bit, compared by signed distance): the SYN occupies
 * one sequence number; without a SYN the first segment with data starts the stream; bytes
 * already received are dropped (retransmissions, overlaps); a segment beyond the next
 * expected byte is held (a copy) until the hole before it fills, at most MAX_HELD_BYTES per
 * direction. Delivered bytes the consumer does not use at once wait in a buffer (`pending`)
 * with the frames they came from, until `consume`.
 */
import { DecodeError } from '../errors.js';

/** Bytes a direction may hold beyond a hole before the hole is reported and the direction dropped. */
export const MAX_HELD_BYTES = 16 * 1024 * 1024;

/** Signed 32-bit distance from sequence number `a` to `b`. */
function seqDelta(a: number, b: number): number {
  return (b - a) | 0;
}

const SYN = 0x02;

/**
 * Receives in-order bytes b[start, end) carried by frame `from` (a segment's new bytes where
 * they lie, or a held segment's copy).
 */
export type InOrderBytes<F> = (b: Uint8Array, start: number, end: number, from: F) => void;

/** One TCP direction, reassembled as it arrives; `F` is the consumer's frame reference. */
export class TcpStream<F> {
  /** Whether the stream's first sequence number is known (a SYN or the first data). */
  private started = false;
  /** Sequence number of the next byte expected. */
  private next = 0;
  /** The sequence number of stream offset 0. */
  startSequence = 0;
  /** Stream offset of the next byte expected (bytes received in order). */
  received = 0;
  /** Stream offset of the first pending byte (bytes received and used). */
  consumed = 0;
  /** Pending bytes: buf[head, tail) are stream offsets consumed..received. */
  buf = new Uint8Array(0);
  head = 0;
  tail = 0;
  /** Where pending bytes came from: stream offsets and frames, in order. */
  private pieceOffsets: number[] = [];
  private pieceFrames: F[] = [];
  private held: { seq: number; payload: Uint8Array; from: F }[] = [];
  private heldBytes = 0;
  /**
   * Held segments whose bytes all came in another since the last `takeHeldDuplicates`:
   * frames that brought nothing new, as one that arrives after its bytes is.
   */
  private heldDuplicates = 0;

  /** @param lastFrom the frame of the last in-order bytes (at first: a placeholder). */
  constructor(public lastFrom: F) {}

  get pendingLength(): number {
    return this.tail - this.head;
  }

  /** The pending bytes (a view, valid until the next append). */
  pending(): Uint8Array {
    return this.buf.subarray(this.head, this.tail);
  }

  /**
   * Places a segment (sequence number, TCP flags, payload b[start, end)): 'new' when it
   * brought bytes (delivered to `deliver` in order, or held until the hole before it fills),
   * 'old' when it brought none, 'gap' when holding it would exceed MAX_HELD_BYTES (nothing
   * is held then).
   */
  accept(
    seq: number,
    flags: number,
    b: Uint8Array,
    start: number,
    end: number,
    from: F,
    deliver: InOrderBytes<F>,
  ): 'new' | 'old' | 'gap' {
    let dataSeq = seq;
    if (flags & SYN) {
      dataSeq = (seq + 1) >>> 0; // the SYN occupies one sequence number (RFC 9293 §3.4)
      if (!this.started) this.start(dataSeq);
    }
    const length = end - start;
    if (length === 0) return 'old';
    if (!this.started) this.start(dataSeq);
    const delta = seqDelta(this.next, dataSeq);
    if (delta + length <= 0) return 'old';
    if (delta > 0) {
      if (this.heldBytes + length > MAX_HELD_BYTES) return 'gap';
      this.held.push({ seq: dataSeq, payload: b.slice(start, end), from });
      this.heldBytes += length;
      return 'new';
    }
    this.deliver(b, start - delta, end, from, deliver);
    while (this.held.length > 0) {
      const i = this.held.findIndex((h) => seqDelta(this.next, h.seq) <= 0);
      if (i < 0) break;
      const h = this.held.splice(i, 1)[0]!;
      this.heldBytes -= h.payload.length;
      const skip = -seqDelta(this.next, h.seq);
      if (skip < h.payload.length) this.deliver(h.payload, skip, h.payload.length, h.from, deliver);
      else this.heldDuplicates++;
    }
    return 'new';
  }

  private start(dataSeq: number): void {
    this.started = true;
    this.next = dataSeq;
    this.startSequence = dataSeq;
  }

  private deliver(b: Uint8Array, start: number, end: number, from: F, to: InOrderBytes<F>) {
    this.next = (this.next + (end - start)) >>> 0;
    this.lastFrom = from;
    to(b, start, end, from);
  }

  /** Held segments that turned out to bring nothing new, since the last call. */
  takeHeldDuplicates(): number {
    const n = this.heldDuplicates;
    this.heldDuplicates = 0;
    return n;
  }

  /** In-order bytes the consumer keeps for later: appended to the pending bytes. */
  append(bytes: Uint8Array, from: F): void {
    if (this.tail + bytes.length > this.buf.length) {
      const live = this.tail - this.head;
      const size = Math.max(4096, this.buf.length, (live + bytes.length) * 2);
      const next = size === this.buf.length ? this.buf : new Uint8Array(size);
      next.set(this.buf.subarray(this.head, this.tail), 0);
      this.buf = next;
      this.head = 0;
      this.tail = live;
    }
    this.buf.set(bytes, this.tail);
    this.tail += bytes.length;
    this.pieceOffsets.push(this.received);
    this.pieceFrames.push(from);
    this.received += bytes.length;
  }

  /** In-order bytes the consumer used where they lay (only while nothing is pending). */
  usedInPlace(n: number): void {
    this.received += n;
    this.consumed += n;
  }

  /** The first `n` pending bytes are used. */
  consume(n: number): void {
    this.head += n;
    this.consumed += n;
    if (this.head === this.tail) {
      this.head = 0;
      this.tail = 0;
    }
    // Keep the last piece that starts at or before the consumed point.
    let drop = 0;
    const offsets = this.pieceOffsets;
    while (drop + 1 < offsets.length && offsets[drop + 1]! <= this.consumed) drop++;
    if (drop > 0) {
      offsets.splice(0, drop);
      this.pieceFrames.splice(0, drop);
    }
  }

  /** The frame that supplied pending stream offset `offset`. */
  frameAt(offset: number): F {
    let found = this.pieceFrames[0] ?? this.lastFrom;
    for (let i = 0; i < this.pieceOffsets.length; i++) {
      if (this.pieceOffsets[i]! > offset) break;
      found = this.pieceFrames[i]!;
    }
    return found;
  }

  /** The error of a hole that never filled (segments still held at the end), if any. */
  holeError(): DecodeError | undefined {
    if (this.held.length === 0) return undefined;
    let first = this.held[0]!.seq;
    for (const h of this.held) if (seqDelta(first, h.seq) < 0) first = h.seq;
    return new DecodeError(
      'tcp',
      'sequenceNumber',
      0,
      'truncated',
      `${seqDelta(this.next, first)} bytes missing at sequence ${this.next}; later bytes not decoded`,
    );
  }

  /** The error of a direction given up because a hole held back more than MAX_HELD_BYTES. */
  holdLimitError(): DecodeError {
    return new DecodeError(
      'tcp',
      'sequenceNumber',
      0,
      'truncated',
      `more than ${MAX_HELD_BYTES} bytes held behind a hole at stream offset ${this.received}; later bytes not decoded`,
    );
  }

  /** Drops everything buffered and held (a direction that will not be decoded further). */
  release(): void {
    this.buf = new Uint8Array(0);
    this.head = 0;
    this.tail = 0;
    this.consumed = this.received;
    this.pieceOffsets = [];
    this.pieceFrames = [];
    this.held = [];
    this.heldBytes = 0;
  }
}

/** A DecodeError of a view at stream offset `base`, with its offset made a stream offset. */
export function rebased(e: DecodeError, base: number): DecodeError {
  const prefix = `${e.layer}.${e.field} at offset ${e.offset}: ${e.reason}: `;
  const detail = e.message.startsWith(prefix) ? e.message.slice(prefix.length) : e.message;
  return new DecodeError(e.layer, e.field, e.offset + base, e.reason, detail);
}
