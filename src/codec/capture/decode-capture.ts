/**
 * Turns a capture file into per-message decodes: every RoCEv2 frame (UDP port 4791) as a
 * RoCE packet with its ICRC checked, and every TCP connection that starts with an MPA
 * Request/Reply as iWARP (MPA frames, FPDUs and RDMAP messages, via the iWARP codec's
 * stream decoder) after TCP reassembly. Items are returned in capture order.
 */

import { requireBytes } from '../../arguments.js';
import type { DecodeError, DecodeResult } from '../errors.js';
import { decoded } from '../errors.js';
import type { MpaRequestReply } from '../iwarp/messages.js';
import { decodeMpaFrame, mpaFrameKind } from '../iwarp/mpa-frames.js';
import type { IwarpProfile } from '../iwarp/profiles.js';
import { requireProfileOptions } from '../iwarp/profiles.js';
import type { StreamFpdu } from '../iwarp/stream.js';
import { type DecodedFrame, decodeFrame } from '../net/frame.js';
import { decodeCapture } from '../pcap/capture.js';
import { checkRoceIcrc, type IcrcCheck } from '../roce/icrc.js';
import { decodeRocePacket, ROCE_V2_UDP_PORT, type RocePacket } from '../roce/packet.js';
import { MpaDirection } from './mpa-direction.js';
import { type CaptureDirection, objectSink } from './object-sink.js';
import {
  reassembleTcp,
  type TcpConnection,
  type TcpDirection,
  type TcpSegmentInput,
} from './tcp-reassembly.js';
import { missingBytesError } from './tcp-stream.js';

/** Options of {@link decodeCaptureMessages}. */
export interface CaptureDecodeOptions {
  /** RDMAP profile for iWARP ULPDUs [rfc7306]. */
  readonly profile?: IwarpProfile;
  /** UDP destination port treated as RoCEv2 [4791]. */
  readonly rocePort?: number;
}

const CAPTURE_DECODE_OPTIONS = Object.keys({
  profile: true,
  rocePort: true,
} satisfies Record<keyof CaptureDecodeOptions, true>);

/** Where a decoded item came from. */
export interface ItemOrigin {
  /** 0-based index of the capture record (tshark's frame number minus one). */
  readonly frameIndex: number;
  readonly timestampNs: bigint;
}

/** A RoCEv2 frame. */
export interface RoceItem extends ItemOrigin {
  readonly kind: 'roce';
  readonly frame: DecodedFrame;
  readonly packet: DecodeResult<RocePacket>;
  /** Present when the packet decoded far enough to locate the ICRC. */
  readonly icrc?: IcrcCheck;
  /** Which message of its flow the packet belongs to (see {@link RoceMessagePosition}). */
  readonly message?: RoceMessagePosition;
}

/**
 * A RoCE packet's place in a multi-packet message. Packets are grouped per flow (source
 * address, destination address, destination QP): a FIRST or ONLY packet opens a message
 * (IBTA §9.4 packet sequences), MIDDLE and LAST packets continue the open one.
 */
export interface RoceMessagePosition {
  /** 0-based index of the message within its flow. */
  readonly index: number;
  /** 0-based index of the packet within the message. */
  readonly packet: number;
  /** False when a MIDDLE or LAST packet arrived with no FIRST before it in the capture. */
  readonly complete: boolean;
}

/** An MPA Request or Reply frame. */
export interface MpaFrameItem extends ItemOrigin {
  readonly kind: 'mpa-frame';
  readonly connection: number;
  readonly direction: 'client-to-server' | 'server-to-client';
  readonly frame: MpaRequestReply;
}

/** One FPDU and its RDMAP message. */
export interface FpduItem extends ItemOrigin {
  readonly kind: 'fpdu';
  readonly connection: number;
  readonly direction: 'client-to-server' | 'server-to-client';
  readonly fpdu: StreamFpdu;
}

/** Something that stopped or limited decoding: a bad frame, an MPA error, a TCP gap. */
export interface ProblemItem extends ItemOrigin {
  readonly kind: 'problem';
  readonly error: DecodeError;
  readonly connection?: number;
  readonly direction?: 'client-to-server' | 'server-to-client';
}

