/**
 * The frame-level values of tshark's field names (`frame.number`, `ip.src`, `tcp.stream`,
 * `udp.srcport`, ...) for `decode --fields` and `--filter`: each record decoded by the
 * eager frame decoder (net/frame.ts), and the conversation indexes numbered as tshark
 * numbers them (tcp.stream and udp.stream: 0, 1, ... in order of a conversation's first
 * frame, the same index for both directions).
 */
import { decodeFrame } from '../net/frame.js';
import { checkRoceIcrc } from '../roce/icrc.js';
import type { FrameKey, RawValue } from './tshark-fields.js';

/** One record's frame-level values (undefined: the frame has no such field). */
export type FrameValues = Partial<Record<FrameKey, RawValue>>;

/** The frame-level values of one record, and the RoCE ICRC verdict when it is RoCE. */
export interface FrameInfo {
  readonly values: FrameValues;
  /** The IP packet (for the ICRC check), when the frame is IP. */
  readonly ipPacket: Uint8Array | undefined;
  readonly ipHeaderLength: number;
}

/** Numbers conversations in order of first appearance, both directions alike. */
class ConversationIndex {
  private readonly index = new Map<string, number>();
  of(a: string, aPort: number, b: string, bPort: number): number {
    const one = `${a}|${aPort}`;
    const other = `${b}|${bPort}`;
    const key = one < other ? `${one}|${other}` : `${other}|${one}`;
    let n = this.index.get(key);
    if (n === undefined) {
      n = this.index.size;
      this.index.set(key, n);
    }
    return n;
  }
}

/** Reads the frame-level values of records, keeping the conversation indexes across them. */
export class FrameInfoReader {
  private readonly tcp = new ConversationIndex();
  private readonly udp = new ConversationIndex();

  /** The values of record `frameIndex` (0-based) of link type `linkType`. */
  read(frameIndex: number, linkType: number, bytes: Uint8Array): FrameInfo {
    const values: FrameValues = { number: frameIndex + 1, len: bytes.length };
    const r = decodeFrame(linkType, bytes);
    if (!r.ok) return { values, ipPacket: undefined, ipHeaderLength: 0 };
    const f = r.value;
    if (f.link.kind === 'ethernet') {
      const e = f.link.header;
      values.eth = true;
      values.ethSrc = e.source;
      values.ethDst = e.destination;
      values.ethType = e.etherType;
    }
    let source = '';
    let destination = '';
    const n = f.network;
    if (n?.kind === 'ipv4') {
      values.ip = true;
      values.ipSrc = source = n.header.source;
      values.ipDst = destination = n.header.destination;
      values.ipProto = n.header.protocol;
      values.ipLen = n.header.totalLength;
      values.ipId = n.header.identification;
      values.ipTtl = n.header.ttl;
    } else if (n?.kind === 'ipv6') {
      values.ipv6 = true;
      values.ipv6Src = source = n.header.source;
      values.ipv6Dst = destination = n.header.destination;
    }
    const t = f.transport;
    if (t?.kind === 'tcp') {
      const h = t.header;
      values.tcp = true;
      values.tcpSrcPort = h.sourcePort;
      values.tcpDstPort = h.destinationPort;
      values.tcpStream = this.tcp.of(source, h.sourcePort, destination, h.destinationPort);
      values.tcpSeqRaw = h.sequenceNumber;
      values.tcpAckRaw = h.acknowledgementNumber;
      values.tcpLen = f.payload.length;
      values.tcpFlags = h.flags;
    } else if (t?.kind === 'udp') {
      const h = t.header;
      values.udp = true;
      values.udpSrcPort = h.sourcePort;
      values.udpDstPort = h.destinationPort;
      values.udpLength = h.length;
      values.udpStream = this.udp.of(source, h.sourcePort, destination, h.destinationPort);
    }
    return { values, ipPacket: f.ipPacket, ipHeaderLength: f.ipHeaderLength ?? 0 };
  }
}

/** The RoCE ICRC verdict of a frame (IBTA §9.10.1.1): valid, invalid, or '' when not checkable. */
export function icrcStatus(info: FrameInfo | undefined): string {
  if (info?.ipPacket === undefined) return '';
  const r = checkRoceIcrc(info.ipPacket, info.ipHeaderLength);
  if (!r.ok) return '';
  return r.value.valid ? 'valid' : 'invalid';
}
