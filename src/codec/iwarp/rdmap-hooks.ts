/**
 * The three irregular cases of the generic RDMAP decoder and encoder (rdmap.ts), each a
 * named hook of the family that has it. Every other family is its row's layout (read and
 * written field by field) and, when the row says so, ULP payload after it:
 * - `tail`: Terminate's variable tail after its fixed header (RFC 5040 §4.8);
 * - `aOpCode`: the AOpCodes a profile defines (RFC 7306 §10.2, draft-ietf-storm-rdmap-ext-01
 *   §5.1.2);
 * - `headerInLastSegmentOnly`: a V2 Send with Immediate Data carries its 8 bytes in the
 *   L = 1 segment and nothing else there, payload only before (draft-wood-storm-rdmap-ext-v2-00
 *   §5.3).
 */
import { DecodeError, type DecodeResult, decoded, EncodeError, failed } from '../errors.js';
import { ddpHeaderLength } from './ddp.js';
import {
  ATOMIC_REQUEST_LAYOUT,
  type HeaderLayout,
  layoutField,
  readFieldNumber,
  TERMINATE_LAYOUT,
} from './layouts.js';
import type { RdmapMessage, Terminate } from './messages.js';
import { atomicOpcodeInfo, type RdmapFamily, type RdmapOpcodeInfo } from './opcodes.js';
import type { IwarpProfile } from './profiles.js';
import { checkBytes, checkUint, readU16, writeU16 } from './wire.js';

/** The fields after a header's fixed part, as the message holds them. */
export type TerminateTail = Pick<
  Terminate,
  'ddpSegmentLength' | 'terminatedDdpHeader' | 'terminatedRdmaHeader'
>;

/** A variable tail after a header's fixed part. */
export interface TailHook {
  /**
   * Checks the fixed header at `at` is there and reads the tail after it (the fixed
   * fields are read by the generic decoder once this succeeds).
   */
  decode(bytes: Uint8Array, at: number): DecodeResult<TerminateTail>;
  /** The tail's encoded length, after checking the message's tail fields (EncodeError). */
  encodedLength(m: RdmapMessage): number;
  /** Writes the tail at `b[at]` (zero bytes of `encodedLength`). */
  write(m: RdmapMessage, b: Uint8Array, at: number): void;
}

/** Header values a profile refuses although they fit their fields. */
export interface ValueHook {
  /** Why the decoded header at `at` is refused in `profile`, or undefined. */
  decode(
    fields: Readonly<Record<string, unknown>>,
    profile: IwarpProfile,
    at: number,
  ): DecodeError | undefined;
  /** Throws EncodeError when `profile`'s decoder would refuse the message (strict encode). */
  encode(m: object, profile: IwarpProfile): void;
}

/** The hooks of one family. */
export interface RdmapHooks {
  readonly tail?: TailHook;
  readonly aOpCode?: ValueHook;
  readonly headerInLastSegmentOnly?: true;
}

/** Terminate Hdrct D and R (RFC 5040 §4.8), from the layout table. */
const TERMINATE_D = layoutField(TERMINATE_LAYOUT, 'ddpHeaderIncluded');
const TERMINATE_R = layoutField(TERMINATE_LAYOUT, 'rdmaHeaderIncluded');
/** With D, a 16-bit DDP Segment Length precedes the copied DDP header (RFC 5040 §4.8). */
const TERMINATE_SEGMENT_LENGTH_LENGTH = 2;

function terminateError(
  field: string,
  offset: number,
  reason: DecodeError['reason'],
  detail: string,
): DecodeResult<TerminateTail> {
  return failed(new DecodeError('rdmap', field, offset, reason, detail));
}

function asTerminate(m: RdmapMessage): Terminate {
  if (m.kind !== 'terminate') throw new EncodeError('rdmap', 'kind', `${m.kind} has no tail`);
  return m;
}

