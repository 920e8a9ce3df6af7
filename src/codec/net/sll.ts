/**
 * Linux "cooked" capture headers, written by `tcpdump -i any`: SLL v1 (LINKTYPE_LINUX_SLL,
 * 16 bytes) and SLL v2 (LINKTYPE_LINUX_SLL2, 20 bytes), per tcpdump.org's linktype pages.
 */

import { requireBytes } from '../../arguments.js';
import { requireFields, requirePayload } from '../encode-arguments.js';
import { DecodeError, type DecodeResult, decoded, failed } from '../errors.js';
import { formatMac } from './address.js';
import { viewOf } from './bytes.js';

/** A decoded cooked header (fields common to v1 and v2). */
export interface SllHeader {
  readonly version: 1 | 2;
  /** 0 to us, 1 broadcast, 2 multicast, 3 to someone else, 4 sent by us. */
  readonly packetType: number;
  /** ARPHRD_* type of the device (1 Ethernet, 772 loopback). */
  readonly hardwareType: number;
  /** Link-layer source address as `aa:bb:...` (address-length bytes, at most 8). */
  readonly address: string;
  /** The protocol type (an EtherType for Ethernet-like devices). */
  readonly protocol: number;
  /** Interface index (SLL2 only, else undefined). */
  readonly interfaceIndex: number | undefined;
}

/** A cooked frame split into header and payload. */
export interface SllFrame {
  readonly header: SllHeader;
  readonly payloadOffset: number;
  readonly payload: Uint8Array;
}

/** Decodes an SLL (v1) frame. */
export function decodeSll(bytes: Uint8Array): DecodeResult<SllFrame> {
  requireBytes('codec', 'bytes', bytes);
  if (bytes.length < 16)
    return failed(new DecodeError('sll', 'header', 0, 'truncated', `${bytes.length} < 16`));
  const v = viewOf(bytes);
  const addressLength = Math.min(v.getUint16(4), 8);
  return decoded({
    header: {
      version: 1,
      packetType: v.getUint16(0),
      hardwareType: v.getUint16(2),
      address: formatMac(bytes.subarray(6, 6 + addressLength)),
      protocol: v.getUint16(14),
      interfaceIndex: undefined,
    },
    payloadOffset: 16,
    payload: bytes.subarray(16),
  });
}

/** Decodes an SLL2 frame. */
export function decodeSll2(bytes: Uint8Array): DecodeResult<SllFrame> {
  requireBytes('codec', 'bytes', bytes);
  if (bytes.length < 20)
    return failed(new DecodeError('sll', 'sll2-header', 0, 'truncated', `${bytes.length} < 20`));
  const v = viewOf(bytes);
  const addressLength = Math.min(v.getUint8(11), 8);
  return decoded({
    header: {
      version: 2,
      packetType: v.getUint8(10),
      hardwareType: v.getUint16(8),
      address: formatMac(bytes.subarray(12, 12 + addressLength)),
      protocol: v.getUint16(0),
      interfaceIndex: v.getUint32(4),
    },
    payloadOffset: 20,
    payload: bytes.subarray(20),
  });
}

/** Encodes an SLL (v1) frame (for tests of `tcpdump -i any` captures). */
export function encodeSll(
  h: { packetType: number; hardwareType?: number; address?: Uint8Array; protocol: number },
  payload: Uint8Array,
): Uint8Array {
  requireFields('sll', 'fields', h);
  requirePayload('sll', 'payload', payload);
  requirePayload('sll', 'address', h.address, true);
  const address = h.address ?? new Uint8Array(6);
  const out = new Uint8Array(16 + payload.length);
  const v = viewOf(out);
  v.setUint16(0, h.packetType & 0xffff);
  v.setUint16(2, (h.hardwareType ?? 1) & 0xffff);
  v.setUint16(4, Math.min(address.length, 8));
  out.set(address.subarray(0, 8), 6);
  v.setUint16(14, h.protocol & 0xffff);
  out.set(payload, 16);
  return out;
}

/** Encodes an SLL2 frame. */
export function encodeSll2(
  h: {
    packetType: number;
    hardwareType?: number;
    address?: Uint8Array;
    protocol: number;
    interfaceIndex?: number;
  },
  payload: Uint8Array,
): Uint8Array {
  requireFields('sll', 'fields', h);
  requirePayload('sll', 'payload', payload);
  requirePayload('sll', 'address', h.address, true);
  const address = h.address ?? new Uint8Array(6);
  const out = new Uint8Array(20 + payload.length);
  const v = viewOf(out);
  v.setUint16(0, h.protocol & 0xffff);
  v.setUint32(4, (h.interfaceIndex ?? 1) >>> 0);
  v.setUint16(8, (h.hardwareType ?? 1) & 0xffff);
  v.setUint8(10, h.packetType & 0xff);
  v.setUint8(11, Math.min(address.length, 8));
  out.set(address.subarray(0, 8), 12);
  out.set(payload, 20);
  return out;
}
