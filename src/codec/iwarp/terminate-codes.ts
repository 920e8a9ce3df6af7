/**
 * Terminate message codes: Layer, Error Type and Error Code of the Terminate Control
 * field (RFC 5040 §4.8), with names. RFC 7306 adds no new codes; its §8 says which
 * existing code each new error uses (recorded in `RFC7306_TERMINATE_USES`).
 */
import { requireCode } from '../../arguments.js';
import { rowNamed } from '../errors.js';

/** The Layer field (4 bits) of a Terminate Control field. */
export const TerminateLayer = {
  /** RDMAP layer error (RFC 5040 §4.8). */
  Rdmap: 0x0,
  /** DDP layer error. */
  Ddp: 0x1,
  /** Lower Layer Protocol (MPA/TCP) error. */
  Llp: 0x2,
} as const;

/** A Terminate Layer value. */
export type TerminateLayer = (typeof TerminateLayer)[keyof typeof TerminateLayer];

/** Names of the Terminate layers. */
export const TERMINATE_LAYER_NAMES: Readonly<Record<number, string>> = {
  0: 'RDMA',
  1: 'DDP',
  2: 'LLP (MPA/TCP)',
};

/** One Error Code within a layer and Error Type. */
export interface TerminateCodeInfo {
  readonly layer: number;
  readonly errorType: number;
  readonly errorCode: number;
  /** A stable identifier, e.g. `rdmap.remote-operation.unexpected-opcode`. */
  readonly id: string;
  readonly name: string;
  readonly source: string;
}

/** One Error Type within a layer. */
export interface TerminateErrorTypeInfo {
  readonly layer: number;
  readonly errorType: number;
  readonly name: string;
}

/** Error Types per layer (RFC 5040 §4.8; LLP error type per RFC 5044 §8). */
export const TERMINATE_ERROR_TYPES: readonly TerminateErrorTypeInfo[] = [
  { layer: 0x0, errorType: 0x0, name: 'Local Catastrophic Error' },
  { layer: 0x0, errorType: 0x1, name: 'Remote Protection Error' },
  { layer: 0x0, errorType: 0x2, name: 'Remote Operation Error' },
  { layer: 0x1, errorType: 0x0, name: 'Local Catastrophic Error' },
  { layer: 0x1, errorType: 0x1, name: 'Tagged Buffer Error' },
  { layer: 0x1, errorType: 0x2, name: 'Untagged Buffer Error' },
  { layer: 0x1, errorType: 0x3, name: 'Reserved for the use by the LLP' },
  { layer: 0x2, errorType: 0x0, name: 'MPA Error' },
];

const R5040 = 'RFC 5040 §4.8';
const R5044 = 'RFC 5044 §8';