/** Terminate's tail: with D the Segment Length and copied DDP header, with R the RDMA header. */
const TERMINATE_TAIL: TailHook = {
  decode(bytes, header) {
    if (bytes.length < header + TERMINATE_LAYOUT.length)
      return terminateError(
        'terminateControl',
        header,
        'truncated',
        'Terminate Control needs 4 bytes',
      );
    const ddpHeaderIncluded = readFieldNumber(bytes, header, TERMINATE_D) !== 0;
    const rdmaHeaderIncluded = readFieldNumber(bytes, header, TERMINATE_R) !== 0;
    let at = header + TERMINATE_LAYOUT.length;
    let ddpSegmentLength: number | undefined;
    let terminatedDdpHeader: Uint8Array | undefined;
    if (ddpHeaderIncluded) {
      if (bytes.length < at + TERMINATE_SEGMENT_LENGTH_LENGTH + 1)
        return terminateError(
          'terminatedDdpHeader',
          at,
          'truncated',
          'D is set but the copied DDP header is missing',
        );
      ddpSegmentLength = readU16(bytes, at);
      at += TERMINATE_SEGMENT_LENGTH_LENGTH;
      const copiedLength = ddpHeaderLength(bytes[at]!);
      if (bytes.length < at + copiedLength)
        return terminateError(
          'terminatedDdpHeader',
          at,
          'truncated',
          `the copied DDP header needs ${copiedLength} bytes, ${bytes.length - at} present`,
        );
      terminatedDdpHeader = bytes.subarray(at, at + copiedLength);
      at += copiedLength;
    }
    let terminatedRdmaHeader: Uint8Array | undefined;
    if (rdmaHeaderIncluded) {
      if (bytes.length === at)
        return terminateError(
          'terminatedRdmaHeader',
          at,
          'truncated',
          'R is set but no RDMA header follows',
        );
      terminatedRdmaHeader = bytes.subarray(at);
    } else if (bytes.length !== at) {
      return terminateError(
        'terminate',
        at,
        'bad-length',
        `${bytes.length - at} bytes after the Terminate header that no Hdrct bit announces`,
      );
    }
    return decoded({ ddpSegmentLength, terminatedDdpHeader, terminatedRdmaHeader });
  },
  encodedLength(message) {
    const m = asTerminate(message);
    let length = 0;
    if (m.ddpHeaderIncluded) {
      if (m.ddpSegmentLength === undefined || m.terminatedDdpHeader === undefined)
        throw new EncodeError(
          'rdmap',
          'terminatedDdpHeader',
          'D is set: ddpSegmentLength and terminatedDdpHeader are required',
        );
      checkUint('rdmap', 'ddpSegmentLength', m.ddpSegmentLength, 16);
      checkBytes('rdmap', 'terminatedDdpHeader', m.terminatedDdpHeader);
      const h = m.terminatedDdpHeader;
      if (h.length === 0 || h.length !== ddpHeaderLength(h[0]!))
        throw new EncodeError(
          'rdmap',
          'terminatedDdpHeader',
          `must be a whole DDP header (14 bytes tagged, 18 untagged), got ${h.length}`,
        );
      length += TERMINATE_SEGMENT_LENGTH_LENGTH + h.length;
    } else if (m.ddpSegmentLength !== undefined || m.terminatedDdpHeader !== undefined) {
      throw new EncodeError('rdmap', 'terminatedDdpHeader', 'present but the D bit is clear');
    }
    if (m.rdmaHeaderIncluded) {
      if (m.terminatedRdmaHeader === undefined || m.terminatedRdmaHeader.length === 0)
        throw new EncodeError(
          'rdmap',
          'terminatedRdmaHeader',
          'R is set: a non-empty terminatedRdmaHeader is required',
        );
      checkBytes('rdmap', 'terminatedRdmaHeader', m.terminatedRdmaHeader);
      length += m.terminatedRdmaHeader.length;
    } else if (m.terminatedRdmaHeader !== undefined) {
      throw new EncodeError('rdmap', 'terminatedRdmaHeader', 'present but the R bit is clear');
    }
    return length;
  },
  write(message, b, at) {
    const m = asTerminate(message);
    if (m.terminatedDdpHeader !== undefined && m.ddpSegmentLength !== undefined) {
      writeU16(b, at, m.ddpSegmentLength);
      at += TERMINATE_SEGMENT_LENGTH_LENGTH;
      b.set(m.terminatedDdpHeader, at);
      at += m.terminatedDdpHeader.length;
    }
    if (m.terminatedRdmaHeader !== undefined) b.set(m.terminatedRdmaHeader, at);
  },
};

const A_OPCODE = layoutField(ATOMIC_REQUEST_LAYOUT, 'aOpCode');

/** The AOpCode must be defined, and defined in the profile (RFC 7306 §10.2, draft-01 §5.1.2). */
const ATOMIC_OPCODE_IN_PROFILE: ValueHook = {
  decode(fields, profile, at) {
    const aOpCode = Number(fields.aOpCode);
    const aInfo = atomicOpcodeInfo(aOpCode);
    // The byte holding the AOpCode: the last of its unit that its bits reach.
    const offset = at + A_OPCODE.offset + A_OPCODE.unit - 1 - Math.floor(A_OPCODE.shift / 8);
    if (aInfo === undefined)
      return new DecodeError(
        'rdmap-ext',
        'aOpCode',
        offset,
        'unknown-opcode',
        `AOpCode 0x${aOpCode.toString(16)} is not defined`,
      );
    if (!aInfo.profiles.includes(profile))
      return new DecodeError(
        'rdmap-ext',
        'aOpCode',
        offset,
        'wrong-profile',
        `AOpCode ${aInfo.name} (0x${aOpCode.toString(16)}) is valid in profile '${aInfo.profiles[0]}', not '${profile}' (${aInfo.source})`,
      );
    return undefined;
  },
  encode(m, profile) {
    const aOpCode = Number(Reflect.get(m, A_OPCODE.name));
    const a = atomicOpcodeInfo(aOpCode);
    if (a === undefined || !a.profiles.includes(profile))
      throw new EncodeError(
        'rdmap-ext',
        'aOpCode',
        a === undefined
          ? `AOpCode 0x${aOpCode.toString(16)} is not defined`
          : `${a.name} is valid in profile '${a.profiles[0]}', not '${profile}'`,
      );
  },
};

/** The hooks by family; a family not listed is regular. */
export const RDMAP_HOOKS: { readonly [F in RdmapFamily]?: RdmapHooks } = {
  terminate: { tail: TERMINATE_TAIL },
  'atomic-request': { aOpCode: ATOMIC_OPCODE_IN_PROFILE },
  'send-immediate': { headerInLastSegmentOnly: true },
};

/**
 * The RDMAP header layout an untagged segment of `info` carries: the row's layout, except
 * in a segment with L = 0 of a family whose header is in the last segment only.
 */
export function rdmapHeaderLayout(info: RdmapOpcodeInfo, last: boolean): HeaderLayout | undefined {
  return !last && RDMAP_HOOKS[info.family]?.headerInLastSegmentOnly === true
    ? undefined
    : info.layout;
}
