/**
 * What the reference engine answers to an iWARP assertion's bytes, and the judgement of
 * siw's answer against it. The engine is set up as siw was (the same STag, address,
 * access, IRD, posted receive and memory; with the RFC 7306 extensions only for the
 * patched siw) and reads the bytes through its MPA layer (engine/responder/mpa-receiver.ts)
 * and Responder, so every expectation comes from the engine's rules.
 */

import { makeSend } from '../codec/iwarp/build.js';
import type { MpaNegotiated, RdmapMessage, Terminate } from '../codec/iwarp/messages.js';
import { decodeRdmapMessage, encodeRdmapMessage } from '../codec/iwarp/rdmap.js';
import { buildTerminate } from '../engine/errors/terminate.js';
import { TaggedBufferTable } from '../engine/memory/tagged-buffer.js';
import { receiveMpaStream } from '../engine/responder/mpa-receiver.js';
import { Responder } from '../engine/responder/responder.js';
import { wireLine } from '../judge/wire.js';
import { accessMaskOf } from '../verbs/mr.js';
import type { AssertionVerdict } from './assertion.js';
import type { IwarpAssertion } from './iwarp-assertions.js';
import { segmentWith } from './iwarp-packets.js';
import { SIW_BUFFER_BYTES, type SiwTarget } from './siw-peer.js';

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

