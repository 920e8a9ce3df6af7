/**
 * The rows of `decode --fields` and `--filter` over lazy items (lazy-decode.ts): each named
 * field (a tshark name from tshark-fields.ts, or one of the project's columns, summary.ts)
 * is read into a list of values per row, the filter is evaluated on those lists, and the
 * row is printed.
 *
 * Two kinds of row: with a tshark name among the `--fields`, one row per frame, every
 * frame, each field's occurrences joined by `,` (what `tshark -T fields` prints, so the two
 * outputs can be diffed); otherwise one row per item (RoCE packet, MPA frame, FPDU,
 * problem), as `--summary` and the project's columns always were.
 */
import { mpaPadLength } from '../iwarp/mpa.js';
import { encodeMpaFrame } from '../iwarp/mpa-frames.js';
import { RDMAP_OPCODES } from '../iwarp/opcodes.js';
import { BTH_OPCODES } from '../roce/opcodes.js';
import {
  DisplayFilterError,
  evaluateFilter,
  type FilterLiteral,
  type FilterNode,
  type FilterValue,
  filterFields,
  parseDisplayFilter,
} from './display-filter.js';
import { type FrameInfo, FrameInfoReader, icrcStatus } from './frame-info.js';
import type { LazyItem } from './lazy-decode.js';
import { checkColumns, columnFilterValue, isoTime, SummaryOptionError } from './summary.js';
import {
  applyMask,
  formatTsharkValue,
  type IwarpCondition,
  isPresenceOnly,
  type RawValue,
  TSHARK_FIELDS,
  type TsharkField,
} from './tshark-fields.js';

/** The project's own names that only the filter and `--fields` know (not in summary.ts). */
const EXTRA_COLUMNS = ['icrc'] as const;

/** Reads one named field. */
interface FieldReader {
  readonly name: string;
  /** Read once per frame (from the frame), not per item. */
  readonly frameLevel: boolean;
  read(item: LazyItem | undefined, frame: FrameState, out: FilterValue[]): void;
  format(v: FilterValue): string;
}

/** What is known of the frame being read. */
interface FrameState {
  index: number;
  seconds: number;
  nanoseconds: number;
  info: FrameInfo | undefined;
  icrc: string;
}

/** A bad `--fields` name (one line, a usage error). */
function unknownField(name: string): SummaryOptionError {
  return new SummaryOptionError(
    'fields',
    `unknown field '${name}' (tshark names such as infiniband.bth.psn, iwarp_ddp.msn, ip.src, tcp.stream; the project's columns frame, time, src, dst, proto, opcode, qp, psn, qn, msn, mo, stag, crc, icrc, length, info; iWARP layout fields such as requestIdentifier; RoCE fields such as AtomicETH.swapOrAddData)`,
  );
}

function isProjectName(name: string): boolean {
  if ((EXTRA_COLUMNS as readonly string[]).includes(name)) return true;
  try {
    checkColumns([name]);
    return true;
  } catch (e) {
    if (e instanceof SummaryOptionError) return false;
    throw e;
  }
}

function readBytes(b: Uint8Array, at: number, width: number): Uint8Array {
  return b.slice(at, at + width);
}

function readNumber(b: Uint8Array, at: number, width: number): number | bigint {
  if (width === 8) {
    let v = 0n;
    for (let i = 0; i < 8; i++) v = (v << 8n) | BigInt(b[at + i]!);
    return v;
  }
  let v = 0;
  for (let i = 0; i < width; i++) v = v * 256 + b[at + i]!;
  return v;
}

/** Reads bytes `[at, at + width)` of a window as the row's type says (bytes, or a number masked). */
function windowValue(f: TsharkField, b: Uint8Array, at: number, width: number): RawValue {
  if (f.type === 'FT_BYTES') return readBytes(b, at, width);
  const v = readNumber(b, at, width);
  return typeof v === 'number' ? applyMask(f.mask, v) : v;
}

