/**
 * The inputs of the coverage-guided wire fuzz of siw (issue 32): an FPDU SEQUENCE sent on one
 * fresh siw connection (the iWARP tester's peer, siw-peer.ts: TCP, MPA, then FPDUs), kept as
 * plain data (JSON) so a corpus entry or a finding replays as it was. Beside the steps, an
 * input says how the connection is set up: CRC requested in the MPA Request (RFC 5044 §7.1:
 * siw then checks every FPDU's CRC), markers requested (siw does not implement them), a
 * receive posted or not, and whether the siw QP first posts an RDMA Read of its own (so Read
 * Responses meet an ORQ entry: siw_qp_rx.c siw_proc_rresp).
 *
 * A step is one of the iWARP assertions' well-formed messages (Send and its SE/Invalidate
 * variants, Write, Read Request, Read Response, Terminate, RFC 7306 Immediate Data and
 * FetchAdd), whose MSN, MO and Tagged Offset follow from the steps before it (a First/Last
 * pair is well-formed as drawn), then DDP/RDMAP header fields overwritten by the codec's
 * layouts, the MPA ULPDU Length off by `ulpduDelta`, the CRC XOR-ed, the FPDU cut, bytes
 * added, and the TCP segment boundaries inside the FPDU (`splits`: siw_get_hdr() then copies
 * a header in pieces, the 2026 fragmented-header fix). Every draw comes from one seeded
 * generator, so a campaign is the same given its seed and the same feedback.
 */
import {
  makeAtomicRequest,
  makeImmediateData,
  makeRdmaWrite,
  makeReadRequest,
  makeReadResponse,
  makeSend,
  makeTerminate,
  type TaggedSegmentFields,
  terminatedHeadersOf,
} from '../codec/iwarp/build.js';
import {
  DDP_TAGGED_LAYOUT,
  DDP_UNTAGGED_LAYOUT,
  type HeaderField,
  type HeaderLayout,
  READ_REQUEST_LAYOUT,
  TERMINATE_LAYOUT,
} from '../codec/iwarp/layouts.js';
import type { MpaNegotiated, RdmapMessage } from '../codec/iwarp/messages.js';
import {
  fieldLimit,
  fpduOf,
  segmentLayout,
  segmentWith,
  setField,
} from '../probe/iwarp-packets.js';

/** The base messages, by index. */
export const SIW_GUIDED_BASES = [
  'send',
  'send-not-last',
  'send-invalidate',
  'send-se',
  'send-se-invalidate',
  'write',
  'write-not-last',
  'read-request',
  'read-response',
  'read-response-not-last',
  'terminate',
  'terminate-bare',
  'terminate-siw-bits',
  'immediate-data',
  'atomic-fetch-add',
  'send-full',
  'read-request-full',
] as const;
export type SiwGuidedBase = (typeof SIW_GUIDED_BASES)[number];

/** A header field overwritten: the DDP header's (tagged or untagged) or the RDMA header's. */
export interface SiwFieldEdit {
  readonly header: 'ddp' | 'rdma';
  readonly field: string;
  /** The value, decimal (64-bit fields do not fit a JSON number). */
  readonly value: string;
}

export interface SiwGuidedStep {
  /** Index into SIW_GUIDED_BASES. */
  readonly base: number;
  readonly edits: readonly SiwFieldEdit[];
  /** Added to the MPA ULPDU Length as sent (0: right). */
  readonly ulpduDelta: number;
  /** XOR over the CRC field (0: right, or no CRC negotiated: the field is 0 then). */
  readonly crcXor: number;
  /** FPDU bytes kept on the wire (undefined: all). */
  readonly cut?: number;
  /** Bytes added to the DDP segment before framing (the ULPDU Length counts them). */
  readonly extra?: readonly number[];
  /** Offsets inside this FPDU after which a TCP segment ends. */
  readonly splits?: readonly number[];
}

