/**
 * iWARP header layouts as data: one table per header, each field with its byte offset,
 * the width of the big-endian unit it lives in, its bit position inside that unit, its
 * limits, and the tshark 4.0 field that shows it (Wireshark's packet-iwarp-ddp-rdmap.c and
 * packet-iwarp-mpa.c). The typed decoders and encoders of this folder (ddp.ts, rdmap.ts),
 * the lazy views (lazy.ts), the range checks, `decode --fields` and the tshark cross-check
 * all read these tables, so a header is described once.
 *
 * Offsets are relative to the start of the header named by the table: the DDP tables
 * start at the DDP control byte, the RDMAP header tables right after the DDP header.
 */
import { requireArray, requireBytes, requireInteger, requireObject } from '../../arguments.js';
import { type CodecLayer, EncodeError } from '../errors.js';

/** One field of a header. */
export interface HeaderField {
  /** The property name in the message model (messages.ts). */
  readonly name: string;
  /** Byte offset of the big-endian unit holding the field, from the header start. */
  readonly offset: number;
  /** Bytes of that unit: 1, 2, 4 or 8. */
  readonly unit: 1 | 2 | 4 | 8;
  /** Width of the field in bits (<= 32, or 64 for a whole 8-byte unit). */
  readonly bits: number;
  /** Position of the field's least significant bit inside the unit. */
  readonly shift: number;
  /** A one-bit flag read as a boolean. */
  readonly flag?: true;
  /** The tshark 4.0 field showing this value, when tshark has one. */
  readonly tshark?: string;
  /** Where the field is defined. */
  readonly source: string;
}

/** A header: its name, codec layer, fixed length and fields in wire order. */
export interface HeaderLayout<F extends HeaderField = HeaderField> {
  readonly name: string;
  readonly layer: CodecLayer;
  /** Fixed length in bytes (the variable tail of Terminate and MPA frames is not counted). */
  readonly length: number;
  readonly fields: readonly F[];
}

/** The value a field holds in the message model: boolean (flag), bigint (64 bits) or number. */
export type FieldValue<F extends HeaderField> = F extends { readonly flag: true }
  ? boolean
  : F extends { readonly bits: 64 }
    ? bigint
    : number;

/**
 * The message-model properties a layout's fields give (the typed result of `readHeader`):
 * the message types of messages.ts take their header fields from here, so a field is
 * named and typed once.
 */
export type LayoutValue<L extends HeaderLayout> = {
  readonly [F in L['fields'][number] as F['name']]: FieldValue<F>;
};

/** A field of `bits` bits (a number, or a bigint for 64), keeping its name and width in its type. */
function field<const N extends string, const B extends number>(
  name: N,
  offset: number,
  unit: HeaderField['unit'],
  bits: B,
  shift: number,
  source: string,
  tshark?: string,
): HeaderField & { readonly name: N; readonly bits: B } {
  return { name, offset, unit, bits, shift, source, ...(tshark === undefined ? {} : { tshark }) };
}

/** A one-bit flag (a boolean in the message model). */
function flag<const N extends string>(
  name: N,
  offset: number,
  unit: HeaderField['unit'],
  shift: number,
  source: string,
  tshark?: string,
): HeaderField & { readonly name: N; readonly bits: 1; readonly flag: true } {
  return {
    name,
    offset,
    unit,
    bits: 1,
    shift,
    source,
    ...(tshark === undefined ? {} : { tshark }),
    flag: true,
  };
}

/** A layout, its fields' names and value types kept in its type (for `LayoutValue`). */
function layout<const F extends HeaderField>(l: HeaderLayout<F>): HeaderLayout<F> {
  return l;
}

const RFC5041_41 = 'RFC 5041 §4.1';
const RFC5040_42 = 'RFC 5040 §4.2';