function holds(item: LazyItem, when: IwarpCondition | undefined): boolean {
  if (when === undefined) return true;
  const v = item.rdmap;
  if (when.tagged !== undefined && v.tagged !== when.tagged) return false;
  if (when.opcodes !== undefined && !when.opcodes.includes(v.opcode)) return false;
  if (when.crcInUse !== undefined && (item.crcState !== 'not-in-use') !== when.crcInUse)
    return false;
  if (when.fetchAdd !== undefined && (v.field('aOpCode') === 0) !== when.fetchAdd) return false;
  if (
    when.termLayer !== undefined ||
    when.termErrorType !== undefined ||
    when.termHeaders !== undefined
  ) {
    const at = v.offset + 18;
    if (v.length < 18 + 4) return false;
    const b = v.bytes;
    if (when.termLayer !== undefined && b[at]! >> 4 !== when.termLayer) return false;
    if (when.termErrorType !== undefined && (b[at]! & 0xf) !== when.termErrorType) return false;
    if (when.termHeaders !== undefined && (b[at + 2]! & when.termHeaders) !== when.termHeaders)
      return false;
  }
  return true;
}

/** A Terminate (RFC 5040 §4.8): untagged, opcode 0x7. */
const TERMINATE: IwarpCondition = { tagged: false, opcodes: [7] };

/** The values of tshark field `f` in one item. */
function readTshark(f: TsharkField, item: LazyItem, out: FilterValue[]): void {
  const s = f.source;
  switch (s.from) {
    case 'frame':
      return;
    case 'present': {
      const present =
        s.what === 'roce'
          ? item.kind === 'roce'
          : s.what === 'mpa'
            ? item.kind === 'fpdu' || item.kind === 'mpa-frame'
            : s.what === 'mpa-request' || s.what === 'mpa-reply'
              ? item.kind === 'mpa-frame' && item.mpaFrame?.kind === s.what
              : s.what === 'fpdu'
                ? item.kind === 'fpdu'
                : item.kind === 'fpdu' && item.rdmap.headerPresent;
      if (present) out.push(true);
      return;
    }
    case 'roce': {
      if (item.kind !== 'roce' || !item.roce.bthPresent) return;
      const r = item.roce;
      const start =
        r.headerOffset(s.header) ?? (s.orIn === undefined ? undefined : r.headerOffset(s.orIn));
      if (start === undefined || start + s.at + s.width > r.length) return;
      const value = windowValue(f, r.bytes, r.offset + start + s.at, s.width);
      for (let i = 0; i < (f.occurrences ?? 1); i++) out.push(value);
      return;
    }
    case 'icrc': {
      if (item.kind !== 'roce' || item.roce.length < 16) return;
      const r = item.roce;
      out.push(readNumber(r.bytes, r.offset + r.length - 4, 4));
      return;
    }
    case 'iwarp': {
      if (item.kind !== 'fpdu' || !item.rdmap.headerPresent || !holds(item, s.when)) return;
      const v = item.rdmap.field(s.field);
      if (v !== undefined) out.push(v);
      return;
    }
    case 'ulpdu':
    case 'rdmap-header': {
      if (item.kind !== 'fpdu' || !item.rdmap.headerPresent || !holds(item, s.when)) return;
      const v = item.rdmap;
      const at = (s.from === 'ulpdu' ? 0 : 18) + s.at;
      if (at + s.width > v.length) return;
      out.push(windowValue(f, v.bytes, v.offset + at, s.width));
      return;
    }
    case 'terminated': {
      if (item.kind !== 'fpdu' || !item.rdmap.headerPresent || !holds(item, TERMINATE)) return;
      const v = item.rdmap;
      const at = v.offset + 18;
      if (v.length < 18 + 4) return;
      const hdrct = v.bytes[at + 2]!;
      const ddpLength = (v.bytes[at]! & 0xf) === 1 ? 14 : 18;
      const [start, width] =
        s.part === 'ddp'
          ? hdrct & 0x40
            ? [6, ddpLength]
            : [-1, 0]
          : hdrct & 0x20
            ? [hdrct & 0x40 ? 6 + ddpLength : 4, 28]
            : [-1, 0];
      if (start < 0 || 18 + start + width > v.length) return;
      out.push(readBytes(v.bytes, at + start, width));
      return;
    }
    case 'fpdu': {
      if (item.kind !== 'fpdu' || !holds(item, s.when)) return;
      const v = item.rdmap;
      if (s.key === 'ulpduLength') {
        out.push(v.length);
        return;
      }
      // The pad and the CRC field follow the ULPDU in the FPDU's bytes; a ULPDU the
      // decoder copied (markers removed) has them not (documented in docs/codec-iwarp.md).
      const pad = mpaPadLength(v.length);
      const end = v.offset + v.length;
      if (end + pad + 4 > v.bytes.length) return;
      if (s.key === 'pad') {
        if (pad > 0) out.push(readBytes(v.bytes, end, pad));
        return;
      }
      out.push(readNumber(v.bytes, end + pad, 4));
      return;
    }
    case 'mpa-frame': {
      const m = item.mpaFrame;
      if (item.kind !== 'mpa-frame' || m === undefined) return;
      if (s.kind !== undefined && m.kind !== s.kind) return;
      const wire = encodeMpaFrame(m);
      if (s.width < 0) {
        if (wire.length > s.at) out.push(wire.slice(s.at));
        return;
      }
      out.push(windowValue(f, wire, s.at, s.width));
      return;
    }
  }
}

