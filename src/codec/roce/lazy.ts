/**
 * A lazy view of one RoCEv2 packet (the UDP payload: BTH, extension headers, payload,
 * ICRC): fields are read from the bytes when asked for, through the BTH offsets of IBTA
 * §9.2 and the extension header layouts of headers.ts. One view is re-pointed at each
 * packet; a bigint exists only when a 64-bit field is read, the typed packet
 * (decodeRocePacket) only when asked for with `packet()`.
 */
import { ByteView } from '../byte-view.js';
import type { DecodeResult } from '../errors.js';
import { BTH_LENGTH } from './bth.js';
import { EXTENSION_HEADER_LAYOUT, type FieldLayout } from './headers.js';
import {
  type BthOpcodeInfo,
  bthOpcodeInfo,
  EXTENSION_HEADER_LENGTH,
  type ExtensionHeader,
} from './opcodes.js';
import { decodeRocePacket, type RocePacket } from './packet.js';

/** Where each extension header of an opcode starts, after the BTH (computed once per opcode). */
const HEADER_OFFSETS = new Map<number, ReadonlyMap<ExtensionHeader, number>>();

function headerOffsets(info: BthOpcodeInfo): ReadonlyMap<ExtensionHeader, number> {
  let m = HEADER_OFFSETS.get(info.value);
  if (m === undefined) {
    const offsets = new Map<ExtensionHeader, number>();
    let at = BTH_LENGTH;
    for (const h of info.headers) {
      offsets.set(h, at);
      at += EXTENSION_HEADER_LENGTH[h];
    }
    m = offsets;
    HEADER_OFFSETS.set(info.value, m);
  }
  return m;
}

/** A re-pointable view of one RoCEv2 packet. */
export class RoceView extends ByteView {
  /** True when the 12-byte BTH is there. */
  get bthPresent(): boolean {
    return this.length >= BTH_LENGTH;
  }

  /** BTH opcode (IBTA §9.2, byte 0). */
  get opcode(): number {
    return this.bytes[this.offset]!;
  }

  get info(): BthOpcodeInfo | undefined {
    return bthOpcodeInfo(this.opcode);
  }

  /** DestQP (bytes 5-7). */
  get destinationQp(): number {
    const b = this.bytes;
    const o = this.offset;
    return (b[o + 5]! << 16) | (b[o + 6]! << 8) | b[o + 7]!;
  }

  /** PSN (bytes 9-11). */
  get psn(): number {
    const b = this.bytes;
    const o = this.offset;
    return (b[o + 9]! << 16) | (b[o + 10]! << 8) | b[o + 11]!;
  }

  /** AckReq (byte 8, bit 7). */
  get ackRequest(): boolean {
    return (this.bytes[this.offset + 8]! & 0x80) !== 0;
  }

  /**
   * Extension header field `field` of header `header` (e.g. `AtomicETH`, `virtualAddress`),
   * or undefined when this opcode has no such header or the packet is too short.
   */
  field(header: ExtensionHeader, field: string): number | bigint | undefined {
    const info = this.info;
    if (info === undefined) return undefined;
    const at = headerOffsets(info).get(header);
    if (at === undefined) return undefined;
    if (at + EXTENSION_HEADER_LENGTH[header] > this.length) return undefined;
    const f = (EXTENSION_HEADER_LAYOUT[header] as readonly FieldLayout[]).find(
      (x) => x.name === field,
    );
    if (f === undefined) return undefined;
    return readLayoutField(this.bytes, this.offset + at, f);
  }

  /**
   * Where extension header `header` starts, from the BTH's first byte (0 for the BTH
   * itself), or undefined when this opcode has no such header.
   */
  headerOffset(header: 'BTH' | ExtensionHeader): number | undefined {
    if (header === 'BTH') return 0;
    const info = this.info;
    return info === undefined ? undefined : headerOffsets(info).get(header);
  }

  /** The R_Key of a RETH, AtomicETH or IETH, when the opcode has one. */
  get rKey(): number | undefined {
    const info = this.info;
    if (info === undefined) return undefined;
    for (const h of ['RETH', 'AtomicETH', 'IETH'] as const)
      if (info.headers.includes(h)) return this.field(h, 'rKey') as number | undefined;
    return undefined;
  }

  /** The MSN of an AETH, when the opcode has one. */
  get msn(): number | undefined {
    return this.field('AETH', 'msn') as number | undefined;
  }

  /** The typed packet (objects allocated now), or why it is malformed. */
  packet(): DecodeResult<RocePacket> {
    return decodeRocePacket(this.bytes.subarray(this.offset, this.offset + this.length));
  }
}

function readLayoutField(b: Uint8Array, at: number, f: FieldLayout): number | bigint {
  const p = at + f.offset;
  switch (f.width) {
    case 1:
      return b[p]!;
    case 2:
      return (b[p]! << 8) | b[p + 1]!;
    case 3:
      return (b[p]! << 16) | (b[p + 1]! << 8) | b[p + 2]!;
    case 4:
      return ((b[p]! << 24) | (b[p + 1]! << 16) | (b[p + 2]! << 8) | b[p + 3]!) >>> 0;
    case 8: {
      const hi = ((b[p]! << 24) | (b[p + 1]! << 16) | (b[p + 2]! << 8) | b[p + 3]!) >>> 0;
      const lo = ((b[p + 4]! << 24) | (b[p + 5]! << 16) | (b[p + 6]! << 8) | b[p + 7]!) >>> 0;
      return (BigInt(hi) << 32n) | BigInt(lo);
    }
  }
}
