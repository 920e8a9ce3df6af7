/**
 * The lazy capture decoder behind `decode --summary`, `--fields` and `--filter`: bytes of
 * a pcap or pcapng file go in as they are read, and each RoCEv2 packet, MPA frame, FPDU
 * and problem comes out as a view over the bytes (one `LazyItem`, re-pointed per item, so
 * a consumer must not keep it past its callback). Fields are read on demand through the
 * layout tables (RdmapView, RoceView); no object or bigint is made per frame unless a
 * consumer asks for one (`item.rdmap.message()`, a 64-bit field).
 *
 * The rules are those of the eager decoders (CaptureStreamDecoder): RoCEv2 by UDP
 * destination port; TCP reassembled per direction in sequence space (retransmitted bytes
 * dropped, early segments held until the hole fills, at most MAX_HELD_BYTES); a direction
 * that starts with an MPA Request/Reply is framed FPDU by FPDU with the settings negotiated
 * from both frames (RFC 5044 §7.1) and the MPA CRC checked (RFC 5044 §4). In-order
 * segments are framed where they lie (no copy); only an FPDU split across segments is
 * copied. Checksums of IP/UDP/TCP and the RoCE ICRC are not verified on this path (as
 * tshark does not by default); the eager decoders check them.
 *
 * The records come from InPlaceRecordReader (pcap/in-place-reader.ts).
 */
import { crc32c } from '../crc32c.js';
import type { DecodeError } from '../errors.js';
import { RdmapView } from '../iwarp/lazy.js';
import type { MpaRequestReply } from '../iwarp/messages.js';
import {
  crcFieldValue,
  MPA_CRC_LENGTH,
  MPA_ULPDU_LENGTH_LENGTH,
  mpaPadLength,
} from '../iwarp/mpa.js';
import { formatIpv6 } from '../net/address.js';
import { decodeFrame } from '../net/frame.js';
import { InPlaceHeaders } from '../net/in-place-headers.js';
import { InPlaceRecordReader } from '../pcap/in-place-reader.js';
import { RoceView } from '../roce/lazy.js';
import { ROCE_V2_UDP_PORT } from '../roce/packet.js';
import { MpaDirection, type MpaSink } from './mpa-direction.js';
import { noCounts, type StreamCounts } from './stream-decode.js';
import type { InOrderBytes } from './tcp-stream.js';

/** The kinds of item the lazy decoder reports. */
export type LazyItemKind = 'roce' | 'mpa-frame' | 'fpdu' | 'problem';

/** One decoded item: a view valid during the callback only. */
export class LazyItem {
  kind: LazyItemKind = 'problem';
  /** 0-based record index (tshark's frame number minus one). */
  frameIndex = 0;
  /** Capture time: whole seconds since the epoch and nanoseconds within the second. */
  seconds = 0;
  nanoseconds = 0;
  /** "address" (RoCE) or "address:port" (iWARP) of the sender and the receiver. */
  source = '';
  destination = '';
  /** iWARP: connection index (in order of first MPA frame) and direction. */
  connection = -1;
  direction: 'client-to-server' | 'server-to-client' = 'client-to-server';
  /** RoCE items: the packet. */
  readonly roce = new RoceView();
  /** FPDU items: the ULPDU (DDP segment). */
  readonly rdmap = new RdmapView();
  /** FPDU items: the MPA CRC outcome. */
  crcState: 'valid' | 'invalid' | 'not-in-use' = 'not-in-use';
  /** MPA frame items: the Request or Reply. */
  mpaFrame: MpaRequestReply | undefined;
  /** Problem items: what went wrong. */
  error: DecodeError | undefined;

  /** Capture time in nanoseconds (allocates a bigint). */
  get timestampNs(): bigint {
    return BigInt(this.seconds) * 1_000_000_000n + BigInt(this.nanoseconds);
  }
}

/** Options of {@link LazyCaptureDecoder}. */
export interface LazyDecodeOptions {
  readonly rocePort?: number;
  /**
   * Called with each record before its items (frame-level fields: `decode --fields ip.src`);
   * `bytes[start, end)` is the record, valid during the call only; the time as in LazyItem.
   */
  readonly onFrame?: (
    frameIndex: number,
    linkType: number,
    bytes: Uint8Array,
    start: number,
    end: number,
    seconds: number,
    nanoseconds: number,
  ) => void;
  /** Records to read (`decode -c`): later records are neither decoded nor counted. */
  readonly maxFrames?: number;
}

interface FrameRef {
  frameIndex: number;
  seconds: number;
  nanoseconds: number;
}

