/**
 * Builds complete RoCEv2 Ethernet frames (Ethernet / IPv4 or IPv6 / UDP 4791 / BTH ...
 * / ICRC) with a correct ICRC and UDP checksum, for test captures and tshark checks.
 */
import { buildUdpFrame, type FrameAddressing } from '../net/build.js';
import { computeRoceIcrc } from './icrc.js';
import { encodeRocePacket, ROCE_V2_UDP_PORT, type RocePacketFields } from './packet.js';

/** Ethernet header length of the frames built here (no VLAN tag). */
const ETHERNET_LENGTH = 14;

/**
 * An Ethernet frame carrying one RoCEv2 packet. `sourcePort` is the UDP source port
 * (RoCEv2 uses it for ECMP entropy; default 49152). The ICRC is computed unless
 * `packet.icrc` is given.
 */
export function buildRoceFrame(
  addressing: FrameAddressing,
  packet: RocePacketFields,
  sourcePort = 49152,
): Uint8Array {
  const udp = { sourcePort, destinationPort: ROCE_V2_UDP_PORT };
  const transport = encodeRocePacket(packet);
  if (packet.icrc !== undefined) return buildUdpFrame(addressing, udp, transport);
  // The ICRC masks every field that the first build could get wrong (checksums), so one
  // build with a zero ICRC gives the bytes to cover.
  const draft = buildUdpFrame(addressing, udp, transport);
  const ipHeaderLength = addressing.ipv6 ? 40 : (draft[ETHERNET_LENGTH]! & 0xf) * 4;
  const icrc = computeRoceIcrc(draft.subarray(ETHERNET_LENGTH, draft.length - 4), ipHeaderLength);
  return buildUdpFrame(addressing, udp, encodeRocePacket({ ...packet, icrc }));
}
