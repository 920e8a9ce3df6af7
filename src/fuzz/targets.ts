/**
 * What is fuzzed: every public decoder of `rdma-interop/codec` and the engine's
 * `Responder.receiveSegment`. Each target makes valid cases (seeds) and runs one case,
 * reporting what it saw as a fingerprint (a canonical text of the whole result) plus any
 * broken property. The harness (run.ts) does the rest: mutation, the two placements of
 * the input, the comparison.
 */
import { type CaptureItem, decodeCaptureMessages } from '../codec/capture/decode-capture.js';
import { CaptureStreamDecoder } from '../codec/capture/stream-decode.js';
import { DecodeError } from '../codec/errors.js';
import {
  makeAtomicRequest,
  makeImmediateData,
  makeRdmaWrite,
  makeReadRequest,
  makeSend,
} from '../codec/iwarp/build.js';
import { decodeDdpSegment } from '../codec/iwarp/ddp.js';
import { decodeFpdu } from '../codec/iwarp/mpa.js';
import { decodeMpaFrame } from '../codec/iwarp/mpa-frames.js';
import { IWARP_PROFILES, type IwarpProfile } from '../codec/iwarp/profiles.js';
import { decodeRdmapMessage, encodeRdmapMessage } from '../codec/iwarp/rdmap.js';
import { decodeMpaStream } from '../codec/iwarp/stream.js';
import { ipv4PseudoHeader } from '../codec/net/checksum.js';
import { decodeEthernet } from '../codec/net/ethernet.js';
import { decodeFrame } from '../codec/net/frame.js';
import { decodeIpv4 } from '../codec/net/ipv4.js';
import { decodeIpv6 } from '../codec/net/ipv6.js';
import { decodeSll, decodeSll2, encodeSll, encodeSll2 } from '../codec/net/sll.js';
import { decodeTcp } from '../codec/net/tcp.js';
import { decodeUdp } from '../codec/net/udp.js';
import { decodeCapture } from '../codec/pcap/capture.js';
import { decodePcap } from '../codec/pcap/pcap.js';
import { decodePcapng } from '../codec/pcap/pcapng.js';
import { CaptureRecordStream } from '../codec/pcap/record-stream.js';
import { decodeAethSyndrome } from '../codec/roce/aeth.js';
import { decodeBth } from '../codec/roce/bth.js';
import { decodeExtensionHeader } from '../codec/roce/headers.js';
import { checkRoceIcrc } from '../codec/roce/icrc.js';
import { EXTENSION_HEADER_ORDER } from '../codec/roce/opcodes.js';
import { decodeRocePacket } from '../codec/roce/packet.js';
import { TaggedBufferTable } from '../engine/memory/tagged-buffer.js';
import { Responder } from '../engine/responder/responder.js';
import type { ResponderResult } from '../engine/responder/types.js';
import { accessMask } from '../ibverbs/access-flags.js';
import type { FuzzRandom } from './random.js';
import {
  FUZZ_LINK_TYPES,
  fpduVariant,
  randomCaptureFile,
  randomEthernetFrame,
  randomFpdu,
  randomIpPacket,
  randomLinkFrame,
  randomMpaFrameBytes,
  randomMpaStream,
  randomRdmapMessage,
  randomRdmapSegment,
  randomRocePacket,
  randomTransportSegment,
} from './seeds.js';

/** One input: bytes and a number selecting the target's options (profile, link type ...). */
export interface FuzzCase {
  readonly bytes: Uint8Array;
  readonly variant: number;
}

/** What one run of a target saw. */
export interface Observation {
  /** Canonical text of the whole result (equal results, equal text). */
  readonly fingerprint: string;
  /** Broken properties other than "no throw" and "no read past the input". */
  readonly problems: readonly string[];
  /** `layer.field:reason` of every DecodeError in the result, engine failure names. */
  readonly errorKinds: readonly string[];
}

