/**
 * Work completions: the addon's raw `struct ibv_wc` named with the engine's tables
 * (`WC_STATUS`, `WC_OPCODE`, `WC_FLAGS`), so kernel results and the engine's
 * projection speak the same names.
 */

import { endianness } from 'node:os';
import { describeValue } from '../arguments.js';
import { flagNames, nameOf } from '../ibverbs/constants.js';
import {
  WC_FLAGS,
  WC_OPCODE,
  WC_STATUS,
  type WcFlag,
  type WcOpcode,
  type WcStatus,
} from '../ibverbs/index.js';
import { WC_LAYOUT, WC_WORDS } from '../native/bindings.js';
import { VerbsArgumentError } from './errors.js';

/** `struct ibv_wc` with raw numbers, as decoded from the addon's poll output. */
export interface RawWorkCompletion {
  readonly wrId: bigint;
  readonly status: number;
  readonly opcode: number;
  readonly vendorErr: number;
  readonly byteLen: number;
  /** The union's 32 bits as this host reads them from memory. */
  readonly immDataRaw: number;
  /** `ntohl(imm_data)`: the value the wire carried. */
  readonly immData: number;
  readonly qpNum: number;
  readonly srcQp: number;
  readonly wcFlags: number;
  readonly pkeyIndex: number;
  readonly slid: number;
  readonly sl: number;
  readonly dlidPathBits: number;
}

const LITTLE_ENDIAN_HOST = endianness() === 'LE';

/** ntohl on this host. */
export function ntohl(raw: number): number {
  if (!LITTLE_ENDIAN_HOST) return raw >>> 0;
  return (
    (((raw & 0xff) << 24) | ((raw & 0xff00) << 8) | ((raw >>> 8) & 0xff00) | (raw >>> 24)) >>> 0
  );
}

const W = WC_LAYOUT;

/** Decodes completion `index` of the addon's poll output (see `WC_LAYOUT`), raw. */
export function decodeWorkCompletion(words: Uint32Array, index: number): RawWorkCompletion {
  const wc = completionAt(words, index);
  return {
    wrId: wc.wrId,
    status: wc.statusCode,
    opcode: wc.opcodeCode,
    vendorErr: wc.vendorErr,
    byteLen: wc.byteLen,
    immDataRaw: wc.immDataRaw,
    immData: ntohl(wc.immDataRaw),
    qpNum: wc.qpNum,
    srcQp: wc.srcQp,
    wcFlags: wc.wcFlags,
    pkeyIndex: wc.pkeyIndex,
    slid: wc.slid,
    sl: wc.sl,
    dlidPathBits: wc.dlidPathBits,
  };
}

/** A typed work completion. */
export interface WorkCompletion {
  readonly wrId: bigint;
  /** `SUCCESS`, `REM_ACCESS_ERR`, ... */
  readonly status: WcStatus;
  readonly statusCode: number;
  /** True when the status is `SUCCESS`. */
  readonly ok: boolean;
  /** Valid only for successful completions (libibverbs leaves it undefined otherwise). */
  readonly opcode: WcOpcode | undefined;
  readonly opcodeCode: number;
  readonly byteLen: number;
  /** With `WITH_IMM`: the immediate value as sent (host order, i.e. ntohl). */
  readonly immData: number | undefined;
  /** The raw 32-bit field as this host reads it (network order bytes). */
  readonly immDataRaw: number;
  readonly flags: WcFlag[];
  readonly wcFlags: number;
  readonly qpNum: number;
  readonly srcQp: number;
  readonly vendorErr: number;
  readonly pkeyIndex: number;
  readonly slid: number;
  readonly sl: number;
  readonly dlidPathBits: number;
}

// wc_flags values repeat (0, GRH, GRH|WITH_IMM): name each mask once.
const flagNameCache = new Map<number, WcFlag[]>();
function wcFlagNames(mask: number): WcFlag[] {
  let names = flagNameCache.get(mask);
  if (names === undefined) {
    names = flagNames(WC_FLAGS, mask);
    if (flagNameCache.size < 64) flagNameCache.set(mask, names);
  }
  return names.length === 0 ? [] : [...names];
}

