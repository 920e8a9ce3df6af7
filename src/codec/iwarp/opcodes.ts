/**
 * RDMAP opcode, atomic opcode (AOpCode) and queue-number tables. Names, header kinds,
 * tagged/untagged, queue numbers and the profiles an opcode is valid in all come from
 * here; the encoder, the decoder, the engine and reports read these tables.
 */
import { requireCode, requireKey } from '../../arguments.js';
import { rowNamed } from '../errors.js';
import {
  ATOMIC_REQUEST_LAYOUT,
  ATOMIC_RESPONSE_LAYOUT,
  type HeaderLayout,
  IMMEDIATE_DATA_LAYOUT,
  READ_REQUEST_LAYOUT,
  READ_V2_REQUEST_LAYOUT,
  SEND_IMMEDIATE_LAYOUT,
  TERMINATE_LAYOUT,
} from './layouts.js';
import type { IwarpProfile } from './profiles.js';

/** The kind of an RDMAP message, one per opcode. */
export type RdmapMessageKind =
  | 'rdma-write'
  | 'rdma-read-request'
  | 'rdma-read-response'
  | 'send'
  | 'send-invalidate'
  | 'send-se'
  | 'send-se-invalidate'
  | 'terminate'
  | 'immediate-data'
  | 'immediate-data-se'
  | 'atomic-request'
  | 'atomic-response'
  | 'read-v2-request'
  | 'read-v2-response'
  | 'send-immediate'
  | 'send-invalidate-immediate'
  | 'send-se-immediate'
  | 'send-invalidate-se-immediate';

/**
 * The family of an RDMAP message: the message type of messages.ts its opcodes share (the
 * four Send variants are one family, both Immediate Data opcodes another). A family has
 * one header layout; a switch over families is exhaustive (see `RdmapMessageOfFamily`).
 */
export type RdmapFamily =
  | 'write'
  | 'read-request'
  | 'read-response'
  | 'send'
  | 'terminate'
  | 'immediate-data'
  | 'atomic-request'
  | 'atomic-response'
  | 'read-v2-request'
  | 'read-v2-response'
  | 'send-immediate';

/** One row of the RDMAP opcode table. */
export interface RdmapOpcodeInfo {
  /** The opcode value (4 bits for RV 1, 5 bits for RV 2). */
  readonly opcode: number;
  readonly kind: RdmapMessageKind;
  /** The message type it shares with the other opcodes of its family. */
  readonly family: RdmapFamily;
  /** Name as written in the defining document. */
  readonly name: string;
  /** DDP tagged buffer model (T = 1) or untagged (T = 0). */
  readonly tagged: boolean;
  /** Untagged queue number used on encode (undefined for tagged messages). */
  readonly queueNumber: number | undefined;
  /** True when the Invalidate STag field (untagged RsvdULP) carries a meaning. */
  readonly invalidatesSTag: boolean;
  /** True when the message carries the Solicited Event flag semantics. */
  readonly solicitedEvent: boolean;
  /**
   * The RDMAP header after the DDP header (undefined: none); its fields are the message
   * type's header fields. Terminate's variable tail and the V2 Send with Immediate Data
   * rule (the header only in the L = 1 segment) are the hooks of rdmap-hooks.ts.
   */
  readonly layout: HeaderLayout | undefined;
  /** True when the segment may carry ULP payload after the RDMAP header. */
  readonly ulpPayload: boolean;
  /** The profiles in which this opcode is defined. */
  readonly profiles: readonly IwarpProfile[];
  /** Where the row comes from. */
  readonly source: string;
}

const ALL: readonly IwarpProfile[] = ['rfc7306', 'draft-01', 'v2-draft'];
const V2_ONLY: readonly IwarpProfile[] = ['v2-draft'];

/**
 * RFC 5040 §4.3 (opcodes 0x0-0x7, queue numbers of §4.2/§5), RFC 7306 §4.1 Figure 2
 * (0x8-0xB), draft-wood-storm-rdmap-ext-v2-00 §4.1 Figure 2 (0x11-0x16).
 */