/** An answer with the Terminates its wire lines show, in order, as records rewrite them. */
export interface Derived {
  readonly answer: IwarpAnswer;
  readonly terminates: readonly Terminate[];
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
  /** siw's answer, derived from the engine's (and from the records applied before). */
  readonly derive: (engine: Derived) => Derived;
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
/** The wire lines with each Terminate line rewritten by `line` from the Terminates in order. */
function withTerminateLines(
  d: Derived,
  terminates: readonly Terminate[],
  line: (t: Terminate) => string,
): Derived {
  let i = 0;
  return {
    answer: {
      ...d.answer,
      wire: d.answer.wire.map((l) =>
        l.includes(' terminate ') && terminates[i] !== undefined ? line(terminates[i++]!) : l,
      ),
    },
    terminates,
  };
}

const terminatesAs =
  (map: (t: Terminate) => Terminate) =>
  (d: Derived): Derived =>
    withTerminateLines(d, d.terminates.map(map), answerLine);

/**
 * A Terminate as the stock siw puts it on the wire (patches/siw/0001 describes both bugs):
 * the Terminate Control field from little-endian bitfields (Layer in the low nibble of the
 * first byte, Error Type in the high one; M, D, R in the low bits of the third byte), and,
 * with M set, the copied DDP Segment Length cut to the payload alone. The codec refuses
 * such a Terminate (a header copy no Hdrct bit announces), so it shows as undecodable.
 */
function stockTerminateLine(t: Terminate): string {
  const bytes = encodeRdmapMessage(t);
  // The Terminate Control field follows the 18-byte untagged DDP header (QN 2).
  const at = 18;
  bytes[at] = ((t.errorType & 0x0f) << 4) | (t.layer & 0x0f);
  bytes[at + 1] = t.errorCode;
  bytes[at + 2] =
    (t.segmentLengthValid ? 1 : 0) | (t.ddpHeaderIncluded ? 2 : 0) | (t.rdmaHeaderIncluded ? 4 : 0);
  bytes[at + 3] = 0;
  if (t.segmentLengthValid && t.ddpSegmentLength !== undefined && t.terminatedDdpHeader) {
    const payload = t.ddpSegmentLength - t.terminatedDdpHeader.length;
    bytes[at + 4] = (payload >> 8) & 0xff;
    bytes[at + 5] = payload & 0xff;
  }
  const decoded = decodeRdmapMessage(bytes);
  return decoded.ok ? answerLine(decoded.value) : undecodableLine(bytes, decoded.error.message);
}

/** The engine's answer with each Terminate as the stock siw lays it out. */
const stockLayout = (d: Derived): Derived =>
  withTerminateLines(d, d.terminates, stockTerminateLine);

/** The engine's answer with each Terminate's three codes replaced (its copy kept). */
const codesAs = (layer: number, errorType: number, errorCode: number) =>
  terminatesAs((t) => ({ ...t, layer, errorType, errorCode }));

/** The engine's answer with its Terminate replaced by one with no header copy. */
const bareTerminate = (layer: number, errorType: number, errorCode: number) =>
  terminatesAs((t) => noHeaders({ ...t, layer, errorType, errorCode }));

/**
 * siw's Terminate for a Send announcing more than the receive holds: DDP Untagged Buffer
 * Error 0x02 with the Send's DDP header and the announced ULPDU Length (65535) copied.
 */
function receiveSpaceShortTerminate(): Terminate {
  const send = segmentWith(makeSend({ messageSequenceNumber: 1, payload: new Uint8Array(8) }));
  const t = buildTerminate('rfc7306', 1, 'no-receive-buffer', { bytes: send });
  return { ...t, ddpSegmentLength: 0xffff };
}

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
    derive: (d) => ({
      ...d,
      // The Send's 8 bytes, placed at the receive buffer's start.
      answer: { ...d.answer, memory: `8877665544332211${d.answer.memory.slice(16)}` },
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
    derive: (d) => ({ ...d, answer: { ...d.answer, receive: 'error GENERAL_ERR' } }),
    why:
      "siw takes the receive WQE when a Send segment's header arrives, before the checks that " +
      'fail; the error path of siw_tcp_rx_data calls siw_rdmap_complete(qp, rv), which completes ' +
      'that WQE with SIW_WC_GENERAL_ERR ("error != 0 && wc_status == SIW_WC_SUCCESS"); the ' +
      'engine leaves the receive untouched, so it is flushed (WR_FLUSH_ERR)',
  },
  {
    id: 'siw-access-is-ddp-invalid-stag',
    assertions: ['siw-ddp-unauthorised-stag'],
    variants: ['stock', 'rfc7306'],
    // DDP layer (1), Tagged Buffer Error (1), Invalid STag (0x00); the copy is kept.
    derive: terminatesAs((t) => ({ ...t, layer: 1, errorType: 1, errorCode: 0x00 })),
    why:
      'siw_qp.c siw_tagged_error maps E_ACCESS_PERM to DDP_ECODE_T_INVALID_STAG ("RFC 5041 ' +
      '(DDP) lacks an ecode for insufficient access permissions"); the engine reports the ' +
      'RDMAP Remote Protection Error Access Rights Violation (RFC 5040 §4.8, code 0x02), ' +
      'which siw_rdmap_error uses only for RDMAP-level checks',
  },
  {
    id: 'siw-mo-must-be-in-order',
    assertions: ['siw-ddp-mo-beyond-buffer'],
    variants: ['stock', 'rfc7306'],
    derive: codesAs(1, 2, 0x04),
    why:
      "siw_send_check_ntoh requires a Send segment's MO to equal the bytes of the message " +
      'received so far (in-order placement) and answers DDP Untagged Buffer Error Invalid MO ' +
      '(0x04); the engine checks that MO + length fits the receive buffer (RFC 5041 §7.2 0x05, ' +
      'message too long)',
  },
  {
    id: 'siw-short-ulpdu-is-llp-error',
    assertions: ['siw-mpa-length-underflow', 'siw-rdmap-immediate-data-short'],
    variants: ['rfc7306'],
    derive: bareTerminate(2, 0, 0x03),
    why:
      'siw, with the 2026 underflow fix, refuses an MPA ULPDU Length shorter than the ' +
      "opcode's header (iwarp_pktinfo[].hdr_len; the patched siw's Immediate Data header holds " +
      'its 8 bytes) with Terminate LLP / MPA / 0x03 and no header copy; the engine hands the ' +
      'short ULPDU to DDP, which cannot decode it (RDMAP Remote Operation Error, Unspecified). ' +
      "Observed on 6.1.192; the fix's diff was not read",
  },
  {
    id: 'siw-short-ulpdu-is-llp-error',
    assertions: ['siw-mpa-length-underflow'],
    variants: ['stock'],
    derive: bareTerminate(0, 2, 0x03),
    why:
      'as on the patched siw (LLP / MPA / 0x03 for a ULPDU Length shorter than the header), ' +
      'with the stock Terminate layout: Layer and Error Type nibbles swapped',
  },
  {
    id: 'siw-reads-header-past-ulpdu-length',
    assertions: ['siw-mpa-markers-not-negotiated'],
    variants: ['rfc7306'],
    derive: bareTerminate(1, 2, 0x06),
    why:
      'siw_get_hdr copies the 14-byte DDP header from the stream before looking at the ULPDU ' +
      "Length: with a 4-byte marker in front, the marker's zero bytes sit where the DDP control " +
      'byte is, and the first check that fails is the DDP version (Terminate DDP / Untagged / ' +
      'Invalid DDP Version 0x06, no copy); the engine reads the marker as a ULPDU Length of 0 ' +
      'and refuses the empty ULPDU (RDMAP Unspecified)',
  },
  {
    id: 'siw-reads-header-past-ulpdu-length',
    assertions: ['siw-mpa-markers-not-negotiated'],
    variants: ['stock'],
    derive: bareTerminate(2, 1, 0x06),
    why: 'as on the patched siw, with the stock Terminate layout (nibbles swapped)',
  },
  {
    id: 'siw-unexpected-read-response-is-ddp-catastrophic',
    assertions: ['siw-rdmap-opcode-sequence'],
    variants: ['stock', 'rfc7306'],
    derive: codesAs(1, 0, 0x00),
    why:
      'siw_proc_rresp finds the ORQ empty (siw_orqe_start_rx: "ORQ empty") and ends in its ' +
      'error_term: Terminate DDP / Local Catastrophic; the engine answers a response nothing ' +
      'asked for as RDMAP Unexpected OpCode (RFC 5040 §7)',
  },
  {
    id: 'siw-receive-space-short',
    assertions: ['siw-mpa-length-over-buffer'],
    variants: ['stock', 'rfc7306'],
    derive: (d) => {
      const terminate = receiveSpaceShortTerminate();
      return {
        answer: { ...d.answer, wire: [answerLine(terminate)], receive: 'error LOC_LEN_ERR' },
        terminates: [terminate],
      };
    },
    why:
      "siw checks a Send's announced length against the receive buffer as soon as its header " +
      'is in (siw_send_check_ntoh, "receive space short") and terminates with DDP Untagged ' +
      'Buffer Error 0x02 and the receive in LOC_LEN_ERR, where the engine (RFC 5044 §7.2) waits ' +
      "for the FPDU's 65535 bytes (the failure table's message-too-long row records the same)",
  },
  {
    id: 'siw-ddp-terminate-layout',
    assertions: [
      'siw-mpa-length-over-buffer',
      'siw-ddp-invalid-qn',
      'siw-ddp-msn-out-of-range',
      'siw-ddp-mo-beyond-buffer',
      'siw-ddp-invalid-stag',
      'siw-ddp-unauthorised-stag',
      'siw-rdmap-opcode-sequence',
    ],
    variants: ['stock'],
    // Applied last (see the order of this table): the codes are siw's by then.
    derive: stockLayout,
    why:
      "the stock siw's Terminates with a header copy are malformed on x86 (patches/siw/0001): " +
      'struct iwarp_terminate little-endian bitfields put Layer and Error Type in swapped nibbles ' +
      'and the M/D/R bits in the low bits of the third byte, and siw rewrites the copied DDP ' +
      'Segment Length to the payload length; a decoder reading RFC 5040 §4.8 sees header bytes no ' +
      'Hdrct bit announces',
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
    return { verdict: records.length === 0 ? 'match' : 'fail', known: [] };
  const derived = records.reduce((d, k) => k.derive(d), {
    answer: expected,
    terminates: expectedTerminates,
  } as Derived);
  if (records.length > 0 && same(derived.answer, observed))
    return { verdict: 'known', known: records };
  return { verdict: 'fail', known: [] };
}
