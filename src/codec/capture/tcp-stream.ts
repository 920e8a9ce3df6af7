/**
 * One TCP direction as a capture decoder sees it: segments go in in capture order,
 * in-order byte ranges come out, each with the frame that carried it. The sequence
 * arithmetic of every capture decoder (tcp-reassembly.ts under the whole-capture decoder,
 * stream-decode.ts for the tree and JSON outputs, lazy-decode.ts for the line outputs) is
 * this one: no other file compares or adds sequence numbers.
 *
 * Rules (RFC 9293 §3.4 sequence space, 32-bit, compared by signed distance): the SYN occupies
 * one sequence number; without a SYN the first segment with data starts the stream (a
 * decoder that has every segment may fix the start first: `startAt`, `firstSequence`);
 * bytes already received are dropped (retransmissions, overlaps), shown to `onRepeated`
 * when set; a segment beyond the next expected byte is held (a copy) until the hole before
 * it fills, at most `holdLimit` bytes per direction (MAX_HELD_BYTES for the streaming
 * decoders), the held segments taken in stream order (lowest sequence number first, then
 * arrival); `skipHole` moves past a hole that will not fill. Delivered bytes the consumer
 * does not use at once wait in a buffer (`pending`) with the frames they came from, until
 * `consume`.
 */
import { DecodeError } from '../errors.js';
import { appendPending, type PendingBytes } from '../pending-bytes.js';

/** Bytes a direction may hold beyond a hole before the hole is reported and the direction dropped. */
export const MAX_HELD_BYTES = 16 * 1024 * 1024;

/** Signed 32-bit distance from sequence number `a` to `b`. */
function seqDelta(a: number, b: number): number {
  return (b - a) | 0;
}

const SYN = 0x02;

/**
 * The sequence number of a direction's first byte when all its segments are known: after
 * the first SYN's (the SYN occupies one, RFC 9293 §3.4), else the lowest sequence number of
 * a segment with data (compared by signed distance); undefined when no segment has data.
 */
export function firstSequence(
  segments: Iterable<{
    readonly sequenceNumber: number;
    readonly flags: number;
    readonly payload: { readonly length: number };
  }>,
): number | undefined {
  let lowest: number | undefined;
  for (const s of segments) {
    if (s.flags & SYN) return (s.sequenceNumber + 1) >>> 0;
    if (s.payload.length > 0 && (lowest === undefined || seqDelta(lowest, s.sequenceNumber) < 0))
      lowest = s.sequenceNumber;
  }
  return lowest;
}

/** The error of `length` bytes missing at sequence number `sequence`. */
export function missingBytesError(length: number, sequence: number): DecodeError {
  return new DecodeError(
    'tcp',
    'sequenceNumber',
    0,
    'truncated',
    `${length} bytes missing at sequence ${sequence}; later bytes not decoded`,
  );
}

/** Bytes missing between two in-order stretches of a direction (`TcpStream.skipHole`). */
export interface SequenceGap {
  /** Sequence number of the first missing byte (unsigned 32-bit). */
  readonly startSequence: number;
  readonly length: number;
}

/**
 * Receives in-order bytes b[start, end) carried by frame `from` (a segment's new bytes where
 * they lie, or a held segment's copy).
 */
export type InOrderBytes<F> = (b: Uint8Array, start: number, end: number, from: F) => void;

/**
 * Receives bytes b[start, end) of a segment that were received before, or that lie before
 * the stream's start: `offset` is the stream offset of b[start] (negative before the start).
 */
export type RepeatedBytes = (offset: number, b: Uint8Array, start: number, end: number) => void;

interface Held<F> {
  /** Stream offset of the segment's first byte. */
  readonly offset: number;
  readonly payload: Uint8Array;
  readonly from: F;
}

/** One TCP direction, reassembled as it arrives; `F` is the consumer's frame reference. */
export class TcpStream<F> implements PendingBytes {
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
  buf: Uint8Array = new Uint8Array(0);
  head = 0;
  tail = 0;
  /** Where pending bytes came from: stream offsets and frames, in order. */
  private pieceOffsets: number[] = [];
  private pieceFrames: F[] = [];
  /** Segments beyond a hole, in stream order (offset, then arrival). */
  private held: Held<F>[] = [];
  private heldBytes = 0;
  /** Where bytes already received go, when the consumer wants to see them. */
  onRepeated: RepeatedBytes | undefined;
  /**
   * Held segments whose bytes all came in another since the last `takeHeldDuplicates`:
   * frames that brought nothing new, as one that arrives after its bytes is.
   */
  private heldDuplicates = 0;

