/**
 * The iWARP assertions (issue 21): our userspace iWARP peer (src/probe/siw-peer.ts)
 * is the tester; siw0 is the device under test. Each row is data: its id, the section it
 * checks, which side the tester plays, how siw's QP is set up and the bytes the tester
 * puts on the wire after the MPA exchange. What siw must answer is not written here: the
 * reference engine computes it from the same bytes (iwarp-expect.ts).
 *
 * The 64-bit values are not byte palindromes, as everywhere in the suite.
 */
import {
  makeImmediateData,
  makeRdmaWrite,
  makeReadResponse,
  makeSend,
} from '../codec/iwarp/build.js';
import type { MpaNegotiated, RdmapMessage } from '../codec/iwarp/messages.js';
import type { Access as AccessFlag } from '../verbs/mr.js';
import type { Assertion } from './assertion.js';
import { concatBytes, type FpduDamage, fpduOf, segmentWith } from './iwarp-packets.js';
import { RFC7306_PROBES } from './rfc7306-probes.js';
import type { SiwTarget } from './siw-peer.js';
import { WIRE_PROBES } from './wire-probes.js';

/** How siw's QP and MR are set up before the tester speaks (siw-peer.ts). */
export interface IwarpSetup {
  readonly access: readonly AccessFlag[];
  /** One receive (the whole MR) posted before the tester's bytes arrive. */
  readonly postReceive: boolean;
  /** The 64-bit word at the MR's first byte (host order); zero by default. */
  readonly initialWord?: bigint;
  /** Our MPA Request asks for CRCs (RFC 5044 §7.1). */
  readonly mpaCrc?: boolean;
  /** The IRD siw accepts with (default 4). */
  readonly ird?: number;
}

/** An assertion where the tester is the Requester (Data Source) and siw the Responder. */
export interface IwarpAssertion extends Assertion {
  readonly provider: 'siw';
  readonly testerRole: 'requester';
  readonly setup: IwarpSetup;
  /** The bytes after the MPA exchange, built with the negotiated settings. */
  readonly stream: (target: SiwTarget, negotiated: MpaNegotiated) => Uint8Array;
  /**
   * Stream offsets where the tester cuts `stream` into TCP segments of their own; the
   * engine reads the same bytes as one stream (RFC 5044 §4: FPDUs are not aligned to TCP
   * segments, so a cut changes nothing the receiver may answer).
   */
  readonly splits?: (target: SiwTarget, negotiated: MpaNegotiated) => readonly number[];
}

/** Well-formed FPDUs carrying `messages`, back to back from stream position 0. */
export function fpdusOf(messages: readonly RdmapMessage[], negotiated: MpaNegotiated): Uint8Array {
  const parts: Uint8Array[] = [];
  let position = 0;
  for (const m of messages) {
    const fpdu = fpduOf(segmentWith(m), negotiated, {}, position);
    parts.push(fpdu);
    position += fpdu.length;
  }
  return concatBytes(parts);
}

const PAYLOAD = Uint8Array.of(0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11);
const send = (msn = 1): RdmapMessage => makeSend({ messageSequenceNumber: msn, payload: PAYLOAD });
const write = (t: SiwTarget, stag = t.stag): RdmapMessage =>
  makeRdmaWrite({ stag, taggedOffset: t.address, payload: PAYLOAD });

/** One FPDU: `message` with DDP fields overwritten, framed, then damaged. */
const one =
  (
    message: (t: SiwTarget) => RdmapMessage,
    fields: Readonly<Record<string, number | bigint>> = {},
    damage: FpduDamage = {},
  ) =>
  (t: SiwTarget, n: MpaNegotiated): Uint8Array =>
    fpduOf(segmentWith(message(t), fields), n, damage);

const RECEIVE: IwarpSetup = { access: ['LOCAL_WRITE'], postReceive: true };
const WRITABLE: IwarpSetup = { access: ['LOCAL_WRITE', 'REMOTE_WRITE'], postReceive: true };

/** siw 2026 receive-path fixes, as the regression rows name them. */
export const SIW_2026_FIXES = {
  nullRxFpdu: {
    title: 'RDMA/siw: Fix potential NULL pointer dereference in header processing',
    cve: 'CVE-2026-23242',
    commit: '14ab3da122bd18920ad57428f6cf4fade8385142',
  },
  fragmentedHeader: {
    title:
      'RDMA/siw: siw_get_hdr() copies the rest of a header split across TCP segments from where it stopped',
    // 6.12.95 copies `hdrlen - MIN_DDP_HDR` bytes once the first 16 are in, whatever was
    // already received (siw_qp_rx.c:1073): a header cut after byte 16 takes payload bytes
    // into the header; 6.1.192 and 7.3.4 copy `hdrlen - srx->fpdu_part_rcvd`.
  },
  mpaLengthUnderflow: {
    title: 'RDMA/siw: Reject MPA FPDU length underflow before signed receive math',
    // Sent to linux-rdma on 2026-05-13 (<20260513175325.2042630-1-michael.bommarito@gmail.com>),
    // taken into the stable queues as c7c0c0f4379dedec12d24dbb9dded5d2db7fd9f2 and siblings.
    commit: 'c7c0c0f4379dedec12d24dbb9dded5d2db7fd9f2',
  },
} as const;

