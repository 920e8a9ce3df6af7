/**
 * RDMAP messages over DDP segments: encode one message (one DDP segment) to bytes and
 * decode bytes to a typed message, for a given profile. The opcode table in `opcodes.ts`
 * decides tagged/untagged, queue numbers, header kinds and profile validity.
 */
import { requireBytes } from '../../arguments.js';
import { DecodeError, type DecodeResult, decoded, EncodeError, failed } from '../errors.js';
import {
  DDP_CONTROL,
  DDP_TAGGED_HEADER_LENGTH,
  DDP_UNTAGGED_HEADER_LENGTH,
  DDP_VERSION,
  ddpControlByte,
  ddpHeaderLength,
} from './ddp.js';
import {
  ATOMIC_REQUEST_LAYOUT,
  ATOMIC_RESPONSE_LAYOUT,
  checkHeader,
  IMMEDIATE_DATA_LAYOUT,
  layoutField,
  READ_REQUEST_LAYOUT,
  READ_V2_REQUEST_LAYOUT,
  readFieldBigint,
  readFieldNumber,
  readHeader,
  SEND_IMMEDIATE_LAYOUT,
  TERMINATE_LAYOUT,
  writeHeader,
} from './layouts.js';
import type {
  AtomicRequest,
  AtomicResponse,
  ControlBits,
  RdmapMessage,
  RdmaReadRequest,
  ReadV2Request,
  Terminate,
} from './messages.js';
import {
  acceptedQueueNumbers,
  atomicOpcodeInfo,
  IMMEDIATE_DATA_LENGTH,
  QUEUE_NUMBER_VARIANTS,
  RDMAP_HEADER_LENGTHS,
  type RdmapOpcodeInfo,
  rdmapOpcodeInfo,
  rdmapOpcodeOf,
} from './opcodes.js';
import {
  DEFAULT_IWARP_PROFILE,
  type IwarpProfile,
  PROFILE_RDMA_VERSION,
  requireProfileOptions,
} from './profiles.js';
import {
  checkBool,
  checkBytes,
  checkUint,
  checkUint64,
  readU16,
  readU32,
  readU64,
  writeU16,
  writeU32,
  writeU64,
} from './wire.js';

/** The header fields a layout table yields for each message type (see layouts.ts). */
type ReadRequestFields = Omit<RdmaReadRequest, 'kind' | 'ddp' | 'control' | 'invalidateSTag'>;
type AtomicRequestFields = Omit<AtomicRequest, 'kind' | 'ddp' | 'control' | 'invalidateSTag'>;
type AtomicResponseFields = Omit<AtomicResponse, 'kind' | 'ddp' | 'control' | 'invalidateSTag'>;
type ReadV2RequestFields = Omit<ReadV2Request, 'kind' | 'ddp' | 'control' | 'invalidateSTag'>;

/** Options of the RDMAP encoder and decoder. */
export interface RdmapCodecOptions {
  /** Which specification to follow (default `rfc7306`). */
  readonly profile?: IwarpProfile;
}

/** Encoder options. */
export interface RdmapEncodeOptions extends RdmapCodecOptions {
  /**
   * When true (default), the encoder also refuses messages the profile's decoder would
   * reject (opcode, AOpCode, RV and queue number not valid in the profile, wrong T bit,
   * V2 L-bit rule). Set false to build deliberately invalid messages for negative tests;
   * field ranges are always checked.
   */
  readonly strict?: boolean;
}

const RDMAP_CODEC_OPTIONS = Object.keys({ profile: true } satisfies Record<
  keyof RdmapCodecOptions,
  true
>);
const RDMAP_ENCODE_OPTIONS = Object.keys({
  profile: true,
  strict: true,
} satisfies Record<keyof RdmapEncodeOptions, true>);

/** RDMAP control field layouts (RFC 5040 §4.2: RV 2 bits, Rsv 2, Opcode 4; V2 draft §4.1 Figure 1: RV 2, Rsv 1, Opcode 5). */
const RDMAP_CONTROL_LAYOUT: Readonly<
  Record<number, { readonly reservedBits: number; readonly opcodeBits: number }>
> = {
  1: { reservedBits: 2, opcodeBits: 4 },
  2: { reservedBits: 1, opcodeBits: 5 },
};