export interface SiwGuidedInput {
  /** The MPA Request asks for CRCs (siw then uses and checks them). */
  readonly mpaCrc: boolean;
  /**
   * How the connection is made: `accept` (the steps follow), or a handshake that ends it:
   * `markers` (the MPA Request asks for markers; siw rejects, siw_cm.c siw_proc_mpareq),
   * `early-data` (the steps written with the MPA Request, before siw's MPA Reply:
   * siw_recv_mpa_rr's "peer sent extra data"), `reject` (our listener rejects the connect
   * request: siw_reject sends an MPA Reply with the Reject bit).
   */
  readonly handshake: SiwHandshake;
  /** The siw QP has a receive posted before the steps. */
  readonly postReceive: boolean;
  /** The siw QP posts an RDMA Read of READ_BYTES first (its ORQ then holds an entry). */
  readonly postRead: boolean;
  /** The siw QP receives from an SRQ (limit armed at 1) instead of its own queue. */
  readonly srq: boolean;
  readonly steps: readonly SiwGuidedStep[];
}

export const SIW_HANDSHAKES = ['accept', 'markers', 'early-data', 'reject'] as const;
export type SiwHandshake = (typeof SIW_HANDSHAKES)[number];

/** Where a step's message points: the siw MR as registered. */
export interface SiwGuidedTarget {
  readonly stag: number;
  readonly address: bigint;
}

/** The bytes of the RDMA Read the siw QP posts (two 8-byte Read Responses fill it). */
export const READ_BYTES = 16;
/** What the siw QP's own Read points at (our peer has no memory: any STag, any offset). */
export const PEER_READ_STAG = 0x4d3c2b1a;
export const PEER_READ_OFFSET = 0x0123456789abcde8n;

const PAYLOAD = Uint8Array.of(0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11);
/** A Send that fills the receive (siw-peer's 64-byte MR) to its last byte. */
const FULL_PAYLOAD = Uint8Array.from({ length: 64 }, (_, i) => (0x31 + 7 * i) & 0xff);
/** Where the stock siw reads the Terminate's M, D and R bits (terminateReserved's bits 8-10). */
export const SIW_READS_MDR_AT = 0x700;
/** Most steps an input holds. */
export const MAX_STEPS = 8;

const bare = (base: number): SiwGuidedStep => ({ base, edits: [], ulpduDelta: 0, crcXor: 0 });
const baseIndex = (name: SiwGuidedBase): number => SIW_GUIDED_BASES.indexOf(name);

/**
 * The seeds: each base alone on a connection with a receive and the siw QP's own Read, and
 * the multi-FPDU sequences the assertions send (a two-segment Send and Write, the Read
 * answered in two Responses, a Write then a Read Request), a Send with Invalidate before a
 * Send or the Read Responses, two with CRCs, a Send to an SRQ, and each handshake that ends
 * the connection once.
 */
export function siwGuidedSeeds(): SiwGuidedInput[] {
  const input = (names: readonly SiwGuidedBase[], mpaCrc = false): SiwGuidedInput => ({
    mpaCrc,
    handshake: 'accept',
    postReceive: true,
    postRead: true,
    srq: false,
    steps: names.map((n) => bare(baseIndex(n))),
  });
  return [
    ...SIW_GUIDED_BASES.map((n) => input([n])),
    input(['send-not-last', 'send']),
    input(['write-not-last', 'write']),
    input(['read-response-not-last', 'read-response']),
    input(['write', 'read-request']),
    // The region invalidated, then a Send and Read Responses that need it.
    input(['send-invalidate', 'send']),
    input(['send-invalidate', 'read-response-not-last', 'read-response']),
    input(['send', 'write', 'read-response-not-last', 'read-response'], true),
    input(['send-not-last', 'send'], true),
    // Two Sends to the SRQ: the second leaves fewer receives than the armed limit.
    { ...input(['send', 'send']), srq: true },
    ...aimedSeeds(input),
    ...SIW_HANDSHAKES.filter((h) => h !== 'accept').map((handshake) => ({
      ...input(['send']),
      handshake,
    })),
  ];
}

/** A step with edits (values decimal, as the edits hold them). */
const edited = (
  name: SiwGuidedBase,
  edits: readonly (readonly [SiwFieldEdit['header'], string, bigint])[],
  more: Partial<SiwGuidedStep> = {},
): SiwGuidedStep => ({
  ...bare(baseIndex(name)),
  edits: edits.map(([header, field, value]) => ({ header, field, value: value.toString() })),
  ...more,
});