function projectValue(item: LazyItem, name: string, frame: FrameState): FilterValue | undefined {
  if (name === 'icrc') return item.kind === 'roce' && frame.icrc !== '' ? frame.icrc : undefined;
  return columnFilterValue(item, name);
}

/** A project column's value as it prints (the opcode by name; text as column() gives it). */
function formatProject(v: FilterValue): string {
  if (typeof v === 'object' && !(v instanceof Uint8Array)) return v.name;
  return String(v);
}

/** The reader of a name, or undefined when no table knows it. */
function fieldReader(name: string, frameRows: boolean): FieldReader | undefined {
  const t = TSHARK_FIELDS.get(name);
  if (t !== undefined) {
    if (t.source.from === 'frame') {
      const key = t.source.key;
      return {
        name,
        frameLevel: true,
        read: (_item, frame, out) => {
          const v = frame.info?.values[key];
          if (v !== undefined) out.push(v);
        },
        format: (v) => formatTsharkValue(t, v as RawValue),
      };
    }
    return {
      name,
      frameLevel: false,
      read: (item, _frame, out) => {
        if (item !== undefined) readTshark(t, item, out);
      },
      format: (v) => formatTsharkValue(t, v as RawValue),
    };
  }
  if (!isProjectName(name)) return undefined;
  if (frameRows && (name === 'frame' || name === 'time'))
    return {
      name,
      frameLevel: true,
      read: (_item, frame, out) => {
        out.push(name === 'frame' ? frame.index + 1 : isoTime(frame.seconds, frame.nanoseconds));
      },
      format: (v) => String(v),
    };
  return {
    name,
    frameLevel: false,
    read: (item, frame, out) => {
      if (item === undefined) return;
      const v = projectValue(item, name, frame);
      if (v !== undefined) out.push(v);
    },
    format: formatProject,
  };
}

/** A `--fields` list and `--filter` checked: what FieldRows needs. */
export interface RowsSpec {
  /** One row per frame (a tshark name is among the fields). */
  readonly frameRows: boolean;
  readonly columns: readonly string[] | undefined;
  readonly filter: FilterNode | undefined;
}

/** Splits and checks a `--fields` list; throws SummaryOptionError naming an unknown field. */
export function parseFieldList(text: string): string[] {
  const names = text.split(',').map((c) => c.trim());
  for (const name of names) {
    const t = TSHARK_FIELDS.get(name);
    if (t !== undefined && isPresenceOnly(t))
      throw new SummaryOptionError(
        'fields',
        `'${name}' is a protocol: tshark prints its summary text, not a value; use it in --filter (presence) or name its fields`,
      );
    if (t === undefined && !isProjectName(name)) throw unknownField(name);
  }
  return names;
}

