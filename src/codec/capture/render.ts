/**
 * Presentation of a capture decode: a JSON-safe plain value (bigint as a `0x`-prefixed
 * 16-digit hex string, byte arrays as lowercase hex strings, decode errors as objects with
 * layer/field/offset/reason/message) and an indented text tree in the manner of
 * `tshark -V`, with names for opcodes and error codes.
 */

import {
  requireArray,
  requireBigint,
  requireInteger,
  requireName,
  requireObject,
} from '../../arguments.js';
import { DecodeError } from '../errors.js';
import type { RdmapMessage } from '../iwarp/messages.js';
import { atomicOpcodeInfo, rdmapOpcodeOf } from '../iwarp/opcodes.js';
import {
  TERMINATE_LAYER_NAMES,
  terminateCodeInfo,
  terminateErrorTypeName,
} from '../iwarp/terminate-codes.js';
import { describeAethSyndrome } from '../roce/aeth.js';
import type { CaptureDecode, CaptureItem } from './decode-capture.js';

/** A JSON-compatible value. */
export type PlainValue =
  | string
  | number
  | boolean
  | null
  | readonly PlainValue[]
  | { readonly [key: string]: PlainValue };

function hexBytes(b: Uint8Array): string {
  return Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('hex');
}

/** Converts decoder output into JSON-safe data (see the module comment for the rules). */
export function toPlain(value: unknown): PlainValue {
  if (value === null || value === undefined) return null;
  if (typeof value === 'bigint') return `0x${value.toString(16).padStart(16, '0')}`;
  if (typeof value === 'number' || typeof value === 'string' || typeof value === 'boolean')
    return value;
  if (value instanceof Uint8Array) return hexBytes(value);
  if (value instanceof DecodeError)
    return {
      layer: value.layer,
      field: value.field,
      offset: value.offset,
      reason: value.reason,
      message: value.message,
    };
  if (Array.isArray(value)) return value.map(toPlain);
  if (typeof value === 'object') {
    const out: Record<string, PlainValue> = {};
    for (const [k, v] of Object.entries(value as Record<string, unknown>))
      if (v !== undefined) out[k] = toPlain(v);
    return out;
  }
  return String(value);
}

/** `seconds.nanoseconds` text of a capture timestamp. */
export function formatTimestamp(ns: bigint): string {
  return `${ns / 1_000_000_000n}.${(ns % 1_000_000_000n).toString().padStart(9, '0')}`;
}

/** The item kinds a CaptureItem can be (decode-capture.ts), for argument checks. */
const ITEM_KINDS: Readonly<Record<CaptureItem['kind'], true>> = {
  roce: true,
  'mpa-frame': true,
  fpdu: true,
  problem: true,
};

/** An exported renderer's item: what the renderers read first is there (issue 25). */
function checkItem(item: unknown, field: string): CaptureItem {
  const i = requireObject('codec', field, item) as Record<string, unknown>;
  requireName('codec', 'capture item kind', ITEM_KINDS, i.kind, `${field}.kind`);
  requireInteger('codec', `${field}.frameIndex`, i.frameIndex, 0, Number.MAX_SAFE_INTEGER);
  requireBigint('codec', `${field}.timestampNs`, i.timestampNs, 0n, 2n ** 64n - 1n);
  return item as CaptureItem;
}

/** An exported renderer's decoded capture: its header fields and items checked. */
function checkDecode(d: unknown): CaptureDecode {
  const c = requireObject('codec', 'capture', d) as Record<string, unknown>;
  requireName('codec', 'capture format', { pcap: 0, pcapng: 0 }, c.format, 'capture.format');
  requireInteger('codec', 'capture.frameCount', c.frameCount, 0, Number.MAX_SAFE_INTEGER);
  requireInteger('codec', 'capture.otherFrames', c.otherFrames, 0, Number.MAX_SAFE_INTEGER);
  requireArray('codec', 'capture.connections', c.connections);
  requireArray('codec', 'capture.items', c.items).forEach((item, n) => {
    checkItem(item, `capture.items[${n}]`);
  });
  return d as CaptureDecode;
}

/**
 * The JSON document `rdma-interop decode --json` prints. Capture timestamps appear as
 * `time` (`"seconds.nanoseconds"` text), not as a hex bigint.
 */
export function captureToJson(d: CaptureDecode): PlainValue {
  checkDecode(d);
  return toPlain({
    format: d.format,
    frameCount: d.frameCount,
    otherFrames: d.otherFrames,
    connections: d.connections.map((c) => ({
      client: c.client,
      server: c.server,
      firstFrame: c.firstFrame,
    })),
    items: d.items.map(itemShape),
  });
}

/**
 * One item as `--json` and `--jsonl` show it (before the JSON-safe conversion): `frame` is
 * the frame number counted from 1 (tshark's frame.number, as every decode output shows it),
 * `frameIndex` the 0-based record index.
 */