/** The fields of an RDMAP control octet, or undefined for an RV with no defined layout. */
export function parseRdmapControl(
  octet: number,
):
  | { readonly rdmaVersion: number; readonly rdmapReserved: number; readonly opcode: number }
  | undefined {
  const rdmaVersion = octet >> 6;
  const layout = RDMAP_CONTROL_LAYOUT[rdmaVersion];
  if (layout === undefined) return undefined;
  return {
    rdmaVersion,
    rdmapReserved: (octet >> layout.opcodeBits) & ((1 << layout.reservedBits) - 1),
    opcode: octet & ((1 << layout.opcodeBits) - 1),
  };
}

/** Terminate Hdrct D and R (RFC 5040 §4.8), from the layout table. */
const TERMINATE_D = layoutField(TERMINATE_LAYOUT, 'ddpHeaderIncluded');
const TERMINATE_R = layoutField(TERMINATE_LAYOUT, 'rdmaHeaderIncluded');
/** Terminate Control (4) then, with D, DDP Segment Length (2) and the copied DDP header. */
const TERMINATE_CONTROL_LENGTH = 4;
const TERMINATE_SEGMENT_LENGTH_LENGTH = 2;

/** The profile where an RDMAP version is valid. */
function profileOfRdmaVersion(rv: number): IwarpProfile | undefined {
  for (const [profile, version] of Object.entries(PROFILE_RDMA_VERSION)) {
    if (version === rv) return profile as IwarpProfile;
  }
  return undefined;
}

function rdmapError(
  field: string,
  offset: number,
  reason: DecodeError['reason'],
  detail: string,
  layer: 'rdmap' | 'rdmap-ext' | 'ddp' = 'rdmap',
): DecodeResult<RdmapMessage> {
  return failed(new DecodeError(layer, field, offset, reason, detail));
}

/**
 * Decodes one DDP segment carrying an RDMAP message. Payloads are views into `bytes`.
 * Never throws; every malformed input gives a `DecodeError` naming field and offset.
 */
