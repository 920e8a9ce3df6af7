/**
 * Convenience constructors for RDMAP messages with the transmit values of every field the
 * caller does not care about (reserved bits zero, DV 1, RV of the profile, the opcode's
 * queue number, RFC 7306 §5.2.1 defaults for unused atomic fields). Used by the engine to
 * build requests, responses and Terminates.
 */

import { requireObject } from '../../arguments.js';
import { ddpLayoutOf } from './ddp.js';
import { DDP_UNTAGGED_LAYOUT } from './layouts.js';
import type {
  AtomicRequest,
  AtomicResponse,
  ControlBits,
  ImmediateData,
  RdmaReadRequest,
  RdmaReadResponse,
  RdmaWrite,
  Send,
  Terminate,
  UntaggedPlacement,
} from './messages.js';
import {
  type AtomicOperationKind,
  atomicOpcodeOf,
  type RdmapMessageKind,
  rdmapOpcodeInfo,
  rdmapOpcodeOf,
} from './opcodes.js';
import {
  DEFAULT_IWARP_PROFILE,
  type IwarpProfile,
  PROFILE_RDMA_VERSION,
  requireIwarpProfile,
} from './profiles.js';
import { parseRdmapControl } from './rdmap.js';

/** All ones in 64 bits: the transmit value of unused masks (RFC 7306 §5.2.1). */
export const ALL_ONES_64 = 0xffffffffffffffffn;

/** Control bits with transmit values for `profile`. */
export function controlBitsFor(profile: IwarpProfile = DEFAULT_IWARP_PROFILE): ControlBits {
  return {
    ddpReserved: 0,
    ddpVersion: 1,
    rdmaVersion: PROFILE_RDMA_VERSION[profile],
    rdmapReserved: 0,
  };
}

/** Untagged placement of a single-segment message of `kind` (its queue number, MO 0, L 1). */
export function untaggedPlacementFor(
  kind: RdmapMessageKind,
  messageSequenceNumber: number,
  options: { readonly last?: boolean; readonly messageOffset?: number } = {},
): UntaggedPlacement {
  const info = rdmapOpcodeOf(kind);
  if (info.queueNumber === undefined) throw new Error(`${info.name} is tagged`);
  return {
    tagged: false,
    last: options.last ?? true,
    queueNumber: info.queueNumber,
    messageSequenceNumber,
    messageOffset: options.messageOffset ?? 0,
  };
}

/** Fields of an Atomic Request a caller chooses. */
export interface AtomicRequestFields {
  readonly operation: AtomicOperationKind;
  readonly messageSequenceNumber: number;
  readonly requestIdentifier: number;
  readonly remoteSTag: number;
  readonly remoteTaggedOffset: bigint;
  /** Add Data (FetchAdd) or Swap Data (Swap, CmpSwap). */
  readonly addOrSwapData: bigint;
  /** Default: 0 for FetchAdd (one 64-bit field), all ones otherwise. */
  readonly addOrSwapMask?: bigint;
  /** Default 0. */
  readonly compareData?: bigint;
  /** Default all ones. */
  readonly compareMask?: bigint;
}

/**
 * A builder's fields are an object and its profile one of IWARP_PROFILES, or
 * ArgumentError/UnknownNameError; the field values themselves are checked by the encoder
 * (encodeRdmapMessage: EncodeError), which is where they go on the wire.
 */
function requireBuilderArguments(fields: unknown, profile: unknown): void {
  requireObject('codec', 'fields', fields);
  requireIwarpProfile('codec', profile, 'profile');
}

/** An Atomic Request on QN 1 (RFC 7306 §5.2.1). */
export function makeAtomicRequest(
  f: AtomicRequestFields,
  profile: IwarpProfile = DEFAULT_IWARP_PROFILE,
): AtomicRequest {
  requireBuilderArguments(f, profile);
  return {
    kind: 'atomic-request',
    ddp: untaggedPlacementFor('atomic-request', f.messageSequenceNumber),
    control: controlBitsFor(profile),
    invalidateSTag: 0,
    atomicReserved: 0,
    aOpCode: atomicOpcodeOf(f.operation).aOpCode,
    requestIdentifier: f.requestIdentifier,
    remoteSTag: f.remoteSTag,
    remoteTaggedOffset: f.remoteTaggedOffset,
    addOrSwapData: f.addOrSwapData,
    // RFC 7306 §5.2.1: Add Mask 0 means one 64-bit addition; Swap's mask is all ones.
    addOrSwapMask: f.addOrSwapMask ?? (f.operation === 'fetch-add' ? 0n : ALL_ONES_64),
    compareData: f.compareData ?? 0n,
    compareMask: f.compareMask ?? ALL_ONES_64,
  };
}

