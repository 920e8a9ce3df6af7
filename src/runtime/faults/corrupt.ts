/**
 * The two corruptions the relay applies to an Ethernet frame (one UDP datagram of a QEMU
 * socket netdev is one frame, without FCS):
 * - a bit flip anywhere in the IPv4 payload (the transport header or data), which the
 *   receiver's TCP or UDP checksum (RFC 793, RFC 768) or RoCEv2's ICRC (IBTA Annex A17.3.3)
 *   must catch; the IP header is left alone so that the frame still reaches the transport;
 * - a changed byte of the Write data in an FPDU, with the TCP checksum recomputed, so that
 *   TCP accepts it and only the MPA CRC can catch it (RFC 5044 §8: the connection is then
 *   terminated, with a Terminate naming the LLP error).
 */

import { DDP_FIELDS, DDP_TAGGED_HEADER_LENGTH, DDP_VERSION } from '../../codec/iwarp/ddp.js';
import { readField, readFieldNumber } from '../../codec/iwarp/layouts.js';
import { MPA_CRC_LENGTH, MPA_ULPDU_LENGTH_LENGTH, mpaPadLength } from '../../codec/iwarp/mpa.js';
import { MPA_REPLY_KEY, MPA_REQUEST_KEY } from '../../codec/iwarp/mpa-frames.js';
import { internetChecksum, ipv4PseudoHeader } from '../../codec/net/checksum.js';
import type { Prng } from './prng.js';

const ETH_HEADER = 14;
const ETHERTYPE_IPV4 = 0x0800;
const ETHERTYPE_ARP = 0x0806;
const PROTO_TCP = 6;

interface Ipv4 {
  /** Offset of the IP header, of the transport header, and the end of the IP datagram. */
  readonly ip: number;
  readonly l4: number;
  readonly end: number;
  readonly protocol: number;
}

function ipv4Of(frame: Uint8Array): Ipv4 | undefined {
  if (frame.length < ETH_HEADER + 20) return undefined;
  const view = new DataView(frame.buffer, frame.byteOffset, frame.byteLength);
  if (view.getUint16(12) !== ETHERTYPE_IPV4) return undefined;
  const ip = ETH_HEADER;
  const ihl = ((frame[ip] ?? 0) & 0x0f) * 4;
  const total = view.getUint16(ip + 2);
  const end = ip + total;
  if (ihl < 20 || end > frame.length || ip + ihl >= end) return undefined;
  return { ip, l4: ip + ihl, end, protocol: frame[ip + 9] ?? 0 };
}

/** True for an ARP frame (RFC 826), which the relay never touches. */
export function isArp(frame: Uint8Array): boolean {
  return (
    frame.length >= ETH_HEADER && (((frame[12] ?? 0) << 8) | (frame[13] ?? 0)) === ETHERTYPE_ARP
  );
}

/** Flips one random bit of the frame's IPv4 payload; false (frame untouched) for other frames. */
export function flipBit(frame: Uint8Array, prng: Prng): boolean {
  const ip = ipv4Of(frame);
  if (ip === undefined) return false;
  const at = ip.l4 + prng.below(ip.end - ip.l4);
  frame[at] = (frame[at] ?? 0) ^ (1 << prng.below(8));
  return true;
}

/** Where a TCP segment's data lies in `frame`, and its ports. */
export interface TcpSegment {
  readonly l4: number;
  readonly data: number;
  readonly end: number;
  readonly srcPort: number;
  readonly dstPort: number;
}

export function tcpSegmentOf(frame: Uint8Array): TcpSegment | undefined {
  const ip = ipv4Of(frame);
  if (ip === undefined || ip.protocol !== PROTO_TCP || ip.end - ip.l4 < 20) return undefined;
  const view = new DataView(frame.buffer, frame.byteOffset, frame.byteLength);
  const data = ip.l4 + ((frame[ip.l4 + 12] ?? 0) >> 4) * 4;
  if (data > ip.end) return undefined;
  return {
    l4: ip.l4,
    data,
    end: ip.end,
    srcPort: view.getUint16(ip.l4),
    dstPort: view.getUint16(ip.l4 + 2),
  };
}

/** The TCP checksum of the segment in `frame` (RFC 9293 §3.1: pseudo-header + segment). */
export function tcpChecksum(frame: Uint8Array, segment: TcpSegment): number {
  const bytes = frame.slice(segment.l4, segment.end);
  bytes[16] = 0;
  bytes[17] = 0;
  const ip = ETH_HEADER;
  const pseudo = ipv4PseudoHeader(
    frame.subarray(ip + 12, ip + 16),
    frame.subarray(ip + 16, ip + 20),
    PROTO_TCP,
    bytes.length,
  );
  return internetChecksum(pseudo, bytes);
}

function rewriteTcpChecksum(frame: Uint8Array, segment: TcpSegment): void {
  const sum = tcpChecksum(frame, segment);
  frame[segment.l4 + 16] = sum >> 8;
  frame[segment.l4 + 17] = sum & 0xff;
}