/** The DDP control byte and RDMAP control byte shared by both DDP headers (RFC 5041 §4.1, RFC 5040 §4.2, RV 1). */
const CONTROL_FIELDS = [
  flag('tagged', 0, 1, 7, RFC5041_41, 'iwarp_ddp.tagged_flag'),
  flag('last', 0, 1, 6, RFC5041_41, 'iwarp_ddp.last_flag'),
  field('ddpReserved', 0, 1, 4, 2, RFC5041_41, 'iwarp_ddp.rsvd'),
  field('ddpVersion', 0, 1, 2, 0, RFC5041_41, 'iwarp_ddp.dv'),
  field('rdmaVersion', 1, 1, 2, 6, RFC5040_42, 'iwarp_rdma.version'),
  field('rdmapReserved', 1, 1, 2, 4, RFC5040_42, 'iwarp_rdma.rsv'),
  field('opcode', 1, 1, 4, 0, RFC5040_42, 'iwarp_rdma.opcode'),
];

/** RDMAP control octet of RV 2 (draft-wood-storm-rdmap-ext-v2-00 §4.1 Figure 1: RV 2, Rsv 1, Opcode 5). */
export const RDMAP_CONTROL_V2_LAYOUT = layout({
  name: 'RDMAP control (V2)',
  layer: 'rdmap',
  length: 1,
  fields: [
    // tshark 4.0 reads every RV with the RFC 5040 layout (documented gap): no field names.
    field('rdmaVersion', 0, 1, 2, 6, 'draft-wood-storm-rdmap-ext-v2-00 §4.1'),
    field('rdmapReserved', 0, 1, 1, 5, 'draft-wood-storm-rdmap-ext-v2-00 §4.1'),
    field('opcode', 0, 1, 5, 0, 'draft-wood-storm-rdmap-ext-v2-00 §4.1'),
  ],
});

/** Tagged DDP header, 14 bytes (RFC 5041 §4.2; RsvdULP's first octet is RDMAP's control, RFC 5040 §4.2). */
export const DDP_TAGGED_LAYOUT = layout({
  name: 'DDP tagged',
  layer: 'ddp',
  length: 14,
  fields: [
    ...CONTROL_FIELDS,
    field('stag', 2, 4, 32, 0, 'RFC 5041 §4.2', 'iwarp_ddp.stag'),
    field('taggedOffset', 6, 8, 64, 0, 'RFC 5041 §4.2', 'iwarp_ddp.tagged_offset'),
  ],
});

/** Untagged DDP header, 18 bytes (RFC 5041 §4.3; the Invalidate STag is RsvdULP's last 32 bits, RFC 5040 §4.2). */
export const DDP_UNTAGGED_LAYOUT = layout({
  name: 'DDP untagged',
  layer: 'ddp',
  length: 18,
  fields: [
    ...CONTROL_FIELDS,
    field('invalidateSTag', 2, 4, 32, 0, RFC5040_42, 'iwarp_rdma.inval_stag'),
    field('queueNumber', 6, 4, 32, 0, 'RFC 5041 §4.3', 'iwarp_ddp.qn'),
    field('messageSequenceNumber', 10, 4, 32, 0, 'RFC 5041 §4.3', 'iwarp_ddp.msn'),
    field('messageOffset', 14, 4, 32, 0, 'RFC 5041 §4.3', 'iwarp_ddp.mo'),
  ],
});

/** RDMA Read Request header, 28 bytes (RFC 5040 §4.4). */
export const READ_REQUEST_LAYOUT = layout({
  name: 'RDMA Read Request',
  layer: 'rdmap',
  length: 28,
  fields: [
    field('sinkSTag', 0, 4, 32, 0, 'RFC 5040 §4.4', 'iwarp_rdma.sinkstag'),
    field('sinkTaggedOffset', 4, 8, 64, 0, 'RFC 5040 §4.4', 'iwarp_rdma.sinkto'),
    field('readSize', 12, 4, 32, 0, 'RFC 5040 §4.4', 'iwarp_rdma.rdmardsz'),
    field('sourceSTag', 16, 4, 32, 0, 'RFC 5040 §4.4', 'iwarp_rdma.srcstag'),
    field('sourceTaggedOffset', 20, 8, 64, 0, 'RFC 5040 §4.4', 'iwarp_rdma.srcto'),
  ],
});

