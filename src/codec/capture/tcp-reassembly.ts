/**
 * TCP stream reassembly per connection and direction (RFC 9293 sequence space), for a
 * decoder that has the whole capture: the whole-capture decoder (decode-capture.ts) and
 * users of `reassembleTcp`.
 *
 * Segments are grouped by connection and direction, then fed in capture order through the
 * TCP stream core of every capture decoder (tcp-stream.ts): retransmitted bytes are
 * dropped, overlaps keep the bytes that arrived first (conflicting overlaps are counted),
 * segments beyond a hole wait for it, and holes that never fill split the stream into
 * contiguous runs with the gaps reported. A SYN fixes the ISN: data starts at ISN + 1.
 * Without a SYN, the stream starts at the lowest sequence number seen.
 */
import { ArgumentError } from '../../errors.js';
import { TcpFlag } from '../net/tcp.js';
import { reservePending } from '../pending-bytes.js';
import { firstSequence, type InOrderBytes, type SequenceGap, TcpStream } from './tcp-stream.js';

/** One TCP segment as captured. */
export interface TcpSegmentInput {
  /** Index of the capture record that carried the segment. */
  readonly frameIndex: number;
  readonly source: string;
  readonly sourcePort: number;
  readonly destination: string;
  readonly destinationPort: number;
  /** Unsigned 32-bit sequence number. */
  readonly sequenceNumber: number;
  /** Bits of `TcpFlag`. */
  readonly flags: number;
  readonly payload: Uint8Array;
}

/** An IP address and port. */
export interface TcpEndpoint {
  readonly address: string;
  readonly port: number;
}

/** Where the bytes of one segment landed in a run. */
export interface TcpRunPiece {
  /** Offset in the run's bytes. */
  readonly offset: number;
  readonly length: number;
  readonly frameIndex: number;
}

/** A contiguous stretch of the byte stream. */
export interface TcpStreamRun {
  /** TCP sequence number of the first byte (unsigned 32-bit). */
  readonly startSequence: number;
  readonly bytes: Uint8Array;
  /** Which frames supplied which bytes, in stream order. */
  readonly pieces: readonly TcpRunPiece[];
}

/** Bytes missing between two runs. */
export type TcpGap = SequenceGap;

/** One direction of a connection, reassembled. */
export interface TcpDirection {
  readonly source: TcpEndpoint;
  readonly destination: TcpEndpoint;
  /** The ISN from a SYN, when one was captured. */
  readonly initialSequenceNumber: number | undefined;
  /** Contiguous runs in stream order; more than one means there were gaps. */
  readonly runs: readonly TcpStreamRun[];
  readonly gaps: readonly TcpGap[];
  /** Payload bytes that repeated bytes already placed (retransmissions and overlaps). */
  readonly duplicateBytes: number;
  /** Overlapping bytes whose values differed from those already placed. */
  readonly conflictingBytes: number;
  /** Bytes before the ISN + 1 (sent before the SYN's sequence space), dropped. */
  readonly bytesBeforeStart: number;
}

/**
 * A reassembled TCP connection. When both ends are the same address and port, all of its
 * bytes are in `clientToServer` and `serverToClient` is empty.
 */
export interface TcpConnection {
  /** The SYN sender, else the sender of the first captured segment. */
  readonly client: TcpEndpoint;
  readonly server: TcpEndpoint;
  readonly clientToServer: TcpDirection;
  readonly serverToClient: TcpDirection;
  /** Index of the first frame of the connection. */
  readonly firstFrame: number;
}

interface DirectionState {
  readonly source: TcpEndpoint;
  readonly destination: TcpEndpoint;
  /** The direction's segments, in capture order. */
  readonly segments: TcpSegmentInput[];
}

function endpointKey(address: string, port: number): string {
  return `${address}|${port}`;
}

function newDirection(source: TcpEndpoint, destination: TcpEndpoint): DirectionState {
  return { source, destination, segments: [] };
}

/**
 * One direction's segments through the TCP stream core (tcp-stream.ts), which holds all of
 * the sequence arithmetic: the start fixed from every segment (`firstSequence`), segments fed
 * in capture order with nothing given up, and each hole that never fills closing a run.
 */