/**
 * Seeds aimed at siw_qp_rx.c blocks that 200 guided inputs of seed 1 did not reach on 6.1
 * (2026-12-05): TCP segments ending inside a payload (siw_proc_send/_write/_rresp's -EAGAIN,
 * SIW_GET_DATA_MORE), a Read Request whose MSN is not the next (siw_init_rresp), a Terminate
 * with M and D but no R where siw reads them, CRC with pad bytes (siw_get_trailer), a Send
 * with Invalidate naming an STag siw has not got (siw_rdmap_complete's Terminate), and a
 * Write's second segment at another offset (siw_write_check_ntoh).
 */
function aimedSeeds(
  input: (names: readonly SiwGuidedBase[], mpaCrc?: boolean) => SiwGuidedInput,
): SiwGuidedInput[] {
  const base = input([]);
  const of = (steps: SiwGuidedStep[], mpaCrc = false): SiwGuidedInput => ({
    ...base,
    mpaCrc,
    steps,
  });
  return [
    // 2 + 18 (untagged) + 4 payload bytes; 2 + 14 (tagged) + 4.
    of([
      { ...bare(baseIndex('send')), splits: [24] },
      { ...bare(baseIndex('write-not-last')), splits: [20] },
      { ...bare(baseIndex('write')), splits: [20] },
      { ...bare(baseIndex('read-response-not-last')), splits: [20] },
      { ...bare(baseIndex('read-response')), splits: [20] },
    ]),
    of([edited('read-request', [['ddp', 'messageSequenceNumber', 0xffffffffn]])]),
    of([edited('terminate-siw-bits', [['rdma', 'terminateReserved', 0x300n]])]),
    of([edited('send', [], { extra: [0xa5] })], true),
    of([edited('send-invalidate', [['ddp', 'invalidateSTag', 0x12345600n]])]),
    of([bare(baseIndex('write-not-last')), edited('write', [['ddp', 'taggedOffset', 0n]])]),
  ];
}

