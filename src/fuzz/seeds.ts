/**
 * Valid inputs the fuzzer starts from, made by the codec's own encoders with random field
 * values: every RDMAP opcode of every profile, MPA frames and FPDUs (CRC and markers on and
 * off, any marker position), MPA streams, every RoCE opcode with its extension headers,
 * Ethernet / SLL / SLL2 / raw IP frames over IPv4 and IPv6, UDP and TCP, pcap and pcapng
 * files and whole captures mixing RoCEv2 and iWARP connections. The fuzz test and
 * `npm run fuzz` share these.
 */

import {
  DDP_TAGGED_LAYOUT,
  DDP_UNTAGGED_LAYOUT,
  type HeaderField,
  type HeaderLayout,
} from '../codec/iwarp/layouts.js';
import type { MpaRequestReply, RdmapMessage } from '../codec/iwarp/messages.js';
import { encodeFpdu } from '../codec/iwarp/mpa.js';
import { encodeMpaFrame, makeMpaFrame } from '../codec/iwarp/mpa-frames.js';
import {
  ATOMIC_OPCODES,
  acceptedQueueNumbers,
  RDMAP_OPCODES,
  type RdmapOpcodeInfo,
} from '../codec/iwarp/opcodes.js';
import {
  IWARP_PROFILES,
  type IwarpProfile,
  PROFILE_RDMA_VERSION,
} from '../codec/iwarp/profiles.js';
import { encodeRdmapMessage } from '../codec/iwarp/rdmap.js';
import { RDMAP_HOOKS, rdmapHeaderLayout, type TerminateTail } from '../codec/iwarp/rdmap-hooks.js';
import { encodeMpaStream } from '../codec/iwarp/stream.js';
import { buildTcpFrame, buildUdpFrame, type FrameAddressing } from '../codec/net/build.js';
import { concatBytes } from '../codec/net/bytes.js';
import { encodeSll, encodeSll2 } from '../codec/net/sll.js';
import { TcpFlag } from '../codec/net/tcp.js';
import { LinkType } from '../codec/pcap/linktype.js';
import { encodePcap } from '../codec/pcap/pcap.js';
import { encodePcapng } from '../codec/pcap/pcapng.js';
import { encodeAethSyndrome } from '../codec/roce/aeth.js';
import { EXTENSION_HEADER_LAYOUT, type FieldLayout } from '../codec/roce/headers.js';
import { BTH_OPCODES } from '../codec/roce/opcodes.js';
import { encodeRocePacket, ROCE_V2_UDP_PORT } from '../codec/roce/packet.js';
import type { FuzzRandom } from './random.js';

/** A payload of 0 to `max` random bytes, short more often than long. */
function payload(rng: FuzzRandom, max = 48): Uint8Array {
  return rng.bytes(rng.oneIn(8) ? rng.below(max * 8) : rng.below(max));
}

function rdmapRow(rng: FuzzRandom, profile: IwarpProfile): RdmapOpcodeInfo {
  return rng.pick(RDMAP_OPCODES.filter((r) => r.profiles.includes(profile)));
}

/** A random value of a header field: a bigint for 64 bits, a boolean for a flag. */
function fieldValue(rng: FuzzRandom, f: HeaderField): number | bigint | boolean {
  if (f.bits === 64) return rng.u64();
  if (f.flag === true) return rng.bool();
  return f.bits >= 32 ? rng.u32() : rng.below(2 ** f.bits);
}

/** Random values of every field of `layout` (undefined when the segment leaves it out). */
function headerValues(
  rng: FuzzRandom,
  layout: HeaderLayout | undefined,
  present: boolean,
): Record<string, number | bigint | boolean | undefined> {
  const out: Record<string, number | bigint | boolean | undefined> = {};
  for (const f of layout?.fields ?? []) out[f.name] = present ? fieldValue(rng, f) : undefined;
  return out;
}

