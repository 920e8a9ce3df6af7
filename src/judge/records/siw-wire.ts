/**
 * The records of siw as the iWARP packet tester meets it (src/probe/iwarp-*.ts): siw's
 * answer to an assertion as a function of the engine's (`derive`: its wire lines, receive
 * and memory, with the Terminates rewritten as siw lays them out). Field values cannot
 * say these: the Terminate siw sends is the engine's, changed, and differs per assertion.
 * Every record in scope applies, in this table's order. The siw variants are providers:
 * `siw` (stock) and `siw+rfc7306` (patched). No kernel range: measured unchanged on every
 * kernel line the tester runs (6.1, 6.12, 7.3).
 */
import { makeSend } from '../../codec/iwarp/build.js';
import type { Terminate } from '../../codec/iwarp/messages.js';
import { decodeRdmapMessage, encodeRdmapMessage } from '../../codec/iwarp/rdmap.js';
import { buildTerminate } from '../../engine/errors/terminate.js';
import { answerLine, type IwarpExpectation, undecodableLine } from '../iwarp-answer.js';
import type { BehaviourRecord } from '../record.js';
import type { VersionRange } from '../version-range.js';

/** Every kernel. */
const ANY_KERNEL: VersionRange = { from: '0' };

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
  d: IwarpExpectation,
  terminates: readonly Terminate[],
  line: (t: Terminate) => string,
): IwarpExpectation {
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
  (d: IwarpExpectation): IwarpExpectation =>
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
const stockLayout = (d: IwarpExpectation): IwarpExpectation =>
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
  // The Send's DDP segment as the tester sends it (probe/iwarp-packets.ts segmentWith).
  const send = encodeRdmapMessage(
    makeSend({ messageSequenceNumber: 1, payload: new Uint8Array(8) }),
    { strict: false },
  );
  const t = buildTerminate('rfc7306', 1, 'no-receive-buffer', { bytes: send });
  return { ...t, ddpSegmentLength: 0xffff };
}

const OPCODE_TERMINATE =
  'siw answers an opcode it does not implement with Terminate RDMAP / Remote Operation Error / ' +
  'Unexpected OpCode (siw_qp_rx.c siw_get_hdr, as RFC 7306 §1.1 says), but siw_send_terminate ' +
  'copies no header for it, where RFC 7306 §8.1 asks for the DDP header';

/**
 * siw-split-header-takes-payload-byte (6.12): the first 16 segments (data 0-47) placed; the
 * 17th, cut after header byte 17, loses its first data byte to the header and places the
 * other two at MO 48; the Terminate siw then sends for the misframed 18th (measured on
 * 6.12.95: Layer DDP, Untagged Buffer, Invalid MO, its header copied one byte late).
 */
const SPLIT_HEADER_PLACED = 48;
const SPLIT_HEADER_TERMINATE_DDP = '014300000000000000000000000100000033';
/** The patched siw's Terminate (RFC 5040 layout), and the stock siw's as it decodes. */
const SPLIT_HEADER_TERMINATE = {
  patched: `responder> terminate qn=2 msn=1 mo=0 L layer=1 type=2 code=0x04 hdrct=MD- seglen=21 ddp=${SPLIT_HEADER_TERMINATE_DDP}`,
  stock:
    'responder> undecodable ulpdu=414700000000000000020000000100000000210403000003' +
    `${SPLIT_HEADER_TERMINATE_DDP} (rdmap.terminate at offset 22: bad-length: 20 bytes after ` +
    'the Terminate header that no Hdrct bit announces)',
} as const;

const splitHeaderTakesPayloadByte =
  (terminate: string) =>
  (d: IwarpExpectation): IwarpExpectation => {
    const engine = Buffer.from(d.answer.memory, 'hex');
    const memory = new Uint8Array(engine.length);
    memory.set(engine.subarray(0, SPLIT_HEADER_PLACED));
    memory.set(
      engine.subarray(SPLIT_HEADER_PLACED + 1, SPLIT_HEADER_PLACED + 3),
      SPLIT_HEADER_PLACED,
    );
    return {
      answer: {
        wire: [terminate],
        receive: 'error GENERAL_ERR',
        memory: Buffer.from(memory).toString('hex'),
      },
      terminates: d.terminates,
    };
  };