export const RDMAP_OPCODES = [
  {
    opcode: 0x0,
    kind: 'rdma-write',
    family: 'write',
    name: 'RDMA Write',
    tagged: true,
    queueNumber: undefined,
    invalidatesSTag: false,
    solicitedEvent: false,
    layout: undefined,
    ulpPayload: true,
    profiles: ALL,
    source: 'RFC 5040 §4.3',
  },
  {
    opcode: 0x1,
    kind: 'rdma-read-request',
    family: 'read-request',
    name: 'RDMA Read Request',
    tagged: false,
    queueNumber: 1,
    invalidatesSTag: false,
    solicitedEvent: false,
    layout: READ_REQUEST_LAYOUT,
    ulpPayload: false,
    profiles: ALL,
    source: 'RFC 5040 §4.3, §4.4',
  },
  {
    opcode: 0x2,
    kind: 'rdma-read-response',
    family: 'read-response',
    name: 'RDMA Read Response',
    tagged: true,
    queueNumber: undefined,
    invalidatesSTag: false,
    solicitedEvent: false,
    layout: undefined,
    ulpPayload: true,
    profiles: ALL,
    source: 'RFC 5040 §4.3',
  },
  {
    opcode: 0x3,
    kind: 'send',
    family: 'send',
    name: 'Send',
    tagged: false,
    queueNumber: 0,
    invalidatesSTag: false,
    solicitedEvent: false,
    layout: undefined,
    ulpPayload: true,
    profiles: ALL,
    source: 'RFC 5040 §4.3',
  },
  {
    opcode: 0x4,
    kind: 'send-invalidate',
    family: 'send',
    name: 'Send with Invalidate',
    tagged: false,
    queueNumber: 0,
    invalidatesSTag: true,
    solicitedEvent: false,
    layout: undefined,
    ulpPayload: true,
    profiles: ALL,
    source: 'RFC 5040 §4.3',
  },
  {
    opcode: 0x5,
    kind: 'send-se',
    family: 'send',
    name: 'Send with Solicited Event',
    tagged: false,
    queueNumber: 0,
    invalidatesSTag: false,
    solicitedEvent: true,
    layout: undefined,
    ulpPayload: true,
    profiles: ALL,
    source: 'RFC 5040 §4.3',
  },
  {
    opcode: 0x6,
    kind: 'send-se-invalidate',
    family: 'send',
    name: 'Send with Solicited Event and Invalidate',
    tagged: false,
    queueNumber: 0,
    invalidatesSTag: true,
    solicitedEvent: true,
    layout: undefined,
    ulpPayload: true,
    profiles: ALL,
    source: 'RFC 5040 §4.3',
  },
  {
    opcode: 0x7,
    kind: 'terminate',
    family: 'terminate',
    name: 'Terminate',
    tagged: false,
    queueNumber: 2,
    invalidatesSTag: false,
    solicitedEvent: false,
    layout: TERMINATE_LAYOUT,
    ulpPayload: false,
    profiles: ALL,
    source: 'RFC 5040 §4.3, §4.8',
  },
  {
    opcode: 0x8,
    kind: 'immediate-data',
    family: 'immediate-data',
    name: 'Immediate Data',
    tagged: false,
    queueNumber: 0,
    invalidatesSTag: false,
    solicitedEvent: false,
    layout: IMMEDIATE_DATA_LAYOUT,
    ulpPayload: false,
    profiles: ALL,
    source: 'RFC 7306 §4.1 Figure 2, §6.3',
  },
  {
    opcode: 0x9,
    kind: 'immediate-data-se',
    family: 'immediate-data',
    name: 'Immediate Data with Solicited Event',
    tagged: false,
    queueNumber: 0,
    invalidatesSTag: false,
    solicitedEvent: true,
    layout: IMMEDIATE_DATA_LAYOUT,
    ulpPayload: false,
    profiles: ALL,
    source: 'RFC 7306 §4.1 Figure 2, §6.3',
  },
  {
    opcode: 0xa,
    kind: 'atomic-request',
    family: 'atomic-request',
    name: 'Atomic Request',
    tagged: false,
    queueNumber: 1,
    invalidatesSTag: false,
    solicitedEvent: false,
    layout: ATOMIC_REQUEST_LAYOUT,
    ulpPayload: false,
    profiles: ALL,
    source: 'RFC 7306 §4.1 Figure 2, §5.2.1',
  },
  {
    opcode: 0xb,
    kind: 'atomic-response',
    family: 'atomic-response',
    name: 'Atomic Response',
    tagged: false,
    queueNumber: 3,
    invalidatesSTag: false,
    solicitedEvent: false,
    layout: ATOMIC_RESPONSE_LAYOUT,
    ulpPayload: false,
    profiles: ALL,
    source: 'RFC 7306 §4.1 Figure 2, §5.2.2',
  },
  {
    opcode: 0x11,
    kind: 'read-v2-request',
    family: 'read-v2-request',
    name: 'RDMA Read V2 Request',
    tagged: false,
    queueNumber: 1,
    invalidatesSTag: false,
    solicitedEvent: false,
    layout: READ_V2_REQUEST_LAYOUT,
    ulpPayload: false,
    profiles: V2_ONLY,
    source: 'draft-wood-storm-rdmap-ext-v2-00 §4.1 Figure 2, §6.1',
  },
  {
    opcode: 0x12,
    kind: 'read-v2-response',
    family: 'read-v2-response',
    name: 'RDMA Read V2 Response',
    tagged: false,
    queueNumber: 3,
    invalidatesSTag: false,
    solicitedEvent: false,
    layout: undefined,
    ulpPayload: true,
    profiles: V2_ONLY,
    source: 'draft-wood-storm-rdmap-ext-v2-00 §4.1 Figure 2, §6.2',
  },
  {
    opcode: 0x13,
    kind: 'send-immediate',
    family: 'send-immediate',
    name: 'Send with Immediate Data',
    tagged: false,
    queueNumber: 0,
    invalidatesSTag: false,
    solicitedEvent: false,
    layout: SEND_IMMEDIATE_LAYOUT,
    ulpPayload: true,
    profiles: V2_ONLY,
    source: 'draft-wood-storm-rdmap-ext-v2-00 §4.1 Figure 2, §5.3',
  },
  {
    opcode: 0x14,
    kind: 'send-invalidate-immediate',
    family: 'send-immediate',
    name: 'Send with Invalidate and Immediate Data',
    tagged: false,
    queueNumber: 0,
    invalidatesSTag: true,
    solicitedEvent: false,
    layout: SEND_IMMEDIATE_LAYOUT,
    ulpPayload: true,
    profiles: V2_ONLY,
    source: 'draft-wood-storm-rdmap-ext-v2-00 §4.1 Figure 2, §5.3',
  },
  {
    opcode: 0x15,
    kind: 'send-se-immediate',
    family: 'send-immediate',
    name: 'Send with Solicited Event and Immediate Data',
    tagged: false,
    queueNumber: 0,
    invalidatesSTag: false,
    solicitedEvent: true,
    layout: SEND_IMMEDIATE_LAYOUT,
    ulpPayload: true,
    profiles: V2_ONLY,
    source: 'draft-wood-storm-rdmap-ext-v2-00 §4.1 Figure 2, §5.3',
  },
  {
    opcode: 0x16,
    kind: 'send-invalidate-se-immediate',
    family: 'send-immediate',
    name: 'Send with Invalidate and Solicited Event and Immediate Data',
    tagged: false,
    queueNumber: 0,
    invalidatesSTag: true,
    solicitedEvent: true,
    layout: SEND_IMMEDIATE_LAYOUT,
    ulpPayload: true,
    profiles: V2_ONLY,
    source: 'draft-wood-storm-rdmap-ext-v2-00 §4.1 Figure 2, §5.3',
  },
] as const satisfies readonly RdmapOpcodeInfo[];