function itemShape(item: CaptureItem): unknown {
  const body = itemBody(item) as Record<string, unknown>;
  return { kind: body.kind, frame: item.frameIndex + 1, ...body };
}

function itemBody({ timestampNs, ...item }: CaptureItem): unknown {
  const time = formatTimestamp(timestampNs);
  if (item.kind === 'roce') {
    const { frame, ...rest } = item;
    return {
      ...rest,
      time,
      network: frame.network,
      transport: frame.transport,
      packet: item.packet.ok ? item.packet.value : { error: item.packet.error },
    };
  }
  if (item.kind === 'fpdu')
    return {
      ...item,
      time,
      fpdu: {
        ...item.fpdu,
        message: item.fpdu.message.ok
          ? item.fpdu.message.value
          : { error: item.fpdu.message.error },
      },
    };
  return { ...item, time };
}

/** One item as a JSON-safe value: an element of `captureToJson(d).items`, a `--jsonl` line. */
export function captureItemToJson(item: CaptureItem): PlainValue {
  return toPlain(itemShape(checkItem(item, 'item')));
}

const MAX_TEXT_BYTES = 32;

function scalar(value: unknown): string {
  if (typeof value === 'bigint') return `0x${value.toString(16).padStart(16, '0')}`;
  if (typeof value === 'number')
    return Number.isInteger(value) && value > 9
      ? `${value} (0x${value.toString(16)})`
      : String(value);
  if (value instanceof Uint8Array) {
    if (value.length === 0) return '(empty)';
    const shown = hexBytes(value.subarray(0, MAX_TEXT_BYTES));
    return value.length > MAX_TEXT_BYTES
      ? `${shown}... (${value.length} bytes)`
      : `${shown} (${value.length} bytes)`;
  }
  return String(value);
}

/** Appends `value` as an indented tree. */
function tree(lines: string[], indent: string, name: string, value: unknown): void {
  if (value === undefined) return;
  if (value instanceof DecodeError) {
    lines.push(`${indent}${name}: DecodeError ${value.message}`);
    return;
  }
  if (value !== null && typeof value === 'object' && !(value instanceof Uint8Array)) {
    lines.push(`${indent}${name}`);
    const entries = Array.isArray(value)
      ? value.map((v, i) => [`[${i}]`, v] as const)
      : Object.entries(value);
    for (const [k, v] of entries) tree(lines, `${indent}  `, k, v);
    return;
  }
  lines.push(`${indent}${name}: ${scalar(value)}`);
}

/** Names for the coded fields of an RDMAP message, from the iWARP codec's tables. */
function rdmapMeanings(m: RdmapMessage): string[] {
  const out = [`opcode: ${rdmapOpcodeOf(m.kind).name}`];
  if (m.kind === 'atomic-request') {
    const a = atomicOpcodeInfo(m.aOpCode);
    out.push(`aOpCode: ${a ? a.name : 'reserved'}`);
  }
  if (m.kind === 'terminate') {
    out.push(`layer: ${TERMINATE_LAYER_NAMES[m.layer] ?? 'reserved'}`);
    out.push(`errorType: ${terminateErrorTypeName(m.layer, m.errorType) ?? 'reserved'}`);
    const code = terminateCodeInfo(m.layer, m.errorType, m.errorCode);
    out.push(`errorCode: ${code ? `${code.name} (${code.id})` : 'not defined'}`);
  }
  return out;
}

function frameLine(item: CaptureItem): string {
  return `Frame ${item.frameIndex + 1} (${formatTimestamp(item.timestampNs)})`;
}