/** The project's columns whose values are numbers. */
const NUMERIC_COLUMNS = new Set(['frame', 'qp', 'psn', 'qn', 'msn', 'mo', 'stag', 'length']);

/** The values the project's text columns take. */
const COLUMN_VALUES: Readonly<Record<string, readonly string[]>> = {
  crc: ['valid', 'invalid', 'not-in-use'],
  icrc: ['valid', 'invalid'],
  proto: ['RoCEv2', 'iWARP', 'MPA', 'problem'],
};

/** Opcode names a filter may compare `opcode` with (any case). */
const OPCODE_NAMES = new Set<string>([
  ...RDMAP_OPCODES.map((r) => r.kind),
  ...[...BTH_OPCODES.values()].map((r) => r.name.toLowerCase()),
  'mpa-request',
  'mpa-reply',
]);

/** Why literal `v` cannot be a value of `field` (undefined: it can). */
function badLiteral(field: string, v: FilterLiteral): string | undefined {
  const t = TSHARK_FIELDS.get(field);
  const numeric =
    t === undefined
      ? NUMERIC_COLUMNS.has(field)
      : /^FT_UINT/.test(t.type) || (t.type === 'FT_BOOLEAN' && !/^(true|false)$/i.test(v.text));
  if (numeric && v.number === undefined)
    return `'${v.text}' is not a number (decimal or 0x hex), as ${field} needs`;
  if (field === 'opcode' && v.number === undefined && !OPCODE_NAMES.has(v.text.toLowerCase()))
    return `'${v.text}' is no opcode (iWARP kinds such as atomic-request, BTH names such as RC_FETCH_ADD, or a number)`;
  const known = COLUMN_VALUES[field];
  if (t === undefined && known !== undefined && !known.includes(v.text))
    return `${field} is one of ${known.join(', ')}, not '${v.text}'`;
  return undefined;
}

/** Parses a `--filter` and checks its names and values; throws DisplayFilterError with the position. */
export function parseFilterOption(text: string): FilterNode {
  const node = parseDisplayFilter(text);
  for (const use of filterFields(node)) {
    if (!TSHARK_FIELDS.has(use.field) && !isProjectName(use.field))
      throw new DisplayFilterError(use.at, `unknown field '${use.field}'`);
    const bad = use.value === undefined ? undefined : badLiteral(use.field, use.value);
    if (bad !== undefined) throw new DisplayFilterError(use.valueAt ?? use.at, bad);
  }
  return node;
}

/** Checks `--fields` and `--filter` together. */
export function rowsSpec(fields: string | undefined, filter: string | undefined): RowsSpec {
  const columns = fields === undefined ? undefined : parseFieldList(fields);
  return {
    frameRows: columns?.some((c) => TSHARK_FIELDS.has(c)) ?? false,
    columns,
    filter: filter === undefined ? undefined : parseFilterOption(filter),
  };
}

/**
 * Collects rows from the lazy decoder's frames and items and renders those the filter
 * passes. Feed it `frame()` for every record (LazyDecodeOptions.onFrame) and `item()` for
 * every item; `finish()` ends the last frame.
 */
export class FieldRows {
  private readonly readers: FieldReader[] = [];
  private readonly columnReaders: FieldReader[] = [];
  private readonly filterReaders = new Map<string, FieldReader>();
  private readonly frameInfo = new FrameInfoReader();
  private readonly needInfo: boolean;
  private readonly needIcrc: boolean;
  private readonly frame: FrameState = {
    index: -1,
    seconds: 0,
    nanoseconds: 0,
    info: undefined,
    icrc: '',
  };
  /** Values per reader of the open row (frame rows), or of the frame's frame-level readers. */
  private frameValues: FilterValue[][] = [];
  private rowValues: FilterValue[][] = [];
  private text = '';

