/**
 * One captured frame, from its link type down to the transport payload: Ethernet (with
 * VLAN tags), Linux cooked SLL/SLL2, or raw IP; then IPv4/IPv6; then UDP or TCP with
 * checksums verified against the pseudo-header and reported (not enforced). Frames that
 * are not IP, or IP that is not UDP/TCP, decode with the missing layers left undefined.
 */
import { requireBytes, requireInteger } from '../../arguments.js';
import { DecodeError, type DecodeResult, decoded, failed } from '../errors.js';
import { LinkType } from '../pcap/linktype.js';
import { ipv4PseudoHeader, ipv6PseudoHeader } from './checksum.js';
import { decodeEthernet, type EthernetHeader, EtherType } from './ethernet.js';
import { decodeIpv4, IpProtocol, type Ipv4Header, isIpv4Fragment } from './ipv4.js';
import { decodeIpv6, IPV6_FRAGMENT_HEADER, type Ipv6Header } from './ipv6.js';
import { decodeSll, decodeSll2, type SllHeader } from './sll.js';
import { decodeTcp, type TcpHeader } from './tcp.js';
import { decodeUdp, type UdpHeader } from './udp.js';

// LINKTYPE_* values come from the one registry table in pcap/linktype.ts.
const LINK = LinkType;

/** The link layer of a frame. */
export type LinkLayer =
  | { readonly kind: 'ethernet'; readonly header: EthernetHeader }
  | { readonly kind: 'sll'; readonly header: SllHeader }
  | { readonly kind: 'raw' };

/** The network layer of a frame. */
export type NetworkLayer =
  | { readonly kind: 'ipv4'; readonly header: Ipv4Header }
  | { readonly kind: 'ipv6'; readonly header: Ipv6Header };

/** The transport layer of a frame. */
export type TransportLayer =
  | { readonly kind: 'udp'; readonly header: UdpHeader }
  | { readonly kind: 'tcp'; readonly header: TcpHeader };

/** A frame decoded as far as this codec goes. */
export interface DecodedFrame {
  readonly link: LinkLayer;
  readonly network?: NetworkLayer;
  readonly transport?: TransportLayer;
  /** The IP packet (header through payload, Ethernet padding excluded). */
  readonly ipPacket?: Uint8Array;
  readonly ipHeaderLength?: number;
  /** Offset of the transport payload in the frame. */
  readonly payloadOffset: number;
  /** The transport payload (or the innermost decoded layer's payload). */
  readonly payload: Uint8Array;
}

/** Shifts a decode error's offset by where its layer starts in the frame. */
function shift<T>(r: DecodeResult<T>, by: number): DecodeResult<T> {
  if (r.ok || by === 0) return r;
  const e = r.error;
  // Recover the detail text: DecodeError's message is `<layer>.<field> at offset <n>:
  // <reason>: <detail>` (errors.ts).
  const prefix = `${e.layer}.${e.field} at offset ${e.offset}: ${e.reason}: `;
  const detail = e.message.startsWith(prefix) ? e.message.slice(prefix.length) : e.message;
  return failed(new DecodeError(e.layer, e.field, e.offset + by, e.reason, detail));
}