export interface FuzzTarget {
  readonly name: string;
  /** A valid case. */
  seed(rng: FuzzRandom): FuzzCase;
  /** Runs the case. Throws only if the code under test throws. */
  run(bytes: Uint8Array, variant: number): Observation;
}

// ---------------------------------------------------------------------------------------
// Looking at results

function hex(b: Uint8Array): string {
  return Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('hex');
}

/**
 * Walks a result: builds its fingerprint, checks every `{ ok, ... }` inside it is a value
 * or a DecodeError whose offset lies within `inputLength` (when given), and collects the
 * error kinds.
 */
class ResultWalker {
  readonly problems: string[] = [];
  readonly errorKinds: string[] = [];
  constructor(private readonly inputLength: number | undefined) {}

  text(v: unknown, depth = 0): string {
    if (depth > 64) return '…';
    switch (typeof v) {
      case 'bigint':
        return `${v}n`;
      case 'string':
        return JSON.stringify(v);
      case 'number':
      case 'boolean':
      case 'undefined':
        return String(v);
      case 'function':
        return 'fn';
      case 'symbol':
        return v.toString();
    }
    if (v === null) return 'null';
    if (v instanceof Uint8Array) return `<${hex(v)}>`;
    if (v instanceof DecodeError) {
      this.errorKinds.push(`${v.layer}.${v.field}:${v.reason}`);
      if (
        this.inputLength !== undefined &&
        (!Number.isInteger(v.offset) || v.offset < 0 || v.offset > this.inputLength)
      )
        this.problems.push(
          `DecodeError offset ${v.offset} outside the input (length ${this.inputLength}): ${v.message}`,
        );
      return `DecodeError(${v.message})`;
    }
    if (v instanceof Error) {
      this.problems.push(`an untyped error in the result: ${v.name}: ${v.message}`);
      return `Error(${v.message})`;
    }
    if (Array.isArray(v)) return `[${v.map((x) => this.text(x, depth + 1)).join(',')}]`;
    if (v instanceof Map) return `Map${this.text([...v.entries()], depth + 1)}`;
    if (v instanceof Set) return `Set${this.text([...v.values()], depth + 1)}`;
    const o = v as Record<string, unknown>;
    if (typeof o.ok === 'boolean' && !o.ok && !(o.error instanceof DecodeError))
      this.problems.push(`a failed result whose error is not a DecodeError: ${String(o.error)}`);
    const keys = Object.keys(o).sort();
    return `{${keys.map((k) => `${k}:${this.text(o[k], depth + 1)}`).join(',')}}`;
  }
}

/** An observation of a decoder's result (offsets checked against `inputLength` when given). */
export function observe(result: unknown, inputLength: number | undefined): Observation {
  const w = new ResultWalker(inputLength);
  const r = result as { ok?: unknown };
  const problems: string[] = [];
  if (typeof r !== 'object' || r === null || typeof r.ok !== 'boolean')
    problems.push('the result is not a DecodeResult');
  const fingerprint = w.text(result);
  return { fingerprint, problems: [...problems, ...w.problems], errorKinds: w.errorKinds };
}

// ---------------------------------------------------------------------------------------
// Targets

function decoderTarget(
  name: string,
  seed: (rng: FuzzRandom) => FuzzCase | Uint8Array,
  decode: (bytes: Uint8Array, variant: number) => unknown,
  options: { checkOffsets?: boolean } = {},
): FuzzTarget {
  return {
    name,
    seed: (rng) => {
      const s = seed(rng);
      return s instanceof Uint8Array ? { bytes: s, variant: rng.u32() } : s;
    },
    run: (bytes, variant) =>
      observe(decode(bytes, variant), options.checkOffsets === false ? undefined : bytes.length),
  };
}

const profileOf = (variant: number): IwarpProfile =>
  IWARP_PROFILES[variant % IWARP_PROFILES.length]!;

function rdmapTargets(): FuzzTarget[] {
  return IWARP_PROFILES.map((profile) =>
    decoderTarget(
      `rdmap(${profile})`,
      (rng) => randomRdmapSegment(rng, profile),
      (b) => decodeRdmapMessage(b, { profile }),
    ),
  );
}

