/**
 * The capture decoder of `rdma-interop decode`, frame by frame: each record goes in as it
 * is read and the items it completes come out at once, so a capture of any size is decoded
 * in bounded memory. RoCEv2 frames give their item immediately; TCP payload is reassembled
 * per direction as it arrives (RFC 9293 sequence space: retransmitted bytes dropped, early
 * segments held until the hole before them fills) and a direction that starts with an MPA
 * Request or Reply is decoded FPDU by FPDU as soon as each is complete; decoded bytes are
 * released. An FPDU's item names the frame that carried its first byte, and comes out when
 * its last byte arrives.
 *
 * The rules are those of `decodeCaptureMessages` (the whole-capture decoder): the same
 * frame, RoCE, MPA and FPDU decoders; a direction's settings are negotiated from its own
 * frame and the peer's (RFC 5044 §7.1), waiting for the peer's frame before the first FPDU.
 */
import { DecodeError } from '../errors.js';
import type { MpaNegotiated, MpaRequestReply } from '../iwarp/messages.js';
import { decodeFpdu } from '../iwarp/mpa.js';
import { decodeMpaFrame, MPA_KEY_LENGTH, mpaFrameKind } from '../iwarp/mpa-frames.js';
import type { IwarpProfile } from '../iwarp/profiles.js';
import { decodeRdmapMessage } from '../iwarp/rdmap.js';
import { negotiateMpa } from '../iwarp/stream.js';
import { decodeFrame } from '../net/frame.js';
import { TcpFlag } from '../net/tcp.js';
import type { CaptureRecord } from '../pcap/linktype.js';
import { ROCE_V2_UDP_PORT } from '../roce/packet.js';
import {
  type CaptureDecodeOptions,
  type CaptureItem,
  type ItemOrigin,
  type RoceFlows,
  roceItem,
} from './decode-capture.js';
import type { TcpEndpoint } from './tcp-reassembly.js';

/** Bytes a direction may hold beyond a hole before the hole is reported and the direction dropped. */
export const MAX_HELD_BYTES = 16 * 1024 * 1024;

/** Counts for the summary line. */
export interface StreamCounts {
  frames: number;
  roce: number;
  connections: number;
  fpdus: number;
  problems: number;
  otherFrames: number;
}

type Direction = 'client-to-server' | 'server-to-client';

/** Where bytes came from: a frame and its capture time. */
interface FrameRef {
  readonly frameIndex: number;
  readonly timestampNs: bigint;
}

interface Held {
  readonly start: number;
  readonly payload: Uint8Array;
  readonly from: FrameRef;
}

interface Piece {
  /** Stream offset of the piece's first byte. */
  readonly offset: number;
  readonly from: FrameRef;
}

/** One direction of a TCP connection, reassembled and decoded as it arrives. */
class DirectionState {
  state: 'undecided' | 'mpa' | 'not-mpa' | 'stopped' = 'undecided';
  /** Unwrapped position of stream offset 0; undefined until the first SYN or data. */
  base: number | undefined;
  /** The sequence number of stream offset 0. */
  startSequence = 0;
  private lastSeq: number | undefined;
  private lastUnwrapped = 0;
  /** Stream offset of the next byte expected (= bytes received in order). */
  received = 0;
  private held: Held[] = [];
  private heldBytes = 0;
  /**
   * Held segments whose bytes all came in another (frames with no new bytes, as one that
   * arrives after them is): the decoder counts them as other frames.
   */
  heldDuplicates = 0;
  /** Received, not yet decoded bytes: buf[head..tail) are stream offsets consumed..received. */
  private buf = new Uint8Array(4096);
  private head = 0;
  private tail = 0;
  /** Stream offset of buf[head]. */
  consumed = 0;
  private pieces: Piece[] = [];
  /** Frames whose bytes went here while undecided (counted as "other" if not MPA). */
  undecidedFrames = 0;
  frame: MpaRequestReply | undefined;
  negotiated: MpaNegotiated | undefined;
  firstFpduOffset = 0;