/** All defined Error Codes (RFC 5040 §4.8 tables; LLP codes from RFC 5044 §8). */
export const TERMINATE_CODES: readonly TerminateCodeInfo[] = [
  // RDMAP layer, Local Catastrophic Error.
  {
    layer: 0,
    errorType: 0,
    errorCode: 0x00,
    id: 'rdmap.local-catastrophic',
    name: 'Local Catastrophic Error',
    source: R5040,
  },
  // RDMAP layer, Remote Protection Error.
  {
    layer: 0,
    errorType: 1,
    errorCode: 0x00,
    id: 'rdmap.protection.invalid-stag',
    name: 'Invalid STag',
    source: R5040,
  },
  {
    layer: 0,
    errorType: 1,
    errorCode: 0x01,
    id: 'rdmap.protection.base-or-bounds',
    name: 'Base or bounds violation',
    source: R5040,
  },
  {
    layer: 0,
    errorType: 1,
    errorCode: 0x02,
    id: 'rdmap.protection.access-rights',
    name: 'Access rights violation',
    source: R5040,
  },
  {
    layer: 0,
    errorType: 1,
    errorCode: 0x03,
    id: 'rdmap.protection.stag-not-associated',
    name: 'STag not associated with RDMAP Stream',
    source: R5040,
  },
  {
    layer: 0,
    errorType: 1,
    errorCode: 0x04,
    id: 'rdmap.protection.to-wrap',
    name: 'TO wrap',
    source: R5040,
  },
  {
    layer: 0,
    errorType: 1,
    errorCode: 0x09,
    id: 'rdmap.protection.stag-cannot-be-invalidated',
    name: 'STag cannot be invalidated',
    source: R5040,
  },
  {
    layer: 0,
    errorType: 1,
    errorCode: 0xff,
    id: 'rdmap.protection.unspecified',
    name: 'Unspecified Error',
    source: R5040,
  },
  // RDMAP layer, Remote Operation Error.
  {
    layer: 0,
    errorType: 2,
    errorCode: 0x05,
    id: 'rdmap.operation.invalid-version',
    name: 'Invalid RDMAP version',
    source: R5040,
  },
  {
    layer: 0,
    errorType: 2,
    errorCode: 0x06,
    id: 'rdmap.operation.unexpected-opcode',
    name: 'Unexpected OpCode',
    source: R5040,
  },
  {
    layer: 0,
    errorType: 2,
    errorCode: 0x07,
    id: 'rdmap.operation.catastrophic-stream',
    name: 'Catastrophic error, localized to RDMAP Stream',
    source: R5040,
  },
  {
    layer: 0,
    errorType: 2,
    errorCode: 0x08,
    id: 'rdmap.operation.catastrophic-global',
    name: 'Catastrophic error, global',
    source: R5040,
  },
  {
    layer: 0,
    errorType: 2,
    errorCode: 0x09,
    id: 'rdmap.operation.stag-cannot-be-invalidated',
    name: 'STag cannot be Invalidated',
    source: R5040,
  },
  {
    layer: 0,
    errorType: 2,
    errorCode: 0xff,
    id: 'rdmap.operation.unspecified',
    name: 'Unspecified Error',
    source: R5040,
  },
  // DDP layer, Local Catastrophic Error.
  {
    layer: 1,
    errorType: 0,
    errorCode: 0x00,
    id: 'ddp.local-catastrophic',
    name: 'Local Catastrophic Error',
    source: R5040,
  },
  // DDP layer, Tagged Buffer Error.
  {
    layer: 1,
    errorType: 1,
    errorCode: 0x00,
    id: 'ddp.tagged.invalid-stag',
    name: 'Invalid STag',
    source: R5040,
  },
  {
    layer: 1,
    errorType: 1,
    errorCode: 0x01,
    id: 'ddp.tagged.base-or-bounds',
    name: 'Base or bounds violation',
    source: R5040,
  },
  {
    layer: 1,
    errorType: 1,
    errorCode: 0x02,
    id: 'ddp.tagged.stag-not-associated',
    name: 'STag not associated with DDP Stream',
    source: R5040,
  },
  {
    layer: 1,
    errorType: 1,
    errorCode: 0x03,
    id: 'ddp.tagged.to-wrap',
    name: 'TO wrap',
    source: R5040,
  },
  {
    layer: 1,
    errorType: 1,
    errorCode: 0x04,
    id: 'ddp.tagged.invalid-version',
    name: 'Invalid DDP version',
    source: R5040,
  },
  // DDP layer, Untagged Buffer Error.
  {
    layer: 1,
    errorType: 2,
    errorCode: 0x01,
    id: 'ddp.untagged.invalid-qn',
    name: 'Invalid QN',
    source: R5040,
  },
  {
    layer: 1,
    errorType: 2,
    errorCode: 0x02,
    id: 'ddp.untagged.invalid-msn-no-buffer',
    name: 'Invalid MSN - no buffer available',
    source: R5040,
  },
  {
    layer: 1,
    errorType: 2,
    errorCode: 0x03,
    id: 'ddp.untagged.invalid-msn-range',
    name: 'Invalid MSN - MSN range is not valid',
    source: R5040,
  },
  {
    layer: 1,
    errorType: 2,
    errorCode: 0x04,
    id: 'ddp.untagged.invalid-mo',
    name: 'Invalid MO',
    source: R5040,
  },
  {
    layer: 1,
    errorType: 2,
    errorCode: 0x05,
    id: 'ddp.untagged.message-too-long',
    name: 'DDP Message too long for available buffer',
    source: R5040,
  },
  {
    layer: 1,
    errorType: 2,
    errorCode: 0x06,
    id: 'ddp.untagged.invalid-version',
    name: 'Invalid DDP version',
    source: R5040,
  },
  // LLP layer (MPA), RFC 5044 §8.
  {
    layer: 2,
    errorType: 0,
    errorCode: 0x01,
    id: 'llp.mpa.tcp-connection-lost',
    name: 'TCP connection closed, terminated or lost',
    source: R5044,
  },
  {
    layer: 2,
    errorType: 0,
    errorCode: 0x02,
    id: 'llp.mpa.crc-error',
    name: 'MPA CRC Error',
    source: R5044,
  },
  {
    layer: 2,
    errorType: 0,
    errorCode: 0x03,
    id: 'llp.mpa.marker-error',
    name: 'MPA Marker and ULPDU pointer error',
    source: R5044,
  },
  {
    layer: 2,
    errorType: 0,
    errorCode: 0x04,
    id: 'llp.mpa.invalid-request-reply',
    name: 'MPA Request/Reply invalid',
    source: R5044,
  },
  {
    layer: 2,
    errorType: 0,
    errorCode: 0x05,
    id: 'llp.mpa.local-catastrophic',
    name: 'Local Catastrophic',
    source: R5044,
  },
];