/**
 * Terminate header's fixed part, 4 bytes (RFC 5040 §4.8: Layer, EType, Error Code, Hdrct
 * M/D/R, 13 reserved bits). With D, a 16-bit DDP Segment Length and the copied DDP header
 * follow; with R, the copied RDMA header (rdmap.ts reads that variable tail).
 */
export const TERMINATE_LAYOUT = layout({
  name: 'Terminate',
  layer: 'rdmap',
  length: 4,
  fields: [
    field('layer', 0, 4, 4, 28, 'RFC 5040 §4.8', 'iwarp_rdma.term_layer'),
    // tshark names EType and Error Code per layer (term_etype_rdma, term_errcode_llp, ...).
    field('errorType', 0, 4, 4, 24, 'RFC 5040 §4.8', 'iwarp_rdma.term_etype'),
    field('errorCode', 0, 4, 8, 16, 'RFC 5040 §4.8', 'iwarp_rdma.term_errcode'),
    flag('segmentLengthValid', 0, 4, 15, 'RFC 5040 §4.8', 'iwarp_rdma.term_hdrct_m'),
    flag('ddpHeaderIncluded', 0, 4, 14, 'RFC 5040 §4.8', 'iwarp_rdma.hdrct_d'),
    flag('rdmaHeaderIncluded', 0, 4, 13, 'RFC 5040 §4.8', 'iwarp_rdma.hdrct_r'),
    field('terminateReserved', 0, 4, 13, 0, 'RFC 5040 §4.8', 'iwarp_rdma.term_rsvd'),
  ],
});

/**
 * Atomic Request header, 52 bytes (RFC 7306 §5.2.1 Figure 4). tshark names the first
 * data/mask pair add_* for FetchAdd and swap_* otherwise (`tsharkFieldName`).
 */
export const ATOMIC_REQUEST_LAYOUT = layout({
  name: 'Atomic Request',
  layer: 'rdmap-ext',
  length: 52,
  fields: [
    field('atomicReserved', 0, 4, 28, 4, 'RFC 7306 §5.2.1', 'iwarp_rdma.atomic.reserved'),
    field('aOpCode', 0, 4, 4, 0, 'RFC 7306 §5.2.1', 'iwarp_rdma.atomic.opcode'),
    field(
      'requestIdentifier',
      4,
      4,
      32,
      0,
      'RFC 7306 §5.2.1',
      'iwarp_rdma.atomic.request_identifier',
    ),
    field('remoteSTag', 8, 4, 32, 0, 'RFC 7306 §5.2.1', 'iwarp_rdma.atomic.remote_stag'),
    field(
      'remoteTaggedOffset',
      12,
      8,
      64,
      0,
      'RFC 7306 §5.2.1',
      'iwarp_rdma.atomic.remote_tagged_offset',
    ),
    field('addOrSwapData', 20, 8, 64, 0, 'RFC 7306 §5.2.1', 'iwarp_rdma.atomic.add_data'),
    field('addOrSwapMask', 28, 8, 64, 0, 'RFC 7306 §5.2.1', 'iwarp_rdma.atomic.add_mask'),
    field('compareData', 36, 8, 64, 0, 'RFC 7306 §5.2.1', 'iwarp_rdma.atomic.compare_data'),
    field('compareMask', 44, 8, 64, 0, 'RFC 7306 §5.2.1', 'iwarp_rdma.atomic.compare_mask'),
  ],
});

/** Atomic Response header, 12 bytes (RFC 7306 §5.2.2 Figure 5). */
export const ATOMIC_RESPONSE_LAYOUT = layout({
  name: 'Atomic Response',
  layer: 'rdmap-ext',
  length: 12,
  fields: [
    field(
      'originalRequestIdentifier',
      0,
      4,
      32,
      0,
      'RFC 7306 §5.2.2',
      'iwarp_rdma.atomic.original_request_identifier',
    ),
    field(
      'originalRemoteDataValue',
      4,
      8,
      64,
      0,
      'RFC 7306 §5.2.2',
      'iwarp_rdma.atomic.original_remote_data_value',
    ),
  ],
});