export function decodeRdmapMessage(
  bytes: Uint8Array,
  options: RdmapCodecOptions = {},
): DecodeResult<RdmapMessage> {
  requireBytes('codec', 'bytes', bytes);
  requireProfileOptions(options, RDMAP_CODEC_OPTIONS);
  const profile = options.profile ?? DEFAULT_IWARP_PROFILE;
  if (bytes.length < 2) {
    return rdmapError('control', 0, 'truncated', `${bytes.length} bytes, need 2`, 'ddp');
  }
  const ddpCtl = bytes[0]!;
  const tagged = (ddpCtl & DDP_CONTROL.tagged) !== 0;
  const headerLength = ddpHeaderLength(ddpCtl);
  const ddpVersion = ddpCtl & DDP_CONTROL.versionMask;
  if (ddpVersion !== DDP_VERSION) {
    return rdmapError('dv', 0, 'bad-value', `DDP version ${ddpVersion}, expected 1`, 'ddp');
  }
  // RDMAP control field: the first octet of RsvdULP (RFC 5040 §4.2).
  const parsed = parseRdmapControl(bytes[1]!);
  if (parsed === undefined) {
    return rdmapError('rv', 1, 'bad-value', `RDMAP version ${bytes[1]! >> 6} is not defined`);
  }
  const { rdmaVersion, rdmapReserved, opcode } = parsed;
  const expectedRv = PROFILE_RDMA_VERSION[profile];
  if (rdmaVersion !== expectedRv) {
    const where = profileOfRdmaVersion(rdmaVersion);
    return rdmapError(
      'rv',
      1,
      'wrong-profile',
      `RDMAP version ${rdmaVersion} is valid in profile '${where}', not '${profile}'`,
    );
  }
  const info = rdmapOpcodeInfo(opcode);
  if (info === undefined) {
    return rdmapError(
      'opcode',
      1,
      'unknown-opcode',
      `opcode 0x${opcode.toString(16)} is not defined`,
    );
  }
  if (!info.profiles.includes(profile)) {
    return rdmapError(
      'opcode',
      1,
      'wrong-profile',
      `${info.name} (0x${opcode.toString(16)}) is valid in profile '${info.profiles[0]}', not '${profile}'`,
    );
  }
  if (info.tagged !== tagged) {
    return rdmapError(
      't',
      0,
      'bad-value',
      `${info.name} must be ${info.tagged ? 'tagged' : 'untagged'} (T = ${info.tagged ? 1 : 0})`,
      'ddp',
    );
  }
  if (bytes.length < headerLength) {
    return rdmapError(
      'header',
      0,
      'truncated',
      `${bytes.length} bytes, a ${tagged ? 'tagged' : 'untagged'} DDP header needs ${headerLength}`,
      'ddp',
    );
  }
  const last = (ddpCtl & DDP_CONTROL.last) !== 0;
  const control: ControlBits = {
    ddpReserved: (ddpCtl >> DDP_CONTROL.reservedShift) & DDP_CONTROL.reservedMask,
    ddpVersion,
    rdmaVersion,
    rdmapReserved,
  };
  if (tagged) {
    const ddp = {
      tagged: true as const,
      last,
      stag: readU32(bytes, 2),
      taggedOffset: readU64(bytes, 6),
    };
    const payload = bytes.subarray(DDP_TAGGED_HEADER_LENGTH);
    // Only RDMA Write and RDMA Read Response are tagged (RFC 5040 §4.3).
    if (info.kind === 'rdma-write' || info.kind === 'rdma-read-response') {
      return decoded({ kind: info.kind, ddp, control, payload });
    }
    return rdmapError('opcode', 1, 'bad-value', `${info.name} cannot be tagged`);
  }
  const queueNumber = readU32(bytes, 6);
  if (!acceptedQueueNumbers(opcode, profile).includes(queueNumber)) {
    const other = QUEUE_NUMBER_VARIANTS.find(
      (v) => v.opcode === opcode && v.queueNumber === queueNumber,
    );
    if (other !== undefined) {
      return rdmapError(
        'qn',
        6,
        'wrong-profile',
        `${info.name} on QN ${queueNumber} is valid in profile '${other.profile}' (${other.source})`,
        'ddp',
      );
    }
    return rdmapError(
      'qn',
      6,
      'bad-value',
      `${info.name} must use QN ${info.queueNumber}, got ${queueNumber}`,
      'ddp',
    );
  }
  const ddp = {
    tagged: false as const,
    last,
    queueNumber,
    messageSequenceNumber: readU32(bytes, 10),
    messageOffset: readU32(bytes, 14),
  };
  const invalidateSTag = readU32(bytes, 2);
  const base = { ddp, control, invalidateSTag };
  const h = DDP_UNTAGGED_HEADER_LENGTH;
  const rest = bytes.length - h;
  const fixed = RDMAP_HEADER_LENGTHS[info.header];
  const layer = info.opcode >= 0x8 ? 'rdmap-ext' : 'rdmap';
  if (fixed !== undefined && info.header !== 'none' && rest !== fixed) {
    // The Immediate Data header is one field (RFC 7306 §6.3: exactly 8 bytes), named as
    // such so that a consumer can tell a wrong Immediate Data length from another header
    // of the wrong size without reading the message.
    return rdmapError(
      info.header === 'immediate-data' ? 'immediateData' : 'header',
      h,
      rest < fixed ? 'truncated' : 'bad-length',
      `${info.name} carries exactly ${fixed} bytes after the DDP header, got ${rest}`,
      layer,
    );
  }
  switch (info.header) {
    case 'none':
      if (
        info.kind === 'send' ||
        info.kind === 'send-invalidate' ||
        info.kind === 'send-se' ||
        info.kind === 'send-se-invalidate' ||
        info.kind === 'read-v2-response'
      ) {
        return decoded({ kind: info.kind, ...base, payload: bytes.subarray(h) });
      }
      return rdmapError('opcode', 1, 'bad-value', `${info.name} cannot be untagged`);
    case 'read-request':
      return decoded({
        kind: 'rdma-read-request',
        ...base,
        ...(readHeader(READ_REQUEST_LAYOUT, bytes, h) as unknown as ReadRequestFields),
      });
    case 'immediate-data':
      return decoded({
        kind: info.kind as 'immediate-data' | 'immediate-data-se',
        ...base,
        immediateData: readFieldBigint(bytes, h, IMMEDIATE_DATA_LAYOUT.fields[0]!),
      });
    case 'atomic-request': {
      const word = readU32(bytes, h);
      const aOpCode = word & 0xf;
      const aInfo = atomicOpcodeInfo(aOpCode);
      if (aInfo === undefined) {
        return rdmapError(
          'aOpCode',
          h + 3,
          'unknown-opcode',
          `AOpCode 0x${aOpCode.toString(16)} is not defined`,
          layer,
        );
      }
      if (!aInfo.profiles.includes(profile)) {
        return rdmapError(
          'aOpCode',
          h + 3,
          'wrong-profile',
          `AOpCode ${aInfo.name} (0x${aOpCode.toString(16)}) is valid in profile '${aInfo.profiles[0]}', not '${profile}' (${aInfo.source})`,
          layer,
        );
      }
      return decoded({
        kind: 'atomic-request',
        ...base,
        ...(readHeader(ATOMIC_REQUEST_LAYOUT, bytes, h) as unknown as AtomicRequestFields),
      });
    }
    case 'atomic-response':
      return decoded({
        kind: 'atomic-response',
        ...base,
        ...(readHeader(ATOMIC_RESPONSE_LAYOUT, bytes, h) as unknown as AtomicResponseFields),
      });
    case 'read-v2-request':
      return decoded({
        kind: 'read-v2-request',
        ...base,
        ...(readHeader(READ_V2_REQUEST_LAYOUT, bytes, h) as unknown as ReadV2RequestFields),
      });
    case 'send-immediate': {
      const kind = info.kind as
        | 'send-immediate'
        | 'send-invalidate-immediate'
        | 'send-se-immediate'
        | 'send-invalidate-se-immediate';
      if (last) {
        // V2 draft §5.3: the L = 1 segment holds the immediate data and nothing else.
        if (rest !== IMMEDIATE_DATA_LENGTH) {
          return rdmapError(
            'immediateData',
            h,
            rest < IMMEDIATE_DATA_LENGTH ? 'truncated' : 'bad-length',
            `the last segment of ${info.name} carries exactly 8 bytes, got ${rest}`,
            'rdmap-ext',
          );
        }
        return decoded({
          kind,
          ...base,
          payload: bytes.subarray(bytes.length),
          immediateData: readFieldBigint(bytes, h, SEND_IMMEDIATE_LAYOUT.fields[0]!),
        });
      }
      return decoded({ kind, ...base, payload: bytes.subarray(h), immediateData: undefined });
    }
    case 'terminate':
      return decodeTerminateBody(bytes, base);
  }
}