/** One TCP direction, reassembled and MPA-framed (MpaDirection) as it arrives. */
class LazyDirection extends MpaDirection<FrameRef> {
  /** Where the direction's in-order bytes go (set by the decoder). */
  onBytes: InOrderBytes<FrameRef> = () => {};

  constructor(
    readonly source: string,
    readonly destination: string,
    readonly connection: LazyConnection,
  ) {
    super({ frameIndex: 0, seconds: 0, nanoseconds: 0 });
  }
}

interface LazyConnection {
  index: number;
  client: string;
}

/** Decodes a capture lazily (see the module comment). */
export class LazyCaptureDecoder {
  readonly counts: StreamCounts = noCounts();
  private readonly rocePort: number;
  private readonly item = new LazyItem();
  private readonly connections = new Map<string, LazyDirection>();
  private readonly reader = new InPlaceRecordReader((linkType, b, start, end, i, s, ns) =>
    this.frame(linkType, b, start, end, i, s, ns),
  );
  private readonly headers = new InPlaceHeaders();
  private readonly onFrame: LazyDecodeOptions['onFrame'];
  private readonly maxFrames: number;

  constructor(
    private readonly onItem: (item: LazyItem) => void,
    options: LazyDecodeOptions = {},
  ) {
    this.rocePort = options.rocePort ?? ROCE_V2_UDP_PORT;
    this.onFrame = options.onFrame;
    this.maxFrames = options.maxFrames ?? Number.POSITIVE_INFINITY;
  }

  /** True once `maxFrames` records were read: the caller may stop feeding bytes. */
  get frameLimitReached(): boolean {
    return this.counts.frames >= this.maxFrames;
  }

  /** Records read so far. */
  get recordCount(): number {
    return this.reader.recordCount;
  }

  /** The end of the file: items only the end completes; sets `end` when it was cut or bad. */
  finish(): void {
    this.reader.finish();
    for (const d of this.connections.values()) d.finish(this.sink);
  }

  /** The file format once known. */
  get format(): 'pcap' | 'pcapng' | undefined {
    return this.reader.format;
  }

  /** Why reading stopped (a bad or cut record), once it has. */
  get end(): DecodeError | undefined {
    return this.reader.end;
  }

  /** Feeds the next bytes of the file. */
  push(chunk: Uint8Array): void {
    this.reader.push(chunk);
  }

  private begin(kind: LazyItemKind, from: FrameRef): LazyItem {
    const item = this.item;
    item.kind = kind;
    item.frameIndex = from.frameIndex;
    item.seconds = from.seconds;
    item.nanoseconds = from.nanoseconds;
    item.error = undefined;
    item.mpaFrame = undefined;
    item.connection = -1;
    return item;
  }

  /** An item of direction `d`'s connection: its endpoints, connection index and direction set. */
  private beginOn(kind: LazyItemKind, d: LazyDirection, from: FrameRef): LazyItem {
    const item = this.begin(kind, from);
    item.source = d.source;
    item.destination = d.destination;
    item.connection = this.connectionIndex(d);
    item.direction = d.source === d.connection.client ? 'client-to-server' : 'server-to-client';
    return item;
  }

  /** A frame the fast parse does not follow: the eager decoder says whether it is malformed. */
  private slowFrame(linkType: number, b: Uint8Array, start: number, end: number, from: FrameRef) {
    const f = decodeFrame(linkType, b.subarray(start, end));
    if (f.ok) {
      this.counts.otherFrames++;
      return;
    }
    const item = this.begin('problem', from);
    item.source = '';
    item.destination = '';
    item.error = f.error;
    this.counts.problems++;
    this.onItem(item);
  }