const MPA_KEYS = [MPA_REQUEST_KEY, MPA_REPLY_KEY].map((key) => new TextEncoder().encode(key));

/**
 * True when the segment's data starts with an MPA Request or Reply key (RFC 5044 §7.1).
 * These frames carry no CRC (the CRC is negotiated by them, §7.1 "C" bit): a changed byte
 * there tests MPA's start-up, not the FPDU CRC that `corrupt-payload` is for.
 */
export function isMpaStartFrame(frame: Uint8Array, segment: TcpSegment): boolean {
  return MPA_KEYS.some(
    (key) =>
      segment.end - segment.data >= key.length &&
      key.every((byte, i) => frame[segment.data + i] === byte),
  );
}

const MPA_REQUEST = new TextEncoder().encode(MPA_REQUEST_KEY);
/** The C (CRC) bit: the first bit after the key but one (RFC 5044 §7.1: |M|C|R|Res|Rev|). */
const MPA_C_BIT = 0x40;

/**
 * Sets the C bit of an MPA Request (RFC 5044 §7.1) and rewrites the TCP checksum: the
 * initiator then asks for CRCs, and RFC 5044 §7.1 makes both directions use them ("if
 * either requests CRC, both MUST use it"; siw_proc_mpareq keeps the bit in its Reply, and
 * siw_proc_mpareply turns the CRC on from the Reply). Stands in for siw's missing switch:
 * `mpa_crc_required` is a constant false in siw_main.c, not a module parameter. False
 * (frame untouched) for any other frame or a Request that asks for CRCs already.
 */
export function requestMpaCrc(frame: Uint8Array): boolean {
  const segment = tcpSegmentOf(frame);
  if (segment === undefined || segment.end - segment.data < MPA_REQUEST.length + 4) return false;
  if (!MPA_REQUEST.every((byte, i) => frame[segment.data + i] === byte)) return false;
  const at = segment.data + MPA_REQUEST.length;
  if (((frame[at] ?? 0) & MPA_C_BIT) !== 0) return false;
  frame[at] = (frame[at] ?? 0) | MPA_C_BIT;
  rewriteTcpChecksum(frame, segment);
  return true;
}

/**
 * Where the data of the tagged FPDU a segment starts with lies (RFC 5044 §4: ULPDU_Length,
 * then the ULPDU; RFC 5041 §4.2: a tagged DDP header of 14 bytes, then the payload a Write
 * places), or undefined when the segment does not start with a whole tagged FPDU of DDP
 * version 1 carrying data. A byte changed there is one only the MPA CRC can catch: a
 * changed header byte (an STag, an offset, a length) is caught by the header checks first
 * (siw checks a segment's DDP header before its trailer, siw_qp_rx.c siw_get_hdr /
 * siw_get_trailer), which tests those checks, not the CRC.
 */
export function taggedPayloadOf(
  frame: Uint8Array,
  segment: TcpSegment,
): { start: number; end: number } | undefined {
  const data = segment.data;
  if (segment.end - data < MPA_ULPDU_LENGTH_LENGTH + DDP_TAGGED_HEADER_LENGTH) return undefined;
  const ulpdu = data + MPA_ULPDU_LENGTH_LENGTH;
  if (!readField(frame, ulpdu, DDP_FIELDS.tagged)) return undefined;
  if (readFieldNumber(frame, ulpdu, DDP_FIELDS.ddpVersion) !== DDP_VERSION) return undefined;
  const length = ((frame[data] ?? 0) << 8) | (frame[data + 1] ?? 0);
  const fpduEnd = ulpdu + length + mpaPadLength(length) + MPA_CRC_LENGTH;
  if (length <= DDP_TAGGED_HEADER_LENGTH || fpduEnd > segment.end) return undefined;
  return { start: ulpdu + DDP_TAGGED_HEADER_LENGTH, end: ulpdu + length };
}

/**
 * Changes one byte of the Write data in the tagged FPDU a TCP segment starts with (XOR with
 * a non-zero value; taggedPayloadOf) and rewrites the TCP checksum; false (frame untouched,
 * no draw) when the frame is not TCP, its ports are in `spare` (the control channel between
 * the guests must stay intact), it is an MPA Request or Reply (isMpaStartFrame), or it
 * starts with no tagged FPDU carrying data.
 */
export function corruptTcpPayload(
  frame: Uint8Array,
  prng: Prng,
  spare: readonly number[] = [],
): boolean {
  const segment = tcpSegmentOf(frame);
  if (segment === undefined || segment.end <= segment.data) return false;
  if (spare.includes(segment.srcPort) || spare.includes(segment.dstPort)) return false;
  if (isMpaStartFrame(frame, segment)) return false;
  const payload = taggedPayloadOf(frame, segment);
  if (payload === undefined) return false;
  const at = payload.start + prng.below(payload.end - payload.start);
  frame[at] = (frame[at] ?? 0) ^ (1 + prng.below(255));
  rewriteTcpChecksum(frame, segment);
  return true;
}