function mpaStreamDecode(b: Uint8Array, variant: number): unknown {
  // variant: bit 0 = negotiated given, bit 1 = crc, bit 2 = markers, the rest = start sequence.
  const startSequence = (variant >>> 3) * 8;
  if ((variant & 1) === 0)
    return decodeMpaStream(b, { startSequence, profile: profileOf(variant >>> 3) });
  return decodeMpaStream(b, {
    startSequence,
    negotiated: { crc: (variant & 2) !== 0, markers: (variant & 4) !== 0 },
    firstFpduSequence: startSequence - ((variant >>> 3) % 3) * 4,
  });
}

function icrcCheck(b: Uint8Array, variant: number): unknown {
  const lengths = [20, 40, (variant >>> 2) % 72];
  return checkRoceIcrc(b, lengths[variant % 3]!);
}

const PSEUDO_SOURCE = Uint8Array.of(10, 0, 0, 1);
const PSEUDO_DESTINATION = Uint8Array.of(10, 0, 0, 2);

function transportDecode(
  decode: (b: Uint8Array, pseudo?: Uint8Array) => unknown,
  protocol: number,
): (b: Uint8Array, variant: number) => unknown {
  return (b, variant) =>
    variant % 2 === 0
      ? decode(b)
      : decode(b, ipv4PseudoHeader(PSEUDO_SOURCE, PSEUDO_DESTINATION, protocol, b.length));
}

// The engine target: a Responder with one registered buffer and a few receive buffers.
const ENGINE_STAG = 0x1a2b3c4d;
const ENGINE_BASE = 0x00007f3a12345000n;
const ENGINE_LENGTH = 64;
const ENGINE_ACCESS = accessMask(['LOCAL_WRITE', 'REMOTE_WRITE', 'REMOTE_READ', 'REMOTE_ATOMIC']);
const ENGINE_INITIAL = Uint8Array.from({ length: ENGINE_LENGTH }, (_, i) => (i * 37 + 11) & 0xff);

function engineSeed(rng: FuzzRandom): FuzzCase {
  const variant = rng.u32();
  const profile = profileOf(variant);
  const offset = BigInt(rng.below(ENGINE_LENGTH / 8) * 8);
  const msn = 1;
  const messages = [
    () =>
      makeRdmaWrite(
        {
          stag: ENGINE_STAG,
          taggedOffset: ENGINE_BASE + offset,
          payload: rng.bytes(rng.below(24)),
        },
        profile,
      ),
    () => makeSend({ messageSequenceNumber: msn, payload: rng.bytes(rng.below(24)) }, profile),
    () => makeImmediateData({ messageSequenceNumber: msn, immediateData: rng.u64() }, profile),
    () =>
      makeReadRequest(
        {
          messageSequenceNumber: msn,
          sinkSTag: rng.u32(),
          sinkTaggedOffset: rng.u64(),
          readSize: rng.below(32),
          sourceSTag: ENGINE_STAG,
          sourceTaggedOffset: ENGINE_BASE + offset,
        },
        profile,
      ),
    () =>
      makeAtomicRequest(
        {
          messageSequenceNumber: msn,
          operation: rng.pick(['fetch-add', 'cmp-swap'] as const),
          requestIdentifier: rng.u32(),
          remoteSTag: ENGINE_STAG,
          remoteTaggedOffset: ENGINE_BASE + offset,
          addOrSwapData: rng.u64(),
          addOrSwapMask: 0n,
        },
        profile,
      ),
    () => randomRdmapMessage(rng, profile),
  ];
  let bytes: Uint8Array;
  try {
    bytes = encodeRdmapMessage(rng.pick(messages)(), { profile });
  } catch {
    // A message kind the profile does not define (e.g. atomics in draft-01 variants).
    bytes = randomRdmapSegment(rng, profile);
  }
  return { bytes, variant };
}