/** An Atomic Response on QN 3 (RFC 7306 §5.2.2). */
export function makeAtomicResponse(
  f: {
    readonly messageSequenceNumber: number;
    readonly originalRequestIdentifier: number;
    readonly originalRemoteDataValue: bigint;
  },
  profile: IwarpProfile = DEFAULT_IWARP_PROFILE,
): AtomicResponse {
  requireBuilderArguments(f, profile);
  return {
    kind: 'atomic-response',
    ddp: untaggedPlacementFor('atomic-response', f.messageSequenceNumber),
    control: controlBitsFor(profile),
    invalidateSTag: 0,
    originalRequestIdentifier: f.originalRequestIdentifier,
    originalRemoteDataValue: f.originalRemoteDataValue,
  };
}

/** Immediate Data (0x8) or Immediate Data with SE (0x9) on QN 0 (RFC 7306 §6.3). */
export function makeImmediateData(
  f: {
    readonly messageSequenceNumber: number;
    readonly immediateData: bigint;
    readonly solicitedEvent?: boolean;
  },
  profile: IwarpProfile = DEFAULT_IWARP_PROFILE,
): ImmediateData {
  requireBuilderArguments(f, profile);
  const kind = f.solicitedEvent === true ? 'immediate-data-se' : 'immediate-data';
  return {
    kind,
    ddp: untaggedPlacementFor(kind, f.messageSequenceNumber),
    control: controlBitsFor(profile),
    invalidateSTag: 0,
    immediateData: f.immediateData,
  };
}

/** A single-segment Send variant on QN 0 (RFC 5040 §4.3). */
export function makeSend(
  f: {
    readonly kind?: Send['kind'];
    readonly messageSequenceNumber: number;
    readonly payload: Uint8Array;
    readonly invalidateSTag?: number;
    readonly last?: boolean;
    readonly messageOffset?: number;
  },
  profile: IwarpProfile = DEFAULT_IWARP_PROFILE,
): Send {
  requireBuilderArguments(f, profile);
  const kind = f.kind ?? 'send';
  return {
    kind,
    ddp: untaggedPlacementFor(kind, f.messageSequenceNumber, f),
    control: controlBitsFor(profile),
    invalidateSTag: f.invalidateSTag ?? 0,
    payload: f.payload,
  };
}

/** Fields of a tagged segment. */
export interface TaggedSegmentFields {
  readonly stag: number;
  readonly taggedOffset: bigint;
  readonly payload: Uint8Array;
  readonly last?: boolean;
}

/** A tagged segment of `kind` (RFC 5040 §4.3: RDMA Write and RDMA Read Response are tagged). */
function taggedSegment<K extends (RdmaWrite | RdmaReadResponse)['kind']>(
  kind: K,
  f: TaggedSegmentFields,
  profile: IwarpProfile,
): { kind: K } & Omit<RdmaWrite, 'kind'> {
  requireBuilderArguments(f, profile);
  return {
    kind,
    ddp: { tagged: true, last: f.last ?? true, stag: f.stag, taggedOffset: f.taggedOffset },
    control: controlBitsFor(profile),
    payload: f.payload,
  };
}

/** A tagged RDMA Write segment (RFC 5040 §4.3). */
export function makeRdmaWrite(
  f: TaggedSegmentFields,
  profile: IwarpProfile = DEFAULT_IWARP_PROFILE,
): RdmaWrite {
  return taggedSegment('rdma-write', f, profile);
}

/** A tagged RDMA Read Response segment (RFC 5040 §4.3). */
export function makeReadResponse(
  f: TaggedSegmentFields,
  profile: IwarpProfile = DEFAULT_IWARP_PROFILE,
): RdmaReadResponse {
  return taggedSegment('rdma-read-response', f, profile);
}