/** A row of `RDMAP_OPCODES` with its literal types (its kind, family and layout). */
export type RdmapOpcodeRow = (typeof RDMAP_OPCODES)[number];

/** Compiles only when every kind has a row and every family at least one. */
type EveryNameHasARow<T extends true> = T;
type _OpcodeRowsAreComplete = EveryNameHasARow<
  [Exclude<RdmapMessageKind, RdmapOpcodeRow['kind']>] extends [never]
    ? [Exclude<RdmapFamily, RdmapOpcodeRow['family']>] extends [never]
      ? true
      : false
    : false
>;

/** Look up an opcode row by opcode value. */
export function rdmapOpcodeInfo(opcode: number): RdmapOpcodeInfo | undefined {
  requireCode('codec', 'opcode', opcode);
  return OPCODE_BY_VALUE.get(opcode);
}

/** Look up an opcode row by message kind (every kind has exactly one row). */
export function rdmapOpcodeOf(kind: RdmapMessageKind): RdmapOpcodeInfo {
  return requireKey('codec', 'RDMAP message kind', OPCODE_BY_KIND, kind);
}

const OPCODE_BY_VALUE: ReadonlyMap<number, RdmapOpcodeInfo> = new Map(
  RDMAP_OPCODES.map((row) => [row.opcode, row]),
);
const OPCODE_BY_KIND: ReadonlyMap<RdmapMessageKind, RdmapOpcodeInfo> = new Map(
  RDMAP_OPCODES.map((row) => [row.kind, row]),
);

/**
 * Queue numbers a profile also accepts for an opcode, beyond the row's `queueNumber`.
 * draft-ietf-storm-rdmap-ext-01 contradicts itself; the encoder uses the normative text's
 * value and the decoder of that profile accepts the figure's value too.
 */
export interface QueueNumberVariant {
  readonly opcode: number;
  readonly profile: IwarpProfile;
  /** A queue number accepted in this profile only. */
  readonly queueNumber: number;
  readonly source: string;
}