function decodeTerminateBody(
  bytes: Uint8Array,
  base: Pick<Terminate, 'ddp' | 'control' | 'invalidateSTag'>,
): DecodeResult<RdmapMessage> {
  let at = DDP_UNTAGGED_HEADER_LENGTH;
  if (bytes.length < at + TERMINATE_CONTROL_LENGTH) {
    return rdmapError('terminateControl', at, 'truncated', 'Terminate Control needs 4 bytes');
  }
  const ddpHeaderIncluded = readFieldNumber(bytes, at, TERMINATE_D) !== 0;
  const rdmaHeaderIncluded = readFieldNumber(bytes, at, TERMINATE_R) !== 0;
  at += TERMINATE_CONTROL_LENGTH;
  let ddpSegmentLength: number | undefined;
  let terminatedDdpHeader: Uint8Array | undefined;
  if (ddpHeaderIncluded) {
    if (bytes.length < at + TERMINATE_SEGMENT_LENGTH_LENGTH + 1) {
      return rdmapError(
        'terminatedDdpHeader',
        at,
        'truncated',
        'D is set but the copied DDP header is missing',
      );
    }
    ddpSegmentLength = readU16(bytes, at);
    at += TERMINATE_SEGMENT_LENGTH_LENGTH;
    const copiedLength = ddpHeaderLength(bytes[at]!);
    if (bytes.length < at + copiedLength) {
      return rdmapError(
        'terminatedDdpHeader',
        at,
        'truncated',
        `the copied DDP header needs ${copiedLength} bytes, ${bytes.length - at} present`,
      );
    }
    terminatedDdpHeader = bytes.subarray(at, at + copiedLength);
    at += copiedLength;
  }
  let terminatedRdmaHeader: Uint8Array | undefined;
  if (rdmaHeaderIncluded) {
    if (bytes.length === at) {
      return rdmapError(
        'terminatedRdmaHeader',
        at,
        'truncated',
        'R is set but no RDMA header follows',
      );
    }
    terminatedRdmaHeader = bytes.subarray(at);
  } else if (bytes.length !== at) {
    return rdmapError(
      'terminate',
      at,
      'bad-length',
      `${bytes.length - at} bytes after the Terminate header that no Hdrct bit announces`,
    );
  }
  return decoded({
    kind: 'terminate',
    ...base,
    ...(readHeader(TERMINATE_LAYOUT, bytes, DDP_UNTAGGED_HEADER_LENGTH) as unknown as Pick<
      Terminate,
      | 'layer'
      | 'errorType'
      | 'errorCode'
      | 'segmentLengthValid'
      | 'ddpHeaderIncluded'
      | 'rdmaHeaderIncluded'
      | 'terminateReserved'
    >),
    ddpSegmentLength,
    terminatedDdpHeader,
    terminatedRdmaHeader,
  });
}