  constructor(
    readonly source: TcpEndpoint,
    readonly destination: TcpEndpoint,
  ) {}

  /**
   * Places a segment: 'new' when it brought bytes (in order, or held until the hole before
   * it fills), 'old' when it brought none, 'gap' when holding it would exceed MAX_HELD_BYTES.
   */
  place(seq: number, flags: number, payload: Uint8Array, from: FrameRef): 'new' | 'old' | 'gap' {
    // A direction that will not be decoded keeps nothing (not even segments held early).
    if (this.state === 'not-mpa' || this.state === 'stopped') return 'old';
    const pos =
      this.lastSeq === undefined ? 2 ** 34 + seq : this.lastUnwrapped + seqDelta(this.lastSeq, seq);
    this.lastSeq = seq;
    this.lastUnwrapped = pos;
    let start = pos;
    if (flags & TcpFlag.SYN) {
      start = pos + 1; // the SYN occupies one sequence number (RFC 9293 §3.4)
      if (this.base === undefined) {
        this.base = pos + 1;
        this.startSequence = (seq + 1) >>> 0;
      }
    }
    if (payload.length === 0) return 'old';
    if (this.base === undefined) {
      this.base = start;
      this.startSequence = (start - 2 ** 34) >>> 0;
    }
    const next = this.base + this.received;
    const end = start + payload.length;
    if (end <= next) return 'old';
    if (start > next) {
      if (this.heldBytes + payload.length > MAX_HELD_BYTES) return 'gap';
      this.held.push({ start, payload: payload.slice(), from });
      this.heldBytes += payload.length;
      return 'new';
    }
    this.append(payload.subarray(next - start), from);
    this.drainHeld();
    return 'new';
  }

  private drainHeld(): void {
    for (;;) {
      const next = this.base! + this.received;
      const i = this.held.findIndex((h) => h.start <= next);
      if (i < 0) return;
      const h = this.held.splice(i, 1)[0]!;
      this.heldBytes -= h.payload.length;
      const end = h.start + h.payload.length;
      if (end > next) this.append(h.payload.subarray(next - h.start), h.from);
      else this.heldDuplicates++;
    }
  }

  private append(bytes: Uint8Array, from: FrameRef): void {
    if (this.state === 'not-mpa' || this.state === 'stopped') {
      this.received += bytes.length;
      this.consumed = this.received;
      return;
    }
    if (this.tail + bytes.length > this.buf.length) {
      const live = this.tail - this.head;
      const size = Math.max(this.buf.length, (live + bytes.length) * 2);
      const next = size === this.buf.length ? this.buf : new Uint8Array(size);
      next.set(this.buf.subarray(this.head, this.tail), 0);
      this.buf = next;
      this.head = 0;
      this.tail = live;
    }
    this.buf.set(bytes, this.tail);
    this.tail += bytes.length;
    this.pieces.push({ offset: this.received, from });
    this.lastAppended = from;
    this.received += bytes.length;
  }

  /** The undecoded bytes (a view, valid until the next append). */
  pending(): Uint8Array {
    return this.buf.subarray(this.head, this.tail);
  }

  consume(n: number): void {
    this.head += n;
    this.consumed += n;
    // Keep the last piece that starts at or before the consumed point.
    let drop = 0;
    while (drop + 1 < this.pieces.length && this.pieces[drop + 1]!.offset <= this.consumed) drop++;
    if (drop > 0) this.pieces.splice(0, drop);
  }

  /** Drops everything buffered (a direction that will not be decoded). */
  release(state: 'not-mpa' | 'stopped'): void {
    this.state = state;
    this.buf = new Uint8Array(0);
    this.head = 0;
    this.tail = 0;
    this.pieces = [];
    this.held = [];
    this.heldBytes = 0;
    this.consumed = this.received;
  }

