/**
 * The Wireshark plugin's fields, derived from the codec's tables (tables.ts): every field
 * of every layout the plugin decodes becomes a Wireshark field. A layout field with a
 * tshark 4.0 name (layouts.ts `tshark`) keeps that name, so the filters people know keep
 * working; the others get a `rdma_interop.` name. The copies of a DDP and an RDMAP header
 * that a Terminate carries (RFC 5040 §4.8) are the same layouts under
 * `rdma_interop.term.ddp.` and `rdma_interop.term.rdma.`, so a filter on a copied field
 * never matches the Terminate's own header.
 */
import { type HeaderField, type HeaderLayout, tsharkFieldName } from '../codec/iwarp/layouts.js';
import type { RdmapFamily } from '../codec/iwarp/opcodes.js';
import { LAYOUT_PREFIXES, type PluginTables } from './tables.js';

/** The Lua value-name tables a field may use (generate.ts writes them). */
export type ValueNames =
  | 'OPCODE_NAMES'
  | 'AOPCODE_NAMES'
  | 'TERM_LAYER_NAMES'
  | 'ICRC_STATUS_NAMES';

/** One Wireshark field (a `ProtoField`) of the plugin. */
export interface PluginField {
  /** The display-filter name, e.g. `iwarp_rdma.atomic.compare_mask`. */
  readonly abbrev: string;
  readonly label: string;
  readonly type: 'uint8' | 'uint16' | 'uint32' | 'uint64' | 'bool' | 'string';
  readonly base: 'DEC' | 'HEX' | 'NONE';
  /** The bits of the field in its unit (absent: the whole unit). */
  readonly mask?: number;
  /** For a flag: the unit's width in bits. */
  readonly unitBits?: number;
  readonly valueNames?: ValueNames;
  /** What it shows and where it is defined (the field's blurb, and docs/wireshark.md). */
  readonly description: string;
  /** Wireshark 4.0 registers a field of this name (the plugin then adds its own only where Wireshark's is missing or shows another value). */
  readonly wireshark: boolean;
  /** The codec layout field it shows, when it shows one: `decode --fields <field>` prints the same value. */
  readonly codecField?: string;
}

/** Where a layout is decoded: the segment's own headers, or a Terminate's copies. */
export type FieldContext = 'segment' | 'term-ddp' | 'term-rdma';

/** A layout field and the Wireshark field(s) showing it. */
export interface PluginLayoutField {
  readonly field: HeaderField;
  readonly abbrev: string;
  /** tshark names the Atomic Request's first data/mask pair after the AOpCode (add_* or swap_*). */
  readonly byAOpCode?: Readonly<Record<number, string>>;
  /** With byAOpCode: the name for an AOpCode the table lacks (tsharkFieldName's rule for it). */
  readonly otherAOpCode?: string;
}

/** A layout as the plugin decodes it. */
export interface PluginLayout {
  readonly layout: HeaderLayout;
  readonly fields: readonly PluginLayoutField[];
}

/** The plugin's fields, and each layout it decodes with its fields' names. */
export interface PluginModel {
  readonly fields: readonly PluginField[];
  /** The segment's own DDP header and RDMAP header. */
  readonly segment: DdpLayouts & { readonly headers: HeaderLayouts };
  /** A Terminate's copy of the DDP header. */
  readonly termDdp: DdpLayouts;
  /** A Terminate's copy of the RDMAP header, by the copied opcode's header kind. */
  readonly termRdma: HeaderLayouts;
}

/** The DDP headers and the RV 2 control octet. */
export interface DdpLayouts {
  readonly ddpTagged: PluginLayout;
  readonly ddpUntagged: PluginLayout;
  readonly controlV2: PluginLayout;
}

/** The RDMAP header after the DDP header, per header kind. */
export type HeaderLayouts = Readonly<Record<RdmapFamily, PluginLayout | undefined>>;

/** `sourceSTag` -> `source_stag`, `aOpCode` -> `a_op_code`. */
export function snakeCase(name: string): string {
  return name.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toLowerCase();
}

/** Labels the camel-case split gets wrong (acronyms; RFC 7306 §5.2.1 writes AOpCode as one word). */
const LABELS: Readonly<Record<string, string>> = {
  aOpCode: 'AOpCode',
  stag: 'STag',
  ddpReserved: 'DDP Reserved',
  ddpVersion: 'DDP Version',
  rdmaVersion: 'RDMAP Version',
  rdmapReserved: 'RDMAP Reserved',
};