/** Immediate Data header, 8 bytes (RFC 7306 §6.3; tshark 4.0 has no field for it). */
export const IMMEDIATE_DATA_LAYOUT = layout({
  name: 'Immediate Data',
  layer: 'rdmap-ext',
  length: 8,
  fields: [field('immediateData', 0, 8, 64, 0, 'RFC 7306 §6.3')],
});

/** RDMA Read V2 Request header, 16 bytes (draft-wood-storm-rdmap-ext-v2-00 §6.1). */
export const READ_V2_REQUEST_LAYOUT = layout({
  name: 'RDMA Read V2 Request',
  layer: 'rdmap',
  length: 16,
  fields: [
    field('readSize', 0, 4, 32, 0, 'draft-wood-storm-rdmap-ext-v2-00 §6.1'),
    field('sourceSTag', 4, 4, 32, 0, 'draft-wood-storm-rdmap-ext-v2-00 §6.1'),
    field('sourceTaggedOffset', 8, 8, 64, 0, 'draft-wood-storm-rdmap-ext-v2-00 §6.1'),
  ],
});

/** The L = 1 segment of a V2 Send with Immediate Data: 8 bytes (draft-wood-storm-rdmap-ext-v2-00 §5.3). */
export const SEND_IMMEDIATE_LAYOUT = layout({
  name: 'Send with Immediate Data (last segment)',
  layer: 'rdmap-ext',
  length: 8,
  fields: [field('immediateData', 0, 8, 64, 0, 'draft-wood-storm-rdmap-ext-v2-00 §5.3')],
});

/** MPA Request/Reply header, 20 bytes after which PD_Length bytes of private data follow (RFC 5044 §7.1, RFC 6581 §5). */
export const MPA_FRAME_LAYOUT = layout({
  name: 'MPA Request/Reply',
  layer: 'mpa',
  length: 20,
  fields: [
    // Bytes 0-15 are the key ("MPA ID Req Frame" / "MPA ID Rep Frame"): iwarp_mpa.key.req/rep.
    flag('markers', 16, 1, 7, 'RFC 5044 §7.1', 'iwarp_mpa.marker_flag'),
    flag('crc', 16, 1, 6, 'RFC 5044 §7.1', 'iwarp_mpa.crc_flag'),
    flag('reject', 16, 1, 5, 'RFC 5044 §7.1', 'iwarp_mpa.rej_flag'),
    // tshark shows the enhanced bit and the 4 reserved bits together as iwarp_mpa.res.
    flag('enhanced', 16, 1, 4, 'RFC 6581 §5'),
    field('reserved', 16, 1, 4, 0, 'RFC 5044 §7.1'),
    field('revision', 17, 1, 8, 0, 'RFC 5044 §7.1', 'iwarp_mpa.rev'),
    field('pdLength', 18, 2, 16, 0, 'RFC 5044 §7.1', 'iwarp_mpa.pdlength'),
  ],
});

/** The RFC 6581 §5 IRD/ORD words at the start of revision-2 enhanced private data. */
export const MPA_ENHANCED_LAYOUT = layout({
  name: 'MPA enhanced parameters',
  layer: 'mpa',
  length: 4,
  fields: [
    flag('peerToPeer', 0, 2, 15, 'RFC 6581 §5'),
    flag('sendRtr', 0, 2, 14, 'RFC 6581 §5'),
    field('ird', 0, 2, 14, 0, 'RFC 6581 §5'),
    flag('writeRtr', 2, 2, 15, 'RFC 6581 §5'),
    flag('readRtr', 2, 2, 14, 'RFC 6581 §5'),
    field('ord', 2, 2, 14, 0, 'RFC 6581 §5'),
  ],
});

/** The FPDU's ULPDU Length (RFC 5044 §4); the CRC is the last 4 bytes after the pad. */
export const MPA_FPDU_LAYOUT = layout({
  name: 'MPA FPDU',
  layer: 'mpa',
  length: 2,
  fields: [field('ulpduLength', 0, 2, 16, 0, 'RFC 5044 §4', 'iwarp_mpa.ulpdulength')],
});