/** Decodes a frame of the given LINKTYPE_*. Unsupported link types are a decode error. */
export function decodeFrame(linkType: number, bytes: Uint8Array): DecodeResult<DecodedFrame> {
  requireInteger('codec', 'linkType', linkType, 0, 0xffff_ffff);
  requireBytes('codec', 'bytes', bytes);
  let link: LinkLayer;
  let etherType: number;
  let at: number;
  if (linkType === LINK.ETHERNET) {
    const e = decodeEthernet(bytes);
    if (!e.ok) return e;
    link = { kind: 'ethernet', header: e.value.header };
    etherType = e.value.header.etherType;
    at = e.value.payloadOffset;
  } else if (linkType === LINK.LINUX_SLL || linkType === LINK.LINUX_SLL2) {
    const s = linkType === LINK.LINUX_SLL ? decodeSll(bytes) : decodeSll2(bytes);
    if (!s.ok) return s;
    link = { kind: 'sll', header: s.value.header };
    etherType = s.value.header.protocol;
    at = s.value.payloadOffset;
  } else if (linkType === LINK.RAW) {
    link = { kind: 'raw' };
    const version = (bytes[0] ?? 0) >> 4;
    etherType = version === 6 ? EtherType.IPv6 : EtherType.IPv4;
    at = 0;
  } else {
    return failed(new DecodeError('pcap', 'linkType', 0, 'bad-value', `unsupported ${linkType}`));
  }
  const l3 = bytes.subarray(at);
  let network: NetworkLayer;
  // The IP packet's addresses and payload, the same fields in both versions.
  let ip: {
    readonly sourceBytes: Uint8Array;
    readonly destinationBytes: Uint8Array;
    readonly payload: Uint8Array;
    readonly payloadOffset: number;
  };
  let protocol: number;
  let pseudoHeader: typeof ipv4PseudoHeader;
  let ipPacket: Uint8Array;
  let ipHeaderLength: number;
  if (etherType === EtherType.IPv4) {
    const v4 = shift(decodeIpv4(l3), at);
    if (!v4.ok) return v4;
    network = { kind: 'ipv4', header: v4.value.header };
    if (isIpv4Fragment(v4.value.header))
      return failed(
        new DecodeError(
          'ipv4',
          'fragmentOffset',
          at + 6,
          'bad-value',
          'IPv4 fragments are not reassembled',
        ),
      );
    ip = v4.value;
    protocol = v4.value.header.protocol;
    pseudoHeader = ipv4PseudoHeader;
    ipPacket = l3.subarray(0, v4.value.header.totalLength);
    ipHeaderLength = v4.value.header.headerLength;
  } else if (etherType === EtherType.IPv6) {
    const v6 = shift(decodeIpv6(l3), at);
    if (!v6.ok) return v6;
    network = { kind: 'ipv6', header: v6.value.header };
    if (v6.value.header.extensionHeaders.includes(IPV6_FRAGMENT_HEADER))
      return failed(
        new DecodeError(
          'ipv6',
          'fragment',
          at + 40,
          'bad-value',
          'IPv6 fragments are not reassembled',
        ),
      );
    ip = v6.value;
    protocol = v6.value.header.upperProtocol;
    pseudoHeader = ipv6PseudoHeader;
    ipPacket = l3.subarray(0, 40 + v6.value.header.payloadLength);
    ipHeaderLength = v6.value.payloadOffset;
  } else {
    return decoded({ link, payloadOffset: at, payload: l3 });
  }
  const l4 = ip.payload;
  const l4Offset = at + ip.payloadOffset;
  const { sourceBytes: s, destinationBytes: d } = ip;
  const pseudo = (length: number) => pseudoHeader(s, d, protocol, length);
  if (protocol === IpProtocol.UDP) {
    const udp = shift(decodeUdp(l4, pseudo(l4.length)), l4Offset);
    if (!udp.ok) return udp;
    return decoded({
      link,
      network,
      transport: { kind: 'udp', header: udp.value.header },
      ipPacket,
      ipHeaderLength,
      payloadOffset: l4Offset + 8,
      payload: udp.value.payload,
    });
  }
  if (protocol === IpProtocol.TCP) {
    const tcp = shift(decodeTcp(l4, pseudo(l4.length)), l4Offset);
    if (!tcp.ok) return tcp;
    return decoded({
      link,
      network,
      transport: { kind: 'tcp', header: tcp.value.header },
      ipPacket,
      ipHeaderLength,
      payloadOffset: l4Offset + tcp.value.payloadOffset,
      payload: tcp.value.payload,
    });
  }
  return decoded({ link, network, ipPacket, ipHeaderLength, payloadOffset: l4Offset, payload: l4 });
}