/** An RDMA Read Request on QN 1 (RFC 5040 §4.4). */
export function makeReadRequest(
  f: Omit<RdmaReadRequest, 'kind' | 'ddp' | 'control' | 'invalidateSTag'> & {
    readonly messageSequenceNumber: number;
  },
  profile: IwarpProfile = DEFAULT_IWARP_PROFILE,
): RdmaReadRequest {
  requireBuilderArguments(f, profile);
  return {
    kind: 'rdma-read-request',
    ddp: untaggedPlacementFor('rdma-read-request', f.messageSequenceNumber),
    control: controlBitsFor(profile),
    invalidateSTag: 0,
    sinkSTag: f.sinkSTag,
    sinkTaggedOffset: f.sinkTaggedOffset,
    readSize: f.readSize,
    sourceSTag: f.sourceSTag,
    sourceTaggedOffset: f.sourceTaggedOffset,
  };
}

/** The copied headers of an offending segment, for a Terminate (RFC 5040 §4.8). */
export interface TerminatedHeaders {
  readonly ddpSegmentLength: number;
  readonly terminatedDdpHeader: Uint8Array;
  /** The RDMA header, present only when the offending message is an RDMA Read Request. */
  readonly terminatedRdmaHeader: Uint8Array | undefined;
}

/**
 * Copies the headers of a received DDP segment (the ULPDU bytes) for a Terminate. The DDP
 * Segment Length is the segment's length (its MPA ULPDU Length). Undefined if `segment`
 * is shorter than its DDP header.
 */
export function terminatedHeadersOf(segment: Uint8Array): TerminatedHeaders | undefined {
  if (segment.length < 1) return undefined;
  const ddp = ddpLayoutOf(segment[0]!);
  const h = ddp.length;
  if (segment.length < h || segment.length > 0xffff) return undefined;
  // RFC 5040 §4.8: the RDMA header is copied only for an RDMA Read Request; a V2 Read V2
  // Request (V2 draft §6.1) gets its 16-byte header copied the same way.
  const control = ddp === DDP_UNTAGGED_LAYOUT ? parseRdmapControl(segment) : undefined;
  const info = control === undefined ? undefined : rdmapOpcodeInfo(control.opcode);
  const rdmaLength =
    info?.family === 'read-request' || info?.family === 'read-v2-request'
      ? info.layout?.length
      : undefined;
  return {
    ddpSegmentLength: segment.length,
    terminatedDdpHeader: segment.slice(0, h),
    terminatedRdmaHeader:
      rdmaLength !== undefined && segment.length >= h + rdmaLength
        ? segment.slice(h, h + rdmaLength)
        : undefined,
  };
}

/** Fields of a Terminate a caller chooses. */
export interface TerminateFields {
  readonly messageSequenceNumber: number;
  readonly layer: number;
  readonly errorType: number;
  readonly errorCode: number;
  /** Copied headers (RFC 7306 §8.1: omit for errors not tied to an incoming message). */
  readonly headers?: TerminatedHeaders;
  /** Copy the RDMA header too when `headers` has one (default true; RFC 7306 §8.1 item 2 says no for the new messages). */
  readonly includeRdmaHeader?: boolean;
}

/** A Terminate on QN 2 (RFC 5040 §4.8). */
export function makeTerminate(
  f: TerminateFields,
  profile: IwarpProfile = DEFAULT_IWARP_PROFILE,
): Terminate {
  requireBuilderArguments(f, profile);
  const h = f.headers;
  const rdma =
    h !== undefined && (f.includeRdmaHeader ?? true) ? h.terminatedRdmaHeader : undefined;
  return {
    kind: 'terminate',
    ddp: untaggedPlacementFor('terminate', f.messageSequenceNumber),
    control: controlBitsFor(profile),
    invalidateSTag: 0,
    layer: f.layer,
    errorType: f.errorType,
    errorCode: f.errorCode,
    segmentLengthValid: h !== undefined,
    ddpHeaderIncluded: h !== undefined,
    rdmaHeaderIncluded: rdma !== undefined,
    terminateReserved: 0,
    ddpSegmentLength: h?.ddpSegmentLength,
    terminatedDdpHeader: h?.terminatedDdpHeader,
    terminatedRdmaHeader: rdma,
  };
}
