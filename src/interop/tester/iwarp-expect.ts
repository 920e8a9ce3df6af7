/**
 * What the reference engine answers to an iWARP assertion's bytes, and the judgement of
 * siw's answer against it. The engine is set up as siw was (the same STag, address,
 * access, IRD, posted receive and memory; with the RFC 7306 extensions only for the
 * patched siw) and reads the bytes through its MPA layer (engine/responder/mpa-receiver.ts)
 * and Responder, so every expectation comes from the engine's rules.
 */
import type { MpaNegotiated, RdmapMessage, Terminate } from '../../codec/iwarp/messages.js';
import { TaggedBufferTable } from '../../engine/memory/tagged-buffer.js';
import { receiveMpaStream } from '../../engine/responder/mpa-receiver.js';
import { Responder } from '../../engine/responder/responder.js';
import { accessMaskOf } from '../../verbs/mr.js';
import { SIW_BUFFER_BYTES, type SiwTarget } from '../peer/siw-peer.js';
import { wireLine } from '../wire.js';
import type { AssertionVerdict } from './assertion-shape.js';
import type { IwarpAssertion } from './iwarp-assertions.js';

export type SiwVariant = 'stock' | 'rfc7306';

/** One side's answer; each part prints and compares as it is. */
export interface IwarpAnswer {
  /** The messages sent back, one wire line each. */
  readonly wire: readonly string[];
  /** The receive completion: `none`, `ok bytes=<n> imm=<hex>|- data=<hex of 8>` or `error`. */
  readonly receive: string;
  /** The MR afterwards (hex). */
  readonly memory: string;
}

const hex = (bytes: Uint8Array): string => Buffer.from(bytes).toString('hex');

/** One wire line; an Atomic Response adds what the shared line leaves out. */
export function answerLine(message: RdmapMessage): string {
  const base = wireLine('responder', message, []);
  if (message.kind !== 'atomic-response') return base;
  return `${base} req=0x${message.originalRequestIdentifier.toString(16)} orig=0x${message.originalRemoteDataValue.toString(16)}`;
}

/** The MR's contents before the assertion: its word in host (little-endian) order. */
export function initialContents(word: bigint | undefined): Uint8Array {
  const memory = new Uint8Array(SIW_BUFFER_BYTES);
  new DataView(memory.buffer).setBigUint64(0, word ?? 0n, true);
  return memory;
}

/** The engine's answer to `assertion` sent to an MR at `target`, on siw `variant`. */
export function engineIwarpAnswer(
  assertion: IwarpAssertion,
  target: SiwTarget,
  negotiated: MpaNegotiated,
  variant: SiwVariant,
): { answer: IwarpAnswer; terminates: readonly Terminate[] } {
  const buffers = new TaggedBufferTable();
  const buffer = buffers.register({
    stag: target.stag,
    baseTaggedOffset: target.address,
    length: SIW_BUFFER_BYTES,
    access: accessMaskOf(assertion.setup.access),
    protectionDomain: 1,
    contents: initialContents(assertion.setup.initialWord),
  });
  const extensions = variant === 'rfc7306';
  const responder = new Responder({
    stream: { streamId: 1, protectionDomain: 1 },
    buffers,
    ird: assertion.setup.ird ?? 4,
    supportsAtomics: extensions,
    supportsImmediateData: extensions,
  });
  if (assertion.setup.postReceive) responder.postReceive({ id: 1n, length: SIW_BUFFER_BYTES });
  const received = receiveMpaStream(responder, assertion.stream(target, negotiated), negotiated);
  const sent: RdmapMessage[] = received.results.flatMap((r) => [...r.sent]);
  if (received.terminate !== undefined) sent.push(received.terminate);
  const done = received.results.flatMap((r) => [...r.completions])[0];
  const memory = new Uint8Array(buffer.memory);
  // siw's receive buffer is its MR: what a receive got lands in the same memory.
  if (done !== undefined) memory.set(done.data.subarray(0, SIW_BUFFER_BYTES));
  return {
    answer: {
      wire: sent.map(answerLine),
      receive: receiveLine(
        done === undefined
          ? undefined
          : { bytes: done.byteLength, immediate: done.immediateData, data: done.data },
      ),
      memory: hex(memory),
    },
    terminates: sent.filter((m): m is Terminate => m.kind === 'terminate'),
  };
}