  /** The frame that supplied stream offset `offset` (at or after the consumed point). */
  frameAt(offset: number): FrameRef {
    let found = this.pieces[0]?.from ?? NO_FRAME;
    for (const p of this.pieces) {
      if (p.offset > offset) break;
      found = p.from;
    }
    return found;
  }

  /** A hole that never filled: the sequence number of its first byte and its length. */
  gap(): { startSequence: number; length: number } | undefined {
    if (this.held.length === 0 || this.base === undefined) return undefined;
    const first = Math.min(...this.held.map((h) => h.start));
    const next = this.base + this.received;
    return { startSequence: (this.startSequence + this.received) >>> 0, length: first - next };
  }

  /** The frame that supplied the last bytes before a hole (where the hole is reported). */
  lastAppended: FrameRef = NO_FRAME;
}

const NO_FRAME: FrameRef = { frameIndex: 0, timestampNs: 0n };
const MOD = 2 ** 32;

/** Signed distance from `a` to `b` in 32-bit sequence space (RFC 1982 style). */
function seqDelta(a: number, b: number): number {
  let d = (b - a) % MOD;
  if (d < 0) d += MOD;
  return d >= MOD / 2 ? d - MOD : d;
}

interface Connection {
  readonly index: number | undefined;
  client: TcpEndpoint;
  server: TcpEndpoint;
  readonly directions: Map<string, DirectionState>;
  mpaIndex: number | undefined;
}

function endpointKey(address: string, port: number): string {
  return `${address}|${port}`;
}

/** Decodes a capture one record at a time (see the module comment). */
export class CaptureStreamDecoder {
  readonly counts: StreamCounts = {
    frames: 0,
    roce: 0,
    connections: 0,
    fpdus: 0,
    problems: 0,
    otherFrames: 0,
  };
  private readonly rocePort: number;
  private readonly profile: IwarpProfile | undefined;
  private readonly flows: RoceFlows = new Map();
  private readonly connections = new Map<string, Connection>();

  constructor(options: CaptureDecodeOptions = {}) {
    this.rocePort = options.rocePort ?? ROCE_V2_UDP_PORT;
    this.profile = options.profile;
  }

  /** The items record `frameIndex` completes (possibly none, possibly several). */
  push(record: CaptureRecord, frameIndex: number): CaptureItem[] {
    this.counts.frames++;
    const origin: ItemOrigin = { frameIndex, timestampNs: record.timestampNs };
    const out: CaptureItem[] = [];
    const f = decodeFrame(record.linkType, record.data);
    if (!f.ok) {
      this.emit(out, { kind: 'problem', ...origin, error: f.error });
      return out;
    }
    const frame = f.value;
    const t = frame.transport;
    if (t?.kind === 'udp' && t.header.destinationPort === this.rocePort) {
      this.emit(out, roceItem(frame, origin, this.flows));
      return out;
    }
    if (t?.kind !== 'tcp' || frame.network === undefined) {
      this.counts.otherFrames++;
      return out;
    }
    const src = { address: frame.network.header.source, port: t.header.sourcePort };
    const dst = { address: frame.network.header.destination, port: t.header.destinationPort };
    const a = endpointKey(src.address, src.port);
    const b = endpointKey(dst.address, dst.port);
    const key = a < b ? `${a}#${b}` : `${b}#${a}`;
    let c = this.connections.get(key);
    if (c === undefined) {
      c = {
        index: undefined,
        client: src,
        server: dst,
        directions: new Map(),
        mpaIndex: undefined,
      };
      this.connections.set(key, c);
    }
    if (t.header.flags & TcpFlag.SYN && !(t.header.flags & TcpFlag.ACK)) {
      c.client = src;
      c.server = dst;
    }
    let d = c.directions.get(a);
    if (d === undefined) {
      d = new DirectionState(src, dst);
      c.directions.set(a, d);
    }
    const placed = d.place(t.header.sequenceNumber, t.header.flags, frame.payload, origin);
    if (d.heldDuplicates > 0) {
      if (d.state === 'undecided') d.undecidedFrames -= d.heldDuplicates;
      this.counts.otherFrames += d.heldDuplicates;
      d.heldDuplicates = 0;
    }
    if (placed === 'gap') {
      this.stopWithGap(out, c, d, origin);
      this.counts.otherFrames++;
      return out;
    }
    if (placed === 'old' || d.state === 'not-mpa' || d.state === 'stopped') {
      this.counts.otherFrames++;
      return out;
    }
    if (d.state === 'undecided') d.undecidedFrames++;
    this.advance(out, c, d);
    // A frame from this direction may let the peer negotiate and decode its FPDUs.
    for (const peer of c.directions.values()) if (peer !== d) this.advance(out, c, peer);
    return out;
  }