  private frame(
    linkType: number,
    b: Uint8Array,
    start: number,
    end: number,
    frameIndex: number,
    seconds: number,
    nanoseconds: number,
  ): void {
    if (this.counts.frames >= this.maxFrames) return;
    this.counts.frames++;
    this.onFrame?.(frameIndex, linkType, b, start, end, seconds, nanoseconds);
    const from: FrameRef = { frameIndex, seconds, nanoseconds };
    const h = this.headers;
    const found = h.locate(linkType, b, start, end);
    if (found === 'malformed') {
      this.slowFrame(linkType, b, start, end, from);
      return;
    }
    if (found === 'other') {
      this.counts.otherFrames++;
      return;
    }
    const { l3, v6, l4, payloadStart, l4End } = h;
    if (found === 'udp') {
      const destinationPort = (b[l4 + 2]! << 8) | b[l4 + 3]!;
      if (destinationPort !== this.rocePort) {
        this.counts.otherFrames++;
        return;
      }
      const item = this.begin('roce', from);
      item.source = address(b, l3, v6, true);
      item.destination = address(b, l3, v6, false);
      item.roce.at(b, payloadStart, l4End - payloadStart);
      this.counts.roce++;
      this.onItem(item);
      return;
    }
    const sourcePort = (b[l4]! << 8) | b[l4 + 1]!;
    const destinationPort = (b[l4 + 2]! << 8) | b[l4 + 3]!;
    const seq = ((b[l4 + 4]! << 24) | (b[l4 + 5]! << 16) | (b[l4 + 6]! << 8) | b[l4 + 7]!) >>> 0;
    const flags = b[l4 + 13]!;
    const d = this.direction(b, l3, v6, sourcePort, destinationPort, flags);
    this.tcp(d, seq, flags, b, payloadStart, l4End, from);
  }

  private lastKey = '';
  private lastDirection: LazyDirection | undefined;

  private direction(
    b: Uint8Array,
    l3: number,
    v6: boolean,
    sourcePort: number,
    destinationPort: number,
    flags: number,
  ): LazyDirection {
    const key = v6
      ? `${address(b, l3, true, true)}|${sourcePort}|${address(b, l3, true, false)}|${destinationPort}`
      : `${u32At(b, l3 + 12)}|${sourcePort}|${u32At(b, l3 + 16)}|${destinationPort}`;
    if (key === this.lastKey && this.lastDirection !== undefined) return this.lastDirection;
    let d = this.connections.get(key);
    if (d === undefined) {
      const source = endpoint(address(b, l3, v6, true), sourcePort, v6);
      const destination = endpoint(address(b, l3, v6, false), destinationPort, v6);
      const reverse = v6
        ? `${address(b, l3, true, false)}|${destinationPort}|${address(b, l3, true, true)}|${sourcePort}`
        : `${u32At(b, l3 + 16)}|${destinationPort}|${u32At(b, l3 + 12)}|${sourcePort}`;
      const peer = this.connections.get(reverse);
      const connection = peer?.connection ?? { index: -1, client: source };
      const direction = new LazyDirection(source, destination, connection);
      direction.onBytes = (bytes, start, end, from) => {
        if (direction.state === 'undecided' || direction.state === 'mpa')
          this.inOrder(direction, bytes, start, end, from);
      };
      d = direction;
      if (peer !== undefined) {
        d.peer = peer;
        peer.peer = d;
      }
      this.connections.set(key, d);
    }
    // SYN without ACK names the client (RFC 9293 §3.5).
    if (flags & 0x02 && !(flags & 0x10)) d.connection.client = d.source;
    this.lastKey = key;
    this.lastDirection = d;
    return d;
  }

  private tcp(
    d: LazyDirection,
    seq: number,
    flags: number,
    b: Uint8Array,
    start: number,
    end: number,
    from: FrameRef,
  ): void {
    if (d.state === 'not-mpa' || d.state === 'stopped') {
      this.counts.otherFrames++;
      return;
    }
    const placed = d.accept(seq, flags, b, start, end, from, d.onBytes);
    const duplicates = d.takeHeldDuplicates();
    if (duplicates > 0) {
      // Held segments whose bytes all came in another: frames with no new bytes, as one
      // that arrives after them is (decodeCaptureMessages counts both alike).
      if (d.state === 'undecided') d.undecidedFrames -= duplicates;
      this.counts.otherFrames += duplicates;
    }
    if (placed === 'old') {
      this.counts.otherFrames++;
      return;
    }
    if (placed === 'gap') {
      if (d.state === 'mpa') this.problem(d, from, d.holdLimitError());
      d.stop('stopped');
      this.counts.otherFrames++;
      return;
    }
    if (d.state === 'undecided') d.undecidedFrames++;
    if (d.peer !== undefined && d.peer.state === 'mpa' && d.peer.negotiated === undefined)
      this.advance(d.peer);
  }

  /** In-order bytes b[start, end) of direction `d`. */
  private inOrder(d: LazyDirection, b: Uint8Array, start: number, end: number, from: FrameRef) {
    if (
      d.state === 'mpa' &&
      d.negotiated !== undefined &&
      d.pendingLength === 0 &&
      !d.negotiated.markers
    ) {
      // Framed in place: FPDUs wholly inside this segment are never copied.
      const used = this.frameFpdus(d, b, start, end, from, d.received);
      if (d.state !== 'mpa') return;
      d.usedInPlace(used);
      // The cut-off FPDU waits in the buffer for its next bytes.
      if (start + used < end) d.append(b.subarray(start + used, end), from);
      return;
    }
    d.append(b.subarray(start, end), from);
    this.advance(d);
  }