// ---------------------------------------------------------------------------------------
// Encoder

function checkControl(
  m: RdmapMessage,
  info: RdmapOpcodeInfo,
  profile: IwarpProfile,
  strict: boolean,
): void {
  const c = m.control;
  if (typeof c !== 'object' || c === null) throw new EncodeError('rdmap', 'control', 'missing');
  checkUint('ddp', 'ddpReserved', c.ddpReserved, 4);
  checkUint('ddp', 'ddpVersion', c.ddpVersion, 2);
  checkUint('rdmap', 'rdmaVersion', c.rdmaVersion, 2);
  const layout = RDMAP_CONTROL_LAYOUT[c.rdmaVersion];
  if (layout === undefined) {
    throw new EncodeError(
      'rdmap',
      'rdmaVersion',
      `RV ${c.rdmaVersion} has no defined control layout`,
    );
  }
  checkUint('rdmap', 'rdmapReserved', c.rdmapReserved, layout.reservedBits);
  if (info.opcode >= 1 << layout.opcodeBits) {
    throw new EncodeError(
      'rdmap',
      'opcode',
      `${info.name} (0x${info.opcode.toString(16)}) needs a ${layout.opcodeBits + 1}-bit opcode field (RV 2)`,
    );
  }
  if (!strict) return;
  if (c.ddpVersion !== DDP_VERSION) throw new EncodeError('ddp', 'ddpVersion', 'must be 1');
  if (!info.profiles.includes(profile)) {
    throw new EncodeError(
      'rdmap',
      'opcode',
      `${info.name} is valid in profile '${info.profiles[0]}', not '${profile}'`,
    );
  }
  if (c.rdmaVersion !== PROFILE_RDMA_VERSION[profile]) {
    throw new EncodeError(
      'rdmap',
      'rdmaVersion',
      `profile '${profile}' uses RV ${PROFILE_RDMA_VERSION[profile]}, got ${c.rdmaVersion}`,
    );
  }
}

/**
 * Encodes one RDMAP message as a DDP segment (the ULPDU of an FPDU). Throws `EncodeError`
 * for any out-of-range field (or, when strict, anything the profile's decoder would
 * reject) before allocating the output.
 */