/** `sourceSTag` -> `Source STag`. */
function labelOf(name: string): string {
  const fixed = LABELS[name];
  if (fixed !== undefined) return fixed;
  const words = name.replace(/([a-z0-9])([A-Z])/g, '$1 $2');
  return words.charAt(0).toUpperCase() + words.slice(1);
}

/** `Tagged` -> `tagged`, but `AOpCode` and `STag` stay. */
function lowerFirst(label: string): string {
  return /^[A-Z][a-z ]/.test(label) ? label.charAt(0).toLowerCase() + label.slice(1) : label;
}

function prefixOf(layout: HeaderLayout): string {
  return (
    LAYOUT_PREFIXES.get(layout.name) ??
    `rdma_interop.${snakeCase(layout.name.replace(/[^A-Za-z0-9]+/g, '_')).replace(/_+$/, '')}`
  );
}

/** The name of a layout field in the segment's own headers. */
function segmentAbbrev(layout: HeaderLayout, f: HeaderField, aOpCode?: number): string {
  return tsharkFieldName(f, aOpCode) ?? `${prefixOf(layout)}.${snakeCase(f.name)}`;
}

/** `iwarp_rdma.atomic.add_data` -> `atomic.add_data`; `rdma_interop.v2.opcode` -> `v2.opcode`. */
function tail(abbrev: string): string {
  return abbrev.slice(abbrev.indexOf('.') + 1);
}

function abbrevIn(
  context: FieldContext,
  layout: HeaderLayout,
  f: HeaderField,
  aOpCode?: number,
): string {
  const own = segmentAbbrev(layout, f, aOpCode);
  if (context === 'segment') return own;
  return `rdma_interop.term.${context === 'term-ddp' ? 'ddp' : 'rdma'}.${tail(own)}`;
}

/** The value names a layout field shows, by its codec name. */
const VALUE_NAMES: Readonly<Record<string, ValueNames>> = {
  opcode: 'OPCODE_NAMES',
  aOpCode: 'AOPCODE_NAMES',
  layer: 'TERM_LAYER_NAMES',
};

function fieldOf(
  context: FieldContext,
  layout: HeaderLayout,
  f: HeaderField,
  abbrev: string,
): PluginField {
  const unitBits = f.unit * 8;
  const where =
    context === 'segment'
      ? layout.name
      : `the ${context === 'term-ddp' ? 'DDP' : 'RDMAP'} header a Terminate copies (RFC 5040 §4.8): ${layout.name}`;
  const common = {
    abbrev,
    label: context === 'segment' ? labelOf(f.name) : `Copied ${lowerFirst(labelOf(f.name))}`,
    description: `${where}: ${f.name} (${f.source})`,
    wireshark: !abbrev.startsWith('rdma_interop.'),
    ...(context === 'segment' ? { codecField: f.name } : {}),
  };
  if (f.flag === true)
    return { ...common, type: 'bool', base: 'NONE', unitBits, mask: 2 ** f.shift };
  if (f.bits === 64) return { ...common, type: 'uint64', base: 'HEX' };
  const names = VALUE_NAMES[f.name];
  const type = unitBits === 8 ? 'uint8' : unitBits === 16 ? 'uint16' : 'uint32';
  return {
    ...common,
    type,
    base: 'DEC',
    ...(f.bits < unitBits ? { mask: (2 ** f.bits - 1) * 2 ** f.shift } : {}),
    ...(names === undefined ? {} : { valueNames: names }),
  };
}

