/**
 * What `decode --summary` and `--fields` print from lazy items (lazy-decode.ts): one line
 * per packet in the manner of tshark's default output, and the project's own columns (the
 * tshark names and the filter are field-rows.ts's, tshark-fields.ts's). Column
 * names are the generic ones below, any field name of the iWARP layout tables (layouts.ts:
 * `requestIdentifier`, `sinkTaggedOffset`, ...), any RoCE extension header field as
 * `HEADER.field` (headers.ts: `AtomicETH.swapOrAddData`), and the tshark 4.0 name of any
 * iWARP layout field (`iwarp_ddp.msn`).
 */
import { RdmaInteropError } from '../../errors.js';
import { type HeaderField, IWARP_LAYOUTS, tsharkFieldName } from '../iwarp/layouts.js';
import { EXTENSION_HEADER_LAYOUT } from '../roce/headers.js';
import type { ExtensionHeader } from '../roce/opcodes.js';
import {
  evaluateFilter,
  type FilterNode,
  type FilterValue,
  filterFields,
  parseDisplayFilter,
} from './display-filter.js';
import type { LazyItem } from './lazy-decode.js';

/** A bad `--fields` or `--filter`: the one-line message of a usage error. */
export class SummaryOptionError extends RdmaInteropError {
  override readonly name = 'SummaryOptionError';
  readonly origin = 'codec';
  constructor(
    /** Which option: `fields` or `filter`. */
    readonly option: 'fields' | 'filter',
    message: string,
  ) {
    super(message);
  }
}

/** The generic columns and what they show. */
export const SUMMARY_COLUMNS: Readonly<Record<string, string>> = {
  frame: 'frame number (1-based, as tshark counts)',
  time: 'capture time, ISO 8601 UTC with nanoseconds',
  src: 'sender: IP address (RoCEv2) or address:port (iWARP)',
  dst: 'receiver: IP address (RoCEv2) or address:port (iWARP)',
  proto: 'RoCEv2, iWARP (an FPDU), MPA (a Request/Reply) or problem',
  opcode: 'BTH opcode name (RoCEv2), RDMAP message kind (iWARP), frame kind (MPA)',
  qp: 'RoCEv2 destination QP',
  psn: 'RoCEv2 PSN',
  qn: 'iWARP untagged queue number',
  msn: 'iWARP untagged MSN, or RoCEv2 AETH MSN',
  mo: 'iWARP untagged message offset',
  stag: 'iWARP tagged STag, or RoCEv2 R_Key (RETH, AtomicETH, IETH)',
  crc: 'iWARP MPA CRC: valid, invalid or not-in-use',
  length: 'RDMA bytes: the ULPDU (iWARP) or the UDP payload (RoCEv2)',
  info: 'the summary line after the protocol',
};

/**
 * tshark field name to iWARP layout field. The Atomic Request's first data/mask pair has
 * two tshark names (add_* for FetchAdd, swap_* otherwise: tsharkFieldName), both listed.
 */
const TSHARK_TO_FIELD = new Map<string, HeaderField>();
const IWARP_FIELD_NAMES = new Set<string>();
for (const layout of IWARP_LAYOUTS)
  for (const f of layout.fields) {
    if (layout.layer === 'mpa') continue;
    IWARP_FIELD_NAMES.add(f.name);
    for (const aOpCode of [0, 1]) {
      const name = tsharkFieldName(f, aOpCode);
      if (name !== undefined) TSHARK_TO_FIELD.set(name, f);
    }
  }

function hex(n: number, digits: number): string {
  return `0x${n.toString(16).padStart(digits, '0')}`;
}

function scalar(v: number | bigint | boolean | undefined): string {
  if (v === undefined) return '';
  if (typeof v === 'bigint') return `0x${v.toString(16).padStart(16, '0')}`;
  return String(v);
}