function finish(d: DirectionState): TcpDirection {
  const stream = new TcpStream<number>(-1, Number.POSITIVE_INFINITY, true);
  // Room for every byte of the direction at once: the appends never regrow the buffer.
  let bytes = 0;
  for (const s of d.segments) bytes += s.payload.length;
  reservePending(stream, bytes);
  const start = firstSequence(d.segments);
  if (start !== undefined) stream.startAt(start);
  let bytesBeforeStart = 0;
  let duplicateBytes = 0;
  let conflictingBytes = 0;
  // Bytes already placed, or before the start: counted, and compared with the run's bytes.
  stream.onRepeated = (offset, b, from, end) => {
    const before = Math.min(Math.max(0, -offset), end - from);
    bytesBeforeStart += before;
    duplicateBytes += end - from - before;
    const run = stream.pending();
    const at = offset + before - stream.consumed;
    for (let i = from + before; i < end; i++) {
      const old = run[at + i - from - before];
      if (old !== undefined && old !== b[i]) conflictingBytes++;
    }
  };
  const keep: InOrderBytes<number> = (b, from, end, frameIndex) =>
    stream.append(b.subarray(from, end), frameIndex);
  for (const s of d.segments)
    stream.accept(s.sequenceNumber, s.flags, s.payload, 0, s.payload.length, s.frameIndex, keep);
  const runs: TcpStreamRun[] = [];
  const gaps: SequenceGap[] = [];
  for (;;) {
    if (stream.pendingLength > 0) runs.push(takeRun(stream));
    const gap = stream.skipHole(keep);
    if (gap === undefined) break;
    gaps.push(gap);
  }
  const syn = d.segments.find((s) => s.flags & TcpFlag.SYN);
  return {
    source: d.source,
    destination: d.destination,
    initialSequenceNumber: syn?.sequenceNumber,
    runs,
    gaps,
    duplicateBytes,
    conflictingBytes,
    bytesBeforeStart,
  };
}

/** The stream's pending bytes as a run, with the frames that supplied them. */
function takeRun(stream: TcpStream<number>): TcpStreamRun {
  const runStart = stream.consumed;
  const { offsets, frames } = stream.pendingPieces();
  const pieces: TcpRunPiece[] = [];
  for (let i = 0; i < offsets.length; i++) {
    const offset = offsets[i]!;
    if (offset < runStart) continue; // the last piece of the run before the hole
    const end = offsets[i + 1] ?? stream.received;
    pieces.push({ offset: offset - runStart, length: end - offset, frameIndex: frames[i]! });
  }
  return {
    startSequence: stream.sequenceAt(runStart),
    bytes: stream.pending().slice(),
    pieces,
  };
}

/** One segment from a plain-JavaScript caller: its fields' types, or ArgumentError. */
function checkSegmentInput(s: TcpSegmentInput): void {
  const ok =
    typeof s === 'object' &&
    s !== null &&
    Number.isSafeInteger(s.frameIndex) &&
    typeof s.source === 'string' &&
    typeof s.destination === 'string' &&
    Number.isInteger(s.sourcePort) &&
    Number.isInteger(s.destinationPort) &&
    Number.isInteger(s.sequenceNumber) &&
    s.sequenceNumber >= 0 &&
    s.sequenceNumber <= 0xffff_ffff &&
    Number.isInteger(s.flags) &&
    s.payload instanceof Uint8Array;
  if (!ok) throw new ArgumentError('codec', 'segments[]', 'not a TCP segment (TcpSegmentInput)');
}

/**
 * Groups segments into connections (by address/port pair) and reassembles both
 * directions of each. Connections are returned in order of their first frame.
 */
export function reassembleTcp(segments: Iterable<TcpSegmentInput>): TcpConnection[] {
  if (
    typeof segments === 'string' ||
    typeof (segments as { [Symbol.iterator]?: unknown } | null)?.[Symbol.iterator] !== 'function'
  )
    throw new ArgumentError('codec', 'segments', 'not an iterable of TCP segments');
  const connections = new Map<
    string,
    {
      client: TcpEndpoint;
      server: TcpEndpoint;
      firstFrame: number;
      dirs: Map<string, DirectionState>;
    }
  >();
  for (const s of segments) {
    checkSegmentInput(s);
    const a = endpointKey(s.source, s.sourcePort);
    const b = endpointKey(s.destination, s.destinationPort);
    const key = a < b ? `${a}#${b}` : `${b}#${a}`;
    let c = connections.get(key);
    const src = { address: s.source, port: s.sourcePort };
    const dst = { address: s.destination, port: s.destinationPort };
    if (c === undefined) {
      c = { client: src, server: dst, firstFrame: s.frameIndex, dirs: new Map() };
      connections.set(key, c);
    }
    // A bare SYN names the client even when it was not the first frame captured.
    if (s.flags & TcpFlag.SYN && !(s.flags & TcpFlag.ACK)) {
      c.client = src;
      c.server = dst;
    }
    let d = c.dirs.get(a);
    if (d === undefined) {
      d = newDirection(src, dst);
      c.dirs.set(a, d);
    }
    d.segments.push(s);
  }
  return [...connections.values()].map((c) => {
    const ck = endpointKey(c.client.address, c.client.port);
    const sk = endpointKey(c.server.address, c.server.port);
    // A connection whose two ends are the same address and port (a socket connected to
    // itself, RFC 9293 §3.5 simultaneous open) has one sequence space on the wire: every
    // segment is both "from" and "to" the same end, so all of them form one direction.
    // It is reported as client-to-server; the other direction is empty, not a copy.
    const selfConnected = ck === sk;
    return {
      client: c.client,
      server: c.server,
      firstFrame: c.firstFrame,
      clientToServer: finish(c.dirs.get(ck) ?? newDirection(c.client, c.server)),
      serverToClient: finish(
        (selfConnected ? undefined : c.dirs.get(sk)) ?? newDirection(c.server, c.client),
      ),
    };
  });
}