/** Terminate's tail as its Hdrct D and R bits announce it (RFC 5040 §4.8). */
function terminateTail(rng: FuzzRandom, header: Record<string, unknown>): TerminateTail {
  const d = header.ddpHeaderIncluded === true;
  const r = header.rdmaHeaderIncluded === true;
  const copied = rng.bytes(rng.bool() ? DDP_TAGGED_LAYOUT.length : DDP_UNTAGGED_LAYOUT.length);
  copied[0] = copied.length === DDP_TAGGED_LAYOUT.length ? copied[0]! | 0x80 : copied[0]! & 0x7f;
  return {
    ddpSegmentLength: d ? rng.below(0x10000) : undefined,
    terminatedDdpHeader: d ? copied : undefined,
    terminatedRdmaHeader: r ? rng.bytes(rng.int(1, 40)) : undefined,
  };
}

/**
 * A valid RDMAP message of `profile` (one DDP segment), any opcode of the profile: its
 * row's layout with random field values, payload when the row carries it, and the hooks'
 * rules (rdmap-hooks.ts): a Terminate tail matching its D and R bits, an AOpCode of the
 * profile, the V2 immediate data in the last segment only.
 */
export function randomRdmapMessage(
  rng: FuzzRandom,
  profile: IwarpProfile,
  row: RdmapOpcodeInfo = rdmapRow(rng, profile),
): RdmapMessage {
  const rv = PROFILE_RDMA_VERSION[profile];
  const control = {
    ddpReserved: rng.oneIn(4) ? rng.below(16) : 0,
    ddpVersion: 1,
    rdmaVersion: rv,
    rdmapReserved: rng.oneIn(4) ? rng.below(rv === 1 ? 4 : 2) : 0,
  };
  const last = rng.bool();
  const ddp = row.tagged
    ? { tagged: true as const, last, stag: rng.u32(), taggedOffset: rng.u64() }
    : {
        tagged: false as const,
        last,
        queueNumber: rng.pick(acceptedQueueNumbers(row.opcode, profile)),
        messageSequenceNumber: rng.oneIn(2) ? rng.int(1, 4) : rng.u32(),
        messageOffset: rng.oneIn(2) ? 0 : rng.u32(),
      };
  const base = row.tagged
    ? { kind: row.kind, ddp, control }
    : { kind: row.kind, ddp, control, invalidateSTag: rng.oneIn(2) ? 0 : rng.u32() };
  const hooks = RDMAP_HOOKS[row.family];
  const layout = row.tagged ? row.layout : rdmapHeaderLayout(row, last);
  const header = headerValues(rng, row.layout, layout !== undefined);
  if (hooks?.aOpCode !== undefined)
    header.aOpCode = rng.pick(ATOMIC_OPCODES.filter((a) => a.profiles.includes(profile))).aOpCode;
  const body = row.ulpPayload
    ? {
        payload:
          hooks?.headerInLastSegmentOnly === true && layout !== undefined
            ? new Uint8Array(0)
            : payload(rng),
      }
    : undefined;
  const tail = hooks?.tail === undefined ? undefined : terminateTail(rng, header);
  // The row's layout types its family's message (messages.ts), as in the decoder.
  return { ...base, ...body, ...header, ...tail } as RdmapMessage;
}

/** An encoded RDMAP message (a DDP segment) of `profile`. */
export function randomRdmapSegment(rng: FuzzRandom, profile: IwarpProfile): Uint8Array {
  return encodeRdmapMessage(randomRdmapMessage(rng, profile), { profile });
}