  /**
   * Frames the FPDUs of b[start, end) (no markers), reporting each; returns the bytes used.
   * `streamStart` is the stream offset of b[start]. Stops at an incomplete FPDU.
   */
  private frameFpdus(
    d: LazyDirection,
    b: Uint8Array,
    start: number,
    end: number,
    from: FrameRef | undefined,
    streamStart: number,
  ): number {
    const crc = d.negotiated!.crc;
    let at = start;
    while (end - at >= MPA_ULPDU_LENGTH_LENGTH) {
      const ulpduLength = (b[at]! << 8) | b[at + 1]!;
      const body = MPA_ULPDU_LENGTH_LENGTH + ulpduLength + mpaPadLength(ulpduLength);
      // The CRC field is on the wire whether or not CRC was negotiated (RFC 5044 §4.1: when
      // CRCs are not in use the field is still present and is not checked; siw sends zeros,
      // and its receiver's siw_fpdu_trailer_len counts MPA_CRC_SIZE unconditionally), so
      // it is part of every FPDU's length, as decodeFpdu and encodeFpdu have it.
      const total = body + MPA_CRC_LENGTH;
      if (end - at < total) break;
      const origin = from ?? d.frameAt(streamStart + (at - start));
      const item = this.beginOn('fpdu', d, origin);
      if (crc) {
        const p = at + body;
        item.crcState =
          crc32c(b.subarray(at, at + body)) === crcFieldValue(u32At(b, p)) ? 'valid' : 'invalid';
      } else item.crcState = 'not-in-use';
      item.rdmap.at(b, at + 2, ulpduLength);
      this.counts.fpdus++;
      this.onItem(item);
      at += total;
    }
    return at - start;
  }

  private connectionIndex(d: LazyDirection): number {
    if (d.connection.index < 0) d.connection.index = this.counts.connections++;
    return d.connection.index;
  }

  private problem(d: LazyDirection, from: FrameRef, error: DecodeError): void {
    const item = this.beginOn('problem', d, from);
    item.error = error;
    this.counts.problems++;
    this.onItem(item);
  }

  /** Frames what the direction's pending bytes allow. */
  private advance(d: LazyDirection): void {
    d.advance(this.sink);
  }

  /** Where the MPA framer reports (see MpaSink). */
  private readonly sink: MpaSink<FrameRef, LazyDirection> = {
    notMpa: (d) => {
      this.counts.otherFrames += d.undecidedFrames;
    },
    opened: (d) => {
      this.connectionIndex(d);
    },
    mpaFrame: (d, frame, at) => {
      const item = this.beginOn('mpa-frame', d, at);
      item.mpaFrame = frame;
      this.onItem(item);
    },
    problem: (d, from, error) => this.problem(d, from, error),
    fpdus: (d) => {
      if (!d.negotiated!.markers) {
        const used = this.frameFpdus(d, d.buf, d.head, d.tail, undefined, d.consumed);
        if (used > 0) d.consume(used);
        return;
      }
      // Markers: the eager FPDU decoder removes them (RFC 5044 §5); the ULPDU is a copy.
      for (;;) {
        const fpdu = d.nextFpdu(this.sink);
        if (fpdu === undefined) return;
        const item = this.beginOn('fpdu', d, d.frameAt(d.consumed));
        item.crcState = fpdu.crcState;
        const ulpdu = fpdu.fpdu.ulpdu.slice();
        item.rdmap.at(ulpdu, 0, ulpdu.length);
        d.consume(fpdu.length);
        this.counts.fpdus++;
        this.onItem(item);
      }
    },
  };
}

function u32At(b: Uint8Array, at: number): number {
  return ((b[at]! << 24) | (b[at + 1]! << 16) | (b[at + 2]! << 8) | b[at + 3]!) >>> 0;
}

/** The source (or destination) address of the IP header at `l3`, as text. */
function address(b: Uint8Array, l3: number, v6: boolean, source: boolean): string {
  if (v6) {
    const at = l3 + (source ? 8 : 24);
    return formatIpv6(b.subarray(at, at + 16));
  }
  const at = l3 + (source ? 12 : 16);
  return `${b[at]}.${b[at + 1]}.${b[at + 2]}.${b[at + 3]}`;
}

function endpoint(address: string, port: number, v6: boolean): string {
  return v6 ? `[${address}]:${port}` : `${address}:${port}`;
}
