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

/** A field's byte offset and width (1, 2 or 4 bytes, big-endian). */
type Place = readonly [offset: number, width: 1 | 2 | 4];

/** A cooked header's version. */
type Version = 1 | 2;

/** Per version (SLL, SLL2): header length, the first of the 8 address bytes. */
const LENGTH = { 1: 16, 2: 20 } as const;
const ADDRESS = { 1: 6, 2: 12 } as const;
/** The field a truncated header is reported against. */
const HEADER = { 1: 'header', 2: 'sll2-header' } as const;

type PlacedField = 'packetType' | 'hardwareType' | 'addressLength' | 'protocol';

/** Each field's place in SLL and in SLL2 (tcpdump.org's linktype pages). */
const PLACES: { readonly [F in PlacedField]: { readonly [v in Version]: Place } } = {
  packetType: { 1: [0, 2], 2: [10, 1] },
  hardwareType: { 1: [2, 2], 2: [8, 2] },
  addressLength: { 1: [4, 2], 2: [11, 1] },
  protocol: { 1: [14, 2], 2: [0, 2] },
};
/** SLL2 only. */
const INTERFACE_INDEX: Place = [4, 4];

function get(v: DataView, [at, width]: Place): number {
  return width === 1 ? v.getUint8(at) : width === 2 ? v.getUint16(at) : v.getUint32(at);
}

/** Writes `n` truncated to the place's width. */
function set(v: DataView, [at, width]: Place, n: number): void {
  if (width === 1) v.setUint8(at, n & 0xff);
  else if (width === 2) v.setUint16(at, n & 0xffff);
  else v.setUint32(at, n >>> 0);
}

function decodeWith(version: Version, bytes: Uint8Array): DecodeResult<SllFrame> {
  requireBytes('codec', 'bytes', bytes);
  const length = LENGTH[version];
  if (bytes.length < length)
    return failed(
      new DecodeError('sll', HEADER[version], 0, 'truncated', `${bytes.length} < ${length}`),
    );
  const v = viewOf(bytes);
  const read = (field: PlacedField) => get(v, PLACES[field][version]);
  const address = ADDRESS[version];
  return decoded({
    header: {
      version,
      packetType: read('packetType'),
      hardwareType: read('hardwareType'),
      address: formatMac(bytes.subarray(address, address + Math.min(read('addressLength'), 8))),
      protocol: read('protocol'),
      interfaceIndex: version === 2 ? get(v, INTERFACE_INDEX) : undefined,
    },
    payloadOffset: length,
    payload: bytes.subarray(length),
  });
}

/** The fields an encoder takes (`interfaceIndex` SLL2 only, default 1). */
interface SllFields {
  packetType: number;
  hardwareType?: number;
  address?: Uint8Array;
  protocol: number;
  interfaceIndex?: number;
}

function encodeWith(version: Version, h: SllFields, payload: Uint8Array): Uint8Array {
  requireFields('sll', 'fields', h);
  requirePayload('sll', 'payload', payload);
  requirePayload('sll', 'address', h.address, true);
  const address = h.address ?? new Uint8Array(6);
  const out = new Uint8Array(LENGTH[version] + payload.length);
  const v = viewOf(out);
  const write = (field: PlacedField, n: number) => set(v, PLACES[field][version], n);
  write('packetType', h.packetType);
  write('hardwareType', h.hardwareType ?? 1);
  write('addressLength', Math.min(address.length, 8));
  out.set(address.subarray(0, 8), ADDRESS[version]);
  write('protocol', h.protocol);
  if (version === 2) set(v, INTERFACE_INDEX, h.interfaceIndex ?? 1);
  out.set(payload, LENGTH[version]);
  return out;
}

/** Decodes an SLL (v1) frame. */
export function decodeSll(bytes: Uint8Array): DecodeResult<SllFrame> {
  return decodeWith(1, bytes);
}

/** Decodes an SLL2 frame. */
export function decodeSll2(bytes: Uint8Array): DecodeResult<SllFrame> {
  return decodeWith(2, bytes);
}

/** Encodes an SLL (v1) frame (for tests of `tcpdump -i any` captures). */
export function encodeSll(h: Omit<SllFields, 'interfaceIndex'>, payload: Uint8Array): Uint8Array {
  return encodeWith(1, h, payload);
}

/** Encodes an SLL2 frame. */
export function encodeSll2(h: SllFields, payload: Uint8Array): Uint8Array {
  return encodeWith(2, h, payload);
}