/** ISO 8601 UTC with nanoseconds, e.g. 2026-11-23T06:00:00.000000123Z. */
export function isoTime(seconds: number, nanoseconds: number): string {
  const iso = new Date(seconds * 1000).toISOString();
  return `${iso.slice(0, 19)}.${String(nanoseconds).padStart(9, '0')}Z`;
}

function protocol(item: LazyItem): string {
  switch (item.kind) {
    case 'roce':
      return 'RoCEv2';
    case 'fpdu':
      return 'iWARP';
    case 'mpa-frame':
      return 'MPA';
    default:
      return 'problem';
  }
}

/** The item's opcode: BTH name, RDMAP kind or MPA frame kind ('' when none). */
export function opcodeName(item: LazyItem): string {
  if (item.kind === 'roce') {
    if (!item.roce.bthPresent) return '';
    return item.roce.info?.name ?? hex(item.roce.opcode, 2);
  }
  if (item.kind === 'fpdu') {
    if (!item.rdmap.headerPresent) return '';
    return item.rdmap.info?.kind ?? hex(item.rdmap.opcode, 2);
  }
  if (item.kind === 'mpa-frame') return item.mpaFrame?.kind ?? '';
  return '';
}

/** The value of a column (empty when the item has no such field). */
export function column(item: LazyItem, name: string): string {
  const roce = item.kind === 'roce' && item.roce.bthPresent ? item.roce : undefined;
  const rdmap = item.kind === 'fpdu' && item.rdmap.headerPresent ? item.rdmap : undefined;
  switch (name) {
    case 'frame':
      return String(item.frameIndex + 1);
    case 'time':
      return isoTime(item.seconds, item.nanoseconds);
    case 'src':
      return item.source;
    case 'dst':
      return item.destination;
    case 'proto':
      return protocol(item);
    case 'opcode':
      return opcodeName(item);
    case 'qp':
      return roce === undefined ? '' : String(roce.destinationQp);
    case 'psn':
      return roce === undefined ? '' : String(roce.psn);
    case 'qn':
      return scalar(rdmap?.queueNumber);
    case 'msn':
      return scalar(rdmap?.messageSequenceNumber ?? roce?.msn);
    case 'mo':
      return scalar(rdmap?.messageOffset);
    case 'stag':
      return scalar(rdmap?.stag ?? roce?.rKey);
    case 'crc':
      return item.kind === 'fpdu' ? item.crcState : '';
    case 'length':
      return item.kind === 'fpdu'
        ? String(item.rdmap.length)
        : item.kind === 'roce'
          ? String(item.roce.length)
          : '';
    case 'info':
      return info(item);
  }
  const dot = name.indexOf('.');
  if (dot > 0 && !name.startsWith('iwarp_')) {
    return roce === undefined
      ? ''
      : scalar(roce.field(name.slice(0, dot) as ExtensionHeader, name.slice(dot + 1)));
  }
  if (rdmap === undefined) return '';
  const layoutField = TSHARK_TO_FIELD.get(name);
  if (layoutField === undefined) return scalar(rdmap.field(name));
  // Like tshark: add_data on a FetchAdd, swap_data on the other AOpCodes, never both.
  const aOpCode = rdmap.field('aOpCode');
  if (aOpCode !== undefined && tsharkFieldName(layoutField, Number(aOpCode)) !== name) return '';
  return scalar(rdmap.field(layoutField.name));
}

/** Throws SummaryOptionError for a column name no table knows. */
export function checkColumns(names: readonly string[]): void {
  for (const name of names) {
    if (name in SUMMARY_COLUMNS || IWARP_FIELD_NAMES.has(name) || TSHARK_TO_FIELD.has(name))
      continue;
    const dot = name.indexOf('.');
    const header = name.slice(0, dot) as ExtensionHeader;
    if (
      dot > 0 &&
      header in EXTENSION_HEADER_LAYOUT &&
      EXTENSION_HEADER_LAYOUT[header].some((f) => f.name === name.slice(dot + 1))
    )
      continue;
    throw new SummaryOptionError(
      'fields',
      `unknown field '${name}' (known: ${Object.keys(SUMMARY_COLUMNS).join(', ')}, iWARP layout fields such as requestIdentifier, RoCE fields such as AtomicETH.swapOrAddData, tshark names such as iwarp_ddp.msn)`,
    );
  }
}

