/**
 * Whole-frame builders: Ethernet + IPv4/IPv6 + UDP/TCP with correct checksums, for
 * writing test captures. Each builder is a composition of the per-layer encoders.
 */
import { requireFields, requirePayload } from '../encode-arguments.js';
import { parseIpv4, parseIpv6 } from './address.js';
import { ipv4PseudoHeader, ipv6PseudoHeader } from './checksum.js';
import { EtherType, encodeEthernet } from './ethernet.js';
import { encodeIpv4, IpProtocol, type Ipv4Fields } from './ipv4.js';
import { encodeIpv6, type Ipv6Fields } from './ipv6.js';
import { encodeTcp, type TcpFields } from './tcp.js';
import { encodeUdp, type UdpFields } from './udp.js';

/** Addressing shared by the frame builders. IPv6 is chosen when `ipv6` is true. */
export interface FrameAddressing {
  /** [`02:00:00:00:00:01`] */
  readonly sourceMac?: string;
  /** [`02:00:00:00:00:02`] */
  readonly destinationMac?: string;
  /** IPv4 dotted quad or IPv6 text, matching `ipv6`. */
  readonly sourceIp: string;
  readonly destinationIp: string;
  /** [false] */
  readonly ipv6?: boolean;
  /** Extra IPv4 header fields (TTL, DSCP, ECN, identification ...). */
  readonly ipv4?: Omit<Ipv4Fields, 'source' | 'destination' | 'protocol'>;
  /** Extra IPv6 header fields (hop limit, traffic class, flow label). */
  readonly ipv6Fields?: Omit<Ipv6Fields, 'source' | 'destination' | 'nextHeader'>;
}

const DEFAULT_SOURCE_MAC = '02:00:00:00:00:01';
const DEFAULT_DESTINATION_MAC = '02:00:00:00:00:02';

function pseudo(a: FrameAddressing, protocol: number, length: number): Uint8Array {
  return a.ipv6
    ? ipv6PseudoHeader(parseIpv6(a.sourceIp), parseIpv6(a.destinationIp), protocol, length)
    : ipv4PseudoHeader(parseIpv4(a.sourceIp), parseIpv4(a.destinationIp), protocol, length);
}

function wrapIp(a: FrameAddressing, protocol: number, segment: Uint8Array): Uint8Array {
  const ip = a.ipv6
    ? encodeIpv6(
        { ...a.ipv6Fields, source: a.sourceIp, destination: a.destinationIp, nextHeader: protocol },
        segment,
      )
    : encodeIpv4(
        { ...a.ipv4, source: a.sourceIp, destination: a.destinationIp, protocol },
        segment,
      );
  return encodeEthernet(
    {
      source: a.sourceMac ?? DEFAULT_SOURCE_MAC,
      destination: a.destinationMac ?? DEFAULT_DESTINATION_MAC,
      etherType: a.ipv6 ? EtherType.IPv6 : EtherType.IPv4,
    },
    ip,
  );
}

/** An Ethernet/IP/UDP frame around `payload`, with a correct UDP checksum. */
export function buildUdpFrame(a: FrameAddressing, udp: UdpFields, payload: Uint8Array): Uint8Array {
  requireFields('ipv4', 'addressing', a);
  requireFields('udp', 'udp', udp);
  requirePayload('udp', 'payload', payload);
  const segment = encodeUdp(udp, payload, pseudo(a, IpProtocol.UDP, 8 + payload.length));
  return wrapIp(a, IpProtocol.UDP, segment);
}

/** An Ethernet/IP/TCP frame around `payload`, with a correct TCP checksum. */
export function buildTcpFrame(a: FrameAddressing, tcp: TcpFields, payload: Uint8Array): Uint8Array {
  requireFields('ipv4', 'addressing', a);
  requireFields('tcp', 'tcp', tcp);
  requirePayload('tcp', 'payload', payload);
  // The pseudo-header length is the whole segment; encode once without, measure, re-encode.
  const probe = encodeTcp(tcp, payload);
  const segment = encodeTcp(tcp, payload, pseudo(a, IpProtocol.TCP, probe.length));
  return wrapIp(a, IpProtocol.TCP, segment);
}