/** An MPA marker, 4 bytes (RFC 5044 §5). */
export const MPA_MARKER_LAYOUT = layout({
  name: 'MPA marker',
  layer: 'mpa',
  length: 4,
  fields: [
    field('reserved', 0, 2, 16, 0, 'RFC 5044 §5', 'iwarp_mpa.marker_res'),
    field('fpduPointer', 2, 2, 16, 0, 'RFC 5044 §5', 'iwarp_mpa.marker_fpduptr'),
  ],
});

/** Every iWARP layout, for tests and `decode --fields`. */
export const IWARP_LAYOUTS: readonly HeaderLayout[] = [
  MPA_FRAME_LAYOUT,
  MPA_ENHANCED_LAYOUT,
  MPA_FPDU_LAYOUT,
  MPA_MARKER_LAYOUT,
  DDP_TAGGED_LAYOUT,
  DDP_UNTAGGED_LAYOUT,
  RDMAP_CONTROL_V2_LAYOUT,
  READ_REQUEST_LAYOUT,
  TERMINATE_LAYOUT,
  ATOMIC_REQUEST_LAYOUT,
  ATOMIC_RESPONSE_LAYOUT,
  IMMEDIATE_DATA_LAYOUT,
  READ_V2_REQUEST_LAYOUT,
  SEND_IMMEDIATE_LAYOUT,
];

// ---------------------------------------------------------------------------------------
// Reading, writing and checking fields by their layout.

function readUnit(b: Uint8Array, at: number, unit: number): number {
  switch (unit) {
    case 1:
      return b[at]!;
    case 2:
      return (b[at]! << 8) | b[at + 1]!;
    default:
      return ((b[at]! << 24) | (b[at + 1]! << 16) | (b[at + 2]! << 8) | b[at + 3]!) >>> 0;
  }
}

/**
 * A field narrower than 64 bits, as a number (flags as 0/1); `at` is the header's offset
 * in `b`. The caller has checked that the header is present.
 */
export function readFieldNumber(b: Uint8Array, at: number, f: HeaderField): number {
  const word = readUnit(b, at + f.offset, f.unit);
  if (f.bits >= 32) return word;
  return Math.floor(word / 2 ** f.shift) % 2 ** f.bits;
}

/** A 64-bit field, as a bigint (the only reads that allocate one). */
export function readFieldBigint(b: Uint8Array, at: number, f: HeaderField): bigint {
  return fieldAccess(f).bigint(b, at);
}

/** The field's value as the message model holds it: bigint, boolean or number. */
export function readField(b: Uint8Array, at: number, f: HeaderField): number | bigint | boolean {
  if (f.bits === 64) return readFieldBigint(b, at, f);
  const n = readFieldNumber(b, at, f);
  return f.flag === true ? n !== 0 : n;
}

/** Throws `EncodeError` unless `value` fits `f` (bigint for 64-bit, boolean for flags). */
export function checkField(layout: HeaderLayout, f: HeaderField, value: unknown): void {
  fieldAccess(f).check(layout.layer, value);
}

/** Range-checks every field of `layout` present in `value`'s properties. */
export function checkHeader(layout: HeaderLayout, value: object, only?: readonly string[]): void {
  const record = value as Record<string, unknown>;
  for (const f of accessOf(layout))
    if (only === undefined || only.includes(f.name)) f.check(layout.layer, record[f.name]);
}

/**
 * ORs field `f` = `value` into the header at `b[at]` (the bytes must start zeroed for the
 * unit's other fields to survive: write all fields of a unit into a fresh buffer).
 */
export function writeField(
  b: Uint8Array,
  at: number,
  f: HeaderField,
  value: number | bigint | boolean,
): void {
  fieldAccess(f).write(b, at, value);
}

/** A HeaderLayout argument: an object with its fields (the *_LAYOUT constants are). */
function requireLayout(layout: HeaderLayout): void {
  const l = requireObject('codec', 'layout', layout) as { fields?: unknown };
  requireArray('codec', 'layout.fields', l.fields);
}

