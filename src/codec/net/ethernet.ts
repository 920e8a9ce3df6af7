/**
 * Ethernet II frames (IEEE 802.3 with EtherType), with optional IEEE 802.1Q VLAN tags.
 * The FCS is not part of captured frames on Linux and is not handled here.
 */

import { requireBytes } from '../../arguments.js';
import { requireFields, requirePayload } from '../encode-arguments.js';
import { DecodeError, type DecodeResult, decoded, EncodeError, failed } from '../errors.js';
import { formatMac, parseMac } from './address.js';
import { inRange, viewOf } from './bytes.js';

/** EtherType values this codec follows. */
export const EtherType = {
  IPv4: 0x0800,
  IPv6: 0x86dd,
  VLAN: 0x8100,
  QinQ: 0x88a8,
} as const;

/** An 802.1Q tag: priority (3 bits), drop eligible (1 bit), VLAN id (12 bits). */
export interface VlanTag {
  readonly tpid: number;
  readonly priority: number;
  readonly dropEligible: boolean;
  readonly vlanId: number;
}

/** A decoded Ethernet II header. */
export interface EthernetHeader {
  /** `aa:bb:cc:dd:ee:ff`. */
  readonly destination: string;
  readonly source: string;
  /** Outer to inner. */
  readonly vlans: readonly VlanTag[];
  /** The EtherType after any VLAN tags. */
  readonly etherType: number;
}

/** An Ethernet frame split into header and payload. */
export interface EthernetFrame {
  readonly header: EthernetHeader;
  /** Offset of the payload in the decoded buffer. */
  readonly payloadOffset: number;
  readonly payload: Uint8Array;
}

const MAX_VLAN_TAGS = 2;

/** Decodes an Ethernet II frame (at most two VLAN tags). */
export function decodeEthernet(bytes: Uint8Array): DecodeResult<EthernetFrame> {
  requireBytes('codec', 'bytes', bytes);
  if (bytes.length < 14)
    return failed(new DecodeError('ethernet', 'header', 0, 'truncated', `${bytes.length} < 14`));
  const v = viewOf(bytes);
  const vlans: VlanTag[] = [];
  let at = 12;
  let type = v.getUint16(at);
  while (type === EtherType.VLAN || type === EtherType.QinQ) {
    if (vlans.length === MAX_VLAN_TAGS)
      return failed(new DecodeError('ethernet', 'vlan', at, 'bad-value', 'more than 2 VLAN tags'));
    if (bytes.length < at + 6)
      return failed(new DecodeError('ethernet', 'vlan', at, 'truncated', 'VLAN tag cut short'));
    const tci = v.getUint16(at + 2);
    vlans.push({
      tpid: type,
      priority: tci >> 13,
      dropEligible: (tci & 0x1000) !== 0,
      vlanId: tci & 0xfff,
    });
    at += 4;
    type = v.getUint16(at);
  }
  return decoded({
    header: {
      destination: formatMac(bytes.subarray(0, 6)),
      source: formatMac(bytes.subarray(6, 12)),
      vlans,
      etherType: type,
    },
    payloadOffset: at + 2,
    payload: bytes.subarray(at + 2),
  });
}

/** Input of {@link encodeEthernet}; `vlans` defaults to none. */
export interface EthernetFields {
  readonly destination: string;
  readonly source: string;
  readonly etherType: number;
  readonly vlans?: readonly VlanTag[];
}

/** Encodes an Ethernet II frame around `payload`. Throws `EncodeError` on bad fields. */
export function encodeEthernet(h: EthernetFields, payload: Uint8Array): Uint8Array {
  requireFields('ethernet', 'fields', h);
  requirePayload('ethernet', 'payload', payload);
  const dst = parseMac(h.destination);
  const src = parseMac(h.source);
  const vlans = h.vlans ?? [];
  if (!inRange(h.etherType, 0xffff))
    throw new EncodeError('ethernet', 'etherType', `${h.etherType} not 16-bit`);
  for (const t of vlans) {
    if (!inRange(t.tpid, 0xffff) || !inRange(t.priority, 7) || !inRange(t.vlanId, 0xfff))
      throw new EncodeError('ethernet', 'vlan', 'tag field out of range');
  }
  const out = new Uint8Array(14 + 4 * vlans.length + payload.length);
  const v = viewOf(out);
  out.set(dst, 0);
  out.set(src, 6);
  let at = 12;
  for (const t of vlans) {
    v.setUint16(at, t.tpid);
    v.setUint16(at + 2, (t.priority << 13) | (t.dropEligible ? 0x1000 : 0) | t.vlanId);
    at += 4;
  }
  v.setUint16(at, h.etherType);
  out.set(payload, at + 2);
  return out;
}
