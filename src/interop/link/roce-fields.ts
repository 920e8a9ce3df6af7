/**
 * RoCEv2 packets as comparable fields, the same for the engine's predicted packets and
 * for the frames captured on the link. Keys and addresses are named after the regions
 * they point into (`remote+8`, `remote`, `unissued` for a key nobody issued), QPs after
 * their role, because the engine's stand-in values differ from what the kernel assigns.
 * Everything else (opcode, PSN, SE, header fields, payload bytes, AETH syndrome and MSN,
 * AtomicAckETH) is compared as it is.
 *
 * Compared per packet: BTH opcode, PSN, DestQP (by role), SE; RETH (VA, R_Key, DMA
 * length); AtomicETH (VA, R_Key, Swap/Add, Compare); ImmDt; AETH (syndrome kind, NAK code
 * or RNR timer, MSN); AtomicAckETH (original remote data); payload; ICRC validity.
 * Not compared: AckReq and the ACK credit count (the engine's encoder has no
 * acknowledgement or credit policy; IBTA leaves AckReq to the requester, C9-... ), UDP
 * source port (flow entropy), IP identification and TTL.
 */
import type { AethSyndrome } from '../../codec/roce/aeth.js';
import { bthOpcodeInfo } from '../../codec/roce/opcodes.js';
import type { RocePacket } from '../../engine/projection/roce-exchange.js';
import { fieldName, type PacketDirection, type PacketPart } from '../../judge/observation.js';
import type { WireRegion } from '../../judge/wire.js';
import { formatValue } from '../compare-format.js';

/** One RoCE packet in the terms both sides can give, with its ICRC's check. */
export interface RocePacketView extends RocePacket {
  /** `valid`, or `bad stored=.. computed=..`; the engine predicts `valid`. */
  readonly icrc: string;
}

/** Who a QP number belongs to. */
export interface QpNames {
  readonly requester: number;
  readonly responder: number;
}

export type RoceDirection = PacketDirection;

function hex(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex');
}

function psnText(psn: number): string {
  return `0x${psn.toString(16).padStart(6, '0')}`;
}

function keyName(rkey: number, regions: readonly WireRegion[]): string {
  return regions.find((r) => r.stag === rkey)?.name ?? 'unissued';
}

function addressName(va: bigint, rkey: number, regions: readonly WireRegion[]): string {
  // A key nobody issued names no region: the address is then read against the remote MR.
  const region = regions.find((r) => r.stag === rkey) ?? regions.find((r) => r.name === 'remote');
  return region === undefined ? `0x${va.toString(16)}` : `${region.name}+${va - region.base}`;
}

function syndromeText(s: AethSyndrome): string {
  switch (s.kind) {
    case 'ACK':
      return 'ACK';
    case 'RNR_NAK':
      return `RNR_NAK timer=${s.timer}`;
    case 'NAK':
      return `NAK ${s.code}`;
  }
}

/** The fields of packet number `n` (1-based) of one direction. */
export function roceFields(
  direction: RoceDirection,
  n: number,
  packet: RocePacketView,
  qps: QpNames,
  regions: readonly WireRegion[],
): Record<string, string> {
  const p = (part: PacketPart) => fieldName({ kind: 'packet', direction, n, part });
  // By direction: the two guests number their QPs alike, so the same number can name the
  // requester in one guest and the responder in the other.
  const peer = direction === 'req' ? 'responder' : 'requester';
  const qpName = packet.destinationQp === qps[peer] ? peer : formatValue(packet.destinationQp);
  const fields: Record<string, string> = {
    [p('opcode')]: bthOpcodeInfo(packet.opcode)?.name ?? `0x${packet.opcode.toString(16)}`,
    [p('psn')]: psnText(packet.psn),
    [p('dqp')]: qpName,
    [p('se')]: packet.solicitedEvent ? '1' : '0',
    [p('icrc')]: packet.icrc,
  };
  const h = packet.headers;
  if (h.RETH)
    fields[p('reth')] =
      `va=${addressName(h.RETH.virtualAddress, h.RETH.rKey, regions)} rkey=${keyName(h.RETH.rKey, regions)} len=${h.RETH.dmaLength}`;
  if (h.AtomicETH)
    fields[p('atomiceth')] =
      `va=${addressName(h.AtomicETH.virtualAddress, h.AtomicETH.rKey, regions)} rkey=${keyName(h.AtomicETH.rKey, regions)} swap_add=${formatValue(h.AtomicETH.swapOrAddData)} compare=${formatValue(h.AtomicETH.compareData)}`;
  if (h.ImmDt) fields[p('immdt')] = formatValue(h.ImmDt.immediateData);
  if (h.AETH && packet.aethSyndrome)
    fields[p('aeth')] = `${syndromeText(packet.aethSyndrome)} msn=${h.AETH.msn}`;
  if (h.AtomicAckETH) fields[p('atomicacketh')] = formatValue(h.AtomicAckETH.originalRemoteData);
  if (packet.payload.byteLength > 0) fields[p('payload')] = hex(packet.payload);
  return fields;
}

/** Every packet of a scenario as fields: requests and responses numbered separately. */
export function roceWireFields(
  requests: readonly RocePacketView[],
  responses: readonly RocePacketView[],
  qps: QpNames,
  regions: readonly WireRegion[],
): Record<string, string> {
  const fields: Record<string, string> = {
    [fieldName({ kind: 'packet-count', direction: 'req' })]: String(requests.length),
    [fieldName({ kind: 'packet-count', direction: 'resp' })]: String(responses.length),
  };
  for (const [i, packet] of requests.entries())
    Object.assign(fields, roceFields('req', i + 1, packet, qps, regions));
  for (const [i, packet] of responses.entries())
    Object.assign(fields, roceFields('resp', i + 1, packet, qps, regions));
  return fields;
}