/** One line of a capture decode. */
export type CaptureItem = RoceItem | MpaFrameItem | FpduItem | ProblemItem;

/** A decoded capture. */
export interface CaptureDecode {
  readonly format: 'pcap' | 'pcapng';
  readonly frameCount: number;
  /** iWARP connections found (index = `connection` of the items). */
  readonly connections: readonly TcpConnection[];
  /**
   * Frames that carried no decoded message: not RoCEv2, not in an MPA connection, or TCP
   * segments without payload (handshake, pure ACKs).
   */
  readonly otherFrames: number;
  readonly items: readonly CaptureItem[];
}

function startsWithMpaFrame(dir: TcpDirection): boolean {
  const run = dir.runs[0];
  return run !== undefined && mpaFrameKind(run.bytes, 0) !== undefined;
}

/** One RoCE flow's message state. */
export interface FlowState {
  messages: number;
  /** Packets so far in the open message, or undefined when none is open. */
  open: { packet: number; complete: boolean } | undefined;
}

/** Places a packet in its flow's current message (first/middle/last/only from the opcode table). */
function placeInMessage(
  flows: Map<string, FlowState>,
  frame: DecodedFrame,
  p: RocePacket,
): RoceMessagePosition {
  const n = frame.network?.header;
  const key = `${n?.source}>${n?.destination}#${p.bth.destinationQp}`;
  let flow = flows.get(key);
  if (flow === undefined) {
    flow = { messages: 0, open: undefined };
    flows.set(key, flow);
  }
  const position = p.opcode.position;
  if (position === 'first' || position === 'only' || flow.open === undefined) {
    const complete = position === 'first' || position === 'only';
    flow.open = { packet: 0, complete };
    flow.messages++;
  } else flow.open.packet++;
  const at = { index: flow.messages - 1, packet: flow.open.packet, complete: flow.open.complete };
  if (position === 'last' || position === 'only') flow.open = undefined;
  return at;
}

/** RoCE flows seen so far, for {@link roceItem}'s message grouping. */
export type RoceFlows = Map<string, FlowState>;

/** The item of a frame that carries RoCEv2 (UDP to the RoCE port): packet, ICRC, message. */
export function roceItem(frame: DecodedFrame, origin: ItemOrigin, flows: RoceFlows): RoceItem {
  const t = frame.transport;
  const packet = decodeRocePacket(frame.payload);
  // The ICRC ends the UDP datagram, which may end before the IP packet does.
  const checked =
    packet.ok &&
    t?.kind === 'udp' &&
    frame.ipPacket !== undefined &&
    frame.ipHeaderLength !== undefined
      ? checkRoceIcrc(
          frame.ipPacket.subarray(0, frame.ipHeaderLength + t.header.length),
          frame.ipHeaderLength,
        )
      : undefined;
  // A packet that decoded holds its ICRC; a failed check is left out like a missing one.
  const icrc = checked?.ok ? checked.value : undefined;
  const message = packet.ok ? placeInMessage(flows, frame, packet.value) : undefined;
  return {
    kind: 'roce',
    ...origin,
    frame,
    packet,
    ...(icrc ? { icrc } : {}),
    ...(message ? { message } : {}),
  };
}

/** A direction of a reassembled connection, framed by the MPA framer. */
class WholeDirection extends MpaDirection<ItemOrigin> {
  constructor(
    readonly direction: CaptureDirection,
    readonly tcp: TcpDirection,
  ) {
    super({ frameIndex: 0, timestampNs: 0n });
  }
}

/**
 * The items of an iWARP connection: the first run of each direction through the MPA
 * framer (mpa-direction.ts) and its object sink (object-sink.ts), as the streaming decoder
 * frames them; then each gap as a problem at the last frame before it.
 */