/** What is wrong with one receiveSegment call, given the memory before and after it. */
export function engineProblems(
  result: Pick<ResponderResult, 'outcome' | 'failure'>,
  before: Uint8Array,
  after: Uint8Array,
): string[] {
  const problems: string[] = [];
  if (!['accepted', 'terminated', 'peer-terminated', 'ignored'].includes(result.outcome))
    problems.push(`outcome ${String(result.outcome)} is not one of the typed outcomes`);
  if (result.outcome !== 'accepted' && hex(before) !== hex(after))
    problems.push(`memory changed although the outcome is ${result.outcome}`);
  if (result.outcome === 'terminated' && result.failure === undefined)
    problems.push('terminated without a failure');
  return problems;
}

function engineRun(bytes: Uint8Array, variant: number): Observation {
  const profile = profileOf(variant);
  const buffers = new TaggedBufferTable();
  const buffer = buffers.register({
    stag: ENGINE_STAG,
    baseTaggedOffset: ENGINE_BASE,
    length: ENGINE_LENGTH,
    access: ENGINE_ACCESS,
    protectionDomain: 3,
    byteOrder: 'little-endian',
    contents: ENGINE_INITIAL.slice(),
  });
  const responder = new Responder({
    ird: 4,
    profile,
    stream: { streamId: 7, protectionDomain: 3 },
    buffers,
  });
  responder.postReceive({ id: 1n, length: 16 });
  responder.postReceive({ id: 2n, length: 64 });
  const before = buffer.memory.slice();
  const result = responder.receiveSegment(bytes);
  const w = new ResultWalker(undefined);
  const fingerprint = `${w.text(result)} memory=${hex(buffer.memory)}`;
  const problems = [...w.problems, ...engineProblems(result, before, buffer.memory)];
  const errorKinds = result.failure === undefined ? [] : [`engine:${result.failure}`];
  return { fingerprint, problems, errorKinds };
}

/**
 * The public functions the targets call, by exported name: the fuzz test checks that this
 * covers every `decode*` that `rdma-interop/codec` exports.
 */
export const FUZZED_FUNCTIONS: readonly string[] = [
  'decodeRdmapMessage',
  'decodeDdpSegment',
  'decodeMpaFrame',
  'decodeFpdu',
  'decodeMpaStream',
  'decodeRocePacket',
  'decodeBth',
  'decodeExtensionHeader',
  'decodeAethSyndrome',
  'checkRoceIcrc',
  'decodeEthernet',
  'decodeSll',
  'decodeSll2',
  'decodeIpv4',
  'decodeIpv6',
  'decodeUdp',
  'decodeTcp',
  'decodeFrame',
  'decodePcap',
  'decodePcapng',
  'decodeCapture',
  'decodeCaptureMessages',
];