  /** The items that only the end of the capture completes: holes, cut-off FPDUs. */
  finish(): CaptureItem[] {
    const out: CaptureItem[] = [];
    for (const c of this.connections.values()) {
      for (const d of c.directions.values()) {
        if (d.state === 'undecided') {
          this.counts.otherFrames += d.undecidedFrames;
          continue;
        }
        if (d.state !== 'mpa') continue;
        if (d.frame !== undefined && d.negotiated === undefined && !d.frame.reject) {
          d.negotiated = negotiateMpa(d.frame, this.peerOf(c, d)?.frame);
          this.advance(out, c, d);
        }
        if (d.state !== 'mpa') continue;
        const gap = d.gap();
        const rest = d.pending();
        if (rest.length > 0 && d.negotiated !== undefined && !d.frame?.reject) {
          // The whole-capture decoder's "decoding stopped" error for a cut-off FPDU.
          const r = decodeFpdu(rest, 0, {
            ...d.negotiated,
            position: d.consumed - d.firstFpduOffset,
          });
          if (!r.ok) this.problem(out, c, d, d.frameAt(d.consumed), rebased(r.error, d.consumed));
        } else if (rest.length > 0 && d.frame === undefined) {
          const r = decodeMpaFrame(rest, 0);
          if (!r.ok) this.problem(out, c, d, d.frameAt(d.consumed), r.error);
        }
        if (gap !== undefined)
          this.problem(
            out,
            c,
            d,
            d.lastAppended,
            new DecodeError(
              'tcp',
              'sequenceNumber',
              0,
              'truncated',
              `${gap.length} bytes missing at sequence ${gap.startSequence}; later bytes not decoded`,
            ),
          );
        d.release('stopped');
      }
    }
    return out;
  }

  private peerOf(c: Connection, d: DirectionState): DirectionState | undefined {
    for (const p of c.directions.values()) if (p !== d) return p;
    return undefined;
  }

  private direction(c: Connection, d: DirectionState): Direction {
    return d.source.address === c.client.address && d.source.port === c.client.port
      ? 'client-to-server'
      : 'server-to-client';
  }

  private connectionIndex(c: Connection): number {
    if (c.mpaIndex === undefined) c.mpaIndex = this.counts.connections++;
    return c.mpaIndex;
  }

  private emit(out: CaptureItem[], item: CaptureItem): void {
    if (item.kind === 'roce') this.counts.roce++;
    else if (item.kind === 'fpdu') this.counts.fpdus++;
    else if (item.kind === 'problem') this.counts.problems++;
    out.push(item);
  }

  private problem(
    out: CaptureItem[],
    c: Connection,
    d: DirectionState,
    from: FrameRef,
    error: DecodeError,
  ): void {
    this.emit(out, {
      kind: 'problem',
      frameIndex: from.frameIndex,
      timestampNs: from.timestampNs,
      error,
      connection: this.connectionIndex(c),
      direction: this.direction(c, d),
    });
  }

  private stopWithGap(out: CaptureItem[], c: Connection, d: DirectionState, from: FrameRef): void {
    if (d.state === 'mpa')
      this.problem(
        out,
        c,
        d,
        from,
        new DecodeError(
          'tcp',
          'sequenceNumber',
          0,
          'truncated',
          `more than ${MAX_HELD_BYTES} bytes held behind a hole at stream offset ${d.received}; later bytes not decoded`,
        ),
      );
    d.release('stopped');
  }