/** The `--fields` line of an item: the columns separated by tabs. */
export function fieldsLine(item: LazyItem, names: readonly string[]): string {
  let line = '';
  for (let i = 0; i < names.length; i++) {
    if (i > 0) line += '\t';
    line += column(item, names[i]!);
  }
  return `${line}\n`;
}

function info(item: LazyItem): string {
  if (item.kind === 'problem') return item.error?.message ?? '';
  if (item.kind === 'mpa-frame') {
    const f = item.mpaFrame!;
    return `${f.kind} rev ${f.revision} markers=${f.markers ? 1 : 0} crc=${f.crc ? 1 : 0}${f.reject ? ' reject' : ''}`;
  }
  const name = opcodeName(item);
  if (name === '') return `(${item.kind === 'roce' ? 'no BTH' : 'no DDP header'})`;
  if (item.kind === 'roce') {
    const r = item.roce;
    const stag = r.rKey;
    return `${name} qp=${hex(r.destinationQp, 6)} psn=${r.psn}${stag === undefined ? '' : ` rkey=${hex(stag, 8)}`}`;
  }
  const v = item.rdmap;
  const placement = v.tagged
    ? `stag=${hex(v.stag!, 8)} to=${scalar(v.field('taggedOffset'))}`
    : `qn=${v.queueNumber} msn=${v.messageSequenceNumber} mo=${v.messageOffset}`;
  return `${name} ${placement}${v.last ? ' last' : ''} len=${v.length} crc=${item.crcState}`;
}

/** The `--summary` line of an item. */
export function summaryLine(item: LazyItem): string {
  return `${item.frameIndex + 1} ${isoTime(item.seconds, item.nanoseconds)} ${item.source || '-'} > ${item.destination || '-'} ${protocol(item)} ${info(item)}\n`;
}

/**
 * A column's value as a filter compares it: the opcode as name and number, other columns as
 * the text they print (numbers among them compare as numbers); undefined when empty.
 */
export function columnFilterValue(item: LazyItem, name: string): FilterValue | undefined {
  if (name === 'opcode') {
    const text = opcodeName(item);
    if (text === '') return undefined;
    const value =
      item.kind === 'roce' ? item.roce.opcode : item.kind === 'fpdu' ? item.rdmap.opcode : -1;
    return { name: text, value };
  }
  const text = column(item, name);
  return text === '' ? undefined : text;
}

/** The keys of the older `key=value|value,key=value` filter form (any column now filters). */
export const FILTER_KEYS = ['opcode', 'qp', 'qn', 'stag', 'psn', 'msn'] as const;

/**
 * Parses a filter over the project's columns alone (the library's item filter; `decode
 * --filter` also knows tshark names: field-rows.ts). Throws DisplayFilterError when it does
 * not parse, SummaryOptionError for a name that is no column.
 */
export function parseFilter(text: string): FilterNode {
  const node = parseDisplayFilter(text);
  for (const { field } of filterFields(node))
    if (!(field in SUMMARY_COLUMNS) && !IWARP_FIELD_NAMES.has(field))
      throw new SummaryOptionError('filter', `bad filter '${text}': '${field}' is no column`);
  return node;
}

/** True when an item passes a filter of parseFilter (item by item, as `--summary` filters). */
export function matchesFilter(item: LazyItem, filter: FilterNode): boolean {
  return evaluateFilter(filter, (field) => {
    const v = columnFilterValue(item, field);
    return v === undefined ? [] : [v];
  });
}