/** The messages of an input's steps, each with the MSN, MO and offset its place gives it. */
export function stepMessages(input: SiwGuidedInput, t: SiwGuidedTarget): RdmapMessage[] {
  let sendMsn = 1;
  let sendMo = 0;
  let readMsn = 1;
  let termMsn = 1;
  let atomicMsn = 1;
  let writeAt = 0n;
  let responseAt = 0n;
  const send = (
    kind: 'send' | 'send-invalidate' | 'send-se' | 'send-se-invalidate',
    last: boolean,
  ): RdmapMessage => {
    const m = makeSend({
      kind,
      messageSequenceNumber: sendMsn,
      payload: PAYLOAD,
      messageOffset: sendMo,
      last,
      ...(kind.endsWith('invalidate') ? { invalidateSTag: t.stag } : {}),
    });
    if (last) {
      sendMsn++;
      sendMo = 0;
    } else sendMo += PAYLOAD.length;
    return m;
  };
  const tagged = (
    make: (f: TaggedSegmentFields) => RdmapMessage,
    at: bigint,
    last: boolean,
  ): { m: RdmapMessage; next: bigint } => ({
    m: make({ stag: t.stag, taggedOffset: t.address + at, payload: PAYLOAD, last }),
    next: last ? 0n : at + BigInt(PAYLOAD.length),
  });
  const terminate = (withHeaders: boolean, reserved = 0): RdmapMessage => {
    // RFC 5040 §4.8: a Terminate naming a Read Request copies its DDP and RDMA headers.
    const offending = segmentWith(
      makeReadRequest({
        messageSequenceNumber: 1,
        sinkSTag: PEER_READ_STAG,
        sinkTaggedOffset: PEER_READ_OFFSET,
        readSize: 8,
        sourceSTag: t.stag,
        sourceTaggedOffset: t.address,
      }),
    );
    const headers = withHeaders ? terminatedHeadersOf(offending) : undefined;
    const m = makeTerminate({
      messageSequenceNumber: termMsn++,
      layer: 1,
      errorType: 0,
      errorCode: 0,
      ...(headers === undefined ? {} : { headers }),
    });
    return reserved === 0 ? m : { ...m, terminateReserved: reserved };
  };
  const write = (last: boolean): RdmapMessage => {
    const r = tagged(makeRdmaWrite, writeAt, last);
    writeAt = r.next;
    return r.m;
  };
  const response = (last: boolean): RdmapMessage => {
    const r = tagged(makeReadResponse, responseAt, last);
    responseAt = r.next;
    return r.m;
  };
  // One builder per base (a Record over the names: none can be missing).
  const builders: Record<SiwGuidedBase, () => RdmapMessage> = {
    send: () => send('send', true),
    'send-not-last': () => send('send', false),
    'send-invalidate': () => send('send-invalidate', true),
    'send-se': () => send('send-se', true),
    'send-se-invalidate': () => send('send-se-invalidate', true),
    write: () => write(true),
    'write-not-last': () => write(false),
    'read-request': () =>
      makeReadRequest({
        messageSequenceNumber: readMsn++,
        sinkSTag: PEER_READ_STAG,
        sinkTaggedOffset: PEER_READ_OFFSET,
        readSize: PAYLOAD.length,
        sourceSTag: t.stag,
        sourceTaggedOffset: t.address,
      }),
    // The whole region: siw's Read Response is then longer than the payload it builds
    // inline with its header (siw_qp_tx.c MAX_HDR_INLINE), so siw_tx_hdt() sends it.
    'read-request-full': () =>
      makeReadRequest({
        messageSequenceNumber: readMsn++,
        sinkSTag: PEER_READ_STAG,
        sinkTaggedOffset: PEER_READ_OFFSET,
        readSize: FULL_PAYLOAD.length,
        sourceSTag: t.stag,
        sourceTaggedOffset: t.address,
      }),
    'read-response': () => response(true),
    'read-response-not-last': () => response(false),
    terminate: () => terminate(true),
    'terminate-bare': () => terminate(false),
    // The stock siw's little-endian bitfields (iwarp.h struct iwarp_terminate) read M, D and
    // R from bits 8-10 of the Terminate control word, RFC 5040 §4.8's reserved bits: set
    // there, siw_proc_terminate() copies the terminated headers.
    'terminate-siw-bits': () => terminate(true, SIW_READS_MDR_AT),
    'immediate-data': () =>
      makeImmediateData({ messageSequenceNumber: sendMsn++, immediateData: 0x0123456789abcdefn }),
    'send-full': () => ({ ...send('send', true), payload: FULL_PAYLOAD }) as RdmapMessage,
    'atomic-fetch-add': () =>
      makeAtomicRequest({
        operation: 'fetch-add',
        messageSequenceNumber: atomicMsn++,
        requestIdentifier: 0x0a0b0c0d,
        remoteSTag: t.stag,
        remoteTaggedOffset: t.address,
        addOrSwapData: 0x1111111122222222n,
      }),
  };
  return input.steps.map((s) => builders[SIW_GUIDED_BASES[s.base] ?? 'send']());
}

/** The layout and its place in the segment for an edit (undefined: the segment has none). */
function headerOf(
  segment: Uint8Array,
  header: SiwFieldEdit['header'],
): { layout: HeaderLayout; at: number } | undefined {
  const ddp = segmentLayout(segment);
  if (header === 'ddp') return { layout: ddp, at: 0 };
  // The RDMA headers edits name: the Read Request's (RFC 5040 §4.4) and the Terminate's
  // control word (§4.8), after the untagged DDP header; the opcode says which.
  if (ddp !== DDP_UNTAGGED_LAYOUT) return undefined;
  const layout = RDMA_HEADER_OF[(segment[1] ?? 0) & 0x0f];
  if (layout === undefined || segment.length < ddp.length + layout.length) return undefined;
  return { layout, at: ddp.length };
}

/** RDMAP opcode (RFC 5040 §4.2: the control octet's low nibble) -> its RDMA header. */
const RDMA_HEADER_OF: Readonly<Record<number, HeaderLayout>> = {
  1: READ_REQUEST_LAYOUT,
  7: TERMINATE_LAYOUT,
};

