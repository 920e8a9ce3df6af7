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
import type { DecodeError } from '../errors.js';
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
import { type InOrderBytes, rebased, TcpStream } from './tcp-stream.js';

export { MAX_HELD_BYTES } from './tcp-stream.js';

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

/** One direction of a TCP connection, reassembled (TcpStream) and decoded as it arrives. */
class DirectionState extends TcpStream<FrameRef> {
  state: 'undecided' | 'mpa' | 'not-mpa' | 'stopped' = 'undecided';
  /** Frames whose bytes went here while undecided (counted as "other" if not MPA). */
  undecidedFrames = 0;
  frame: MpaRequestReply | undefined;
  negotiated: MpaNegotiated | undefined;
  firstFpduOffset = 0;

  constructor(
    readonly source: TcpEndpoint,
    readonly destination: TcpEndpoint,
  ) {
    super(NO_FRAME);
  }

  /** Keeps in-order bytes while the direction is being decoded. */
  readonly onBytes: InOrderBytes<FrameRef> = (b, start, end, from) => {
    if (this.state === 'undecided' || this.state === 'mpa')
      this.append(b.subarray(start, end), from);
    else this.usedInPlace(end - start);
  };

  /** Drops everything buffered (a direction that will not be decoded). */
  stop(state: 'not-mpa' | 'stopped'): void {
    this.state = state;
    this.release();
  }
}

const NO_FRAME: FrameRef = { frameIndex: 0, timestampNs: 0n };

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
    // A direction that will not be decoded keeps nothing (not even segments held early).
    const placed =
      d.state === 'not-mpa' || d.state === 'stopped'
        ? 'old'
        : d.accept(
            t.header.sequenceNumber,
            t.header.flags,
            frame.payload,
            0,
            frame.payload.length,
            origin,
            d.onBytes,
          );
    const duplicates = d.takeHeldDuplicates();
    if (duplicates > 0) {
      // Held segments whose bytes all came in another: frames with no new bytes, as one
      // that arrives after them is (decodeCaptureMessages counts both alike).
      if (d.state === 'undecided') d.undecidedFrames -= duplicates;
      this.counts.otherFrames += duplicates;
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
        const hole = d.holeError();
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
        if (hole !== undefined) this.problem(out, c, d, d.lastFrom, hole);
        d.stop('stopped');
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
    if (d.state === 'mpa') this.problem(out, c, d, from, d.holdLimitError());
    d.stop('stopped');
  }

  /** Decodes what the direction's received bytes allow. */
  private advance(out: CaptureItem[], c: Connection, d: DirectionState): void {
    if (d.state === 'undecided') {
      const bytes = d.pending();
      if (bytes.length < MPA_KEY_LENGTH) return;
      if (mpaFrameKind(bytes, 0) === undefined) {
        this.counts.otherFrames += d.undecidedFrames;
        d.stop('not-mpa');
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
        d.stop('stopped');
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
      d.stop('stopped');
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
        d.stop('stopped');
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
