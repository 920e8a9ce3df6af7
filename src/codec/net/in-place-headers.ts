/**
 * Where a captured frame's IP and UDP or TCP headers lie, found in place: no object per
 * frame, only offsets into the bytes, for the lazy capture decoder (capture/lazy-decode.ts).
 * It follows the common case (Ethernet with VLAN tags, raw IP, Linux cooked v1 and v2;
 * IPv4 without fragments, IPv6 without extension headers; UDP and TCP); anything else it
 * calls malformed, and the caller asks the eager decoder (net/frame.ts) whether it is.
 */
import { LinkType } from '../pcap/linktype.js';

const ETHERTYPE_IPV4 = 0x0800;
const ETHERTYPE_IPV6 = 0x86dd;
const ETHERTYPE_VLAN = 0x8100;
const ETHERTYPE_QINQ = 0x88a8;
const PROTOCOL_TCP = 6;
const PROTOCOL_UDP = 17;

/**
 * What `locate` found: UDP or TCP over IP, another protocol ('other'), or a frame the fast
 * path does not follow ('malformed' to it; the eager decoder decides).
 */
export type InPlaceTransport = 'udp' | 'tcp' | 'other' | 'malformed';

/** The offsets of one frame's headers, re-filled by each `locate`. */
export class InPlaceHeaders {
  /** Offset of the IP header. */
  l3 = 0;
  v6 = false;
  /** Offset of the UDP or TCP header, of its payload, and the end of the IP packet. */
  l4 = 0;
  payloadStart = 0;
  l4End = 0;

  /** Finds the headers of the frame b[start, end) of link type `linkType`. */
  locate(linkType: number, b: Uint8Array, start: number, end: number): InPlaceTransport {
    let l3 = start;
    let etherType: number;
    switch (linkType) {
      case LinkType.ETHERNET:
        if (end - start < 14) return 'malformed';
        etherType = (b[start + 12]! << 8) | b[start + 13]!;
        l3 = start + 14;
        while ((etherType === ETHERTYPE_VLAN || etherType === ETHERTYPE_QINQ) && end - l3 >= 4) {
          etherType = (b[l3 + 2]! << 8) | b[l3 + 3]!;
          l3 += 4;
        }
        break;
      case LinkType.RAW:
        if (end - start < 1) return 'malformed';
        etherType = b[start]! >> 4 === 6 ? ETHERTYPE_IPV6 : ETHERTYPE_IPV4;
        break;
      case LinkType.LINUX_SLL:
        if (end - start < 16) return 'malformed';
        etherType = (b[start + 14]! << 8) | b[start + 15]!;
        l3 = start + 16;
        break;
      case LinkType.LINUX_SLL2:
        if (end - start < 20) return 'malformed';
        etherType = (b[start]! << 8) | b[start + 1]!;
        l3 = start + 20;
        break;
      default:
        return 'malformed';
    }
    let protocol: number;
    let l4: number;
    let l4End: number;
    let v6 = false;
    if (etherType === ETHERTYPE_IPV4) {
      if (end - l3 < 20 || b[l3]! >> 4 !== 4) return 'malformed';
      const ihl = (b[l3]! & 0xf) * 4;
      const total = (b[l3 + 2]! << 8) | b[l3 + 3]!;
      // Fragments (MF or an offset) and short or cut packets: the eager decoder's rules.
      if (ihl < 20 || total < ihl || l3 + total > end || ((b[l3 + 6]! << 8) | b[l3 + 7]!) & 0x3fff)
        return 'malformed';
      protocol = b[l3 + 9]!;
      l4 = l3 + ihl;
      l4End = l3 + total;
    } else if (etherType === ETHERTYPE_IPV6) {
      if (end - l3 < 40 || b[l3]! >> 4 !== 6) return 'malformed';
      const payloadLength = (b[l3 + 4]! << 8) | b[l3 + 5]!;
      protocol = b[l3 + 6]!;
      l4 = l3 + 40;
      l4End = l4 + payloadLength;
      if (l4End > end || (protocol !== PROTOCOL_TCP && protocol !== PROTOCOL_UDP))
        return 'malformed';
      v6 = true;
    } else return 'other';
    this.l3 = l3;
    this.v6 = v6;
    this.l4 = l4;
    this.l4End = l4End;
    if (protocol === PROTOCOL_UDP) {
      if (l4End - l4 < 8) return 'malformed';
      this.payloadStart = l4 + 8;
      return 'udp';
    }
    if (protocol !== PROTOCOL_TCP) return 'other';
    if (l4End - l4 < 20) return 'malformed';
    const dataOffset = (b[l4 + 12]! >> 4) * 4;
    if (dataOffset < 20 || l4 + dataOffset > l4End) return 'malformed';
    this.payloadStart = l4 + dataOffset;
    return 'tcp';
  }
}
