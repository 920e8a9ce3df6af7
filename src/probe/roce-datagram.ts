/**
 * RoCEv2 datagrams as the tester sends them from a UDP socket: the transport packet (BTH
 * ... payload, pad) from the codec, with the ICRC computed over the IPv4 and UDP headers
 * that go in front of it. The ICRC covers the IP header's identification and flags (IBTA
 * Annex A17.3.3 masks only TOS, TTL and the checksum), and a UDP socket's kernel picks the
 * identification itself (measured on Debian's 6.1: 0x1030 on an unconnected DF datagram,
 * from __ip_select_ident), so the tester sends whole IPv4 packets through a raw socket
 * (roce-relay.py, IP_HDRINCL) with a fixed identification, DF, and UDP ports 4791 both ways.
 */
import { buildUdpFrame } from '../codec/net/build.js';
import { computeRoceIcrc } from '../codec/roce/icrc.js';
import {
  encodeRocePacket,
  ICRC_LENGTH,
  ROCE_V2_UDP_PORT,
  type RocePacketFields,
} from '../codec/roce/packet.js';

/** The tester's and the device's IPv4 addresses (RFC 5737 TEST-NET-3, inside the guest only). */
export const TESTER_ADDRESS = '203.0.113.2';
export const DEVICE_ADDRESS = '203.0.113.1';

/**
 * The tester's IPv4 identification. Not 0: with IP_HDRINCL the kernel fills in an
 * identification of 0 (raw(7)), which would change the bytes the ICRC covers.
 */
export const TESTER_IP_IDENTIFICATION = 0x5254;

/** Ethernet, IPv4 (no options) and UDP header lengths of the frames built here. */
const ETHERNET_LENGTH = 14;
const IPV4_LENGTH = 20;
const UDP_LENGTH = 8;

/** What the tester may do to a packet on purpose. */
export interface DatagramOptions {
  readonly source?: string;
  readonly destination?: string;
  /** XOR mask applied to the correct ICRC (a bad ICRC on purpose); 0 keeps it. */
  readonly icrcXor?: number;
}

/**
 * A UDP payload: `transport` (everything before the ICRC) and the ICRC computed over the
 * IPv4 and UDP headers the tester's socket sends it with.
 */
export function rawTesterDatagram(
  transport: Uint8Array,
  options: DatagramOptions = {},
): Uint8Array {
  const datagram = new Uint8Array(transport.length + ICRC_LENGTH);
  datagram.set(transport, 0);
  const frame = testerFrame(datagram, options);
  const covered = frame.subarray(ETHERNET_LENGTH, frame.length - ICRC_LENGTH);
  const icrc = (computeRoceIcrc(covered, IPV4_LENGTH) ^ (options.icrcXor ?? 0)) >>> 0;
  new DataView(datagram.buffer).setUint32(transport.length, icrc, true);
  return datagram;
}

/** The Ethernet frame around a tester datagram (the IPv4 packet starts at byte 14). */
function testerFrame(datagram: Uint8Array, options: DatagramOptions = {}): Uint8Array {
  return buildUdpFrame(
    {
      sourceIp: options.source ?? TESTER_ADDRESS,
      destinationIp: options.destination ?? DEVICE_ADDRESS,
      ipv4: { identification: TESTER_IP_IDENTIFICATION, dontFragment: true },
    },
    { sourcePort: ROCE_V2_UDP_PORT, destinationPort: ROCE_V2_UDP_PORT },
    datagram,
  );
}

/** The IPv4 packet (header, UDP, datagram) the relay sends through its raw socket. */
export function testerIpPacket(datagram: Uint8Array, options: DatagramOptions = {}): Uint8Array {
  return testerFrame(datagram, options).subarray(ETHERNET_LENGTH);
}

/** The UDP payload (transport packet and ICRC) the tester sends for `fields`. */
export function buildTesterDatagram(
  fields: RocePacketFields,
  options: DatagramOptions = {},
): Uint8Array {
  const draft = encodeRocePacket({ ...fields, icrc: 0 });
  return rawTesterDatagram(draft.subarray(0, draft.length - ICRC_LENGTH), options);
}

/** Header bytes in front of a tester datagram in a whole frame (for captures and tests). */
export const FRAME_HEADER_LENGTH = ETHERNET_LENGTH + IPV4_LENGTH + UDP_LENGTH;