export function encodeRdmapMessage(m: RdmapMessage, options: RdmapEncodeOptions = {}): Uint8Array {
  requireProfileOptions(options, RDMAP_ENCODE_OPTIONS);
  const profile = options.profile ?? DEFAULT_IWARP_PROFILE;
  const strict = options.strict ?? true;
  if (typeof m !== 'object' || m === null)
    throw new EncodeError('rdmap', 'message', 'not an object');
  let info: RdmapOpcodeInfo;
  try {
    info = rdmapOpcodeOf(m.kind);
  } catch {
    throw new EncodeError('rdmap', 'kind', `unknown message kind '${String(m.kind)}'`);
  }
  checkControl(m, info, profile, strict);
  const d = m.ddp;
  checkBool('ddp', 'tagged', d.tagged);
  checkBool('ddp', 'last', d.last);
  if (d.tagged !== info.tagged) {
    throw new EncodeError(
      'ddp',
      'tagged',
      `${info.name} must be ${info.tagged ? 'tagged' : 'untagged'}`,
    );
  }
  const rdmaCtl =
    (m.control.rdmaVersion << 6) |
    (m.control.rdmapReserved << RDMAP_CONTROL_LAYOUT[m.control.rdmaVersion]!.opcodeBits) |
    info.opcode;
  const ddpCtl = ddpControlByte(d.tagged, d.last, m.control.ddpReserved, m.control.ddpVersion);

  if (d.tagged) {
    checkUint('ddp', 'stag', d.stag, 32);
    checkUint64('ddp', 'taggedOffset', d.taggedOffset);
    const payload = (m as { payload: Uint8Array }).payload;
    checkBytes('rdmap', 'payload', payload);
    const out = new Uint8Array(DDP_TAGGED_HEADER_LENGTH + payload.length);
    out[0] = ddpCtl;
    out[1] = rdmaCtl;
    writeU32(out, 2, d.stag);
    writeU64(out, 6, d.taggedOffset);
    out.set(payload, DDP_TAGGED_HEADER_LENGTH);
    return out;
  }

  checkUint('ddp', 'queueNumber', d.queueNumber, 32);
  checkUint('ddp', 'messageSequenceNumber', d.messageSequenceNumber, 32);
  checkUint('ddp', 'messageOffset', d.messageOffset, 32);
  if (m.ddp.tagged) throw new EncodeError('ddp', 'tagged', 'unreachable');
  const um = m as Exclude<RdmapMessage, { ddp: { tagged: true } }>;
  checkUint('rdmap', 'invalidateSTag', um.invalidateSTag, 32);
  if (strict && !acceptedQueueNumbers(info.opcode, profile).includes(d.queueNumber)) {
    throw new EncodeError(
      'ddp',
      'queueNumber',
      `${info.name} must use QN ${info.queueNumber} in profile '${profile}'`,
    );
  }
  const body = encodeUntaggedBody(um, profile, strict);
  const h = DDP_UNTAGGED_HEADER_LENGTH;
  const out = new Uint8Array(h + body.length);
  out[0] = ddpCtl;
  out[1] = rdmaCtl;
  writeU32(out, 2, um.invalidateSTag);
  writeU32(out, 6, d.queueNumber);
  writeU32(out, 10, d.messageSequenceNumber);
  writeU32(out, 14, d.messageOffset);
  out.set(body, h);
  return out;
}

/** The bytes after the untagged DDP header, range-checked. */
function encodeUntaggedBody(
  m: Exclude<RdmapMessage, { ddp: { tagged: true } }>,
  profile: IwarpProfile,
  strict: boolean,
): Uint8Array {
  switch (m.kind) {
    case 'send':
    case 'send-invalidate':
    case 'send-se':
    case 'send-se-invalidate':
    case 'read-v2-response':
      checkBytes('rdmap', 'payload', m.payload);
      return m.payload;
    case 'rdma-read-request': {
      const b = new Uint8Array(READ_REQUEST_LAYOUT.length);
      writeHeader(READ_REQUEST_LAYOUT, m, b);
      return b;
    }
    case 'immediate-data':
    case 'immediate-data-se': {
      const b = new Uint8Array(IMMEDIATE_DATA_LAYOUT.length);
      writeHeader(IMMEDIATE_DATA_LAYOUT, m, b);
      return b;
    }
    case 'atomic-request': {
      checkHeader(ATOMIC_REQUEST_LAYOUT, m);
      if (strict) {
        const a = atomicOpcodeInfo(m.aOpCode);
        if (a === undefined || !a.profiles.includes(profile)) {
          throw new EncodeError(
            'rdmap-ext',
            'aOpCode',
            a === undefined
              ? `AOpCode 0x${m.aOpCode.toString(16)} is not defined`
              : `${a.name} is valid in profile '${a.profiles[0]}', not '${profile}'`,
          );
        }
      }
      const b = new Uint8Array(ATOMIC_REQUEST_LAYOUT.length);
      writeHeader(ATOMIC_REQUEST_LAYOUT, m, b);
      return b;
    }
    case 'atomic-response': {
      const b = new Uint8Array(ATOMIC_RESPONSE_LAYOUT.length);
      writeHeader(ATOMIC_RESPONSE_LAYOUT, m, b);
      return b;
    }
    case 'read-v2-request': {
      const b = new Uint8Array(READ_V2_REQUEST_LAYOUT.length);
      writeHeader(READ_V2_REQUEST_LAYOUT, m, b);
      return b;
    }
    case 'send-immediate':
    case 'send-invalidate-immediate':
    case 'send-se-immediate':
    case 'send-invalidate-se-immediate': {
      checkBytes('rdmap-ext', 'payload', m.payload);
      if (m.ddp.last) {
        // V2 draft §5.3: the L = 1 segment carries only the immediate data.
        if (m.immediateData === undefined) {
          throw new EncodeError(
            'rdmap-ext',
            'immediateData',
            'the last segment must carry immediate data',
          );
        }
        if (m.payload.length !== 0) {
          throw new EncodeError(
            'rdmap-ext',
            'payload',
            'the last segment carries immediate data only',
          );
        }
        const b = new Uint8Array(SEND_IMMEDIATE_LAYOUT.length);
        writeHeader(SEND_IMMEDIATE_LAYOUT, m, b);
        return b;
      }
      if (m.immediateData !== undefined) {
        throw new EncodeError(
          'rdmap-ext',
          'immediateData',
          'only the last segment (L = 1) carries immediate data',
        );
      }
      return m.payload;
    }
    case 'terminate':
      return encodeTerminateBody(m);
  }
}