/** A step's DDP segment: its message encoded, its edits applied, its extra bytes added. */
export function stepSegment(message: RdmapMessage, step: SiwGuidedStep): Uint8Array {
  let segment = segmentWith(message);
  for (const e of step.edits) {
    const h = headerOf(segment, e.header);
    const f = h?.layout.fields.find((x) => x.name === e.field);
    if (h === undefined || f === undefined) continue;
    const v = BigInt(e.value) & fieldLimit(f);
    setField(segment, h.at, f, f.bits === 64 ? v : Number(v));
  }
  if (step.extra !== undefined && step.extra.length > 0) {
    const grown = new Uint8Array(segment.length + step.extra.length);
    grown.set(segment);
    grown.set(step.extra, segment.length);
    segment = grown;
  }
  return segment;
}

/** The bytes an input sends after the MPA exchange, and where TCP segments end. */
export function siwInputStream(
  input: SiwGuidedInput,
  t: SiwGuidedTarget,
  negotiated: MpaNegotiated,
): { stream: Uint8Array; splits: number[] } {
  const messages = stepMessages(input, t);
  const parts: Uint8Array[] = [];
  const splits: number[] = [];
  let position = 0;
  input.steps.forEach((step, i) => {
    const segment = stepSegment(messages[i] as RdmapMessage, step);
    const length = Math.max(0, Math.min(0xffff, segment.length + step.ulpduDelta));
    const whole = fpduOf(segment, negotiated, {
      ...(step.ulpduDelta === 0 ? {} : { ulpduLength: length }),
      ...(step.crcXor === 0 ? {} : { crcXor: step.crcXor }),
    });
    const fpdu =
      step.cut === undefined
        ? whole
        : whole.subarray(0, Math.max(1, Math.min(step.cut, whole.length)));
    for (const at of step.splits ?? []) if (at > 0 && at < fpdu.length) splits.push(position + at);
    parts.push(fpdu);
    position += fpdu.length;
  });
  const stream = new Uint8Array(position);
  let at = 0;
  for (const p of parts) {
    stream.set(p, at);
    at += p.length;
  }
  return { stream, splits: [...new Set(splits)].sort((a, b) => a - b) };
}

/** The fields a step's base message carries, by header (what `field` mutations pick from). */
export function fieldsOf(base: number): { header: SiwFieldEdit['header']; field: HeaderField }[] {
  const name = SIW_GUIDED_BASES[base] ?? 'send';
  const tagged = name.startsWith('write') || name.startsWith('read-response');
  const ddp = (tagged ? DDP_TAGGED_LAYOUT : DDP_UNTAGGED_LAYOUT).fields.map((field) => ({
    header: 'ddp' as const,
    field,
  }));
  const rdma = name.startsWith('read-request')
    ? READ_REQUEST_LAYOUT
    : name.startsWith('terminate')
      ? TERMINATE_LAYOUT
      : undefined;
  if (rdma === undefined) return ddp;
  return [...ddp, ...rdma.fields.map((field) => ({ header: 'rdma' as const, field }))];
}

/** The mutations, by name (the report counts which ones the corpus kept). */
export const SIW_MUTATIONS = [
  'field',
  'boundary',
  'msn-near-wrap',
  'mo-near-wrap',
  'to-near-2^64',
  'length-near-2^32',
  'ulpdu-off',
  'reserved-opcode',
  'any-opcode',
  'stale-stag',
  'crc',
  'crc-mode',
  'handshake',
  'post-receive',
  'post-read',
  'srq',
  'split-header',
  'split-anywhere',
  'duplicate',
  'swap',
  'drop',
  'truncate',
  'extend',
  'insert',
] as const;
export type SiwMutationName = (typeof SIW_MUTATIONS)[number];

const pick = <T>(random: () => number, list: readonly T[]): T =>
  list[Math.floor(random() * list.length)] as T;

