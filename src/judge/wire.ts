/**
 * The iWARP messages of a scenario as comparable lines, the same for the engine's emitted
 * messages and for a capture decoded by the codec. STags and tagged offsets are named
 * relative to the scenario's memory regions (`remote`, `local`), because the engine's
 * stand-in keys and addresses differ from the ones the kernel assigns; everything else
 * (queue numbers, MSN, MO, L bit, sizes, payload bytes) is compared as it is.
 */
import { byFamily, type FamilyHandlers } from '../codec/iwarp/by-family.js';
import type { RdmapMessage } from '../codec/iwarp/messages.js';

/** A memory region as the wire refers to it. */
export interface WireRegion {
  readonly name: string;
  readonly stag: number;
  /** Tagged offset of the region's first byte (its address, without ZERO_BASED). */
  readonly base: bigint;
}

export type WireDirection = 'requester' | 'responder';

function hexBytes(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex');
}

function stagName(stag: number, regions: readonly WireRegion[]): string {
  return regions.find((r) => r.stag === stag)?.name ?? `0x${stag.toString(16).padStart(8, '0')}`;
}

function offsetName(stag: number, to: bigint, regions: readonly WireRegion[]): string {
  const region = regions.find((r) => r.stag === stag);
  return region === undefined ? `0x${to.toString(16)}` : `${region.name}+${to - region.base}`;
}

/** A message's payload as the line shows it. */
const payloadPart = (message: { readonly payload: Uint8Array }): string[] => [
  `payload=${hexBytes(message.payload)}`,
];

/** Nothing beyond the placement (the fields the line leaves out). */
const placementOnly = (): string[] => [];

/**
 * What each family's line shows after the placement. One entry per family, so a new one
 * does not compile until its line is decided here. The RFC 7306 and V2 messages show
 * their placement only (the RFC 7306 probes add an Atomic Response's fields themselves).
 */
const MESSAGE_PARTS: FamilyHandlers<string[], [readonly WireRegion[]]> = {
  'read-request': (message, regions) => [
    `sink=${stagName(message.sinkSTag, regions)}@${offsetName(message.sinkSTag, message.sinkTaggedOffset, regions)}`,
    `size=${message.readSize}`,
    `source=${stagName(message.sourceSTag, regions)}@${offsetName(message.sourceSTag, message.sourceTaggedOffset, regions)}`,
  ],
  write: payloadPart,
  'read-response': payloadPart,
  send: payloadPart,
  terminate: (message) => {
    // RFC 5040 §4.8: Layer, Error Type, Error Code, then the M/D/R header-control bits
    // and whatever was copied of the terminated message.
    const flags = `${message.segmentLengthValid ? 'M' : '-'}${message.ddpHeaderIncluded ? 'D' : '-'}${message.rdmaHeaderIncluded ? 'R' : '-'}`;
    const parts = [
      `layer=${message.layer} type=${message.errorType} code=0x${message.errorCode.toString(16).padStart(2, '0')}`,
      `hdrct=${flags}`,
    ];
    if (message.ddpSegmentLength !== undefined) parts.push(`seglen=${message.ddpSegmentLength}`);
    if (message.terminatedDdpHeader !== undefined)
      parts.push(`ddp=${hexBytes(message.terminatedDdpHeader)}`);
    if (message.terminatedRdmaHeader !== undefined)
      parts.push(`rdma=${hexBytes(message.terminatedRdmaHeader)}`);
    return parts;
  },
  'immediate-data': placementOnly,
  'atomic-request': placementOnly,
  'atomic-response': placementOnly,
  'read-v2-request': placementOnly,
  'read-v2-response': placementOnly,
  'send-immediate': placementOnly,
};

/** One line per message: direction, kind, DDP placement, the message's own fields. */
export function wireLine(
  from: WireDirection,
  message: RdmapMessage,
  regions: readonly WireRegion[],
): string {
  const ddp = message.ddp;
  const placement = ddp.tagged
    ? `stag=${stagName(ddp.stag, regions)} to=${offsetName(ddp.stag, ddp.taggedOffset, regions)}`
    : `qn=${ddp.queueNumber} msn=${ddp.messageSequenceNumber} mo=${ddp.messageOffset}`;
  return [
    `${from}>`,
    message.kind,
    placement,
    ddp.last ? 'L' : 'notL',
    ...byFamily(message, MESSAGE_PARTS, regions),
  ].join(' ');
}