export const SIW_WIRE_RECORDS: readonly BehaviourRecord[] = [
  {
    id: 'siw-terminate-layout',
    class: 'defect',
    rule: 'RFC 5040 §4.8 (the Terminate Control field: Layer in the high nibble, then Error Type; the Hdrct bits announce the copied headers); RFC 7306 §8.1 (the Terminated DDP Header is included)',
    provider: 'siw',
    kernel: ANY_KERNEL,
    scope: [
      'siw-probe-atomic-request',
      'siw-probe-immediate-data',
      'siw-rdmap-unknown-opcode-first',
      // Immediate Data is an opcode the stock siw lacks, whatever its length.
      'siw-rdmap-immediate-data-short',
    ],
    derive: terminatesAs((t) => noHeaders(swapNibbles(t))),
    why:
      `${OPCODE_TERMINATE}; and the stock struct iwarp_terminate bitfields put Layer in the low ` +
      'nibble on little-endian hosts (the wire reads Layer 2, Error Type 0)',
  },
  {
    id: 'siw-terminate-layout',
    class: 'defect',
    rule: 'RFC 5040 §4.8 (the Terminate Control field: Layer in the high nibble, then Error Type; the Hdrct bits announce the copied headers); RFC 7306 §8.1 (the Terminated DDP Header is included)',
    provider: 'siw',
    kernel: ANY_KERNEL,
    scope: ['siw-mpa-bad-crc'],
    derive: terminatesAs(swapNibbles),
    why:
      'the stock struct iwarp_terminate bitfields put Layer in the low nibble on little-endian ' +
      'hosts: LLP / MPA / CRC Error reads Layer 0, Error Type 2 on the wire',
  },
  {
    id: 'siw-opcode-terminate-no-header',
    class: 'defect',
    rule: 'RFC 7306 §8.1: for an error on an incoming message the Terminate MUST include the Terminated DDP Header; RFC 5040 §7',
    unclear:
      'RFC 7306 §8.1 states it for the messages RFC 7306 defines; for an opcode no RFC defines the copy rests on RFC 5040 §7, not read here',
    provider: 'siw+rfc7306',
    kernel: ANY_KERNEL,
    scope: ['siw-rdmap-unknown-opcode-first'],
    derive: terminatesAs(noHeaders),
    why: OPCODE_TERMINATE,
  },
  {
    id: 'siw-crc-checked-after-placement',
    class: 'defect',
    rule: 'RFC 5044 §7.2 (an FPDU whose CRC fails is not passed to DDP), §8',
    provider: 'siw',
    alsoFor: ['siw+rfc7306'],
    kernel: ANY_KERNEL,
    scope: ['siw-mpa-bad-crc'],
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
    class: 'allowed',
    rule: 'RFC 5040 §7 names no completion status for a receive the failing Send had begun to fill; ibv_poll_cq(3) lets a receive end in error',
    unclear: 'whether the taken receive must be flushed instead is not stated in the texts here',
    provider: 'siw',
    alsoFor: ['siw+rfc7306'],
    kernel: ANY_KERNEL,
    scope: [
      'siw-ddp-invalid-qn',
      'siw-ddp-msn-out-of-range',
      'siw-ddp-mo-beyond-buffer',
      'siw-mpa-bad-crc',
    ],
    derive: (d) => ({ ...d, answer: { ...d.answer, receive: 'error GENERAL_ERR' } }),
    why:
      "siw takes the receive WQE when a Send segment's header arrives, before the checks that " +
      'fail; the error path of siw_tcp_rx_data calls siw_rdmap_complete(qp, rv), which completes ' +
      'that WQE with SIW_WC_GENERAL_ERR ("error != 0 && wc_status == SIW_WC_SUCCESS"); the ' +
      'engine leaves the receive untouched, so it is flushed (WR_FLUSH_ERR)',
  },
  {
    id: 'siw-access-is-ddp-invalid-stag',
    class: 'defect',
    rule: 'RFC 5040 §4.8: an access-rights failure on a tagged buffer is the RDMAP Remote Protection Error, Access Rights Violation (0x02)',
    unclear:
      'siw_qp.c siw_tagged_error chooses the DDP code on purpose ("RFC 5041 lacks an ecode for insufficient access permissions"); which layer reports it is not stated as a MUST in the texts here',
    provider: 'siw',
    alsoFor: ['siw+rfc7306'],
    kernel: ANY_KERNEL,
    scope: ['siw-ddp-unauthorised-stag'],
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
    class: 'allowed',
    rule: 'RFC 5041 §7.2 lists both Untagged Buffer errors a Send beyond its buffer meets (0x04 Invalid MO, 0x05 message too long) and does not order the checks',
    provider: 'siw',
    alsoFor: ['siw+rfc7306'],
    kernel: ANY_KERNEL,
    scope: ['siw-ddp-mo-beyond-buffer'],
    derive: codesAs(1, 2, 0x04),
    why:
      "siw_send_check_ntoh requires a Send segment's MO to equal the bytes of the message " +
      'received so far (in-order placement) and answers DDP Untagged Buffer Error Invalid MO ' +
      '(0x04); the engine checks that MO + length fits the receive buffer (RFC 5041 §7.2 0x05, ' +
      'message too long)',
  },
  {
    id: 'siw-short-ulpdu-is-llp-error',
    class: 'allowed',
    rule: "RFC 5044 §7.2 and RFC 5040 §4.8 name no error for a ULPDU shorter than its DDP header; the LLP code is siw's choice (on stock siw with the layout of siw-terminate-layout)",
    provider: 'siw+rfc7306',
    kernel: ANY_KERNEL,
    scope: ['siw-mpa-length-underflow', 'siw-rdmap-immediate-data-short'],
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
    class: 'allowed',
    rule: "RFC 5044 §7.2 and RFC 5040 §4.8 name no error for a ULPDU shorter than its DDP header; the LLP code is siw's choice (on stock siw with the layout of siw-terminate-layout)",
    provider: 'siw',
    kernel: ANY_KERNEL,
    scope: ['siw-mpa-length-underflow'],
    derive: bareTerminate(0, 2, 0x03),
    why:
      'as on the patched siw (LLP / MPA / 0x03 for a ULPDU Length shorter than the header), ' +
      'with the stock Terminate layout: Layer and Error Type nibbles swapped',
  },
  {
    id: 'siw-reads-header-past-ulpdu-length',
    class: 'allowed',
    rule: 'RFC 5044 §7.1 (markers only where negotiated): a peer that sends them unasked breaks the stream, and which check the receiver fails first is not stated',
    provider: 'siw+rfc7306',
    kernel: ANY_KERNEL,
    scope: ['siw-mpa-markers-not-negotiated'],
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
    class: 'allowed',
    rule: 'RFC 5044 §7.1 (markers only where negotiated): a peer that sends them unasked breaks the stream, and which check the receiver fails first is not stated',
    provider: 'siw',
    kernel: ANY_KERNEL,
    scope: ['siw-mpa-markers-not-negotiated'],
    derive: bareTerminate(2, 1, 0x06),
    why: 'as on the patched siw, with the stock Terminate layout (nibbles swapped)',
  },
  {
    id: 'siw-unexpected-read-response-is-ddp-catastrophic',
    class: 'allowed',
    rule: 'RFC 5040 §7 (a Read Response with no outstanding Read is an error that ends the stream) names no single code for it',
    unclear: "the engine's RDMAP Unexpected OpCode is its own reading",
    provider: 'siw',
    alsoFor: ['siw+rfc7306'],
    kernel: ANY_KERNEL,
    scope: ['siw-rdmap-opcode-sequence'],
    derive: codesAs(1, 0, 0x00),
    why:
      'siw_proc_rresp finds the ORQ empty (siw_orqe_start_rx: "ORQ empty") and ends in its ' +
      'error_term: Terminate DDP / Local Catastrophic; the engine answers a response nothing ' +
      'asked for as RDMAP Unexpected OpCode (RFC 5040 §7)',
  },
  {
    id: 'siw-receive-space-short',
    class: 'allowed',
    rule: "RFC 5041 §7.2 (DDP Untagged Buffer Error 0x02, a message too long for the buffer): RFC 5044 does not say whether the receiver may act on the announced ULPDU Length before the FPDU's CRC",
    unclear: 'RFC 5044 §7.2 read as "nothing before the CRC" would make it a defect',
    provider: 'siw',
    alsoFor: ['siw+rfc7306'],
    kernel: ANY_KERNEL,
    scope: ['siw-mpa-length-over-buffer'],
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
    class: 'defect',
    rule: 'RFC 5040 §4.8 (the Terminate Control field layout, the Hdrct bits, the copied DDP Segment Length)',
    provider: 'siw',
    kernel: ANY_KERNEL,
    scope: [
      'siw-mpa-length-over-buffer',
      'siw-ddp-invalid-qn',
      'siw-ddp-msn-out-of-range',
      'siw-ddp-mo-beyond-buffer',
      'siw-ddp-invalid-stag',
      'siw-ddp-unauthorised-stag',
      'siw-rdmap-opcode-sequence',
    ],
    // Applied last (see the order of this table): the codes are siw's by then.
    derive: stockLayout,
    why:
      "the stock siw's Terminates with a header copy are malformed on x86 (patches/siw/0001): " +
      'struct iwarp_terminate little-endian bitfields put Layer and Error Type in swapped nibbles ' +
      'and the M/D/R bits in the low bits of the third byte, and siw rewrites the copied DDP ' +
      'Segment Length to the payload length; a decoder reading RFC 5040 §4.8 sees header bytes no ' +
      'Hdrct bit announces',
  },
  {
    id: 'siw-terminate-flushes-requester',
    class: 'allowed',
    rule: "RFC 5040 §7 and RFC 7306 §8 define the Terminate on the wire, not the completion status a consumer sees for it; how an iWARP RNIC surfaces a received Terminate is the verbs interface's choice",
    unclear:
      'the engine models both readings (terminate-status.ts: reference and siw); no text here names a completion status',
    provider: 'siw',
    alsoFor: ['siw+rfc7306'],
    kernel: ANY_KERNEL,
    // siw as the Requester (probe/iwarp-responder-peer.ts): the tester's Terminate.
    scope: ['siw-requester-terminate-on-read'],
    observed: { status: 'WR_FLUSH_ERR' },
    why: 'siw_proc_terminate only logs the Terminate and returns -ECONNRESET; siw_sq_flush completes the ORQ entry with SIW_WC_WR_FLUSH_ERR (terminate-status.ts, siw model)',
  },
  {
    id: 'siw-split-header-takes-payload-byte',
    class: 'defect',
    rule: 'RFC 5044 §4: FPDUs are not aligned to TCP segments; a receiver reassembles a header whatever the segment boundaries (RFC 5041 §5.3: the MO places each segment)',
    provider: 'siw',
    // Debian's 6.12.95 still has the form the 2026 fix replaced; 6.1.192 and 7.3.4 do not.
    kernel: { from: '6.12', before: '6.13' },
    scope: ['siw-mpa-header-split'],
    lacksFix: true,
    derive: splitHeaderTakesPayloadByte(SPLIT_HEADER_TERMINATE.stock),
    why:
      'siw_get_hdr (siw_qp_rx.c:1073 in 6.12.95) copies `hdrlen - MIN_DDP_HDR` more header ' +
      'bytes once the first 16 are in, whatever part of the header an earlier segment brought: ' +
      "a Send header (20 bytes with the MPA length) cut after byte 17 takes the segment's first " +
      'data byte as header byte 21; its other two bytes land at MO 48, the stream is one byte ' +
      'off, and the next header read gives DDP / Untagged Buffer / Invalid MO (0x04); the ' +
      'receive completes GENERAL_ERR. Cuts after bytes 1-16 are whole; 6.1.192 and 7.3.4 copy ' +
      '`hdrlen - srx->fpdu_part_rcvd`. Observed on 6.12.95, stock and patched siw (2026-12-05)',
  },
  {
    id: 'siw-split-header-takes-payload-byte',
    class: 'defect',
    rule: 'RFC 5044 §4: FPDUs are not aligned to TCP segments; a receiver reassembles a header whatever the segment boundaries (RFC 5041 §5.3: the MO places each segment)',
    provider: 'siw+rfc7306',
    // Debian's 6.12.95 still has the form the 2026 fix replaced; 6.1.192 and 7.3.4 do not.
    kernel: { from: '6.12', before: '6.13' },
    scope: ['siw-mpa-header-split'],
    lacksFix: true,
    derive: splitHeaderTakesPayloadByte(SPLIT_HEADER_TERMINATE.patched),
    why: 'as on the stock siw (siw_get_hdr, 6.12.95); the Terminate in the RFC 5040 layout (patches/siw/0001)',
  },
];