function frameConnection(
  c: TcpConnection,
  connection: number,
  profile: IwarpProfile | undefined,
  timeOf: (frameIndex: number) => bigint,
  items: CaptureItem[],
): void {
  const directions = [
    new WholeDirection('client-to-server', c.clientToServer),
    new WholeDirection('server-to-client', c.serverToClient),
  ] as const;
  directions[0].peer = directions[1];
  directions[1].peer = directions[0];
  const sink = objectSink<WholeDirection>({
    profile,
    connection: () => connection,
    direction: (d) => d.direction,
    emit: (item) => items.push(item),
    // The framer reads the reassembled run itself (adopted, not copied): nothing moves it.
    stableBytes: true,
    // In an iWARP connection, a direction that does not start with an MPA frame is a bad
    // or cut frame (RFC 5044 §7.1): its problem, as for any other frame error.
    notMpa: (d) => {
      if (d.pendingLength === 0) return;
      const r = decodeMpaFrame(d.pending(), 0);
      if (!r.ok) sink.problem(d, d.frameAt(d.consumed), r.error);
    },
  });
  for (const d of directions) {
    const run = d.tcp.runs[0];
    if (run === undefined) continue;
    d.startAt(run.startSequence);
    d.adopt(
      run.bytes,
      run.pieces.map((p) => p.offset),
      run.pieces.map((p) => ({ frameIndex: p.frameIndex, timestampNs: timeOf(p.frameIndex) })),
    );
  }
  for (const d of directions) d.advance(sink);
  for (const d of directions) {
    const run = d.tcp.runs[0];
    const framed = d.frame !== undefined;
    d.finish(sink);
    if (run === undefined || !framed) continue;
    const last = run.pieces.at(-1)?.frameIndex ?? 0;
    for (const gap of d.tcp.gaps)
      sink.problem(
        d,
        { frameIndex: last, timestampNs: timeOf(last) },
        missingBytesError(gap.length, gap.startSequence),
      );
  }
}

/** Decodes every message of a pcap/pcapng file. Fails only when the file itself is malformed. */
export function decodeCaptureMessages(
  bytes: Uint8Array,
  options: CaptureDecodeOptions = {},
): DecodeResult<CaptureDecode> {
  requireBytes('codec', 'bytes', bytes);
  requireProfileOptions(options, CAPTURE_DECODE_OPTIONS);
  const file = decodeCapture(bytes);
  if (!file.ok) return file;
  const rocePort = options.rocePort ?? ROCE_V2_UDP_PORT;
  const records = file.value.records;
  const timeOf = (i: number) => records[i]?.timestampNs ?? 0n;
  const items: CaptureItem[] = [];
  const segments: TcpSegmentInput[] = [];
  const tcpFrames = new Set<number>();
  let otherFrames = 0;
  const flows = new Map<string, FlowState>();
  records.forEach((record, frameIndex) => {
    const origin = { frameIndex, timestampNs: record.timestampNs };
    const f = decodeFrame(record.linkType, record.data);
    if (!f.ok) {
      items.push({ kind: 'problem', ...origin, error: f.error });
      return;
    }
    const frame = f.value;
    const t = frame.transport;
    if (t?.kind === 'udp' && t.header.destinationPort === rocePort) {
      items.push(roceItem(frame, origin, flows));
      return;
    }
    if (t?.kind === 'tcp' && frame.network !== undefined) {
      segments.push({
        frameIndex,
        source: frame.network.header.source,
        sourcePort: t.header.sourcePort,
        destination: frame.network.header.destination,
        destinationPort: t.header.destinationPort,
        sequenceNumber: t.header.sequenceNumber,
        flags: t.header.flags,
        payload: frame.payload,
      });
      tcpFrames.add(frameIndex);
      return;
    }
    otherFrames++;
  });
  const connections = reassembleTcp(segments).filter(
    (c) => startsWithMpaFrame(c.clientToServer) || startsWithMpaFrame(c.serverToClient),
  );
  const framesInMpaConnections = new Set<number>();
  connections.forEach((c, connection) => {
    for (const dir of [c.clientToServer, c.serverToClient])
      for (const r of dir.runs) for (const p of r.pieces) framesInMpaConnections.add(p.frameIndex);
    frameConnection(c, connection, options.profile, timeOf, items);
  });
  for (const i of tcpFrames) if (!framesInMpaConnections.has(i)) otherFrames++;
  // Stable sort keeps stream order within a frame.
  items.sort((a, b) => a.frameIndex - b.frameIndex);
  return decoded({
    format: file.value.format,
    frameCount: records.length,
    connections,
    otherFrames,
    items,
  });
}