/** A valid MPA Request or Reply. */
export function randomMpaFrame(rng: FuzzRandom, kind?: MpaRequestReply['kind']): MpaRequestReply {
  const revision = rng.pick([1, 2]);
  const enhanced = rng.bool();
  const withParameters = revision === 2 && enhanced;
  return {
    kind: kind ?? rng.pick(['mpa-request', 'mpa-reply'] as const),
    markers: rng.bool(),
    crc: rng.bool(),
    reject: rng.oneIn(8),
    enhanced,
    reserved: rng.oneIn(4) ? rng.below(16) : 0,
    revision,
    privateData: rng.bytes(rng.oneIn(8) ? rng.below(withParameters ? 509 : 513) : rng.below(24)),
    enhancedParameters: withParameters
      ? {
          ird: rng.below(0x4000),
          ord: rng.below(0x4000),
          peerToPeer: rng.bool(),
          sendRtr: rng.bool(),
          writeRtr: rng.bool(),
          readRtr: rng.bool(),
        }
      : undefined,
  };
}

/** FPDU decoding options carried with an FPDU seed. */
export interface FpduVariant {
  readonly crc: boolean;
  readonly markers: boolean;
  readonly position: number;
}

/** Options from a variant number (so that a mutated input keeps its seed's options). */
export function fpduVariant(variant: number): FpduVariant {
  return { crc: (variant & 1) !== 0, markers: (variant & 2) !== 0, position: variant >>> 2 };
}

/** A valid FPDU and the variant number that decodes it. */
export function randomFpdu(rng: FuzzRandom): { bytes: Uint8Array; variant: number } {
  const crc = rng.bool();
  const markers = rng.bool();
  // Mostly 4-aligned positions near a marker, sometimes any position.
  const position = rng.oneIn(4)
    ? rng.below(4096)
    : (rng.below(8) * 512 + 512 - rng.below(16) * 4) % 4096;
  const variant = (position << 2) | (markers ? 2 : 0) | (crc ? 1 : 0);
  const ulpdu = rng.oneIn(3)
    ? rng.bytes(rng.below(1200))
    : randomRdmapSegment(rng, rng.pick(IWARP_PROFILES));
  return { bytes: encodeFpdu(ulpdu, { crc, markers, position }), variant };
}

/** One direction of an MPA connection: a frame, then FPDUs (as one byte string). */
export function randomMpaStream(rng: FuzzRandom): Uint8Array {
  const profile = rng.pick(IWARP_PROFILES);
  const frame = randomMpaFrame(rng);
  const messages = Array.from({ length: rng.int(0, 4) }, () => randomRdmapMessage(rng, profile));
  const s = encodeMpaStream(frame, messages, { profile });
  return concatBytes(s.frame, ...s.fpdus);
}

function headerValue(rng: FuzzRandom, h: keyof typeof EXTENSION_HEADER_LAYOUT) {
  const out: Record<string, number | bigint> = {};
  for (const f of EXTENSION_HEADER_LAYOUT[h] as readonly FieldLayout[])
    out[f.name] = f.width === 8 ? rng.u64() : rng.below(2 ** (8 * f.width));
  if (h === 'AETH')
    out.syndrome = encodeAethSyndrome(
      rng.pick([
        { kind: 'ACK', creditCount: rng.below(32) },
        { kind: 'RNR_NAK', timer: rng.below(32) },
        { kind: 'NAK', code: 'INVALID_REQUEST' },
        { kind: 'NAK', code: 'PSN_SEQUENCE_ERROR' },
      ] as const),
    );
  return out;
}

/** A valid RoCEv2 transport packet (BTH, extension headers, payload, pad, ICRC), any opcode. */
export function randomRocePacket(rng: FuzzRandom): Uint8Array {
  const info = rng.pick([...BTH_OPCODES.values()]);
  const body = info.hasPayload ? payload(rng, 64) : new Uint8Array(0);
  const headers = Object.fromEntries(info.headers.map((h) => [h, headerValue(rng, h)]));
  return encodeRocePacket({
    bth: {
      opcode: info.value,
      solicitedEvent: rng.bool(),
      migrationRequest: rng.bool(),
      partitionKey: rng.pick([0xffff, rng.below(0x10000)]),
      destinationQp: rng.below(0x1000000),
      ackRequest: rng.bool(),
      psn: rng.below(0x1000000),
    },
    headers,
    payload: body,
    icrc: rng.u32(),
  });
}