/** Checks then writes every field of `layout` from `value` at `b[at]` (bytes there must be zero). */
export function writeHeader(layout: HeaderLayout, value: object, b: Uint8Array, at = 0): void {
  requireLayout(layout);
  requireObject('codec', 'value', value);
  requireBytes('codec', 'b', b);
  requireInteger('codec', 'at', at, 0);
  checkHeader(layout, value);
  writeFields(layout, value, b, at);
}

/**
 * Writes every field of `layout` from `value` at `b[at]`, unchecked: the codec's encoders
 * call this after `checkHeader` (bytes there must be zero).
 */
export function writeFields(layout: HeaderLayout, value: object, b: Uint8Array, at: number): void {
  const record = value as Record<string, unknown>;
  for (const f of accessOf(layout)) f.write(b, at, record[f.name]);
}

/** Every field of `layout` read from `b[at]`, as the message model holds them. */
export function readHeader<L extends HeaderLayout>(
  layout: L,
  b: Uint8Array,
  at = 0,
): LayoutValue<L> {
  requireLayout(layout);
  requireBytes('codec', 'b', b);
  requireInteger('codec', 'at', at, 0);
  return readFields(layout, b, at);
}

/**
 * Every field of `layout` read from `b[at]`, unchecked: the codec's decoders call this
 * once they know the header is there.
 */
export function readFields<L extends HeaderLayout>(
  layout: L,
  b: Uint8Array,
  at: number,
): LayoutValue<L> {
  const out: Record<string, number | bigint | boolean> = {};
  for (const f of accessOf(layout)) out[f.name] = f.value(b, at);
  // Every field of L was just set under its name with the type `readField` gives it.
  return out as LayoutValue<L>;
}

/**
 * A field compiled for the codec's per-segment paths: every field one object shape and
 * integer arithmetic (the decoders and encoders call these millions of times a second;
 * a `HeaderField` literal's shape varies with its optional properties). The caller has
 * checked the bytes are there and, for writes, the value's range.
 */
export class FieldAccess {
  readonly name: string;
  readonly offset: number;
  readonly unit: number;
  readonly shift: number;
  readonly mask: number;
  /** A whole 32-bit (or narrower-unit) word: no shift or mask. */
  readonly whole: boolean;
  readonly u64: boolean;
  readonly flag: boolean;
  readonly bits: number;

  constructor(f: HeaderField) {
    this.name = f.name;
    this.bits = f.bits;
    this.offset = f.offset;
    this.unit = f.unit;
    this.shift = f.shift;
    this.mask = f.bits >= 32 ? 0xffffffff : 2 ** f.bits - 1;
    this.whole = f.bits >= 32 || f.bits === f.unit * 8;
    this.u64 = f.bits === 64;
    this.flag = f.flag === true;
  }

  /** The field as a number (a field narrower than 64 bits; flags 0/1). */
  number(b: Uint8Array, at: number): number {
    const p = at + this.offset;
    const u = this.unit;
    const word =
      u === 1
        ? b[p]!
        : u === 2
          ? (b[p]! << 8) | b[p + 1]!
          : ((b[p]! << 24) | (b[p + 1]! << 16) | (b[p + 2]! << 8) | b[p + 3]!) >>> 0;
    return this.whole ? word : (word >>> this.shift) & this.mask;
  }

  /** A 64-bit field as a bigint. */
  bigint(b: Uint8Array, at: number): bigint {
    const p = at + this.offset;
    const hi = ((b[p]! << 24) | (b[p + 1]! << 16) | (b[p + 2]! << 8) | b[p + 3]!) >>> 0;
    const lo = ((b[p + 4]! << 24) | (b[p + 5]! << 16) | (b[p + 6]! << 8) | b[p + 7]!) >>> 0;
    return (BigInt(hi) << 32n) | BigInt(lo);
  }

