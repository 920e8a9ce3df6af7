/**
 * RoCEv2 datagrams as the tester sends them from a UDP socket: the transport packet (BTH
 * ... payload, pad) from the codec, with the ICRC computed over the IPv4 and UDP headers
 * that the tester's kernel will put in front of it. The ICRC covers the IP header's
 * identification and flags (IBTA Annex A17.3.3 masks only TOS, TTL and the checksum): a
 * Linux UDP socket that is not connected sends with DF set and identification 0
 * (ip_select_ident_segs, include/net/ip.h), and the tester binds port 4791 so the source
 * port is known too.
 */
import { computeRoceIcrc } from '../../codec/roce/icrc.js';
import {
  encodeRocePacket,
  ROCE_V2_UDP_PORT,
  type RocePacketFields,
} from '../../codec/roce/packet.js';

/** The tester's and the device's IPv4 addresses (RFC 5737 TEST-NET-3, inside the guest only). */
export const TESTER_ADDRESS = '203.0.113.2';
export const DEVICE_ADDRESS = '203.0.113.1';

function ipv4Bytes(address: string): number[] {
  const parts = address.split('.').map(Number);
  if (parts.length !== 4 || parts.some((p) => !Number.isInteger(p) || p < 0 || p > 255))
    throw new RangeError(`${address} is not an IPv4 address`);
  return parts;
}

/** The IPv4 + UDP headers (checksums zero: the ICRC masks them) of a datagram. */
export function pseudoHeaders(
  source: string,
  destination: string,
  transportLength: number,
): Uint8Array {
  const udpLength = 8 + transportLength;
  const out = new Uint8Array(28);
  const view = new DataView(out.buffer);
  out[0] = 0x45;
  view.setUint16(2, 20 + udpLength);
  view.setUint16(4, 0); // identification: 0 for DF datagrams of unconnected sockets
  view.setUint16(6, 0x4000); // DF
  out[8] = 64;
  out[9] = 17;
  out.set(ipv4Bytes(source), 12);
  out.set(ipv4Bytes(destination), 16);
  view.setUint16(20, ROCE_V2_UDP_PORT);
  view.setUint16(22, ROCE_V2_UDP_PORT);
  view.setUint16(24, udpLength);
  return out;
}

/** What the tester may do to a packet on purpose. */
export interface DatagramOptions {
  readonly source?: string;
  readonly destination?: string;
  /** XOR mask applied to the correct ICRC (a bad ICRC on purpose); 0 keeps it. */
  readonly icrcXor?: number;
}

/** The UDP payload (transport packet and ICRC) the tester sends. */
export function buildTesterDatagram(
  fields: RocePacketFields,
  options: DatagramOptions = {},
): Uint8Array {
  const draft = encodeRocePacket({ ...fields, icrc: 0 });
  const headers = pseudoHeaders(
    options.source ?? TESTER_ADDRESS,
    options.destination ?? DEVICE_ADDRESS,
    draft.length,
  );
  const covered = new Uint8Array(headers.length + draft.length - 4);
  covered.set(headers, 0);
  covered.set(draft.subarray(0, draft.length - 4), headers.length);
  const icrc = (computeRoceIcrc(covered, 20) ^ (options.icrcXor ?? 0)) >>> 0;
  const out = draft.slice();
  new DataView(out.buffer).setUint32(out.length - 4, icrc, true);
  return out;
}

/**
 * A raw datagram with a valid ICRC around arbitrary transport bytes (an opcode the codec
 * refuses to encode, a truncated header): `transport` is everything before the ICRC.
 */
export function rawTesterDatagram(
  transport: Uint8Array,
  options: DatagramOptions = {},
): Uint8Array {
  const headers = pseudoHeaders(
    options.source ?? TESTER_ADDRESS,
    options.destination ?? DEVICE_ADDRESS,
    transport.length + 4,
  );
  const covered = new Uint8Array(headers.length + transport.length);
  covered.set(headers, 0);
  covered.set(transport, headers.length);
  const icrc = (computeRoceIcrc(covered, 20) ^ (options.icrcXor ?? 0)) >>> 0;
  const out = new Uint8Array(transport.length + 4);
  out.set(transport, 0);
  new DataView(out.buffer).setUint32(transport.length, icrc, true);
  return out;
}

/** Checks the ICRC of a datagram the device sent (`source` is the device). */
export function datagramIcrcValid(
  datagram: Uint8Array,
  source = DEVICE_ADDRESS,
  destination = TESTER_ADDRESS,
): boolean {
  if (datagram.length < 16) return false;
  const end = datagram.length - 4;
  const headers = pseudoHeaders(source, destination, datagram.length);
  const covered = new Uint8Array(headers.length + end);
  covered.set(headers, 0);
  covered.set(datagram.subarray(0, end), headers.length);
  const stored = new DataView(datagram.buffer, datagram.byteOffset + end, 4).getUint32(0, true);
  return computeRoceIcrc(covered, 20) === stored;
}
