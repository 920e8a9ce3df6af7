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
import type { AssertionVerdict } from './assertion.js';
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

/** The wire line of an FPDU whose ULPDU the codec refuses: its bytes and the reason. */
export function undecodableLine(ulpdu: Uint8Array, error: string): string {
  return `responder> undecodable ulpdu=${hex(ulpdu)} (${error})`;
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
  // RFC 5040 §7: a Terminate ends the stream and the QP leaves RTS; a receive still
  // posted then completes as flushed (the verbs model: IBV_WC_WR_FLUSH_ERR).
  const ended = responder.terminated || received.terminate !== undefined;
  const flushed = done === undefined && ended && responder.postedReceives > 0;
  return {
    answer: {
      wire: sent.map(answerLine),
      receive: flushed
        ? 'error WR_FLUSH_ERR'
        : receiveLine(
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
 * A recorded, explained way siw's answer differs from the engine's, keyed by assertion
 * and siw variant: siw's answer as a function of the engine's (its answer and the
 * Terminates it sent). Every record that names an assertion applies, in order.
 */
export interface KnownIwarpAnswer {
  /** The known-behaviour id reports show. */
  readonly id: string;
  /** Assertion ids it holds for. */
  readonly assertions: readonly string[];
  readonly variants: readonly SiwVariant[];
  /** siw's answer, derived from the engine's. */
  readonly derive: (engine: IwarpAnswer, terminates: readonly Terminate[]) => IwarpAnswer;
  readonly why: string;
}

/**
 * siw.h/iwarp.h: the stock `struct iwarp_terminate` declares its nibbles for
 * __LITTLE_ENDIAN_BITFIELD as layer:4 then etype:4, so on x86 the wire carries the Error
 * Type in the Layer nibble and the other way round (the patched siw's 0001 fixes it).
 */
const swapNibbles = (t: Terminate): Terminate => ({
  ...t,
  layer: t.errorType,
  errorType: t.layer,
});

/** No header copied (siw_send_terminate copies none for an opcode error). */
const noHeaders = (t: Terminate): Terminate => ({
  ...t,
  segmentLengthValid: false,
  ddpHeaderIncluded: false,
  rdmaHeaderIncluded: false,
  ddpSegmentLength: undefined,
  terminatedDdpHeader: undefined,
  terminatedRdmaHeader: undefined,
});

/** The engine's answer with each Terminate rewritten by `map`. */
const terminatesAs =
  (map: (t: Terminate) => Terminate) =>
  (engine: IwarpAnswer, terminates: readonly Terminate[]): IwarpAnswer => {
    let i = 0;
    return {
      ...engine,
      wire: engine.wire.map((line) =>
        line.includes(' terminate ') && terminates[i] !== undefined
          ? answerLine(map(terminates[i++]!))
          : line,
      ),
    };
  };

const OPCODE_TERMINATE =
  'siw answers an opcode it does not implement with Terminate RDMAP / Remote Operation Error / ' +
  'Unexpected OpCode (siw_qp_rx.c siw_get_hdr, as RFC 7306 §1.1 says), but siw_send_terminate ' +
  'copies no header for it, where RFC 7306 §8.1 asks for the DDP header';

export const KNOWN_IWARP_ANSWERS: readonly KnownIwarpAnswer[] = [
  {
    id: 'siw-terminate-layout',
    assertions: [
      'siw-probe-atomic-request',
      'siw-probe-immediate-data',
      'siw-rdmap-unknown-opcode-first',
      // Immediate Data is an opcode the stock siw lacks, whatever its length.
      'siw-rdmap-immediate-data-short',
    ],
    variants: ['stock'],
    derive: terminatesAs((t) => noHeaders(swapNibbles(t))),
    why:
      `${OPCODE_TERMINATE}; and the stock struct iwarp_terminate bitfields put Layer in the low ` +
      'nibble on little-endian hosts (the wire reads Layer 2, Error Type 0)',
  },
  {
    id: 'siw-terminate-layout',
    assertions: ['siw-mpa-bad-crc'],
    variants: ['stock'],
    derive: terminatesAs(swapNibbles),
    why:
      'the stock struct iwarp_terminate bitfields put Layer in the low nibble on little-endian ' +
      'hosts: LLP / MPA / CRC Error reads Layer 0, Error Type 2 on the wire',
  },
  {
    id: 'siw-opcode-terminate-no-header',
    assertions: ['siw-rdmap-unknown-opcode-first'],
    variants: ['rfc7306'],
    derive: terminatesAs(noHeaders),
    why: OPCODE_TERMINATE,
  },
  {
    id: 'siw-crc-checked-after-placement',
    assertions: ['siw-mpa-bad-crc'],
    variants: ['stock', 'rfc7306'],
    derive: (engine) => ({
      ...engine,
      // The Send's 8 bytes, placed at the receive buffer's start.
      memory: `8877665544332211${engine.memory.slice(16)}`,
    }),
    why:
      "siw_tcp_rx_data places an FPDU's payload into the receive buffer (SIW_GET_DATA_START, " +
      'siw_proc_send) before it reads the trailer; siw_get_trailer compares the CRC only then. ' +
      'RFC 5044 §7.2 says an FPDU whose CRC fails is not delivered: the buffer holds the payload ' +
      'of a Send that completed in error',
  },
  {
    id: 'siw-failed-send-completes-receive',
    assertions: [
      'siw-ddp-invalid-qn',
      'siw-ddp-msn-out-of-range',
      'siw-ddp-mo-beyond-buffer',
      'siw-mpa-bad-crc',
    ],
    variants: ['stock', 'rfc7306'],
    derive: (engine) => ({
      ...engine,
      receive: engine.receive === 'error WR_FLUSH_ERR' ? 'error GENERAL_ERR' : engine.receive,
    }),
    why:
      "siw takes the receive WQE when a Send segment's header arrives, before the checks that " +
      'fail; the error path of siw_tcp_rx_data calls siw_rdmap_complete(qp, rv), which completes ' +
      'that WQE with SIW_WC_GENERAL_ERR ("error != 0 && wc_status == SIW_WC_SUCCESS"); the ' +
      'engine leaves the receive untouched, so it is flushed (WR_FLUSH_ERR)',
  },
  {
    id: 'siw-receive-space-short',
    assertions: ['siw-mpa-length-over-buffer'],
    variants: ['rfc7306'],
    derive: (engine) => ({
      ...engine,
      wire: [
        'responder> terminate qn=2 msn=1 mo=0 L layer=1 type=2 code=0x02 hdrct=MD- seglen=65535 ddp=414300000000000000000000000100000000',
      ],
      receive: 'error LOC_LEN_ERR',
    }),
    why:
      "siw checks a Send's announced length against the receive buffer as soon as its header " +
      'is in (siw_send_check_ntoh, "receive space short") and terminates with DDP Untagged ' +
      'Buffer Error 0x02 and the receive in LOC_LEN_ERR, where the engine (RFC 5044 §7.2) waits ' +
      "for the FPDU's 65535 bytes (the failure table's message-too-long row records the same)",
  },
];

/** The verdict for siw's answer, and the records that explain it when it differs. */
export function judgeIwarp(
  assertion: IwarpAssertion,
  variant: SiwVariant,
  expected: IwarpAnswer,
  expectedTerminates: readonly Terminate[],
  observed: IwarpAnswer,
  known: readonly KnownIwarpAnswer[] = KNOWN_IWARP_ANSWERS,
): { verdict: AssertionVerdict; known: readonly KnownIwarpAnswer[] } {
  const same = (a: IwarpAnswer, b: IwarpAnswer): boolean =>
    a.receive === b.receive && a.memory === b.memory && a.wire.join('\n') === b.wire.join('\n');
  const records = known.filter(
    (k) => k.assertions.includes(assertion.id) && k.variants.includes(variant),
  );
  if (same(expected, observed))
    return { verdict: records.length === 0 ? 'pass' : 'fail', known: [] };
  const derived = records.reduce((a, k) => k.derive(a, expectedTerminates), expected);
  if (records.length > 0 && same(derived, observed)) return { verdict: 'known', known: records };
  return { verdict: 'fail', known: [] };
}