  /** Throws `EncodeError` (in `layer`) unless `value` fits (bigint for 64-bit, boolean for flags). */
  check(layer: CodecLayer, value: unknown): void {
    if (this.u64) {
      if (typeof value !== 'bigint' || value < 0n || value > 0xffffffffffffffffn)
        throw new EncodeError(
          layer,
          this.name,
          `${String(value)} is not an unsigned 64-bit bigint`,
        );
      return;
    }
    if (this.flag) {
      if (typeof value !== 'boolean')
        throw new EncodeError(layer, this.name, `${String(value)} is not a boolean`);
      return;
    }
    if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > this.mask)
      throw new EncodeError(
        layer,
        this.name,
        `${String(value)} is not an unsigned ${this.bits}-bit integer`,
      );
  }

  /** The field as the message model holds it. */
  value(b: Uint8Array, at: number): number | bigint | boolean {
    if (this.u64) return this.bigint(b, at);
    const n = this.number(b, at);
    return this.flag ? n !== 0 : n;
  }

  /** ORs the value into zeroed bits at `b[at]` (a range-checked number, bigint or boolean). */
  write(b: Uint8Array, at: number, value: unknown): void {
    const p = at + this.offset;
    if (this.u64) {
      const v = typeof value === 'bigint' ? value : 0n;
      writeWord(b, p, 4, Number(v >> 32n));
      writeWord(b, p + 4, 4, Number(v & 0xffffffffn));
      return;
    }
    const n = value === true ? 1 : value === false ? 0 : Number(value);
    if (this.whole) {
      writeWord(b, p, this.unit, n);
      return;
    }
    // A narrower field shares its unit: OR it into the bits already written.
    const u = this.unit;
    if (u === 1) b[p] = b[p]! | (n << this.shift);
    else {
      const old =
        u === 2
          ? (b[p]! << 8) | b[p + 1]!
          : ((b[p]! << 24) | (b[p + 1]! << 16) | (b[p + 2]! << 8) | b[p + 3]!) >>> 0;
      writeWord(b, p, u, (old | (n << this.shift)) >>> 0);
    }
  }
}

function writeWord(b: Uint8Array, at: number, unit: number, v: number): void {
  if (unit === 1) b[at] = v & 0xff;
  else if (unit === 2) {
    b[at] = (v >>> 8) & 0xff;
    b[at + 1] = v & 0xff;
  } else {
    b[at] = (v >>> 24) & 0xff;
    b[at + 1] = (v >>> 16) & 0xff;
    b[at + 2] = (v >>> 8) & 0xff;
    b[at + 3] = v & 0xff;
  }
}

const ACCESS = new WeakMap<HeaderField, FieldAccess>();
const LAYOUT_ACCESS = new WeakMap<HeaderLayout, readonly FieldAccess[]>();

/** The compiled access of a field (made once per field). */
export function fieldAccess(f: HeaderField): FieldAccess {
  let a = ACCESS.get(f);
  if (a === undefined) {
    a = new FieldAccess(f);
    ACCESS.set(f, a);
  }
  return a;
}

/** The compiled fields of a layout, in wire order (made once per layout). */
export function accessOf(layout: HeaderLayout): readonly FieldAccess[] {
  let a = LAYOUT_ACCESS.get(layout);
  if (a === undefined) {
    a = layout.fields.map(fieldAccess);
    LAYOUT_ACCESS.set(layout, a);
  }
  return a;
}

/** A field of a layout by name; throws for a name the table lacks (a programming error). */
export function layoutField(layout: HeaderLayout, name: string): HeaderField {
  const f = layout.fields.find((x) => x.name === name);
  if (f === undefined) throw new Error(`${layout.name} has no field '${name}'`);
  return f;
}

/**
 * The tshark field showing `f` in a message: tshark names the Atomic Request's first
 * data/mask pair add_* for FetchAdd (AOpCode 0) and swap_* otherwise, and the Terminate
 * EType and Error Code per layer (see terminate-codes.ts for those names).
 */
export function tsharkFieldName(f: HeaderField, aOpCode?: number): string | undefined {
  requireObject('codec', 'f', f);
  if (aOpCode !== undefined) requireInteger('codec', 'aOpCode', aOpCode, 0, 0xffff_ffff);
  if (f.tshark === undefined) return undefined;
  if (aOpCode !== undefined && aOpCode !== 0 && f.tshark.startsWith('iwarp_rdma.atomic.add_'))
    return f.tshark.replace('.add_', '.swap_');
  return f.tshark;
}