/** Names a raw completion. */
export function toWorkCompletion(wc: RawWorkCompletion): WorkCompletion {
  const withImm = (wc.wcFlags & WC_FLAGS.WITH_IMM) !== 0;
  const status = nameOf(WC_STATUS, wc.status) ?? 'GENERAL_ERR';
  return {
    wrId: wc.wrId,
    status,
    statusCode: wc.status,
    ok: wc.status === WC_STATUS.SUCCESS,
    opcode: nameOf(WC_OPCODE, wc.opcode),
    opcodeCode: wc.opcode,
    byteLen: wc.byteLen,
    immData: withImm ? wc.immData : undefined,
    immDataRaw: wc.immDataRaw,
    flags: wcFlagNames(wc.wcFlags),
    wcFlags: wc.wcFlags,
    qpNum: wc.qpNum,
    srcQp: wc.srcQp,
    vendorErr: wc.vendorErr,
    pkeyIndex: wc.pkeyIndex,
    slid: wc.slid,
    sl: wc.sl,
    dlidPathBits: wc.dlidPathBits,
  };
}

// The names by value, built once, as arrays indexed by the value (nameOf looks its
// reverse map up per call; an array index is the cheapest lookup there is). The values
// are small: statuses up to 21, opcodes up to 0x80 + a few.
function namesByValue<N extends string>(table: Readonly<Record<N, number>>): (N | undefined)[] {
  const out: (N | undefined)[] = [];
  for (const [name, v] of Object.entries(table) as [N, number][])
    if (out[v] === undefined) out[v] = name;
  // Filled up to its length, so that a lookup never reads a hole.
  for (let i = 0; i < out.length; i++) out[i] ??= undefined;
  return out;
}
const STATUS_NAMES = namesByValue<WcStatus>(WC_STATUS);
const OPCODE_NAMES = namesByValue<WcOpcode>(WC_OPCODE);

/** The wrId of completion `index` of the addon's poll output. */
export function wrIdAt(words: Uint32Array, index: number): bigint {
  const base = index * WC_WORDS;
  return wrIdOf(words[base + W.wrIdLow] ?? 0, words[base + W.wrIdHigh] ?? 0);
}

/** A wrId from its two u32 halves as the poll output holds them. */
export function wrIdOf(low: number, high: number): bigint {
  return high === 0 ? BigInt(low) : (BigInt(high) << 32n) | BigInt(low);
}

/**
 * Completion `index` of the addon's poll output (see `WC_LAYOUT`), named: what
 * `toWorkCompletion(decodeWorkCompletion(words, index))` gives, built as one object (the
 * hot path of every poll: no intermediate raw completion, no reverse-map lookup).
 */
export function completionAt(words: Uint32Array, index: number): WorkCompletion {
  const base = index * WC_WORDS;
  const status = words[base + W.status] ?? 0;
  const opcode = words[base + W.opcode] ?? 0;
  const immDataRaw = words[base + W.immDataRaw] ?? 0;
  const wcFlags = words[base + W.wcFlags] ?? 0;
  return {
    wrId: wrIdAt(words, index),
    status: (status < STATUS_NAMES.length ? STATUS_NAMES[status] : undefined) ?? 'GENERAL_ERR',
    statusCode: status,
    ok: status === WC_STATUS.SUCCESS,
    opcode: opcode < OPCODE_NAMES.length ? OPCODE_NAMES[opcode] : undefined,
    opcodeCode: opcode,
    byteLen: words[base + W.byteLen] ?? 0,
    immData: (wcFlags & WC_FLAGS.WITH_IMM) !== 0 ? ntohl(immDataRaw) : undefined,
    immDataRaw,
    flags: wcFlagNames(wcFlags),
    wcFlags,
    qpNum: words[base + W.qpNum] ?? 0,
    srcQp: words[base + W.srcQp] ?? 0,
    vendorErr: words[base + W.vendorErr] ?? 0,
    pkeyIndex: words[base + W.pkeyIndex] ?? 0,
    slid: words[base + W.slid] ?? 0,
    sl: words[base + W.sl] ?? 0,
    dlidPathBits: words[base + W.dlidPathBits] ?? 0,
  };
}

/** True for receive-side completions (`RECV` bit 0x80 set). */
export function isReceiveCompletion(opcodeCode: number): boolean {
  if (!Number.isInteger(opcodeCode) || opcodeCode < 0 || opcodeCode > 0xffff_ffff)
    throw new VerbsArgumentError(
      'opcodeCode',
      `${describeValue(opcodeCode)} is not an ibv_wc_opcode value`,
    );
  return (opcodeCode & WC_OPCODE.RECV) !== 0;
}