/**
 * siw's untagged DDP + RDMAP header with the MPA ULPDU Length before it (struct iwarp_send
 * in siw's iwarp.h: 2 + 2 + 4 + 4 + 4 + 4 bytes).
 */
const SEND_HEADER_BYTES = 20;
/** Bytes of Send data in each segment of the split Send (20 segments fill 60 of 64 bytes). */
const SPLIT_PIECE = 3;
const SPLIT_DATA = Uint8Array.from(
  { length: SEND_HEADER_BYTES * SPLIT_PIECE },
  (_, i) => (0x5a + 37 * i) & 0xff,
);

/** One Send in 20 DDP segments; FPDU k (from 1) is to be cut after its byte k. */
function splitSend(n: MpaNegotiated): { stream: Uint8Array; splits: number[] } {
  const parts: Uint8Array[] = [];
  const splits: number[] = [];
  let position = 0;
  for (let k = 1; k <= SEND_HEADER_BYTES; k++) {
    const offset = (k - 1) * SPLIT_PIECE;
    const segment = makeSend({
      messageSequenceNumber: 1,
      payload: SPLIT_DATA.subarray(offset, offset + SPLIT_PIECE),
      messageOffset: offset,
      last: k === SEND_HEADER_BYTES,
    });
    const fpdu = fpduOf(segmentWith(segment), n, {}, position);
    splits.push(position + k);
    parts.push(fpdu);
    position += fpdu.length;
  }
  return { stream: concatBytes(parts), splits };
}