/** Profile-specific queue-number differences, each citing the draft section. */
export const QUEUE_NUMBER_VARIANTS: readonly QueueNumberVariant[] = [
  {
    opcode: 0x9,
    profile: 'draft-01',
    queueNumber: 1,
    source:
      'draft-ietf-storm-rdmap-ext-01 §4.1 Figure 2 lists Immediate Data with SE on QN 1 (its §6.3 says QN 0; draft-ietf-storm-rdmap-ext-2014-03 §4.1 Figure 2 and RFC 7306 §4.1 say QN 0)',
  },
  {
    opcode: 0xb,
    profile: 'draft-01',
    queueNumber: 1,
    source:
      'draft-ietf-storm-rdmap-ext-01 §4.1 Figure 2 lists Atomic Response on QN 1 (its §5.2.2 item 3 says QN 3; draft-ietf-storm-rdmap-ext-2014-03 §4.1 Figure 2 and RFC 7306 §5.2.2 say QN 3)',
  },
];

/** The queue numbers `opcode` may use in `profile`; empty for tagged opcodes. */
export function acceptedQueueNumbers(opcode: number, profile: IwarpProfile): readonly number[] {
  // Per-profile maps keyed by the opcode number: this runs for every untagged segment
  // decoded, so no key strings are built on the way.
  let byOpcode = ACCEPTED_QN_CACHE.get(profile);
  if (byOpcode === undefined) {
    byOpcode = new Map();
    ACCEPTED_QN_CACHE.set(profile, byOpcode);
  }
  let cached = byOpcode.get(opcode);
  if (cached === undefined) {
    const info = rdmapOpcodeInfo(opcode);
    const extra = QUEUE_NUMBER_VARIANTS.filter((v) => v.opcode === opcode && v.profile === profile);
    cached =
      info === undefined || info.queueNumber === undefined
        ? []
        : [info.queueNumber, ...extra.map((v) => v.queueNumber)];
    byOpcode.set(opcode, cached);
  }
  return cached;
}

/** Derived from the two tables above on first use (decoders call this per segment). */
const ACCEPTED_QN_CACHE = new Map<IwarpProfile, Map<number, readonly number[]>>();

/** The RDMAP untagged queues (RFC 7306 §10.3 "RDMAP DDP Untagged Queue Numbers"). */
export const RDMAP_QUEUE_NUMBERS = [
  { queueNumber: 0, name: 'Queue 0 (Send operation Variants)', source: 'RFC 5040' },
  { queueNumber: 1, name: 'Queue 1 (RDMA Read Request operations)', source: 'RFC 5040' },
  { queueNumber: 2, name: 'Queue 2 (Terminate operations)', source: 'RFC 5040' },
  { queueNumber: 3, name: 'Queue 3 (Atomic Response operations)', source: 'RFC 7306 §10.3' },
] as const;

/** The kind of an atomic operation. */
export type AtomicOperationKind = 'fetch-add' | 'swap' | 'cmp-swap';

/** One row of the Atomic Operation Subcode (AOpCode) table. */
export interface AtomicOpcodeInfo {
  /** 4-bit AOpCode. */
  readonly aOpCode: number;
  readonly kind: AtomicOperationKind;
  readonly name: string;
  /** The profiles in which this AOpCode is defined. */
  readonly profiles: readonly IwarpProfile[];
  readonly source: string;
}

/**
 * RFC 7306 §10.2 "RDMAP Message Atomic Operation Subcodes": 0x0 FetchAdd, 0x1 Reserved,
 * 0x2 CmpSwap. draft-ietf-storm-rdmap-ext-01 §5.1.2 and Figure 5 define 0x1 as Swap
 * (removed by draft-ietf-storm-rdmap-ext-2014-03, whose IANA table lists 0x1 Reserved).
 */
export const ATOMIC_OPCODES: readonly AtomicOpcodeInfo[] = [
  {
    aOpCode: 0x0,
    kind: 'fetch-add',
    name: 'FetchAdd',
    profiles: ALL,
    source: 'RFC 7306 §5.1.1, §10.2',
  },
  {
    aOpCode: 0x1,
    kind: 'swap',
    name: 'Swap',
    profiles: ['draft-01'],
    source: 'draft-ietf-storm-rdmap-ext-01 §5.1.2, Figure 5 (RFC 7306 §10.2: 0x1 Reserved)',
  },
  {
    aOpCode: 0x2,
    kind: 'cmp-swap',
    name: 'CmpSwap',
    profiles: ALL,
    source: 'RFC 7306 §5.1.2, §10.2',
  },
];

/** Look up an AOpCode row by value. */
export function atomicOpcodeInfo(aOpCode: number): AtomicOpcodeInfo | undefined {
  requireCode('codec', 'aOpCode', aOpCode);
  return ATOMIC_OPCODES.find((row) => row.aOpCode === aOpCode);
}

/** Look up an AOpCode row by kind. */
export function atomicOpcodeOf(kind: AtomicOperationKind): AtomicOpcodeInfo {
  return rowNamed(ATOMIC_OPCODES, (r) => r.kind, kind, 'atomic operation kind');
}
