/**
 * Building and breaking iWARP packets field by field for the tester: a DDP segment from
 * the codec's message builders, one header field set to any value (the field found in the
 * codec's layout tables, src/codec/iwarp/layouts.ts, so no offset is written here), and
 * the segment framed as an MPA FPDU with the negotiated settings, then optionally its
 * ULPDU Length or CRC overwritten. The assertions and the fuzz use the same functions.
 */
import {
  DDP_TAGGED_LAYOUT,
  DDP_UNTAGGED_LAYOUT,
  type HeaderField,
  type HeaderLayout,
  layoutField,
  MPA_FPDU_LAYOUT,
} from '../codec/iwarp/layouts.js';
import type { MpaNegotiated, RdmapMessage } from '../codec/iwarp/messages.js';
import { encodeFpdu } from '../codec/iwarp/mpa.js';
import { encodeRdmapMessage } from '../codec/iwarp/rdmap.js';

/** The fields of the DDP headers a segment carries (tagged or untagged). */
export function segmentLayout(segment: Uint8Array): HeaderLayout {
  // RFC 5041 §4.1: the T flag is the DDP control byte's top bit.
  return ((segment[0] ?? 0) & 0x80) !== 0 ? DDP_TAGGED_LAYOUT : DDP_UNTAGGED_LAYOUT;
}

/** Overwrites field `f` of the header at `b[at]` with `value` (other bits untouched). */
export function setField(b: Uint8Array, at: number, f: HeaderField, value: number | bigint): void {
  const p = at + f.offset;
  if (f.bits === 64) {
    new DataView(b.buffer, b.byteOffset, b.byteLength).setBigUint64(p, BigInt(value), false);
    return;
  }
  let unit = 0;
  for (let i = 0; i < f.unit; i++) unit = unit * 256 + (b[p + i] ?? 0);
  const span = 2 ** f.bits;
  const low = unit % 2 ** f.shift;
  const high = Math.floor(unit / (2 ** f.shift * span));
  let word = (high * span + (Number(value) % span)) * 2 ** f.shift + low;
  for (let i = f.unit - 1; i >= 0; i--) {
    b[p + i] = word % 256;
    word = Math.floor(word / 256);
  }
}

/** The largest value field `f` holds. */
export function fieldLimit(f: HeaderField): bigint {
  return (1n << BigInt(f.bits)) - 1n;
}

/** A message's DDP segment with some DDP/RDMAP control fields overwritten. */
export function segmentWith(
  message: RdmapMessage,
  fields: Readonly<Record<string, number | bigint>> = {},
): Uint8Array {
  const segment = encodeRdmapMessage(message, { strict: false });
  const layout = segmentLayout(segment);
  for (const [name, value] of Object.entries(fields))
    setField(segment, 0, layoutField(layout, name), value);
  return segment;
}

/** How an FPDU is broken after framing. */
export interface FpduDamage {
  /** The ULPDU Length field as sent (RFC 5044 §4), whatever the ULPDU's real length. */
  readonly ulpduLength?: number;
  /** XOR into the CRC field (RFC 5044 §4: CRC32c over the FPDU); 0 leaves it. */
  readonly crcXor?: number;
  /** Frame with markers even where none were negotiated (RFC 5044 §5). */
  readonly markers?: boolean;
}

/** `segment` framed as one FPDU at stream position `position`, then damaged as asked. */
export function fpduOf(
  segment: Uint8Array,
  negotiated: MpaNegotiated,
  damage: FpduDamage = {},
  position = 0,
): Uint8Array {
  const fpdu = encodeFpdu(segment, {
    crc: negotiated.crc,
    markers: damage.markers ?? negotiated.markers,
    position,
  });
  // A leading marker (position 0 with markers) comes before the length field.
  const lengthAt = (damage.markers ?? negotiated.markers) && position % 512 === 0 ? 4 : 0;
  if (damage.ulpduLength !== undefined)
    setField(fpdu, lengthAt, layoutField(MPA_FPDU_LAYOUT, 'ulpduLength'), damage.ulpduLength);
  if (damage.crcXor !== undefined && damage.crcXor !== 0) {
    const view = new DataView(fpdu.buffer, fpdu.byteOffset, fpdu.byteLength);
    const at = fpdu.length - 4;
    view.setUint32(at, (view.getUint32(at, false) ^ damage.crcXor) >>> 0, false);
  }
  return fpdu;
}

/** Concatenates byte strings. */
export function concatBytes(parts: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}
