/**
 * Test conveniences for writing captures: a temp-file pcap writer and a TCP conversation
 * builder that keeps sequence/acknowledgement numbers consistent in both directions.
 *
 * Usage (an iWARP-style TCP conversation):
 * ```ts
 * const conv = new TcpConversation({ clientIp: '10.0.0.1', serverIp: '10.0.0.2',
 *   clientPort: 40000, serverPort: 4000 });
 * conv.handshake();                        // optional SYN, SYN/ACK, ACK
 * conv.send('client', mpaRequestBytes);    // one segment, PSH|ACK
 * conv.send('server', mpaReplyBytes);
 * const file = writeTempPcap(conv.frames()); // LINKTYPE_ETHERNET, nanosecond pcap
 * ```
 * For RoCEv2: `buildUdpFrame({ sourceIp, destinationIp }, { sourcePort: 49152,
 * destinationPort: 4791 }, bthAndPayload)` from `src/codec/net/index.js`.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildTcpFrame, type FrameAddressing } from '../../src/codec/net/build.js';
import { finishChecksum } from '../../src/codec/net/checksum.js';
import { decodeFrame } from '../../src/codec/net/frame.js';
import { TcpFlag, type TcpOption } from '../../src/codec/net/tcp.js';
import { decodeCapture } from '../../src/codec/pcap/capture.js';
import { LinkType } from '../../src/codec/pcap/linktype.js';
import { encodePcap } from '../../src/codec/pcap/pcap.js';

/** A fresh temporary directory for one test's files. */
export function makeTempDir(prefix = 'rdma-interop-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

/**
 * Writes Ethernet frames as a nanosecond pcap in a new temp dir (or at `path`) and returns
 * the file's path. Timestamps start at `startNs` and advance 1 ms per frame.
 */
export function writeTempPcap(
  frames: readonly Uint8Array[],
  options: { path?: string; startNs?: bigint; linkType?: number } = {},
): string {
  const path = options.path ?? join(makeTempDir(), 'capture.pcap');
  const start = options.startNs ?? 1_700_000_000_000_000_000n;
  const bytes = encodePcap(
    { linkType: options.linkType ?? LinkType.ETHERNET, precision: 'nano' },
    frames.map((data, i) => ({ timestampNs: start + BigInt(i) * 1_000_000n, data })),
  );
  writeFileSync(path, bytes);
  return path;
}

/** Which end of a {@link TcpConversation} sends a segment. */
export type TcpSide = 'client' | 'server';

/** Endpoints of a {@link TcpConversation}; ISNs default to non-palindromic values. */
export interface TcpConversationOptions {
  readonly clientIp: string;
  readonly serverIp: string;
  readonly clientPort: number;
  readonly serverPort: number;
  readonly ipv6?: boolean;
  /** [0x1a2b3c4d] */
  readonly clientIsn?: number;
  /** [0x5e6f7081] */
  readonly serverIsn?: number;
}

/**
 * Builds the frames of one TCP connection with consistent sequence numbers. Each call
 * appends frames; `frames()` returns them in order. `sendRaw` gives full control (for
 * retransmissions, overlaps and gaps in reassembly tests).
 */
export class TcpConversation {
  private readonly out: Uint8Array[] = [];
  /** Next sequence number each side will send (unsigned 32-bit). */
  readonly next: Record<TcpSide, number>;

  constructor(private readonly o: TcpConversationOptions) {
    this.next = { client: o.clientIsn ?? 0x1a2b3c4d, server: o.serverIsn ?? 0x5e6f7081 };
  }

  private addressing(from: TcpSide): FrameAddressing {
    const c = from === 'client';
    return {
      sourceIp: c ? this.o.clientIp : this.o.serverIp,
      destinationIp: c ? this.o.serverIp : this.o.clientIp,
      sourceMac: c ? '02:00:00:00:00:01' : '02:00:00:00:00:02',
      destinationMac: c ? '02:00:00:00:00:02' : '02:00:00:00:00:01',
      ipv6: this.o.ipv6 ?? false,
    };
  }

  /** SYN, SYN/ACK, ACK; each SYN consumes one sequence number. */
  handshake(): this {
    const mss: TcpOption = { kind: 2, data: Uint8Array.of(0x05, 0xb4) };
    this.sendRaw('client', { flags: TcpFlag.SYN, options: [mss] }, new Uint8Array(0));
    this.next.client = (this.next.client + 1) >>> 0;
    this.sendRaw('server', { flags: TcpFlag.SYN | TcpFlag.ACK, options: [mss] }, new Uint8Array(0));
    this.next.server = (this.next.server + 1) >>> 0;
    this.sendRaw('client', { flags: TcpFlag.ACK }, new Uint8Array(0));
    return this;
  }

  /** One PSH|ACK segment carrying `payload`; advances the sender's sequence number. */
  send(from: TcpSide, payload: Uint8Array): this {
    this.sendRaw(from, { flags: TcpFlag.PSH | TcpFlag.ACK }, payload);
    this.next[from] = (this.next[from] + payload.length) >>> 0;
    return this;
  }

  /**
   * Appends a segment without advancing anything. `seq` defaults to the sender's next
   * sequence number, `ack` to the peer's.
   */
  sendRaw(
    from: TcpSide,
    fields: { seq?: number; ack?: number; flags?: number; options?: readonly TcpOption[] },
    payload: Uint8Array,
  ): this {
    const c = from === 'client';
    const peer: TcpSide = c ? 'server' : 'client';
    const flags = fields.flags ?? TcpFlag.PSH | TcpFlag.ACK;
    this.out.push(
      buildTcpFrame(
        this.addressing(from),
        {
          sourcePort: c ? this.o.clientPort : this.o.serverPort,
          destinationPort: c ? this.o.serverPort : this.o.clientPort,
          sequenceNumber: fields.seq ?? this.next[from],
          acknowledgementNumber: flags & TcpFlag.ACK ? (fields.ack ?? this.next[peer]) : 0,
          flags,
          options: fields.options ?? [],
        },
        payload,
      ),
    );
    return this;
  }

  /** The frames so far, in order. */
  frames(): Uint8Array[] {
    return [...this.out];
  }
}

/**
 * A copy of a capture (pcap or pcapng, written back as a nanosecond pcap) with every TCP
 * port `from` replaced by `to` in both directions, each TCP checksum updated for the change
 * (RFC 1624 eqn. 3), so it stays exactly as valid as it was. For captures whose port a test
 * wants on a value that tshark gives to another protocol.
 */
export function withTcpPort(capture: Uint8Array, from: number, to: number): Uint8Array {
  const c = decodeCapture(capture);
  if (!c.ok) throw c.error;
  const linkType = c.value.records[0]?.linkType ?? LinkType.ETHERNET;
  const records = c.value.records.map((r) => {
    const data = Uint8Array.from(r.data);
    const f = decodeFrame(r.linkType, data);
    if (f.ok && f.value.transport?.kind === 'tcp' && f.value.ipPacket !== undefined) {
      const at = f.value.ipPacket.byteOffset - data.byteOffset + (f.value.ipHeaderLength ?? 0);
      const view = new DataView(data.buffer, data.byteOffset);
      for (const p of [at, at + 2]) {
        if (view.getUint16(p) !== from) continue;
        view.setUint16(p, to);
        // HC' = ~(~HC + ~m + m'), in one's-complement arithmetic; the checksum is at 16.
        const sum = (~view.getUint16(at + 16) & 0xffff) + (~from & 0xffff) + to;
        view.setUint16(at + 16, finishChecksum(sum));
      }
    }
    return { timestampNs: r.timestampNs, data, originalLength: r.originalLength };
  });
  return encodePcap({ linkType, precision: 'nano' }, records);
}