/** The fields the plugin adds beside the layouts' (names, checks, the ICRC). */
export const EXTRA_FIELDS: readonly PluginField[] = [
  {
    abbrev: 'rdma_interop.message',
    label: 'RDMAP message',
    type: 'string',
    base: 'NONE',
    description:
      "the RDMAP message's name, from the opcode table of the profile the preference selects (RFC 5040 §4.3, RFC 7306 §4.1, V2 draft §4.1); `Unknown opcode 0x..` when the profile has none",
    wireshark: false,
  },
  {
    abbrev: 'rdma_interop.atomic.operation',
    label: 'Atomic operation',
    type: 'string',
    base: 'NONE',
    description:
      "the AOpCode's name in the profile (RFC 7306 §5.1, §10.2: FetchAdd, CmpSwap; draft-01 §5.1.2 also Swap); `Reserved AOpCode n` otherwise",
    wireshark: false,
  },
  {
    abbrev: 'rdma_interop.term.error',
    label: 'Terminate error',
    type: 'string',
    base: 'NONE',
    description:
      "the Terminate's Layer, Error Type and Error Code by name (RFC 5040 §4.8, RFC 5044 §8), e.g. `RDMA / Remote Operation Error / Unexpected OpCode`",
    wireshark: false,
  },
  {
    abbrev: 'rdma_interop.term.code_id',
    label: 'Terminate code',
    type: 'string',
    base: 'NONE',
    description:
      "the codec's stable identifier of the Terminate code (src/codec/iwarp/terminate-codes.ts), e.g. `rdmap.operation.unexpected-opcode`",
    wireshark: false,
  },
  {
    abbrev: 'rdma_interop.term.ddp_segment_length',
    label: 'Terminated DDP segment length',
    type: 'uint16',
    base: 'DEC',
    description:
      'the DDP Segment Length a Terminate carries with its D bit (RFC 5040 §4.8), as a number (Wireshark 4.0 shows it as bytes, iwarp_rdma.term_ddp_seg_len)',
    wireshark: false,
  },
  {
    abbrev: 'rdma_interop.term.ddp.message',
    label: 'Copied RDMAP message',
    type: 'string',
    base: 'NONE',
    description: "the copied DDP header's RDMAP message name, as rdma_interop.message",
    wireshark: false,
  },
  {
    abbrev: 'rdma_interop.icrc.status',
    label: 'ICRC check',
    type: 'uint8',
    base: 'DEC',
    valueNames: 'ICRC_STATUS_NAMES',
    description:
      "RoCEv2 ICRC (IBTA Annex A17.3.3) computed over the captured packet against the stored one: 0 invalid, 1 valid, 2 not checked (the frame was cut by the capture's snap length, or is not IP/UDP); Wireshark's own checksum status values",
    wireshark: false,
  },
  {
    abbrev: 'rdma_interop.icrc.computed',
    label: 'Computed ICRC',
    type: 'uint32',
    base: 'HEX',
    description:
      'the ICRC computed over the masked pseudo-header and the packet, in the order Wireshark shows the stored one (infiniband.invariant.crc)',
    wireshark: false,
  },
];

/** Builds the plugin's field model from the tables; throws on two fields of one name and two shapes. */
export function pluginModel(tables: PluginTables): PluginModel {
  const byAbbrev = new Map<string, PluginField>();
  const add = (p: PluginField): void => {
    const seen = byAbbrev.get(p.abbrev);
    if (seen === undefined) {
      byAbbrev.set(p.abbrev, p);
      return;
    }
    if (seen.type !== p.type || seen.mask !== p.mask || seen.unitBits !== p.unitBits)
      throw new Error(`two fields named ${p.abbrev} with different shapes`);
  };
  const aOpCodes = tables.atomicOpcodes.map((a) => a.aOpCode);
  // AOpCode is 4 bits (RFC 7306 §5.2.1): the first value the table leaves undefined.
  const unknownAOpCode = [...Array(16).keys()].find((a) => !aOpCodes.includes(a)) ?? 15;
  const layoutIn = (context: FieldContext, layout: HeaderLayout): PluginLayout => ({
    layout,
    fields: layout.fields.map((f) => {
      const abbrev = abbrevIn(context, layout, f);
      const variants = new Map(aOpCodes.map((a) => [a, abbrevIn(context, layout, f, a)]));
      const distinct = new Set(variants.values()).size > 1;
      const other = abbrevIn(context, layout, f, unknownAOpCode);
      for (const name of distinct ? new Set([...variants.values(), other]) : [abbrev])
        add(fieldOf(context, layout, f, name));
      return {
        field: f,
        abbrev,
        ...(distinct ? { byAOpCode: Object.fromEntries(variants), otherAOpCode: other } : {}),
      };
    }),
  });
  const ddpIn = (context: FieldContext): DdpLayouts => ({
    ddpTagged: layoutIn(context, tables.ddpTagged),
    ddpUntagged: layoutIn(context, tables.ddpUntagged),
    controlV2: layoutIn(context, tables.controlV2),
  });
  const headersIn = (context: FieldContext): HeaderLayouts => {
    const headers = {} as Record<RdmapFamily, PluginLayout | undefined>;
    for (const [kind, layout] of Object.entries(tables.headerLayouts) as [
      RdmapFamily,
      HeaderLayout | undefined,
    ][])
      headers[kind] = layout === undefined ? undefined : layoutIn(context, layout);
    return headers;
  };
  const segment = { ...ddpIn('segment'), headers: headersIn('segment') };
  const termDdp = ddpIn('term-ddp');
  const termRdma = headersIn('term-rdma');
  for (const p of EXTRA_FIELDS) add(p);
  return { fields: [...byAbbrev.values()], segment, termDdp, termRdma };
}