/** A field value: 0, its limit, near it, half of it, or random. */
function valueFor(random: () => number, bits: number, boundary: boolean): bigint {
  const limit = (1n << BigInt(bits)) - 1n;
  if (boundary || random() < 0.5) {
    const near = BigInt(Math.floor(random() * 4));
    const choices = [0n, limit, limit - near, (limit >> 1n) + 1n, near + 1n];
    return pick(random, choices) & limit;
  }
  let v = 0n;
  for (let i = 0; i < Math.ceil(bits / 8); i++) v = (v << 8n) | BigInt(Math.floor(random() * 256));
  return v & limit;
}

/** The DDP header's length (where the MPA framing's 2-byte length adds to offsets). */
const headerBytes = (base: number): number => {
  const name = SIW_GUIDED_BASES[base] ?? 'send';
  const ddp =
    name.startsWith('write') || name.startsWith('read-response')
      ? DDP_TAGGED_LAYOUT.length
      : DDP_UNTAGGED_LAYOUT.length;
  const rdma = name.startsWith('read-request')
    ? READ_REQUEST_LAYOUT.length
    : name.startsWith('terminate')
      ? TERMINATE_LAYOUT.length
      : 0;
  return 2 + ddp + rdma;
};

/** One mutation of `input` (nothing is changed in place). */
export function mutateSiwOnce(
  input: SiwGuidedInput,
  random: () => number,
  kind: SiwMutationName,
): SiwGuidedInput {
  const steps = [...input.steps];
  const i = Math.floor(random() * steps.length);
  const step = steps[i] as SiwGuidedStep;
  const withStep = (s: SiwGuidedStep): SiwGuidedInput => ({
    ...input,
    steps: steps.map((x, j) => (j === i ? s : x)),
  });
  const setNamed = (names: readonly string[] | undefined, value: (bits: number) => bigint) => {
    const all = fieldsOf(step.base);
    const named = names === undefined ? [] : all.filter((f) => names.includes(f.field.name));
    const chosen = pick(random, named.length > 0 ? named : all);
    return withStep({
      ...step,
      edits: [
        ...step.edits,
        {
          header: chosen.header,
          field: chosen.field.name,
          value: value(chosen.field.bits).toString(),
        },
      ],
    });
  };
  const near = (bits: number) => (1n << BigInt(bits)) - BigInt(1 + Math.floor(random() * 16));
  switch (kind) {
    case 'field':
      return setNamed(undefined, (b) => valueFor(random, b, false));
    case 'boundary':
      return setNamed(undefined, (b) => valueFor(random, b, true));
    case 'msn-near-wrap':
      return setNamed(['messageSequenceNumber'], near);
    case 'mo-near-wrap':
      return setNamed(['messageOffset'], near);
    case 'to-near-2^64':
      return setNamed(['taggedOffset', 'sinkTaggedOffset', 'sourceTaggedOffset'], near);
    case 'length-near-2^32':
      return setNamed(['readSize'], near);
    case 'ulpdu-off':
      return withStep({
        ...step,
        ulpduDelta: pick(random, [-1, 1, -2, 2, -4, 4, -8, 8, -20, 40, 0x10000]),
      });
    case 'reserved-opcode':
      // RFC 5040 §4.2 and RFC 7306 §5.1: opcodes 0xc-0xf are reserved.
      return setNamed(['opcode'], () => BigInt(0xc + Math.floor(random() * 4)));
    case 'any-opcode':
      return setNamed(['opcode'], () => BigInt(Math.floor(random() * 16)));
    case 'stale-stag': {
      // A valid STag of another connection: the same MR index, another key (siw_proc_write's
      // mem->stag check), or another index.
      const names = ['stag', 'sourceSTag', 'invalidateSTag'];
      const delta = pick(random, [1n, 0x100n, 0xffn]);
      return setNamed(names, () => BigInt(Math.floor(random() * 2 ** 32)) ^ delta);
    }
    case 'crc':
      return withStep({
        ...step,
        crcXor: step.crcXor === 0 ? (Math.floor(random() * 0xffffffff) | 1) >>> 0 : 0,
      });
    case 'crc-mode':
      return { ...input, mpaCrc: !input.mpaCrc };
    case 'handshake':
      return {
        ...input,
        handshake: input.handshake === 'accept' ? pick(random, SIW_HANDSHAKES) : 'accept',
      };
    case 'post-receive':
      return { ...input, postReceive: !input.postReceive };
    case 'post-read':
      return { ...input, postRead: !input.postRead };
    case 'srq':
      return { ...input, srq: !input.srq };
    case 'split-header':
    case 'split-anywhere': {
      const span = kind === 'split-header' ? headerBytes(step.base) : headerBytes(step.base) + 16;
      const at = 1 + Math.floor(random() * (span - 1));
      return withStep({ ...step, splits: [...new Set([...(step.splits ?? []), at])].slice(0, 8) });
    }
    case 'duplicate':
      return {
        ...input,
        steps: [...steps.slice(0, i + 1), step, ...steps.slice(i + 1)].slice(0, MAX_STEPS),
      };
    case 'swap': {
      const j = Math.floor(random() * steps.length);
      const out = [...steps];
      out[i] = steps[j] as SiwGuidedStep;
      out[j] = step;
      return { ...input, steps: out };
    }
    case 'drop':
      return steps.length < 2 ? input : { ...input, steps: steps.filter((_, j) => j !== i) };
    case 'truncate':
      return withStep({ ...step, cut: 1 + Math.floor(random() * (headerBytes(step.base) + 12)) });
    case 'extend':
      return withStep({
        ...step,
        extra: Array.from({ length: 1 + Math.floor(random() * 32) }, () =>
          Math.floor(random() * 256),
        ),
      });
    case 'insert': {
      const fresh = bare(Math.floor(random() * SIW_GUIDED_BASES.length));
      const at = Math.floor(random() * (steps.length + 1));
      return {
        ...input,
        steps: [...steps.slice(0, at), fresh, ...steps.slice(at)].slice(0, MAX_STEPS),
      };
    }
  }
}