  /**
   * @param lastFrom the frame of the last in-order bytes (at first: a placeholder).
   * @param holdLimit bytes held beyond a hole before `accept` answers 'gap'.
   * @param stablePayloads the payloads given to `accept` stay unchanged (reassembleTcp's
   *   segments): a held segment keeps a view of its bytes, not a copy (the streaming
   *   decoders reuse their chunks, so they keep the default).
   */
  constructor(
    public lastFrom: F,
    readonly holdLimit = MAX_HELD_BYTES,
    readonly stablePayloads = false,
  ) {}

  /** Fixes the sequence number of stream offset 0 before any segment (see `firstSequence`). */
  startAt(sequence: number): void {
    this.start(sequence >>> 0);
  }

  /** The sequence number of stream offset `offset`. */
  sequenceAt(offset: number): number {
    return (this.startSequence + offset) >>> 0;
  }

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
   * 'old' when it brought none, 'gap' when holding it would exceed `holdLimit` (nothing
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
    if (delta + length <= 0) {
      this.onRepeated?.(this.received + delta, b, start, end);
      return 'old';
    }
    if (delta > 0) {
      if (this.heldBytes + length > this.holdLimit) return 'gap';
      const payload = this.stablePayloads ? b.subarray(start, end) : b.slice(start, end);
      this.hold({ offset: this.received + delta, payload, from });
      return 'new';
    }
    if (delta < 0) this.onRepeated?.(this.received + delta, b, start, start - delta);
    this.deliver(b, start - delta, end, from, deliver);
    this.deliverHeld(deliver);
    return 'new';
  }

  /** Inserts a held segment after those that start at or before it. */
  private hold(h: Held<F>): void {
    const held = this.held;
    let lo = 0;
    let hi = held.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (held[mid]!.offset <= h.offset) lo = mid + 1;
      else hi = mid;
    }
    held.splice(lo, 0, h);
    this.heldBytes += h.payload.length;
  }

  /** Delivers the held segments the in-order bytes have reached. */
  private deliverHeld(deliver: InOrderBytes<F>): void {
    let taken = 0;
    const held = this.held;
    while (taken < held.length && held[taken]!.offset <= this.received) {
      const h = held[taken++]!;
      this.heldBytes -= h.payload.length;
      const skip = this.received - h.offset;
      if (skip > 0) this.onRepeated?.(h.offset, h.payload, 0, Math.min(skip, h.payload.length));
      if (skip < h.payload.length) this.deliver(h.payload, skip, h.payload.length, h.from, deliver);
      else this.heldDuplicates++;
    }
    if (taken > 0) held.splice(0, taken);
  }

  /**
   * Moves past the hole before the first held segment (a decoder that has read every
   * segment: the hole will not fill) and delivers what follows it; bytes still pending are
   * dropped (take them first). Undefined when nothing is held.
   */
  skipHole(deliver: InOrderBytes<F>): SequenceGap | undefined {
    const first = this.held[0];
    if (first === undefined) return undefined;
    this.consume(this.pendingLength);
    const gap = { startSequence: this.next, length: first.offset - this.received };
    this.next = this.sequenceAt(first.offset);
    this.received = first.offset;
    this.consumed = first.offset;
    this.deliverHeld(deliver);
    return gap;
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
    appendPending(this, bytes, 4096);
    this.pieceOffsets.push(this.received);
    this.pieceFrames.push(from);
    this.received += bytes.length;
  }

  /**
   * In-order bytes the consumer keeps, taken as they are, not copied (a decoder that has
   * the whole direction already: they must not change while pending), with the frames
   * that supplied them: `pieces[i]` starts at `bytes[offsets[i]]`. Only while nothing is
   * pending.
   */
  adopt(bytes: Uint8Array, offsets: readonly number[], frames: readonly F[]): void {
    this.buf = bytes;
    this.head = 0;
    this.tail = bytes.length;
    this.pieceOffsets = offsets.map((o) => this.received + o);
    this.pieceFrames = [...frames];
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

  /**
   * Where the pending bytes came from: stream offsets where a frame's bytes begin, and the
   * frames, in order (the first may begin before the first pending byte).
   */
  pendingPieces(): { readonly offsets: readonly number[]; readonly frames: readonly F[] } {
    return { offsets: this.pieceOffsets, frames: this.pieceFrames };
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
    const first = this.held[0];
    if (first === undefined) return undefined;
    return missingBytesError(first.offset - this.received, this.next);
  }

  /** The error of a direction given up because a hole held back more than `holdLimit`. */
  holdLimitError(): DecodeError {
    return new DecodeError(
      'tcp',
      'sequenceNumber',
      0,
      'truncated',
      `more than ${this.holdLimit} bytes held behind a hole at stream offset ${this.received}; later bytes not decoded`,
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