/** Find a code by its three fields. */
export function terminateCodeInfo(
  layer: number,
  errorType: number,
  errorCode: number,
): TerminateCodeInfo | undefined {
  requireCode('codec', 'layer', layer);
  requireCode('codec', 'errorType', errorType);
  requireCode('codec', 'errorCode', errorCode);
  return TERMINATE_CODES.find(
    (c) => c.layer === layer && c.errorType === errorType && c.errorCode === errorCode,
  );
}

/** Find a code by its stable identifier. */
export function terminateCodeById(id: string): TerminateCodeInfo {
  return rowNamed(TERMINATE_CODES, (c) => c.id, id, 'Terminate code id');
}

/** The name of an Error Type, if defined for the layer. */
export function terminateErrorTypeName(layer: number, errorType: number): string | undefined {
  requireCode('codec', 'layer', layer);
  requireCode('codec', 'errorType', errorType);
  return TERMINATE_ERROR_TYPES.find((t) => t.layer === layer && t.errorType === errorType)?.name;
}

/** Which copied headers a Terminate carries for a class of error (RFC 7306 §8.1). */
export interface TerminateHeaderCopyRule {
  readonly situation: string;
  /** D bit: Terminated DDP Header included. */
  readonly ddpHeader: boolean;
  /** R bit: Terminated RDMA Header included. */
  readonly rdmaHeader: boolean;
  readonly source: string;
}

/** RFC 7306 §8.1 header-copy rules for errors on the new messages. */
export const RFC7306_HEADER_COPY_RULES: readonly TerminateHeaderCopyRule[] = [
  {
    situation:
      'error detected while creating an Atomic Request, Atomic Response, Immediate Data or Immediate Data with SE message (or not tied to an incoming message)',
    ddpHeader: false,
    rdmaHeader: false,
    source: 'RFC 7306 §8.1 item 1',
  },
  {
    situation:
      'error detected on an incoming Atomic Request, Atomic Response, Immediate Data or Immediate Data with SE message (after DDP delivery)',
    ddpHeader: true,
    rdmaHeader: false,
    source: 'RFC 7306 §8.1 item 2',
  },
];

/** Which existing Terminate code RFC 7306 prescribes for its new error cases. */
export const RFC7306_TERMINATE_USES = [
  {
    situation: 'Atomic Request targets a ULP Buffer address that is not 64-bit aligned',
    codeId: 'rdmap.operation.catastrophic-stream',
    source: 'RFC 7306 §8.2',
  },
  {
    situation: 'Immediate Data or Atomic opcode not supported by the Remote Peer',
    codeId: 'rdmap.operation.unexpected-opcode',
    source: 'RFC 7306 §3 (Remote Operation Error or Unexpected OpCode)',
  },
] as const;