function renderItem(lines: string[], item: CaptureItem): void {
  const head = frameLine(item);
  switch (item.kind) {
    case 'roce': {
      const n = item.frame.network?.header;
      const t = item.frame.transport?.header;
      lines.push(
        `${head} RoCEv2 ${n?.source}:${t?.sourcePort} -> ${n?.destination}:${t?.destinationPort}`,
      );
      const network = item.frame.network;
      const checksumVerdict = (valid: boolean | undefined) =>
        valid === undefined ? 'not checked' : valid ? 'valid' : 'INVALID (offloaded?)';
      if (network?.kind === 'ipv4') {
        const h = network.header;
        lines.push(
          `  IPv4 ttl ${h.ttl}, dscp ${h.dscp}, ecn ${h.ecn}, id ${h.identification}, checksum 0x${h.checksum.toString(16).padStart(4, '0')} [${checksumVerdict(h.checksumValid)}]`,
        );
      } else if (network?.kind === 'ipv6') {
        const h = network.header;
        lines.push(
          `  IPv6 hop limit ${h.hopLimit}, traffic class ${h.trafficClass} (ecn ${h.trafficClass & 3}), flow label ${h.flowLabel}`,
        );
      }
      if (t !== undefined && 'length' in t)
        lines.push(
          `  UDP length ${t.length}, checksum 0x${t.checksum.toString(16).padStart(4, '0')} [${t.checksum === 0 ? 'none' : checksumVerdict(t.checksumValid)}]`,
        );
      if (!item.packet.ok) {
        lines.push(`  DecodeError ${item.packet.error.message}`);
        return;
      }
      const p = item.packet.value;
      const hex = p.bth.opcode.toString(16).padStart(2, '0');
      lines.push(`  BTH ${p.opcode.name} (0x${hex})`);
      if (item.message)
        lines.push(
          `    message: ${item.message.index}, packet ${item.message.packet} (${p.opcode.position})${item.message.complete ? '' : ', started before the capture'}`,
        );
      for (const [k, v] of Object.entries(p.bth)) if (k !== 'opcode') tree(lines, '    ', k, v);
      for (const h of p.opcode.headers) {
        lines.push(`  ${h}`);
        for (const [k, v] of Object.entries(p.headers[h] ?? {})) tree(lines, '    ', k, v);
        if (h === 'AETH' && p.aethSyndrome)
          lines.push(`    meaning: ${describeAethSyndrome(p.aethSyndrome)}`);
      }
      if (p.payload.length > 0) lines.push(`  payload: ${scalar(p.payload)}`);
      if (p.pad.length > 0) lines.push(`  pad: ${scalar(p.pad)}`);
      const icrc = `0x${p.icrc.toString(16).padStart(8, '0')}`;
      const verdict = item.icrc
        ? item.icrc.valid
          ? 'valid'
          : `INVALID, computed 0x${item.icrc.computed.toString(16).padStart(8, '0')}`
        : 'not checked';
      lines.push(`  ICRC: ${icrc} [${verdict}]`);
      return;
    }
    case 'mpa-frame':
      lines.push(
        `${head} iWARP connection ${item.connection} ${item.direction} MPA ${item.frame.kind === 'mpa-request' ? 'Request' : 'Reply'}`,
      );
      for (const [k, v] of Object.entries(item.frame)) tree(lines, '  ', k, v);
      return;
    case 'fpdu': {
      const m = item.fpdu.message;
      const label = m.ok ? m.value.kind : 'undecodable ULPDU';
      lines.push(`${head} iWARP connection ${item.connection} ${item.direction} FPDU ${label}`);
      lines.push(`  tcpSequence: ${item.fpdu.sequence}`);
      lines.push(`  ulpduLength: ${item.fpdu.fpdu.ulpduLength}`);
      lines.push(
        `  crc: 0x${item.fpdu.fpdu.crc.toString(16).padStart(8, '0')} [${item.fpdu.crcState}]`,
      );
      if (item.fpdu.markers.length > 0) lines.push(`  markers: ${item.fpdu.markers.length}`);
      if (m.ok) {
        for (const [k, v] of Object.entries(m.value)) tree(lines, '  ', k, v);
        lines.push('  meaning');
        for (const line of rdmapMeanings(m.value)) lines.push(`    ${line}`);
      } else lines.push(`  DecodeError ${m.error.message}`);
      return;
    }
    case 'problem': {
      const where =
        item.connection === undefined
          ? ''
          : ` iWARP connection ${item.connection} ${item.direction}`;
      lines.push(`${head}${where} DecodeError ${item.error.message}`);
      return;
    }
  }
}

/** One item's text tree (lines ending in a newline). */
export function captureItemToText(item: CaptureItem): string {
  const lines: string[] = [];
  renderItem(lines, checkItem(item, 'item'));
  return `${lines.join('\n')}\n`;
}

/** What the summary line counts. */
export interface CaptureSummary {
  readonly format: 'pcap' | 'pcapng';
  readonly frames: number;
  readonly roce: number;
  readonly connections: number;
  readonly fpdus: number;
  readonly problems: number;
  readonly otherFrames: number;
}

/** The summary line that ends the text output. */
export function captureSummaryLine(s: CaptureSummary): string {
  return `${s.format}: ${s.frames} frames, ${s.roce} RoCEv2 packets, ${s.connections} iWARP connections, ${s.fpdus} FPDUs, ${s.problems} problems, ${s.otherFrames} other frames\n`;
}

/** The text `rdma-interop decode` prints: one tree per message, then a summary line. */
export function captureToText(d: CaptureDecode): string {
  checkDecode(d);
  return (
    d.items.map(captureItemToText).join('') +
    captureSummaryLine({
      format: d.format,
      frames: d.frameCount,
      roce: d.items.filter((i) => i.kind === 'roce').length,
      connections: d.connections.length,
      fpdus: d.items.filter((i) => i.kind === 'fpdu').length,
      problems: d.items.filter((i) => i.kind === 'problem').length,
      otherFrames: d.otherFrames,
    })
  );
}