  /** Decodes what the direction's received bytes allow. */
  private advance(out: CaptureItem[], c: Connection, d: DirectionState): void {
    if (d.state === 'undecided') {
      const bytes = d.pending();
      if (bytes.length < MPA_KEY_LENGTH) return;
      if (mpaFrameKind(bytes, 0) === undefined) {
        this.counts.otherFrames += d.undecidedFrames;
        d.release('not-mpa');
        return;
      }
      d.state = 'mpa';
      this.connectionIndex(c);
    }
    if (d.state !== 'mpa') return;
    const direction = this.direction(c, d);
    const connection = this.connectionIndex(c);
    if (d.frame === undefined) {
      const r = decodeMpaFrame(d.pending(), 0);
      if (!r.ok) {
        if (r.error.reason === 'truncated') return;
        this.problem(out, c, d, d.frameAt(0), r.error);
        d.release('stopped');
        return;
      }
      const at = d.frameAt(0);
      d.frame = r.value.frame;
      d.firstFpduOffset = r.value.length;
      d.consume(r.value.length);
      this.emit(out, {
        kind: 'mpa-frame',
        frameIndex: at.frameIndex,
        timestampNs: at.timestampNs,
        connection,
        direction,
        frame: d.frame,
      });
      // The peer may have been waiting for this frame to negotiate.
      const peer = this.peerOf(c, d);
      if (peer !== undefined && peer.frame !== undefined && peer.negotiated === undefined)
        this.advance(out, c, peer);
    }
    // A rejected connection carries no FPDUs (RFC 5044 §7.1.5).
    if (d.frame.reject) {
      d.release('stopped');
      return;
    }
    if (d.negotiated === undefined) {
      const peer = this.peerOf(c, d);
      // Wait for the peer's frame (RFC 5044 §7.1: FPDUs follow the Reply), unless the peer
      // will never send one.
      if (peer?.frame === undefined && peer?.state !== 'not-mpa' && peer?.state !== 'stopped')
        return;
      d.negotiated = negotiateMpa(d.frame, peer?.frame);
    }
    for (;;) {
      const bytes = d.pending();
      if (bytes.length === 0) return;
      const position = d.consumed - d.firstFpduOffset;
      const r = decodeFpdu(bytes, 0, { ...d.negotiated, position });
      if (!r.ok) {
        if (r.error.reason === 'truncated') return;
        this.problem(out, c, d, d.frameAt(d.consumed), rebased(r.error, d.consumed));
        d.release('stopped');
        return;
      }
      const at = d.frameAt(d.consumed);
      const base = d.consumed;
      // Copies of what stays referenced: the buffer is reused once consumed.
      const ulpdu = r.value.fpdu.ulpdu.slice();
      const fpdu = {
        ...r.value,
        fpdu: { ...r.value.fpdu, ulpdu, pad: r.value.fpdu.pad.slice() },
        offset: base,
        markers: r.value.markers.map((m) => ({ ...m, offset: m.offset + base })),
        sequence: (d.startSequence + base) >>> 0,
        message: decodeRdmapMessage(
          ulpdu,
          this.profile === undefined ? {} : { profile: this.profile },
        ),
      };
      d.consume(r.value.length);
      this.emit(out, {
        kind: 'fpdu',
        frameIndex: at.frameIndex,
        timestampNs: at.timestampNs,
        connection,
        direction,
        fpdu,
      });
    }
  }
}

/** A DecodeError of a view at stream offset `base`, with its offset made a stream offset. */
function rebased(e: DecodeError, base: number): DecodeError {
  const prefix = `${e.layer}.${e.field} at offset ${e.offset}: ${e.reason}: `;
  const detail = e.message.startsWith(prefix) ? e.message.slice(prefix.length) : e.message;
  return new DecodeError(e.layer, e.field, e.offset + base, e.reason, detail);
}