/** The receive completion as one line. */
export function receiveLine(
  completion: { bytes: number; immediate: bigint | undefined; data: Uint8Array } | undefined,
): string {
  if (completion === undefined) return 'none';
  // Verbs exposes the low 32 bits of the 8 bytes (imm_data; the engine's projection too).
  const imm =
    completion.immediate === undefined ? '-' : (completion.immediate & 0xffff_ffffn).toString(16);
  return `ok bytes=${completion.bytes} imm=${imm} data=${hex(completion.data.subarray(0, 8))}`;
}

/**
 * A recorded, explained way siw's answer differs from the engine's, as a function of the
 * engine's answer (applied to its Terminates), keyed by assertion and siw variant.
 */
export interface KnownIwarpAnswer {
  /** The known-behaviour id reports show. */
  readonly id: string;
  /** Assertion ids it holds for. */
  readonly assertions: readonly string[];
  readonly variants: readonly SiwVariant[];
  /** siw's Terminate, derived from the engine's. */
  readonly terminate: (engine: Terminate) => Terminate;
  readonly why: string;
}

/**
 * siw_qp_rx.c/siw.h: `struct iwarp_terminate` declares its layer and etype nibbles for
 * __LITTLE_ENDIAN_BITFIELD as layer:4 then etype:4, so on x86 the wire carries the Error
 * Type in the Layer nibble and the other way round (the suite's `siw-terminate-layout`).
 */
const swapNibbles = (t: Terminate): Terminate => ({
  ...t,
  layer: t.errorType,
  errorType: t.layer,
});

/** siw_send_terminate copies no header for errors it finds before the DDP header is read. */
const noHeaders = (t: Terminate): Terminate => ({
  ...swapNibbles(t),
  segmentLengthValid: false,
  ddpHeaderIncluded: false,
  rdmaHeaderIncluded: false,
  ddpSegmentLength: undefined,
  terminatedDdpHeader: undefined,
  terminatedRdmaHeader: undefined,
});

export const KNOWN_IWARP_ANSWERS: readonly KnownIwarpAnswer[] = [
  {
    id: 'siw-terminate-layout',
    assertions: [
      'siw-probe-atomic-request',
      'siw-probe-immediate-data',
      'siw-rdmap-unknown-opcode-first',
    ],
    variants: ['stock', 'rfc7306'],
    terminate: noHeaders,
    why:
      'siw answers an opcode it does not know with Terminate RDMAP / Remote Operation Error / ' +
      'Unexpected OpCode (siw_qp_rx.c siw_get_hdr), but its struct iwarp_terminate bitfields put ' +
      'Layer in the low nibble on little-endian hosts (the wire reads Layer 2, Error Type 0) and ' +
      'siw_send_terminate copies no header for an opcode error (RFC 7306 §8.1 asks for the DDP header)',
  },
];

/** The verdict for siw's answer, and the record that explains it when it differs. */
export function judgeIwarp(
  assertion: IwarpAssertion,
  variant: SiwVariant,
  expected: IwarpAnswer,
  expectedTerminates: readonly Terminate[],
  observed: IwarpAnswer,
  known: readonly KnownIwarpAnswer[] = KNOWN_IWARP_ANSWERS,
): { verdict: AssertionVerdict; known: KnownIwarpAnswer | undefined } {
  const same = (a: IwarpAnswer, b: IwarpAnswer): boolean =>
    a.receive === b.receive && a.memory === b.memory && a.wire.join('\n') === b.wire.join('\n');
  if (same(expected, observed)) return { verdict: 'pass', known: undefined };
  for (const record of known) {
    if (!record.assertions.includes(assertion.id) || !record.variants.includes(variant)) continue;
    let i = 0;
    const wire = expected.wire.map((line) =>
      line.includes(' terminate ') ? answerLine(record.terminate(expectedTerminates[i++]!)) : line,
    );
    if (same({ ...expected, wire }, observed)) return { verdict: 'known', known: record };
  }
  return { verdict: 'fail', known: undefined };
}