/**
 * Draws a mutation name. `handshake` is rare (an input whose handshake ends the connection
 * never reaches siw's FPDU receive path), the rest equally likely.
 */
function drawMutation(random: () => number): SiwMutationName {
  const kind = pick(random, SIW_MUTATIONS);
  return kind === 'handshake' && random() < 0.75 ? 'field' : kind;
}

/** Several mutations (1-4) of a corpus entry, and their names. */
export function mutateSiw(
  input: SiwGuidedInput,
  random: () => number,
): { input: SiwGuidedInput; applied: SiwMutationName[] } {
  const n = 1 + Math.floor(random() * 4);
  let out = input;
  const applied: SiwMutationName[] = [];
  for (let k = 0; k < n; k++) {
    const kind = drawMutation(random);
    out = mutateSiwOnce(out, random, kind);
    applied.push(kind);
  }
  return { input: out, applied };
}

/**
 * The campaign's next input after the seeds: a corpus entry drawn, then mutated (1-4
 * mutations). The only draws a round makes, so a campaign is the same given its seed and
 * the same corpus growth (the feedback).
 */
export function drawSiwInput(
  corpus: readonly SiwGuidedInput[],
  random: () => number,
): { input: SiwGuidedInput; applied: SiwMutationName[] } {
  const parent = corpus[Math.floor(random() * corpus.length)] as SiwGuidedInput;
  return mutateSiw(parent, random);
}

/** Smaller versions of a step for the minimizer (probe/minimize.ts), the most reduced first. */
export function siwStepReductions(step: SiwGuidedStep): SiwGuidedStep[] {
  const out: SiwGuidedStep[] = [];
  const without = <K extends 'cut' | 'extra' | 'splits'>(k: K): SiwGuidedStep => {
    const { [k]: _, ...rest } = step;
    return rest as SiwGuidedStep;
  };
  if (step.edits.length > 0) out.push({ ...step, edits: [] });
  if (step.edits.length > 1)
    step.edits.forEach((_, i) => {
      out.push({ ...step, edits: step.edits.filter((_, j) => j !== i) });
    });
  if (step.cut !== undefined) out.push(without('cut'));
  if (step.extra !== undefined) out.push(without('extra'));
  if (step.splits !== undefined) out.push(without('splits'));
  if (step.ulpduDelta !== 0) out.push({ ...step, ulpduDelta: 0 });
  if (step.crcXor !== 0) out.push({ ...step, crcXor: 0 });
  return out;
}
