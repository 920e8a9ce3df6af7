/**
 * TCP stream reassembly per connection and direction (RFC 9293 sequence space).
 *
 * Segments are collected in capture order, placed on an unwrapped 64-bit sequence line
 * (each segment relative to the previous one of its direction, so 32-bit wraparound is
 * followed), then laid out in order: retransmitted bytes are dropped, overlaps keep the
 * bytes already placed (conflicting overlaps are counted), and holes split the stream into
 * contiguous runs with the gaps reported. A SYN fixes the ISN: data starts at ISN + 1.
 * Without a SYN, the stream starts at the lowest sequence number seen.
 */
import { ArgumentError } from '../../errors.js';
import { TcpFlag } from '../net/tcp.js';

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
export interface TcpGap {
  /** Sequence number of the first missing byte (unsigned 32-bit). */
  readonly startSequence: number;
  readonly length: number;
}

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

interface Placed {
  readonly start: bigint;
  readonly payload: Uint8Array;
  readonly frameIndex: number;
}

interface DirectionState {
  readonly source: TcpEndpoint;
  readonly destination: TcpEndpoint;
  isn: number | undefined;
  /** Unwrapped position of the ISN + 1 when a SYN was seen. */
  synStart: bigint | undefined;
  lastSeq: number | undefined;
  lastUnwrapped: bigint;
  readonly segments: Placed[];
}

const MOD = 0x1_0000_0000n;

/** Signed distance from `a` to `b` in 32-bit sequence space (RFC 1982 style). */
function seqDelta(a: number, b: number): bigint {
  let d = (BigInt(b) - BigInt(a)) % MOD;
  if (d < 0n) d += MOD;
  return d >= MOD / 2n ? d - MOD : d;
}

function endpointKey(address: string, port: number): string {
  return `${address}|${port}`;
}

function newDirection(source: TcpEndpoint, destination: TcpEndpoint): DirectionState {
  return {
    source,
    destination,
    isn: undefined,
    synStart: undefined,
    lastSeq: undefined,
    lastUnwrapped: 0n,
    segments: [],
  };
}

function place(d: DirectionState, s: TcpSegmentInput): void {
  const pos =
    d.lastSeq === undefined
      ? MOD * 4n + BigInt(s.sequenceNumber)
      : d.lastUnwrapped + seqDelta(d.lastSeq, s.sequenceNumber);
  d.lastSeq = s.sequenceNumber;
  d.lastUnwrapped = pos;
  let start = pos;
  if (s.flags & TcpFlag.SYN) {
    if (d.isn === undefined) {
      d.isn = s.sequenceNumber;
      d.synStart = pos + 1n;
    }
    start = pos + 1n; // the SYN occupies one sequence number (RFC 9293 §3.4)
  }
  if (s.payload.length > 0)
    d.segments.push({ start, payload: s.payload, frameIndex: s.frameIndex });
}

/** A byte buffer that grows by doubling; holds the run being assembled. */
class RunBuffer {
  private buf = new Uint8Array(256);
  length = 0;
  append(bytes: Uint8Array): void {
    if (this.length + bytes.length > this.buf.length) {
      let size = this.buf.length;
      while (size < this.length + bytes.length) size *= 2;
      const bigger = new Uint8Array(size);
      bigger.set(this.buf.subarray(0, this.length));
      this.buf = bigger;
    }
    this.buf.set(bytes, this.length);
    this.length += bytes.length;
  }
  at(i: number): number | undefined {
    return i >= 0 && i < this.length ? this.buf[i] : undefined;
  }
  take(): Uint8Array {
    const out = this.buf.slice(0, this.length);
    this.buf = new Uint8Array(256);
    this.length = 0;
    return out;
  }
}

function u32(pos: bigint): number {
  return Number(((pos % MOD) + MOD) % MOD);
}

function finish(d: DirectionState): TcpDirection {
  const segments = [...d.segments].sort((a, b) =>
    a.start < b.start ? -1 : a.start > b.start ? 1 : a.frameIndex - b.frameIndex,
  );
  const base = d.synStart ?? segments[0]?.start ?? 0n;
  let bytesBeforeStart = 0;
  const runs: TcpStreamRun[] = [];
  const gaps: TcpGap[] = [];
  let duplicateBytes = 0;
  let conflictingBytes = 0;
  const run = new RunBuffer();
  let pieces: TcpRunPiece[] = [];
  let runStart = base;
  let cursor = base;
  const flush = () => {
    if (cursor === runStart) return;
    runs.push({ startSequence: u32(runStart), bytes: run.take(), pieces });
    pieces = [];
  };
  // Compares re-sent bytes with those already placed in the current run.
  const countConflicts = (start: bigint, bytes: Uint8Array) => {
    const first = Number(start - runStart);
    for (let i = 0; i < bytes.length; i++) {
      const old = run.at(first + i);
      if (old !== undefined && old !== bytes[i]) conflictingBytes++;
    }
  };
  for (const s of segments) {
    let start = s.start;
    let payload = s.payload;
    if (start < base) {
      const skip = Number(base - start);
      bytesBeforeStart += Math.min(skip, payload.length);
      if (skip >= payload.length) continue;
      payload = payload.subarray(skip);
      start = base;
    }
    const end = start + BigInt(payload.length);
    if (end <= cursor) {
      duplicateBytes += payload.length;
      countConflicts(start, payload);
      continue;
    }
    if (start > cursor) {
      flush();
      gaps.push({ startSequence: u32(cursor), length: Number(start - cursor) });
      runStart = start;
      cursor = start;
    }
    const overlap = Number(cursor - start);
    if (overlap > 0) {
      duplicateBytes += overlap;
      countConflicts(start, payload.subarray(0, overlap));
    }
    const fresh = payload.subarray(overlap);
    pieces.push({
      offset: Number(cursor - runStart),
      length: fresh.length,
      frameIndex: s.frameIndex,
    });
    run.append(fresh);
    cursor += BigInt(fresh.length);
  }
  flush();
  return {
    source: d.source,
    destination: d.destination,
    initialSequenceNumber: d.isn,
    runs,
    gaps,
    duplicateBytes,
    conflictingBytes,
    bytesBeforeStart,
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
    place(d, s);
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