  constructor(
    private readonly spec: RowsSpec,
    /** Item rows: the line of an item that passed (the summary line or the columns). */
    private readonly itemLine?: (item: LazyItem) => string,
  ) {
    const byName = new Map<string, FieldReader>();
    const reader = (name: string): FieldReader => {
      let r = byName.get(name);
      if (r === undefined) {
        r = fieldReader(name, spec.frameRows);
        if (r === undefined) throw unknownField(name);
        byName.set(name, r);
        this.readers.push(r);
      }
      return r;
    };
    for (const c of spec.columns ?? []) this.columnReaders.push(reader(c));
    if (spec.filter !== undefined)
      for (const { field } of filterFields(spec.filter))
        this.filterReaders.set(field, reader(field));
    this.needInfo = this.readers.some(
      (r) => r.frameLevel && r.name !== 'frame' && r.name !== 'time',
    );
    this.needIcrc = this.readers.some((r) => r.name === 'icrc');
  }

  private index(r: FieldReader): number {
    return this.readers.indexOf(r);
  }

  /** A record begins (before its items). */
  beginFrame(
    frameIndex: number,
    linkType: number,
    bytes: Uint8Array,
    seconds: number,
    nanoseconds: number,
  ): void {
    if (this.spec.frameRows && this.frame.index >= 0) this.endRow();
    const f = this.frame;
    f.index = frameIndex;
    f.seconds = seconds;
    f.nanoseconds = nanoseconds;
    f.info =
      this.needInfo || this.needIcrc ? this.frameInfo.read(frameIndex, linkType, bytes) : undefined;
    f.icrc = this.needIcrc ? icrcStatus(f.info) : '';
    this.frameValues = this.readers.map((r) => {
      const out: FilterValue[] = [];
      if (r.frameLevel) r.read(undefined, f, out);
      return out;
    });
    if (this.spec.frameRows) this.rowValues = this.frameValues.map((v) => [...v]);
  }

  /** An item of the current frame. */
  item(item: LazyItem): void {
    if (this.frame.index < 0 || item.frameIndex > this.frame.index) {
      // No frame callback (a caller without onFrame): the item's own frame.
      this.frame.index = item.frameIndex;
      this.frame.seconds = item.seconds;
      this.frame.nanoseconds = item.nanoseconds;
    }
    if (this.spec.frameRows) {
      this.readers.forEach((r, i) => {
        if (!r.frameLevel) r.read(item, this.frame, this.rowValues[i]!);
      });
      return;
    }
    const values = this.readers.map((r, i) => {
      if (r.frameLevel) return this.frameValues[i] ?? [];
      const out: FilterValue[] = [];
      r.read(item, this.frame, out);
      return out;
    });
    if (!this.passes(values)) return;
    if (this.spec.columns === undefined) {
      this.text += this.itemLine?.(item) ?? '';
      return;
    }
    this.text += `${this.columnReaders
      .map((r) => {
        const v = values[this.index(r)]!;
        return v.length === 0 ? '' : r.format(v[0]!);
      })
      .join('\t')}\n`;
  }

  private passes(values: FilterValue[][]): boolean {
    const filter = this.spec.filter;
    if (filter === undefined) return true;
    return evaluateFilter(filter, (field) => {
      const r = this.filterReaders.get(field);
      return r === undefined ? [] : (values[this.index(r)] ?? []);
    });
  }

  private endRow(): void {
    const values = this.rowValues;
    if (!this.passes(values)) return;
    this.text += `${this.columnReaders
      .map((r) => values[this.index(r)]!.map((v) => r.format(v)).join(','))
      .join('\t')}\n`;
  }

  /** The text rendered since the last call. */
  take(): string {
    const t = this.text;
    this.text = '';
    return t;
  }

  /** The end of the input: the last frame's row. */
  finish(): void {
    if (this.spec.frameRows && this.frame.index >= 0) this.endRow();
    this.frame.index = -1;
  }
}