/** Every target, in a fixed order. */
export function fuzzTargets(): FuzzTarget[] {
  return [
    ...rdmapTargets(),
    decoderTarget(
      'ddp',
      (rng) => randomRdmapSegment(rng, profileOf(rng.u32())),
      (b) => decodeDdpSegment(b),
    ),
    decoderTarget('mpa-frame', randomMpaFrameBytes, (b) => decodeMpaFrame(b, 0)),
    decoderTarget('mpa-fpdu', randomFpdu, (b, v) => decodeFpdu(b, 0, fpduVariant(v))),
    decoderTarget(
      'mpa-stream',
      // Bit 0 clear: the stream starts with its Request/Reply and negotiates from it.
      (rng) => ({ bytes: randomMpaStream(rng), variant: (rng.u32() & ~1) >>> 0 }),
      mpaStreamDecode,
    ),
    decoderTarget('roce-packet', randomRocePacket, (b) => decodeRocePacket(b)),
    decoderTarget('bth', randomRocePacket, (b) => decodeBth(b)),
    decoderTarget(
      'roce-extension-header',
      (rng) => randomRocePacket(rng).subarray(12).slice(),
      (b, v) =>
        decodeExtensionHeader(EXTENSION_HEADER_ORDER[v % EXTENSION_HEADER_ORDER.length]!, b, 0),
    ),
    decoderTarget(
      'aeth-syndrome',
      (rng) => rng.bytes(1),
      (b) => decodeAethSyndrome(b[0] ?? 0),
      {
        checkOffsets: false,
      },
    ),
    decoderTarget(
      'icrc',
      (rng) => {
        const ipv6 = rng.bool();
        return { bytes: randomIpPacket(rng, ipv6, 0), variant: ipv6 ? 1 : 0 };
      },
      icrcCheck,
    ),
    decoderTarget(
      'ethernet',
      (rng) => randomEthernetFrame(rng),
      (b) => decodeEthernet(b),
    ),
    decoderTarget(
      'sll',
      (rng) => encodeSll({ packetType: 0, protocol: 0x0800 }, randomIpPacket(rng, false)),
      (b) => decodeSll(b),
    ),
    decoderTarget(
      'sll2',
      (rng) => encodeSll2({ packetType: 0, protocol: 0x86dd }, randomIpPacket(rng, true)),
      (b) => decodeSll2(b),
    ),
    decoderTarget(
      'ipv4',
      (rng) => randomIpPacket(rng, false),
      (b) => decodeIpv4(b),
    ),
    decoderTarget(
      'ipv6',
      (rng) => randomIpPacket(rng, true),
      (b) => decodeIpv6(b),
    ),
    decoderTarget(
      'udp',
      (rng) => randomTransportSegment(rng, rng.below(2)),
      transportDecode(decodeUdp, 17),
    ),
    decoderTarget('tcp', (rng) => randomTransportSegment(rng, 2), transportDecode(decodeTcp, 6)),
    decoderTarget(
      'frame',
      (rng) => {
        const f = randomLinkFrame(rng);
        return { bytes: f.bytes, variant: FUZZ_LINK_TYPES.indexOf(f.linkType) };
      },
      (b, v) => decodeFrame(FUZZ_LINK_TYPES[v % FUZZ_LINK_TYPES.length]!, b),
    ),
    decoderTarget(
      'pcap',
      (rng) => pcapOnly(rng),
      (b) => decodePcap(b),
    ),
    decoderTarget(
      'pcapng',
      (rng) => pcapngOnly(rng),
      (b) => decodePcapng(b),
    ),
    decoderTarget('capture-file', randomCaptureFile, (b) => decodeCapture(b)),
    decoderTarget('capture-messages', randomCaptureFile, (b, v) =>
      decodeCaptureMessages(b, { profile: profileOf(v) }),
    ),
    decoderTarget('capture-stream', randomCaptureFile, captureStreamDecode),
    { name: 'engine.receiveSegment', seed: engineSeed, run: engineRun },
  ];
}

/**
 * The streaming decode of `rdma-interop decode`: the bytes in chunks of a size the variant
 * picks, every record through the stream decoder; the result is a DecodeResult of the items.
 */
function captureStreamDecode(b: Uint8Array, variant: number): unknown {
  const chunk = [13, 256, 4096, 1 << 20][variant % 4]!;
  const records = new CaptureRecordStream();
  const decoder = new CaptureStreamDecoder({ profile: profileOf(variant >>> 3) });
  const items: CaptureItem[] = [];
  for (let at = 0; at < b.length; at += chunk) {
    const r = records.push(b.subarray(at, at + chunk));
    if (!r.ok) return { ok: false, error: r.error, items };
    for (const record of r.value) items.push(...decoder.push(record, record.frameIndex));
  }
  const end = records.finish();
  items.push(...decoder.finish());
  return end === undefined
    ? { ok: true, value: { items, counts: decoder.counts } }
    : { ok: false, error: end, items };
}

function pcapOnly(rng: FuzzRandom): Uint8Array {
  for (;;) {
    const f = randomCaptureFile(rng);
    if (f[0] !== 0x0a) return f;
  }
}

function pcapngOnly(rng: FuzzRandom): Uint8Array {
  for (;;) {
    const f = randomCaptureFile(rng);
    if (f[0] === 0x0a) return f;
  }
}