const IPV4 = ['10.0.0.1', '10.0.0.2', '192.168.122.7'];
const IPV6 = ['fd00::1', 'fd00::2', 'fe80::5054:ff:fe12:3456'];

function addressing(rng: FuzzRandom, ipv6 = rng.bool()): FrameAddressing {
  const pool = ipv6 ? IPV6 : IPV4;
  return { sourceIp: rng.pick(pool), destinationIp: rng.pick(pool), ipv6 };
}

/**
 * An Ethernet frame: RoCEv2 over UDP, another UDP datagram, or a TCP segment (`kind` 0, 1,
 * 2; random when omitted), over IPv4 or IPv6 (random when `ipv6` is omitted).
 */
export function randomEthernetFrame(rng: FuzzRandom, ipv6?: boolean, kind?: number): Uint8Array {
  const a = addressing(rng, ipv6 ?? rng.bool());
  switch (kind ?? rng.below(3)) {
    case 0:
      return buildUdpFrame(
        a,
        { sourcePort: rng.below(0x10000), destinationPort: ROCE_V2_UDP_PORT },
        randomRocePacket(rng),
      );
    case 1:
      return buildUdpFrame(
        a,
        { sourcePort: rng.below(0x10000), destinationPort: rng.below(0x10000) },
        payload(rng),
      );
    default:
      return buildTcpFrame(
        a,
        {
          sourcePort: rng.below(0x10000),
          destinationPort: rng.pick([4000, rng.below(0x10000)]),
          sequenceNumber: rng.u32(),
          acknowledgementNumber: rng.u32(),
          flags: rng.pick([TcpFlag.ACK, TcpFlag.PSH | TcpFlag.ACK, TcpFlag.SYN]),
          options: rng.bool() ? [{ kind: 2, data: Uint8Array.of(0x05, 0xb4) }] : [],
        },
        rng.bool() ? randomMpaStream(rng) : payload(rng),
      );
  }
}

const ETHERNET_HEADER_LENGTH = 14;

/** The IP packet inside an Ethernet frame. */
export function randomIpPacket(rng: FuzzRandom, ipv6?: boolean, kind?: number): Uint8Array {
  return randomEthernetFrame(rng, ipv6, kind).subarray(ETHERNET_HEADER_LENGTH).slice();
}

/** A UDP datagram (`kind` 0 or 1) or TCP segment (`kind` 2) as carried by IPv4. */
export function randomTransportSegment(rng: FuzzRandom, kind: number): Uint8Array {
  // encodeIpv4 writes a 20-byte header (no options).
  return randomIpPacket(rng, false, kind).subarray(20).slice();
}

/** A frame of a supported link type and the LINKTYPE_* it is encoded in. */
export function randomLinkFrame(rng: FuzzRandom): { bytes: Uint8Array; linkType: number } {
  const ethernet = randomEthernetFrame(rng);
  const ip = ethernet.subarray(ETHERNET_HEADER_LENGTH);
  const protocol = ((ethernet[12]! << 8) | ethernet[13]!) as number;
  switch (rng.below(4)) {
    case 0:
      return { bytes: ethernet, linkType: LinkType.ETHERNET };
    case 1:
      return {
        bytes: encodeSll({ packetType: rng.below(5), protocol }, ip),
        linkType: LinkType.LINUX_SLL,
      };
    case 2:
      return {
        bytes: encodeSll2({ packetType: rng.below(5), protocol, interfaceIndex: rng.u32() }, ip),
        linkType: LinkType.LINUX_SLL2,
      };
    default:
      return { bytes: ip.slice(), linkType: LinkType.RAW };
  }
}

/** Link types the fuzzer tries (the supported ones and one that is not). */
export const FUZZ_LINK_TYPES: readonly number[] = [
  LinkType.ETHERNET,
  LinkType.LINUX_SLL,
  LinkType.LINUX_SLL2,
  LinkType.RAW,
  0,
];