/** The assertions written for the tester (malformed MPA, DDP and RDMAP errors). */
const TESTER_ASSERTIONS: readonly IwarpAssertion[] = [
  {
    id: 'siw-mpa-length-underflow',
    spec: 'RFC 5044 §4 (ULPDU Length), RFC 5041 §4.2 (a tagged DDP header is 14 bytes)',
    provider: 'siw',
    testerRole: 'requester',
    title:
      'RDMA Write whose MPA ULPDU Length (4) is shorter than its DDP header; the whole Write follows',
    hostile: true,
    setup: WRITABLE,
    regression: SIW_2026_FIXES.mpaLengthUnderflow,
    stream: (t, n) =>
      concatBytes([fpduOf(segmentWith(write(t)), n, { ulpduLength: 4 }), segmentWith(write(t))]),
  },
  {
    id: 'siw-mpa-header-split',
    spec: 'RFC 5044 §4 (FPDUs are not aligned to TCP segments), RFC 5041 §5.3, §8 (untagged segments by MO)',
    provider: 'siw',
    testerRole: 'requester',
    title:
      'one Send in 20 DDP segments, the header of segment k cut into two TCP segments after its byte k (every offset of the header)',
    hostile: true,
    setup: RECEIVE,
    regression: SIW_2026_FIXES.fragmentedHeader,
    stream: (_t, n) => splitSend(n).stream,
    splits: (_t, n) => splitSend(n).splits,
  },
  {
    id: 'siw-mpa-length-over-buffer',
    spec: 'RFC 5044 §4, §7.2 (the receiver reads the ULPDU Length, then waits for the FPDU)',
    provider: 'siw',
    testerRole: 'requester',
    title: 'Send whose ULPDU Length (65535) is far beyond the bytes sent and the receive buffer',
    hostile: true,
    setup: RECEIVE,
    stream: one(() => send(), {}, { ulpduLength: 0xffff }),
  },
  {
    id: 'siw-mpa-markers-not-negotiated',
    spec: 'RFC 5044 §5, §7.1 (markers only towards a receiver that asked for them)',
    provider: 'siw',
    testerRole: 'requester',
    title: 'Send framed with a leading MPA marker although none were negotiated',
    hostile: true,
    setup: RECEIVE,
    stream: one(() => send(), {}, { markers: true }),
  },
  {
    id: 'siw-mpa-bad-crc',
    spec: 'RFC 5044 §7.2, §8 (CRC Error: not delivered, reported as LLP / MPA / 0x02)',
    provider: 'siw',
    testerRole: 'requester',
    title: 'Send with the MPA CRC negotiated and its CRC field wrong (TCP checksum correct)',
    hostile: true,
    setup: { ...RECEIVE, mpaCrc: true },
    stream: one(() => send(), {}, { crcXor: 0x00ff00ff }),
  },
  {
    id: 'siw-ddp-invalid-qn',
    spec: 'RFC 5041 §5.3, §7.2 (Invalid QN)',
    provider: 'siw',
    testerRole: 'requester',
    title: 'Send on queue number 5',
    hostile: true,
    setup: RECEIVE,
    stream: one(() => send(), { queueNumber: 5 }),
  },
  {
    id: 'siw-ddp-msn-out-of-range',
    spec: 'RFC 5041 §5.3, §7.2 (Invalid MSN, MSN range is not valid)',
    provider: 'siw',
    testerRole: 'requester',
    title: 'first Send with MSN 0x01020304 instead of 1',
    hostile: true,
    setup: RECEIVE,
    stream: one(() => send(), { messageSequenceNumber: 0x01020304 }),
  },
  {
    id: 'siw-ddp-mo-beyond-buffer',
    spec: 'RFC 5041 §7.2 (Invalid MO; message too long for the buffer)',
    provider: 'siw',
    testerRole: 'requester',
    title: 'Send segment with Message Offset 4096 into a 64-byte receive',
    hostile: true,
    setup: RECEIVE,
    stream: one(() => send(), { messageOffset: 4096 }),
  },
  {
    id: 'siw-ddp-invalid-stag',
    spec: 'RFC 5041 §7.1 (Tagged Buffer Error: Invalid STag)',
    provider: 'siw',
    testerRole: 'requester',
    title: 'RDMA Write to an STag that was never registered',
    hostile: true,
    setup: WRITABLE,
    stream: one((t) => write(t, (t.stag ^ 0x00012300) >>> 0)),
  },
  {
    id: 'siw-ddp-unauthorised-stag',
    spec: 'RFC 5040 §4.8 / RFC 5041 §7.1 (access rights violation on a valid STag)',
    provider: 'siw',
    testerRole: 'requester',
    title: 'RDMA Write to a region registered without Remote Write',
    hostile: true,
    setup: RECEIVE,
    stream: one((t) => write(t)),
  },
  {
    id: 'siw-rdmap-unknown-opcode-first',
    spec: 'RFC 5040 §4.8, RFC 7306 §8.2 ("The RDMA OpCode MUST be valid")',
    provider: 'siw',
    testerRole: 'requester',
    title: 'the first FPDU of the connection carries RDMAP opcode 0xF (defined nowhere)',
    hostile: true,
    setup: RECEIVE,
    regression: SIW_2026_FIXES.nullRxFpdu,
    stream: one(() => send(), { opcode: 0x0f }),
  },
  {
    id: 'siw-rdmap-opcode-sequence',
    spec: 'RFC 5040 §7 (a Read Response with no Read Request outstanding)',
    provider: 'siw',
    testerRole: 'requester',
    title: 'an RDMA Read Response that answers no Read Request',
    hostile: true,
    setup: WRITABLE,
    stream: one((t) =>
      makeReadResponse({ stag: t.stag, taggedOffset: t.address, payload: PAYLOAD }),
    ),
  },
  {
    id: 'siw-rdmap-immediate-data-short',
    spec: 'RFC 7306 §6.3 ("exactly 8 bytes")',
    provider: 'siw',
    testerRole: 'requester',
    title: 'Immediate Data with its DDP segment cut to 4 bytes of data',
    hostile: true,
    setup: RECEIVE,
    stream: (_t, n) =>
      fpduOf(
        segmentWith(
          makeImmediateData({ messageSequenceNumber: 1, immediateData: 0x0123456789abcdefn }),
        ).subarray(0, 22),
        n,
      ),
  },
];

/** The three wire probes `run` ran until issue 31 (wire-probes.ts), on the stock siw. */
const WIRE_PROBE_ASSERTIONS: readonly IwarpAssertion[] = WIRE_PROBES.map((p) => ({
  id: p.id,
  spec:
    p.message.kind === 'send'
      ? 'RFC 5040 §5.3 (Send)'
      : 'RFC 7306 §1.1 (a peer without the extension answers with a Terminate)',
  provider: 'siw',
  testerRole: 'requester',
  title: p.title,
  hostile: false,
  siwVariants: ['stock'],
  setup: RECEIVE,
  stream: (_t, n) => fpdusOf([p.message], n),
}));

/** The 11 RFC 7306 probes (peer/rfc7306-probes.ts) on the patched siw, as assertions. */
const RFC7306_ASSERTIONS: readonly IwarpAssertion[] = RFC7306_PROBES.map((p) => ({
  id: p.id,
  spec: 'RFC 7306 §5, §6, §8',
  provider: 'siw',
  testerRole: 'requester',
  title: p.title,
  hostile: false,
  siwVariants: ['rfc7306'],
  setup: { access: p.access, postReceive: p.postReceive, initialWord: p.initialWord, ird: p.ird },
  stream: (t, n) => fpdusOf(p.messages(t), n),
}));

/** Every iWARP assertion where siw is the Responder. */
export const IWARP_ASSERTIONS: readonly IwarpAssertion[] = [
  ...TESTER_ASSERTIONS,
  ...WIRE_PROBE_ASSERTIONS,
  ...RFC7306_ASSERTIONS,
];
