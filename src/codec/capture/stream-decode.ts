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
import { MpaDirection, type MpaSink } from './mpa-direction.js';
import { type CaptureDirection, objectSink } from './object-sink.js';
import type { TcpEndpoint } from './tcp-reassembly.js';
import type { InOrderBytes } from './tcp-stream.js';

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

/** Where bytes came from: a frame and its capture time. */
type FrameRef = ItemOrigin;

/** One direction of a TCP connection, reassembled and MPA-framed (MpaDirection) as it arrives. */
class DirectionState extends MpaDirection<FrameRef> {
  constructor(
    readonly source: TcpEndpoint,
    readonly destination: TcpEndpoint,
    readonly connection: Connection,
  ) {
    super(NO_FRAME);
  }

  /** Keeps in-order bytes while the direction is being decoded. */
  readonly onBytes: InOrderBytes<FrameRef> = (b, start, end, from) => {
    if (this.state === 'undecided' || this.state === 'mpa')
      this.append(b.subarray(start, end), from);
    else this.usedInPlace(end - start);
  };
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

/** Counts of nothing yet (both streaming decoders start from it). */
export function noCounts(): StreamCounts {
  return { frames: 0, roce: 0, connections: 0, fpdus: 0, problems: 0, otherFrames: 0 };
}

/** Decodes a capture one record at a time (see the module comment). */
export class CaptureStreamDecoder {
  readonly counts: StreamCounts = noCounts();
  private readonly rocePort: number;
  private readonly flows: RoceFlows = new Map();
  private readonly connections = new Map<string, Connection>();

  constructor(options: CaptureDecodeOptions = {}) {
    this.rocePort = options.rocePort ?? ROCE_V2_UDP_PORT;
    this.sink = objectSink<DirectionState>({
      profile: options.profile,
      connection: (d) => this.connectionIndex(d.connection),
      direction: (d) => this.direction(d.connection, d),
      emit: (item) => this.emit(this.out, item),
      notMpa: (d) => {
        this.counts.otherFrames += d.undecidedFrames;
      },
    });
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
      d = new DirectionState(src, dst, c);
      for (const peer of c.directions.values()) {
        peer.peer = d;
        d.peer = peer;
      }
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
    this.out = out;
    d.advance(this.sink);
    // A frame from this direction may let the peer negotiate and decode its FPDUs.
    const peer = d.peer;
    if (peer !== undefined && peer.state === 'mpa' && peer.negotiated === undefined)
      peer.advance(this.sink);
    return out;
  }

  /** The items that only the end of the capture completes: holes, cut-off FPDUs. */
  finish(): CaptureItem[] {
    const out: CaptureItem[] = [];
    this.out = out;
    for (const c of this.connections.values())
      for (const d of c.directions.values()) d.finish(this.sink);
    return out;
  }

  /** Where the items of the current `push` or `finish` go. */
  private out: CaptureItem[] = [];

  /** Where the MPA framer reports (see MpaSink): items as objects (object-sink.ts). */
  private readonly sink: MpaSink<FrameRef, DirectionState>;

  private direction(c: Connection, d: DirectionState): CaptureDirection {
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
}