/** The frames of one iWARP TCP connection: handshake, MPA Request and Reply, FPDUs both ways. */
export function randomIwarpConnection(rng: FuzzRandom): Uint8Array[] {
  const profile = rng.pick(IWARP_PROFILES);
  const client = addressing(rng);
  const server = { ...client, sourceIp: client.destinationIp, destinationIp: client.sourceIp };
  const ports = {
    client: rng.int(32768, 60999),
    server: rng.pick([4000, 7174, rng.below(0x10000)]),
  };
  const next = { client: rng.u32(), server: rng.u32() };
  const frames: Uint8Array[] = [];
  const send = (from: 'client' | 'server', flags: number, bytes: Uint8Array) => {
    const c = from === 'client';
    frames.push(
      buildTcpFrame(
        c ? client : server,
        {
          sourcePort: c ? ports.client : ports.server,
          destinationPort: c ? ports.server : ports.client,
          sequenceNumber: next[from],
          acknowledgementNumber: next[c ? 'server' : 'client'],
          flags,
        },
        bytes,
      ),
    );
    next[from] = (next[from] + bytes.length + (flags & TcpFlag.SYN ? 1 : 0)) >>> 0;
  };
  if (rng.bool()) {
    send('client', TcpFlag.SYN, new Uint8Array(0));
    send('server', TcpFlag.SYN | TcpFlag.ACK, new Uint8Array(0));
  }
  const request = makeMpaFrame('mpa-request', { crc: rng.bool(), markers: rng.bool() });
  const reply = makeMpaFrame('mpa-reply', { crc: rng.bool(), markers: rng.bool() });
  const toServer = encodeMpaStream(
    request,
    Array.from({ length: rng.int(1, 4) }, () => randomRdmapMessage(rng, profile)),
    { profile, peerFrame: reply },
  );
  const toClient = encodeMpaStream(
    reply,
    Array.from({ length: rng.int(0, 3) }, () => randomRdmapMessage(rng, profile)),
    { profile, peerFrame: request },
  );
  send('client', TcpFlag.PSH | TcpFlag.ACK, toServer.frame);
  send('server', TcpFlag.PSH | TcpFlag.ACK, toClient.frame);
  for (const f of toServer.fpdus) send('client', TcpFlag.PSH | TcpFlag.ACK, f);
  for (const f of toClient.fpdus) send('server', TcpFlag.PSH | TcpFlag.ACK, f);
  return frames;
}

/** A small capture file (pcap or pcapng) of RoCEv2 frames and iWARP connections, interleaved. */
export function randomCaptureFile(rng: FuzzRandom): Uint8Array {
  const groups: Uint8Array[][] = [];
  for (let k = rng.int(1, 3); k > 0; k--)
    groups.push(
      rng.bool()
        ? randomIwarpConnection(rng)
        : Array.from({ length: rng.int(1, 4) }, () => randomEthernetFrame(rng)),
    );
  // Interleave the groups, keeping each group's order.
  const frames: Uint8Array[] = [];
  while (groups.some((g) => g.length > 0)) {
    const g = rng.pick(groups.filter((x) => x.length > 0));
    frames.push(g.shift()!);
  }
  const start = 1_700_000_000_000_000_000n + BigInt(rng.u32());
  const records = frames.map((data, i) => ({ timestampNs: start + BigInt(i) * 1000n, data }));
  if (rng.bool()) {
    return encodePcapng(
      { interfaces: [{ linkType: LinkType.ETHERNET }], littleEndian: rng.bool() },
      records,
    );
  }
  return encodePcap(
    {
      linkType: LinkType.ETHERNET,
      precision: rng.pick(['nano', 'micro'] as const),
      littleEndian: rng.bool(),
    },
    records.map((r) => ({ ...r, timestampNs: r.timestampNs - (r.timestampNs % 1000n) })),
  );
}

/** An MPA frame's bytes. */
export function randomMpaFrameBytes(rng: FuzzRandom): Uint8Array {
  return encodeMpaFrame(randomMpaFrame(rng));
}
