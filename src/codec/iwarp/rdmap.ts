/**
 * RDMAP messages over DDP segments: encode one message (one DDP segment) to bytes and
 * decode bytes to a typed message, for a given profile. Both are generic over the opcode
 * table (opcodes.ts): its row decides tagged/untagged, queue numbers, profile validity,
 * the header layout (layouts.ts) and whether ULP payload follows; the three irregular
 * cases are the named hooks of rdmap-hooks.ts.
 */
import { requireBytes } from '../../arguments.js';
import { DecodeError, type DecodeResult, decoded, EncodeError, failed } from '../errors.js';
import { DDP_ACCESS, DDP_FIELDS, DDP_VERSION, ddpLayoutOf, writeDdpControl } from './ddp.js';
import {
  accessOf,
  checkHeader,
  DDP_TAGGED_LAYOUT,
  DDP_UNTAGGED_LAYOUT,
  type FieldAccess,
  fieldAccess,
  type HeaderField,
  type HeaderLayout,
  layoutField,
  RDMAP_CONTROL_V2_LAYOUT,
  writeFields,
} from './layouts.js';
import type { ControlBits, RdmapMessage } from './messages.js';
import {
  acceptedQueueNumbers,
  QUEUE_NUMBER_VARIANTS,
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
import { RDMAP_HOOKS, rdmapHeaderLayout } from './rdmap-hooks.js';
import { checkBool, checkBytes, checkUint } from './wire.js';

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

/**
 * The RDMAP control octet (the DDP segment's octet 1) per RV: RFC 5040 §4.2 (RV 1: Rsv 2
 * bits, Opcode 4, as the DDP layouts lay it out) and the V2 draft §4.1 Figure 1 (RV 2:
 * Rsv 1, Opcode 5, `RDMAP_CONTROL_V2_LAYOUT`). `at`: where the fields' layout starts in
 * the segment.
 */
interface ControlOctet {
  readonly at: number;
  readonly reserved: HeaderField;
  readonly opcode: HeaderField;
  readonly reservedAccess: FieldAccess;
  readonly opcodeAccess: FieldAccess;
}

function controlOctet(at: number, reserved: HeaderField, opcode: HeaderField): ControlOctet {
  return {
    at,
    reserved,
    opcode,
    reservedAccess: fieldAccess(reserved),
    opcodeAccess: fieldAccess(opcode),
  };
}

const CONTROL_OCTET: Readonly<Record<number, ControlOctet>> = {
  1: controlOctet(
    0,
    layoutField(DDP_TAGGED_LAYOUT, 'rdmapReserved'),
    layoutField(DDP_TAGGED_LAYOUT, 'opcode'),
  ),
  2: controlOctet(
    DDP_FIELDS.rdmaVersion.offset,
    layoutField(RDMAP_CONTROL_V2_LAYOUT, 'rdmapReserved'),
    layoutField(RDMAP_CONTROL_V2_LAYOUT, 'opcode'),
  ),
};

/**
 * The fields of the RDMAP control octet of `segment` (at least 2 bytes), or undefined for
 * an RV with no defined layout.
 */
export function parseRdmapControl(
  segment: Uint8Array,
):
  | { readonly rdmaVersion: number; readonly rdmapReserved: number; readonly opcode: number }
  | undefined {
  const rdmaVersion = DDP_ACCESS.rdmaVersion.number(segment, 0);
  const octet = CONTROL_OCTET[rdmaVersion];
  if (octet === undefined) return undefined;
  return {
    rdmaVersion,
    rdmapReserved: octet.reservedAccess.number(segment, octet.at),
    opcode: octet.opcodeAccess.number(segment, octet.at),
  };
}

/** The profile where an RDMAP version is valid. */
function profileOfRdmaVersion(rv: number): IwarpProfile | undefined {
  for (const [profile, version] of Object.entries(PROFILE_RDMA_VERSION)) {
    if (version === rv) return profile as IwarpProfile;
  }
  return undefined;
}

/** The layer a header's errors are reported in: RFC 7306 and V2 opcodes (0x8 on) are extensions. */
function headerLayer(info: RdmapOpcodeInfo): 'rdmap' | 'rdmap-ext' {
  return info.opcode >= 0x8 ? 'rdmap-ext' : 'rdmap';
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
  const ddpLayout = ddpLayoutOf(bytes[0]!);
  const tagged = ddpLayout === DDP_TAGGED_LAYOUT;
  const ddpVersion = DDP_ACCESS.ddpVersion.number(bytes, 0);
  if (ddpVersion !== DDP_VERSION) {
    return rdmapError('dv', 0, 'bad-value', `DDP version ${ddpVersion}, expected 1`, 'ddp');
  }
  const parsed = parseRdmapControl(bytes);
  if (parsed === undefined) {
    const rv = DDP_ACCESS.rdmaVersion.number(bytes, 0);
    return rdmapError('rv', 1, 'bad-value', `RDMAP version ${rv} is not defined`);
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
  const h = ddpLayout.length;
  if (bytes.length < h) {
    return rdmapError(
      'header',
      0,
      'truncated',
      `${bytes.length} bytes, a ${tagged ? 'tagged' : 'untagged'} DDP header needs ${h}`,
      'ddp',
    );
  }
  const last = DDP_ACCESS.last.number(bytes, 0) !== 0;
  const control: ControlBits = {
    ddpReserved: DDP_ACCESS.ddpReserved.number(bytes, 0),
    ddpVersion,
    rdmaVersion,
    rdmapReserved,
  };
  if (tagged) {
    const ddp = {
      tagged: true as const,
      last,
      stag: DDP_ACCESS.stag.number(bytes, 0),
      taggedOffset: DDP_ACCESS.taggedOffset.bigint(bytes, 0),
    };
    return decodeBody(bytes, info, profile, h, { kind: info.kind, ddp, control }, ddp);
  }
  const queueNumber = DDP_ACCESS.queueNumber.number(bytes, 0);
  if (!acceptedQueueNumbers(opcode, profile).includes(queueNumber)) {
    const other = QUEUE_NUMBER_VARIANTS.find(
      (v) => v.opcode === opcode && v.queueNumber === queueNumber,
    );
    if (other !== undefined) {
      return rdmapError(
        'qn',
        DDP_FIELDS.queueNumber.offset,
        'wrong-profile',
        `${info.name} on QN ${queueNumber} is valid in profile '${other.profile}' (${other.source})`,
        'ddp',
      );
    }
    return rdmapError(
      'qn',
      DDP_FIELDS.queueNumber.offset,
      'bad-value',
      `${info.name} must use QN ${info.queueNumber}, got ${queueNumber}`,
      'ddp',
    );
  }
  const ddp = {
    tagged: false as const,
    last,
    queueNumber,
    messageSequenceNumber: DDP_ACCESS.messageSequenceNumber.number(bytes, 0),
    messageOffset: DDP_ACCESS.messageOffset.number(bytes, 0),
  };
  const invalidateSTag = DDP_ACCESS.invalidateSTag.number(bytes, 0);
  const message = { kind: info.kind, ddp, control, invalidateSTag };
  return decodeBody(bytes, info, profile, h, message, ddp);
}

/**
 * The message of `info` from the bytes after its DDP header (at `h`), in the order the
 * message types hold them: the DDP part (`message`, filled in here), the payload, the
 * header's fields, its tail. Properties are added one by one (no spreads): this runs for
 * every segment decoded.
 */
function decodeBody(
  bytes: Uint8Array,
  info: RdmapOpcodeInfo,
  profile: IwarpProfile,
  h: number,
  message: Pick<RdmapMessage, 'kind' | 'ddp' | 'control'>,
  ddp: { readonly last: boolean; readonly tagged: boolean },
): DecodeResult<RdmapMessage> {
  const hooks = RDMAP_HOOKS[info.family];
  const layout = ddp.tagged ? info.layout : rdmapHeaderLayout(info, ddp.last);
  const rest = bytes.length - h;
  if (layout !== undefined && hooks?.tail === undefined) {
    const lastOnly = hooks?.headerInLastSegmentOnly === true;
    if ((!info.ulpPayload || lastOnly) && rest !== layout.length) {
      // A one-field header (Immediate Data, RFC 7306 §6.3: exactly 8 bytes) is named by
      // its field, so that a consumer can tell a wrong Immediate Data length from another
      // header of the wrong size without reading the message.
      const only = layout.fields.length === 1 ? layout.fields[0]!.name : 'header';
      return rdmapError(
        only,
        h,
        rest < layout.length ? 'truncated' : 'bad-length',
        lastOnly
          ? `the last segment of ${info.name} carries exactly ${layout.length} bytes, got ${rest}`
          : `${info.name} carries exactly ${layout.length} bytes after the DDP header, got ${rest}`,
        headerLayer(info),
      );
    }
  }
  const tail = hooks?.tail?.decode(bytes, h);
  if (tail !== undefined && !tail.ok) return tail;
  const out: Record<string, unknown> = message;
  if (info.ulpPayload) out.payload = bytes.subarray(h + (layout?.length ?? 0));
  if (layout !== undefined) {
    for (const f of accessOf(layout)) out[f.name] = f.value(bytes, h);
    const refused = hooks?.aOpCode?.decode(out, profile, h);
    if (refused !== undefined) return failed(refused);
  } else if (info.layout !== undefined) {
    // A header left out of this segment (V2 draft §5.3): its fields are there, undefined.
    for (const f of info.layout.fields) out[f.name] = undefined;
  }
  if (tail !== undefined) Object.assign(out, tail.value);
  // The row's layout types the family's message (messages.ts `HeaderFieldsOf`), so these
  // parts are that message; the compiler cannot follow a row chosen at run time.
  return decoded(message as RdmapMessage);
}

// ---------------------------------------------------------------------------------------
// Encoder

function checkControl(
  m: RdmapMessage,
  info: RdmapOpcodeInfo,
  profile: IwarpProfile,
  strict: boolean,
): ControlOctet {
  const c = m.control;
  if (typeof c !== 'object' || c === null) throw new EncodeError('rdmap', 'control', 'missing');
  checkUint('ddp', 'ddpReserved', c.ddpReserved, DDP_FIELDS.ddpReserved.bits);
  checkUint('ddp', 'ddpVersion', c.ddpVersion, DDP_FIELDS.ddpVersion.bits);
  checkUint('rdmap', 'rdmaVersion', c.rdmaVersion, DDP_FIELDS.rdmaVersion.bits);
  const octet = CONTROL_OCTET[c.rdmaVersion];
  if (octet === undefined) {
    throw new EncodeError(
      'rdmap',
      'rdmaVersion',
      `RV ${c.rdmaVersion} has no defined control layout`,
    );
  }
  checkUint('rdmap', 'rdmapReserved', c.rdmapReserved, octet.reserved.bits);
  if (info.opcode >= 2 ** octet.opcode.bits) {
    throw new EncodeError(
      'rdmap',
      'opcode',
      `${info.name} (0x${info.opcode.toString(16)}) needs a ${octet.opcode.bits + 1}-bit opcode field (RV 2)`,
    );
  }
  if (!strict) return octet;
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
  return octet;
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
  const octet = checkControl(m, info, profile, strict);
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
  const ddpLayout = d.tagged ? DDP_TAGGED_LAYOUT : DDP_UNTAGGED_LAYOUT;
  if (d.tagged) {
    DDP_ACCESS.stag.check('ddp', d.stag);
    DDP_ACCESS.taggedOffset.check('ddp', d.taggedOffset);
  } else {
    DDP_ACCESS.queueNumber.check('ddp', d.queueNumber);
    DDP_ACCESS.messageSequenceNumber.check('ddp', d.messageSequenceNumber);
    DDP_ACCESS.messageOffset.check('ddp', d.messageOffset);
    checkUint('rdmap', 'invalidateSTag', invalidateSTagOf(m), 32);
    if (strict && !acceptedQueueNumbers(info.opcode, profile).includes(d.queueNumber)) {
      throw new EncodeError(
        'ddp',
        'queueNumber',
        `${info.name} must use QN ${info.queueNumber} in profile '${profile}'`,
      );
    }
  }
  const body = checkBody(m, info, profile, strict);
  const h = ddpLayout.length;
  const out = new Uint8Array(h + body.headerLength + body.tailLength + body.payload.length);
  writeDdpControl(out, d.tagged, d.last, m.control);
  DDP_ACCESS.rdmaVersion.write(out, 0, m.control.rdmaVersion);
  octet.reservedAccess.write(out, octet.at, m.control.rdmapReserved);
  octet.opcodeAccess.write(out, octet.at, info.opcode);
  if (d.tagged) {
    DDP_ACCESS.stag.write(out, 0, d.stag);
    DDP_ACCESS.taggedOffset.write(out, 0, d.taggedOffset);
  } else {
    DDP_ACCESS.invalidateSTag.write(out, 0, invalidateSTagOf(m) ?? 0);
    DDP_ACCESS.queueNumber.write(out, 0, d.queueNumber);
    DDP_ACCESS.messageSequenceNumber.write(out, 0, d.messageSequenceNumber);
    DDP_ACCESS.messageOffset.write(out, 0, d.messageOffset);
  }
  if (body.layout !== undefined) writeFields(body.layout, m, out, h);
  if (body.tailLength > 0) body.tail?.write(m, out, h + body.headerLength);
  out.set(body.payload, h + body.headerLength + body.tailLength);
  return out;
}

/** What follows the DDP header, range-checked: the header's layout, the tail, the payload. */
function checkBody(
  m: RdmapMessage,
  info: RdmapOpcodeInfo,
  profile: IwarpProfile,
  strict: boolean,
): {
  readonly layout: HeaderLayout | undefined;
  readonly headerLength: number;
  readonly tail: ReturnType<typeof tailOf>;
  readonly tailLength: number;
  readonly payload: Uint8Array;
} {
  const hooks = RDMAP_HOOKS[info.family];
  if (hooks?.headerInLastSegmentOnly === true) return lastSegmentBody(m, info);
  let payload: Uint8Array = NO_PAYLOAD;
  if (info.ulpPayload) {
    const p = payloadOf(m);
    checkBytes('rdmap', 'payload', p);
    payload = p;
  }
  const layout = info.layout;
  if (layout !== undefined) {
    checkHeader(layout, m);
    if (strict) hooks?.aOpCode?.encode(m, profile);
  }
  const tail = tailOf(info);
  const tailLength = tail?.encodedLength(m) ?? 0;
  return { layout, headerLength: layout?.length ?? 0, tail, tailLength, payload };
}

/** The payload of a message that carries none. */
const NO_PAYLOAD = new Uint8Array(0);

function tailOf(info: RdmapOpcodeInfo) {
  return RDMAP_HOOKS[info.family]?.tail;
}

/**
 * V2 draft §5.3: the L = 1 segment carries only the header (the immediate data), the
 * others only payload.
 */
function lastSegmentBody(m: RdmapMessage, info: RdmapOpcodeInfo) {
  const layout = info.layout;
  const payload = payloadOf(m);
  checkBytes('rdmap-ext', 'payload', payload);
  const present = layout?.fields.some((f) => Reflect.get(m, f.name) !== undefined) ?? false;
  const name = layout?.fields.length === 1 ? layout.fields[0]!.name : 'header';
  if (m.ddp.last && layout !== undefined) {
    if (!present)
      throw new EncodeError('rdmap-ext', name, 'the last segment must carry immediate data');
    if (payload.length !== 0)
      throw new EncodeError('rdmap-ext', 'payload', 'the last segment carries immediate data only');
    checkHeader(layout, m);
    return { layout, headerLength: layout.length, tail: undefined, tailLength: 0, payload };
  }
  if (present)
    throw new EncodeError(
      'rdmap-ext',
      name,
      'only the last segment (L = 1) carries immediate data',
    );
  return { layout: undefined, headerLength: 0, tail: undefined, tailLength: 0, payload };
}

/** The message's payload, when its type has one (undefined otherwise: checked as bytes). */
function payloadOf(m: RdmapMessage): unknown {
  return 'payload' in m ? m.payload : undefined;
}

/** The Invalidate STag of an untagged message (RsvdULP, RFC 5040 §4.2). */
function invalidateSTagOf(m: RdmapMessage): number | undefined {
  return 'invalidateSTag' in m ? m.invalidateSTag : undefined;
}