function encodeTerminateBody(m: Terminate): Uint8Array {
  checkHeader(TERMINATE_LAYOUT, m);
  let length = TERMINATE_CONTROL_LENGTH;
  if (m.ddpHeaderIncluded) {
    if (m.ddpSegmentLength === undefined || m.terminatedDdpHeader === undefined) {
      throw new EncodeError(
        'rdmap',
        'terminatedDdpHeader',
        'D is set: ddpSegmentLength and terminatedDdpHeader are required',
      );
    }
    checkUint('rdmap', 'ddpSegmentLength', m.ddpSegmentLength, 16);
    checkBytes('rdmap', 'terminatedDdpHeader', m.terminatedDdpHeader);
    const h = m.terminatedDdpHeader;
    if (h.length === 0 || h.length !== ddpHeaderLength(h[0]!)) {
      throw new EncodeError(
        'rdmap',
        'terminatedDdpHeader',
        `must be a whole DDP header (14 bytes tagged, 18 untagged), got ${h.length}`,
      );
    }
    length += TERMINATE_SEGMENT_LENGTH_LENGTH + h.length;
  } else if (m.ddpSegmentLength !== undefined || m.terminatedDdpHeader !== undefined) {
    throw new EncodeError('rdmap', 'terminatedDdpHeader', 'present but the D bit is clear');
  }
  if (m.rdmaHeaderIncluded) {
    if (m.terminatedRdmaHeader === undefined || m.terminatedRdmaHeader.length === 0) {
      throw new EncodeError(
        'rdmap',
        'terminatedRdmaHeader',
        'R is set: a non-empty terminatedRdmaHeader is required',
      );
    }
    checkBytes('rdmap', 'terminatedRdmaHeader', m.terminatedRdmaHeader);
    length += m.terminatedRdmaHeader.length;
  } else if (m.terminatedRdmaHeader !== undefined) {
    throw new EncodeError('rdmap', 'terminatedRdmaHeader', 'present but the R bit is clear');
  }
  const b = new Uint8Array(length);
  writeHeader(TERMINATE_LAYOUT, m, b);
  let at = TERMINATE_CONTROL_LENGTH;
  if (
    m.ddpHeaderIncluded &&
    m.terminatedDdpHeader !== undefined &&
    m.ddpSegmentLength !== undefined
  ) {
    writeU16(b, at, m.ddpSegmentLength);
    at += TERMINATE_SEGMENT_LENGTH_LENGTH;
    b.set(m.terminatedDdpHeader, at);
    at += m.terminatedDdpHeader.length;
  }
  if (m.terminatedRdmaHeader !== undefined) b.set(m.terminatedRdmaHeader, at);
  return b;
}
