/**
 * What the real providers do where they differ from the reference engine, recorded as
 * data with the reason and its source, keyed by provider and kernel version (and the
 * rdma-core version where the userspace library decides). A difference listed here is a
 * named finding, not a failure; a difference not listed fails the run, and so does an
 * entry that no longer happens (so this table stays true). On a device with no records
 * for its provider and kernel, differences are unrecorded findings (`--strict` fails them).
 *
 * A post that the provider refuses (`post1` = an errno) means nothing reached the wire:
 * the completions are then missing and memory is untouched. An entry with
 * `nothingHappened` explains those consequences too (runner.ts judge).
 */

import picomatch from 'picomatch';
import { requireObject } from '../arguments.js';
import { inRange, type VersionRange } from '../judge/version-range.js';
import { requireEnvironment } from './arguments.js';

export type { VersionRange } from '../judge/version-range.js';

/** Where the suite runs: which provider, which kernel, which rdma-core. */
export interface Environment {
  /** The provider (kernel driver / libibverbs provider): `rxe`, `siw`, `mlx5`, ... */
  readonly provider: string;
  /** `uname -r`. */
  readonly kernel: string;
  /** rdma-core's version (libibverbs), or `unknown`. */
  readonly rdmaCore: string;
}

export interface KnownBehaviour {
  /** Short name shown in reports, e.g. `libsiw-no-atomics`. */
  readonly id: string;
  readonly provider: string;
  /**
   * Further providers it holds for: `siw+rfc7306` (siw-variant.ts) where the patched siw
   * behaves as the stock one.
   */
  readonly alsoFor?: readonly string[];
  /**
   * The kernel lines it holds for (`uname -r`, compared by version: version-range.ts).
   * Inside the range a record that stops happening fails that kernel's run; when a newer
   * kernel changes the behaviour, end the range there (`before`) and add a record for the
   * new behaviour, naming the upstream change.
   */
  readonly kernel: VersionRange;
  /** The rdma-core versions it holds for, where the userspace provider decides. */
  readonly rdmaCore?: VersionRange;
  /** Scenario ids (src/interop/scenarios.ts), as globs. */
  readonly scenarios: readonly string[];
  /**
   * What the device shows: observation field (a glob: `post1`, `responder.wc*.flags`) to
   * its value, formatted as in reports (compare-format.ts), or a pattern.
   */
  readonly observed: Readonly<Record<string, string | RegExp>>;
  /**
   * `provider`: the device departs from the spec the engine follows. `engine`: a gap in
   * the engine, recorded so the run stays green until it is fixed (reports flag it).
   */
  readonly side?: 'provider' | 'engine';
  /**
   * The side of a link pair whose provider shows it (link/sides.ts): the requester's
   * (default: its library and driver drive the program) or the responder's (what it
   * answers on the wire). The one-guest suite has the same provider on both sides.
   */
  readonly role?: 'requester' | 'responder';
  /**
   * The provider the other side of a link pair must be for it to hold: a stock siw answers
   * RFC 7306 messages only where a patched requester sends them (`siw+rfc7306`).
   */
  readonly peer?: string;
  /** Explains the missing completions and untouched memory after a refused post. */
  readonly nothingHappened?: boolean;
  /** Why, with the source that shows it. */
  readonly why: string;
  /** The spec sections the engine follows here. */
  readonly spec?: string;
}

/** True when `k` applies in `env`. */
export function appliesIn(k: KnownBehaviour, env: Environment): boolean {
  requireObject('interop', 'k', k);
  requireEnvironment(env);
  return (
    (k.provider === env.provider || k.alsoFor?.includes(env.provider) === true) &&
    inRange(env.kernel, k.kernel) &&
    (k.rdmaCore === undefined || inRange(env.rdmaCore, k.rdmaCore))
  );
}

/** True when the records know this provider on this kernel at all. */
export function hasRecordsFor(env: Environment, known: readonly KnownBehaviour[]): boolean {
  return known.some((k) => appliesIn(k, env));
}

const matchers = new Map<string, (s: string) => boolean>();
function glob(pattern: string): (s: string) => boolean {
  let m = matchers.get(pattern);
  if (m === undefined) {
    m = picomatch(pattern, { dot: true, literalBrackets: true });
    matchers.set(pattern, m);
  }
  return m;
}

/** True when `k` names scenario `id`. */
export function coversScenario(k: KnownBehaviour, id: string): boolean {
  return k.scenarios.some((p) => glob(p)(id));
}

/** True when `k` is about `field`. */
export function namesField(k: KnownBehaviour, field: string): boolean {
  return Object.keys(k.observed).some((pattern) => glob(pattern)(field));
}

/** True when `k` explains the device value `value` of `field`. */
export function explainsField(k: KnownBehaviour, field: string, value: string): boolean {
  return Object.entries(k.observed).some(
    ([pattern, expected]) =>
      glob(pattern)(field) &&
      (typeof expected === 'string' ? expected === value : expected.test(value)),
  );
}

/** The record's observations as one line (reports). */
export function observedText(k: KnownBehaviour): string {
  return Object.entries(k.observed)
    .map(([field, value]) => `${field}=${String(value)}`)
    .join(', ');
}

/**
 * From Debian bookworm's 6.1, where the first records were taken (kernel-runtime.md), on:
 * measured unchanged on 6.1.192, 6.12.95 and 7.3.4 (docs/kernels.md). Open-ended, so that
 * a newer kernel that changes the behaviour fails its run instead of passing silently.
 */
const SINCE_6_1: VersionRange = { from: '6.1' };
/** rdma-core from bookworm's 44 on: measured unchanged with 44.0 and 56.1. */
const SINCE_RDMA_CORE_44: VersionRange = { from: '44' };
/**
 * siw's query_qp state: 6.1 up to the upstream fix "RDMA/siw: Set qp_state in
 * siw_query_qp" (the 6.8 cycle); measured on 6.1.192 (RESET) and 6.12.95 (the real state).
 */
const SIW_QUERY_QP_STATE_UNSET: VersionRange = { from: '6.1', before: '6.8' };
/** siw's query_qp state from that fix on (measured on 6.12.95 and 7.3.4). */
const SIW_QUERY_QP_STATE_REPORTED: VersionRange = { from: '6.8' };

/** The siw atomic-error programs (each refused by libsiw at its first post). */
const SIW_ATOMIC_ERRORS: readonly string[] = [
  'siw-misaligned',
  'siw-no-remote-atomic',
  'siw-qp-atomic-removed',
  'siw-atomic-invalid-rkey',
  'siw-atomic-invalid-lkey',
  'siw-atomic-short-sge',
  'siw-atomic-no-sge',
  'siw-atomic-past-end',
];

/** The siw programs whose first request ends the stream with a Terminate. */
const SIW_TERMINATED_STREAMS: readonly string[] = [
  'siw-misaligned',
  'siw-no-remote-atomic',
  'siw-atomic-invalid-rkey',
  'siw-atomic-past-end',
  'siw-send-no-recv',
];

/**
 * rxe before IBTA 1.5's memory placement operations: Debian's 6.1 up to the 6.2 merge of
 * "RDMA/rxe: Implement RC RDMA FLUSH service in requester side" and "RDMA/rxe: Support
 * RDMA Atomic Write operation" (measured on 6.1.192: docs/kernels.md).
 */
const RXE_BEFORE_PLACEMENT: VersionRange = { from: '6.1', before: '6.2' };
/** rxe with ATOMIC WRITE and FLUSH: from 6.2 (measured on 6.12.95 and 7.3.4). */
const RXE_WITH_PLACEMENT: VersionRange = { from: '6.2' };
/** rdma-core before ibv_wr_flush (45): bookworm's 44. */
const RDMA_CORE_BEFORE_FLUSH: VersionRange = { from: '44', before: '45' };

/** The ibta15 family's ATOMIC WRITE programs (scenarios.ts). */
const RXE_ATOMIC_WRITES: readonly string[] = ['rxe-atomic-write*-ex'];
/** The ibta15 family's FLUSH programs. */
const RXE_FLUSHES: readonly string[] = ['rxe-flush-*-ex', 'rxe-write-then-flush-ex'];

/**
 * A mixed link pair (`run --link --siw rfc7306 --peer-siw stock`, link/sides.ts): the
 * patched siw requests RFC 7306 operations from a stock siw, which answers as RFC 7306
 * §1.1 says a peer without the extension does. Measured with a patched 6.1.0-56 requester
 * (rdma-core 56.1) and a stock 7.3.4 responder (rdma-core 56.1), both ways round.
 */
const LINK_PAIR_BEHAVIOUR: readonly KnownBehaviour[] = [
  {
    id: 'siw-unexpected-opcode-terminate-layout',
    provider: 'siw',
    role: 'responder',
    peer: 'siw+rfc7306',
    kernel: SINCE_6_1,
    scenarios: ['link-siw-fetch-add', 'link-siw-cmp-swap', 'link-siw-write-imm'],
    observed: {
      wire: /\nresponder> terminate qn=2 msn=1 mo=0 L layer=2 type=0 code=0x06 hdrct=---$/,
    },
    why:
      'the stock responder ends the stream with the Terminate RFC 7306 §1.1 asks of a peer ' +
      'without the extension (RDMAP / Remote Operation Error / Unexpected OpCode: siw_qp_rx.c ' +
      'siw_get_hdr refuses opcodes above 7), as the engine does; but its struct ' +
      'iwarp_terminate bitfields put Layer in the low nibble on little-endian hosts (the wire ' +
      'reads Layer 2 = LLP, Error Type 0) and siw_send_terminate copies no header for an ' +
      'opcode error, where the engine copies the DDP header (RFC 7306 §8.1, RFC 5040 §4.8); ' +
      'the patched siw fixes the layout (patches/siw/0001), the stock 6.1 and 7.3 do not ' +
      '(the wire probes record the same answer: siw-terminate-layout)',
    spec: 'RFC 7306 §1.1, §8.1; RFC 5040 §4.8',
  },
  {
    id: 'siw-peer-terminate-flushes-requester',
    provider: 'siw+rfc7306',
    peer: 'siw',
    kernel: SINCE_6_1,
    scenarios: ['link-siw-fetch-add', 'link-siw-cmp-swap'],
    observed: { 'requester.wc1.status': 'WR_FLUSH_ERR' },
    why:
      "the stock peer's Terminate reaches the patched requester, which reports it as it " +
      'reports any Terminate: siw_qp_rx.c siw_proc_terminate only logs it and returns ' +
      '-ECONNRESET, the QP goes to ERROR and siw_qp.c siw_sq_flush completes the ORQ entry ' +
      'of the atomic with SIW_WC_WR_FLUSH_ERR; the engine reports the class of the remote ' +
      'error the Terminate carries (Remote Operation Error: REM_INV_REQ_ERR)',
    spec: 'RFC 7306 §1.1, RFC 5040 §7',
  },
];

/**
 * The MPA CRC case on the faulty wire (`run --link --device siw0 --siw rfc7306 --faults
 * corrupt-payload=0.02,mpa-crc=1,seed=7`, fault-scenarios.ts MPA_CRC): a byte of a Write's
 * data changed past TCP. Measured on 6.1.0-56 (rdma-core 56.1), patched siw on both guests.
 */
const LINK_FAULT_BEHAVIOUR: readonly KnownBehaviour[] = [
  {
    id: 'siw-crc-failed-write-placed',
    provider: 'siw',
    alsoFor: ['siw+rfc7306'],
    role: 'responder',
    kernel: SINCE_6_1,
    scenarios: ['link-siw-mpa-crc'],
    observed: { 'stream.memory': /^\d+ byte\(s\) wrong, the first at \d+$/ },
    why:
      "siw places a tagged FPDU's data as it receives it (siw_qp_rx.c siw_proc_write -> " +
      'siw_rx_data into the MR) and compares the CRC only at the trailer (siw_get_trailer), ' +
      "so the changed byte is in B's buffer when the Terminate (LLP / MPA / CRC Error) goes " +
      'out; RFC 5044 §7.2 says an FPDU whose CRC fails is not delivered. The packet tester ' +
      'records the same for a Send (siw-crc-checked-after-placement)',
    spec: 'RFC 5044 §7.2, §8',
  },
  {
    id: 'siw-dropped-stream-active-request-loc-qp-op-err',
    provider: 'siw',
    alsoFor: ['siw+rfc7306'],
    kernel: SINCE_6_1,
    scenarios: ['link-siw-mpa-crc'],
    observed: {
      'stream.requester':
        /^(SUCCESS, then WR_FLUSH_ERR|\d+ SUCCESS, 1 LOC_QP_OP_ERR(, \d+ WR_FLUSH_ERR)?)$/,
    },
    why:
      "when B drops the connection after its Terminate, the request A's transmit path is " +
      'sending fails: siw_qp_tx.c siw_qp_sq_process completes that active WQE with ' +
      'SIW_WC_LOC_QP_OP_ERR (and calls siw_qp_cm_drop), and siw_sq_flush completes the rest ' +
      'with WR_FLUSH_ERR; the engine flushes every outstanding request. Whether a request is ' +
      'active at that moment is timing (A keeps 8 of 64 KiB outstanding), so the record names ' +
      "the engine's value too",
    spec: 'RFC 5040 §5.4 (a terminated stream), IBTA 1.5 §10.3.1 (the QP in Error flushes)',
  },
];

/**
 * The patched siw (patches/siw/, patches/rdma-core/, docs/siw-rfc7306.md), measured on
 * 6.1.192 with rdma-core 56.1 (`run --siw rfc7306`).
 */
const PATCHED_SIW_BEHAVIOUR: readonly KnownBehaviour[] = [
  {
    id: 'siw-terminate-flushes-requester',
    provider: 'siw+rfc7306',
    kernel: SINCE_6_1,
    scenarios: [
      'siw-misaligned',
      'siw-no-remote-atomic',
      'siw-atomic-invalid-rkey',
      'siw-atomic-past-end',
    ],
    observed: { 'requester.wc1.status': 'WR_FLUSH_ERR' },
    why:
      "the responder's Terminate is on the wire as the engine's (layer, type, code, DDP header " +
      'copy), but siw reports it as it reports a Terminate for a Read: siw_qp_rx.c ' +
      'siw_proc_terminate only logs it and returns -ECONNRESET, the QP goes to ERROR and siw_qp.c ' +
      'siw_sq_flush completes the ORQ entry of the failed atomic with SIW_WC_WR_FLUSH_ERR (the ' +
      "engine's `siw` Terminate status model, terminate-status.ts); the reference model reports " +
      "the failure's class (REM_INV_REQ_ERR, REM_ACCESS_ERR)",
    spec: 'RFC 7306 §8, RFC 5040 §7',
  },
  {
    id: 'siw-post-on-error-qp-no-completion',
    provider: 'siw+rfc7306',
    kernel: SINCE_6_1,
    rdmaCore: { from: '56.1' },
    scenarios: [...SIW_TERMINATED_STREAMS, 'siw-atomic-invalid-lkey'],
    observed: {
      'requester.wc2.status': 'none',
      'requester.wc2.{wr,vendor_err}': '—',
      'responder.wc2.status': 'none',
      'responder.wc2.{wr,vendor_err}': '—',
    },
    why:
      'after a Terminate both QPs are in ERROR; a request posted then is written by libsiw into ' +
      'the mmapped SQ and the doorbell (siw.h siw_db, a write on the command fd) reaches siw_verbs.c ' +
      'siw_post_send with no work request, which on a QP in ERROR calls siw_sq_flush_wr with ' +
      'nothing to flush: the SQE is neither executed nor flushed, ibv_post_send returns 0 and no ' +
      'completion comes within 2 s, where the engine flushes it (WR_FLUSH_ERR; for the ' +
      "responder's Write after a requester-side error it models retry exhaustion)",
    spec: 'IBTA 10.3.1 (Error state: posted work requests complete in error)',
  },
  {
    id: 'siw-atomic-response-local-error-terminates',
    provider: 'siw+rfc7306',
    kernel: SINCE_6_1,
    scenarios: ['siw-atomic-invalid-lkey'],
    observed: {
      wire:
        'requester> atomic-request qn=1 msn=1 mo=0 L\n' +
        'responder> atomic-response qn=3 msn=1 mo=0 L\n' +
        'requester> terminate qn=2 msn=1 mo=0 L layer=0 type=0 code=0xff hdrct=---',
    },
    side: 'engine',
    why:
      'the Atomic Response cannot be placed (the local SGE names an lkey never issued): the ' +
      'patched siw_qp_rx.c siw_atomic_resp_complete completes the atomic with LOC_PROT_ERR (as ' +
      'the engine does) and, as stock siw does for a Read Response it cannot place, terminates ' +
      'the stream with RDMAP / Local Catastrophic / Unspecified; the engine ends the QP silently ' +
      'and sends no Terminate, which RFC 5040 §7 asks for on an error that ends the stream',
    spec: 'RFC 5040 §7, §4.8 (Local Catastrophic Error)',
  },
  {
    id: 'libsiw-rfc7306-atomic-sge-length',
    provider: 'siw+rfc7306',
    kernel: SINCE_6_1,
    rdmaCore: { from: '56.1' },
    scenarios: ['siw-atomic-short-sge', 'siw-atomic-no-sge'],
    observed: { post1: 'EINVAL', 'post1.bad_wr': 'wr1' },
    nothingHappened: true,
    why:
      'the patched libsiw (patches/rdma-core/0001, providers/siw/siw.c push_send_wqe) refuses an ' +
      'atomic whose SGE list is not one 8-byte buffer before posting (-EINVAL, bad_wr = it), as ' +
      'librxe does (librxe-atomic-sge-length); the engine sends it and fails the placement of the ' +
      'Atomic Response (LOC_LEN_ERR)',
    spec: 'IBTA 10.7.3 (local errors)',
  },
  {
    id: 'libsiw-rfc7306-refused-sge-keeps-rts',
    provider: 'siw+rfc7306',
    kernel: SINCE_6_1,
    rdmaCore: { from: '56.1' },
    scenarios: ['siw-atomic-short-sge', 'siw-atomic-no-sge'],
    observed: {
      'requester.wc2.status': 'SUCCESS',
      'requester.wc2.opcode': 'FETCH_ADD',
      'requester.wc2.byte_len': '8',
      'requester.wc2.flags': 'none',
      'requester.wc2.fetched': '0x0123456789abcdef',
      'responder.wc2.status': 'SUCCESS',
      'responder.wc2.opcode': 'RDMA_WRITE',
      'responder.wc2.flags': 'none',
      wire:
        'requester> atomic-request qn=1 msn=1 mo=0 L\n' +
        'responder> atomic-response qn=3 msn=1 mo=0 L\n' +
        'responder> rdma-write stag=local to=local+0 L payload=ad0000000008005a',
    },
    why:
      'the refused post sent nothing, so the FetchAdd posted next executes on the intact stream ' +
      '(fetching the untouched word, the only Atomic Request on the wire) and the Write back ' +
      'succeeds, where the engine flushes the one and times out the other',
  },
  {
    id: 'siw-qp-access-not-enforced',
    provider: 'siw+rfc7306',
    kernel: SINCE_6_1,
    scenarios: ['siw-qp-atomic-removed'],
    observed: {
      'requester.wc{1,2}.status': 'SUCCESS',
      'requester.wc{1,2}.opcode': 'FETCH_ADD',
      'requester.wc{1,2}.byte_len': '8',
      'requester.wc{1,2}.flags': 'none',
      'requester.wc{1,2}.vendor_err': '—',
      'requester.wc1.fetched': '0x0123456789abcdef',
      'requester.wc2.fetched': '0x12345678abcdf011',
      'responder.wc2.status': 'SUCCESS',
      'responder.wc2.opcode': 'RDMA_WRITE',
      'responder.wc2.flags': 'none',
      'responder.wc2.vendor_err': '—',
      'mem[8]': '0x23456789cdf01233',
      wire: /^requester> atomic-request qn=1 msn=1 [^\n]*\nresponder> atomic-response qn=3 msn=1 [^\n]*\nrequester> atomic-request qn=1 msn=2 [^\n]*\nresponder> atomic-response qn=3 msn=2 [^\n]*\nresponder> rdma-write [^\n]*$/,
    },
    why:
      "siw does not enforce a QP's remote access enables: siw_verbs.c siw_modify_qp maps " +
      'IB_ACCESS_REMOTE_READ/WRITE to SIW_RDMA_*_ENABLED flags that no receive path reads, and ' +
      'IB_ACCESS_REMOTE_ATOMIC to nothing (stock siw too; the patch checks the MR right only), so ' +
      'both FetchAdds execute after the modify removed remote atomic access, where the engine ' +
      'answers the first with a Terminate (Remote Protection Error). A fix belongs in a further ' +
      'patch (siw_proc_atomic_req checking a QP atomic enable)',
    spec: 'IBTA 10.6.3.3 (QP remote access enables); RFC 7306 §8.2',
  },
];

export const KNOWN_BEHAVIOUR: readonly KnownBehaviour[] = [
  {
    id: 'rxe-no-atomic-write-before-6.2',
    provider: 'rxe',
    kernel: RXE_BEFORE_PLACEMENT,
    scenarios: RXE_ATOMIC_WRITES,
    observed: {
      'requester.wc1.status': 'LOC_QP_OP_ERR',
      'requester.wc1.vendor_err': '0',
      'requester.wc1.{opcode,byte_len,flags}': '—',
      'requester.wc2.status': 'WR_FLUSH_ERR',
      'requester.wc2.vendor_err': '0',
      'requester.wc2.{opcode,flags,fetched}': '—',
      'q1.requester.state': 'ERR',
      'q{2,4}.responder.state': 'RTS',
      'responder.wc2.status': 'none',
      'responder.wc2.{wr,vendor_err}': '—',
      'mem[8]': '0x0123456789abcdef',
    },
    why:
      'rxe before 6.2 has no ATOMIC WRITE: librxe of rdma-core 44 builds the request ' +
      '(ibv_wr_atomic_write exists since rdma-core 43) but the 6.1 kernel does not know the ' +
      'opcode and completes it locally with LOC_QP_OP_ERR, the requester QP in ERR; nothing ' +
      'reached the responder, so its QP stays in RTS, memory is untouched, and the Write it ' +
      'posts back towards the requester in ERR gets no completion within 2 s. From 6.2 ' +
      '("RDMA/rxe: Support RDMA Atomic Write operation") rxe executes it as the engine does',
    spec: 'IBTA 1.5 Vol. 1 Annex A19 (ATOMIC WRITE)',
  },
  {
    id: 'librxe-44-no-flush',
    provider: 'rxe',
    kernel: SINCE_6_1,
    rdmaCore: RDMA_CORE_BEFORE_FLUSH,
    scenarios: RXE_FLUSHES,
    observed: { bringup: 'EOPNOTSUPP ibv_wr_flush' },
    nothingHappened: true,
    why:
      'rdma-core 44 has no ibv_wr_flush (it came in rdma-core 45), so the suite cannot create ' +
      'a requester QP for FLUSH (LibraryTooOldError, before anything is created): nothing is ' +
      'posted and memory is untouched. The 6.1 kernel would refuse anyway: no flush MR rights ' +
      '(ibv_reg_mr EINVAL) and no FLUSH opcode before 6.2 ("RDMA/rxe: Implement RC RDMA FLUSH ' +
      'service in requester side")',
    spec: 'IBTA 1.5 Vol. 1 Annex A19 (FLUSH)',
  },
  {
    id: 'librxe-atomic-alignment',
    provider: 'rxe',
    kernel: SINCE_6_1,
    rdmaCore: SINCE_RDMA_CORE_44,
    scenarios: ['rxe-misaligned'],
    observed: { post1: 'EINVAL', 'post1.bad_wr': 'wr1' },
    nothingHappened: true,
    why:
      'librxe checks atomic alignment before posting (rdma-core providers/rxe/rxe.c validate_send_wr: ' +
      'remote_addr & 7 -> EINVAL, bad_wr = the request); the ibv_wr_* path has no such check and gets ' +
      'the NAK (rxe-misaligned-ex)',
    spec: 'IBTA o9-21 (atomic alignment); RFC 7306 §5.1',
  },
  {
    id: 'refused-post-keeps-rts',
    provider: 'rxe',
    kernel: SINCE_6_1,
    rdmaCore: SINCE_RDMA_CORE_44,
    scenarios: ['rxe-misaligned'],
    // The aligned FetchAdd posted next executes on the untouched QP: it fetches the word at
    // offset 8 as initialised and adds to it (so the misaligned word at 12 changes too).
    observed: {
      'q*.*.state': 'RTS',
      'requester.wc2.status': 'SUCCESS',
      'requester.wc2.opcode': 'FETCH_ADD',
      'requester.wc2.byte_len': '8',
      'requester.wc2.fetched': '0x89abcdef000000b5',
      'mem[8]': '0x9abcdf00222222d7',
      'mem[12]': '0x012345679abcdf00',
      'responder.wc2.status': 'SUCCESS',
      'responder.wc2.opcode': 'RDMA_WRITE',
      'responder.wc2.flags': 'none',
    },
    why:
      'the refused post never reached the wire, so no NAK moved either QP to ERR, and the next ' +
      'FetchAdd on the requester and the Write back from the responder succeed where the engine ' +
      '(which sent the misaligned request) flushes them',
  },
  {
    id: 'librxe-atomic-sge-length',
    provider: 'rxe',
    kernel: SINCE_6_1,
    rdmaCore: SINCE_RDMA_CORE_44,
    scenarios: ['rxe-atomic-short-sge', 'rxe-atomic-no-sge'],
    observed: { post1: 'EINVAL', 'post1.bad_wr': 'wr1' },
    nothingHappened: true,
    why:
      'librxe refuses an atomic whose SGE list holds fewer than 8 bytes before posting ' +
      '(rdma-core providers/rxe/rxe.c validate_send_wr: atomic length < 8 -> EINVAL); the ibv_wr_* ' +
      'path has no such check and the request executes remotely (rxe-atomic-short-sge-ex)',
    spec: 'IBTA 10.7.3 (local errors)',
  },
  {
    id: 'librxe-refused-sge-keeps-rts',
    provider: 'rxe',
    kernel: SINCE_6_1,
    rdmaCore: SINCE_RDMA_CORE_44,
    scenarios: ['rxe-atomic-short-sge', 'rxe-atomic-no-sge'],
    // Nothing was sent for the refused request; the next FetchAdd executes on the intact QP,
    // which leaves the word where the engine's executed-then-failed request leaves it.
    observed: {
      'q*.requester.state': 'RTS',
      'requester.wc2.status': 'SUCCESS',
      'requester.wc2.opcode': 'FETCH_ADD',
      'requester.wc2.byte_len': '8',
      'requester.wc2.fetched': '0x0123456789abcdef',
      'q4.responder.state': 'RTS',
      'responder.wc2.status': 'SUCCESS',
      'responder.wc2.opcode': 'RDMA_WRITE',
      'responder.wc2.flags': 'none',
    },
    why:
      'the refused post moved nothing to ERR, so the FetchAdd posted next succeeds (fetching the ' +
      "untouched word) where the engine flushes it, and the responder's Write back succeeds where " +
      'the engine, whose requester is in ERR, sees it retried until RETRY_EXC_ERR',
  },
  {
    id: 'rxe-short-sge-is-protection-error',
    provider: 'rxe',
    kernel: SINCE_6_1,
    scenarios: ['rxe-atomic-short-sge-ex', 'rxe-atomic-no-sge-ex'],
    observed: { 'requester.wc1.status': 'LOC_PROT_ERR' },
    why:
      'rxe finds the short (or missing) local SGE when it copies the atomic response into it ' +
      '(the atomic response copy in rxe_comp.c) and reports that copy failure as ' +
      'IB_WC_LOC_PROT_ERR; the engine follows IBTA and reports a length error (LOC_LEN_ERR). ' +
      'As in the engine, the responder has executed the atomic (the word changed) and the QP is in ERR',
    spec: 'IBTA 10.7.3; ibv_poll_cq(3) IBV_WC_LOC_LEN_ERR',
  },
  {
    id: 'rxe-no-retry-exhaustion-towards-err-qp',
    provider: 'rxe',
    kernel: SINCE_6_1,
    scenarios: [
      'rxe-atomic-invalid-lkey*',
      'rxe-atomic-short-sge-ex',
      'rxe-atomic-no-sge-ex',
      'rxe-send-imm-no-recv*',
      'rxe-write-imm-no-recv*',
      'rxe-send-no-recv*',
    ],
    // The responder's RDMA Write towards the requester QP that is in ERR.
    observed: {
      'responder.wc2.status': 'none',
      'responder.wc2.wr': '—',
      'responder.wc2.vendor_err': '—',
      'q4.responder.state': 'RTS',
    },
    why:
      'an RDMA Write from an RTS QP to a peer QP in ERR (which drops it, rxe_resp.c) gets no ' +
      'completion and the QP stays in RTS: the suite connects its QPs with retry_cnt 7, and ' +
      'rxe_comp.c (COMPST_ERROR_RETRY) decrements retry_cnt only when it is not 7 ("if ' +
      '(qp->comp.retry_cnt != 7) qp->comp.retry_cnt--"), i.e. treats 7 as "retry for ever" like ' +
      'rnr_retry, where IBTA makes it 7 retries. Measured by the packet tester (issue 21, ' +
      'roce-requester-no-answer-retry-7: 136 transmissions in 2.5 s under TCG, no completion; with retry_cnt 1: ' +
      '2 transmissions, then RETRY_EXC_ERR)',
    spec: 'IBTA 9.7.6.1.3 (transport timer), 10.3.1 (Error state)',
  },
  {
    id: 'rxe-qp-access-is-invalid-request',
    provider: 'rxe',
    kernel: SINCE_6_1,
    scenarios: ['rxe-qp-no-atomic*', 'rxe-qp-atomic-removed*'],
    observed: { 'requester.wc1.status': 'REM_INV_REQ_ERR' },
    why:
      'rxe checks the QP access flags in check_op_valid (drivers/infiniband/sw/rxe/rxe_resp.c): an ' +
      'atomic to a QP without IB_ACCESS_REMOTE_ATOMIC is RESPST_ERR_UNSUPPORTED_OPCODE, a NAK Invalid ' +
      'Request (REM_INV_REQ_ERR); the engine treats the QP enable like the MR right, a Remote Access ' +
      'Error (REM_ACCESS_ERR). Both QPs go to ERR either way',
    spec: 'IBTA 9.7.5.2.8 (NAK codes), 10.6.3.3 (QP remote access enables)',
  },
  {
    id: 'rxe-qp-flush-enable-is-invalid-request',
    provider: 'rxe',
    kernel: RXE_WITH_PLACEMENT,
    scenarios: ['rxe-flush-qp-no-enable-ex'],
    observed: { 'requester.wc1.status': 'REM_INV_REQ_ERR' },
    why:
      "as for atomics (rxe-qp-access-is-invalid-request): rxe checks the responder QP's flush " +
      'enables in check_qp_attr_access (rxe_resp.c, since the 6.2 RDMA FLUSH series): a FLUSH to a QP without IB_ACCESS_FLUSH_GLOBAL is ' +
      'RESPST_ERR_UNSUPPORTED_OPCODE, a NAK Invalid Request (REM_INV_REQ_ERR); the engine treats ' +
      'the QP enable like the MR right, a Remote Access Error (REM_ACCESS_ERR)',
    spec: 'IBTA 1.5 Vol. 1 Annex A19 (FLUSH), 9.7.5.2.8 (NAK codes)',
  },
  {
    id: 'rxe-grh-on-rc-receive',
    provider: 'rxe',
    kernel: SINCE_6_1,
    // Not the Send with Invalidate programs: their receive's flags are another record's.
    scenarios: ['rxe-!(mw2-send-with-inv*)'],
    // Every program's receive is the responder's first completion (the SRQ programs' later
    // ones: rxe-grh-on-srq-receive). Only GRH and GRH|WITH_IMM: a further flag is a
    // difference of its own (rxe-with-inv-reads-ip-csum-ok).
    observed: { 'responder.wc1.flags': /^GRH(\|WITH_IMM)?$/ },
    why:
      'rxe sets IB_WC_GRH on every receive completion of a RoCE QP, RC included (rxe_resp.c do_complete: ' +
      'wc_flags = IB_WC_GRH for RoCE), where the engine follows IBTA (a GRH flag only when a GRH was ' +
      'received into the buffer, which RC receives do not report)',
    spec: 'IBTA 11.4.2.1 (ibv_wc wc_flags)',
  },
  {
    // A record of its own: on the other programs a later responder completion is a Write
    // back, whose flags a field glob over every completion would name without explaining.
    id: 'rxe-grh-on-srq-receive',
    provider: 'rxe',
    kernel: SINCE_6_1,
    scenarios: ['rxe-srq-*'],
    observed: { 'responder.wc{2,3,4}.flags': 'GRH' },
    why:
      'as rxe-grh-on-rc-receive, for the later receives of the SRQ programs: rxe_resp.c do_complete ' +
      'sets IB_WC_GRH on every user receive completion of a RoCE QP, whether its receive came from ' +
      'the QP or from an SRQ (get_srq_wqe)',
    spec: 'IBTA 11.4.2.1 (ibv_wc wc_flags)',
  },
  {
    id: 'rxe-with-inv-reads-ip-csum-ok',
    provider: 'rxe',
    kernel: SINCE_6_1,
    scenarios: ['rxe-mw2-send-with-inv*'],
    // The receive of the Send with Invalidate (the invalidated rkey itself is right).
    observed: { 'responder.wc1.flags': 'GRH|IP_CSUM_OK' },
    why:
      "rxe_resp.c do_complete writes the kernel's flag bits into the user-space CQE (uwc->wc_flags |= " +
      'IB_WC_WITH_INVALIDATE, 1 << 2 in include/rdma/ib_verbs.h, next to IB_WC_GRH of ' +
      'rxe-grh-on-rc-receive), and librxe hands that CQE to the program as its ibv_wc; in libibverbs ' +
      '1 << 2 is IBV_WC_IP_CSUM_OK (verbs.h: IBV_WC_WITH_INV is 1 << 3), so a program reads ' +
      'GRH|IP_CSUM_OK and no WITH_INV for a Send with Invalidate (measured on 6.1.192 / rdma-core 44 ' +
      'and 7.3.4 / rdma-core 56.1); invalidated_rkey is right',
    spec: 'IBTA 1.5 §11.4.2.1 (the completion of a Send with Invalidate reports the invalidated R_Key)',
  },
  {
    id: 'rxe-mw-range-is-the-mr',
    provider: 'rxe',
    kernel: SINCE_6_1,
    scenarios: ['rxe-mw2-outside-window*'],
    // The Write succeeds and lands: nothing fails, both QPs stay in RTS.
    observed: {
      'requester.wc1.status': 'SUCCESS',
      'requester.wc1.opcode': 'RDMA_WRITE',
      'requester.wc1.flags': 'none',
      'requester.wc1.vendor_err': '—',
      'q1.requester.state': 'RTS',
      'q2.responder.state': 'RTS',
      'mem[8]': '0x8877665544332211',
    },
    why:
      "rxe bounds an access through a memory window by the window's MR, not by the window: " +
      'rxe_resp.c check_rkey looks the window up (rxe_mw.c rxe_lookup_mw checks its rkey, PD, QP, ' +
      'access and state), then takes mr = mw->mr and checks the range with mr_check_range(mr, ...) ' +
      'only; mw->addr and mw->length are not consulted (only for a ZERO_BASED window, as the ' +
      'offset). So a Write inside the MR but outside the window is placed (measured on 6.1.192 and ' +
      '7.3.4, both post APIs)',
    spec: 'IBTA 1.5 §10.6.7: a memory window grants remote access to its own range only',
  },
  {
    id: 'libsiw-no-query-srq',
    provider: 'siw',
    kernel: SINCE_6_1,
    rdmaCore: SINCE_RDMA_CORE_44,
    scenarios: ['siw-srq-limit'],
    observed: { 'srqEvent*.limit': 'EOPNOTSUPP' },
    why:
      'libsiw has no query_srq: rdma-core providers/siw/siw.c siw_context_ops sets create_srq, ' +
      'modify_srq, post_srq_recv and destroy_srq only, so ibv_query_srq fails with EOPNOTSUPP and a ' +
      'program cannot read whether the limit is still armed (the event itself comes: siw_qp_rx.c ' +
      'siw_rqe_get; measured on 6.1.192 / rdma-core 44 and 7.3.4 / rdma-core 56.1)',
    spec: 'ibv_query_srq(3): srq_limit reads 0 once the limit event fired',
  },
  {
    id: 'rxe-send-cqe-with-imm',
    provider: 'rxe',
    kernel: SINCE_6_1,
    scenarios: ['rxe-write-imm*', 'rxe-send-imm*', 'rxe-order-write-then-write-imm*'],
    observed: {
      'requester.wc*.flags': 'WITH_IMM',
      'requester.wc*.imm': '0',
      'requester.wc*.imm_raw': '0',
    },
    why:
      'rxe reports IB_WC_WITH_IMM on the requester completion of RDMA_WRITE_WITH_IMM and SEND_WITH_IMM ' +
      '(rxe_comp.c make_send_cqe sets wc_flags from the work request opcode), with imm_data 0; in ' +
      'libibverbs the flag says imm_data is valid, which is meant for the receive side',
    spec: 'ibv_poll_cq(3): IBV_WC_WITH_IMM',
  },
  {
    id: 'libsiw-no-atomics',
    provider: 'siw',
    kernel: SINCE_6_1,
    rdmaCore: SINCE_RDMA_CORE_44,
    scenarios: [
      'siw-fetch-add*',
      'siw-cmp-swap*',
      'siw-atomic-*',
      'siw-order-atomic-*',
      'siw-order-two-atomics',
      ...SIW_ATOMIC_ERRORS,
      'link-siw-fetch-add',
      'link-siw-cmp-swap',
    ],
    observed: { post1: 'EINVAL', 'post1.bad_wr': 'wr1' },
    nothingHappened: true,
    why:
      'siw implements no RFC 7306 (atomic_cap NONE; iwarp.h knows RDMAP opcodes 0-7 only); libsiw maps ' +
      'ATOMIC_* to an unsupported opcode and ibv_post_send returns -EINVAL with bad_wr = the request ' +
      '(rdma-core providers/siw/siw.c)',
    spec: 'RFC 7306 §5',
  },
  {
    id: 'libsiw-no-atomics-later-post',
    provider: 'siw',
    kernel: SINCE_6_1,
    rdmaCore: SINCE_RDMA_CORE_44,
    scenarios: [...SIW_ATOMIC_ERRORS, 'siw-send-no-recv'],
    // The error programs' second post, a FetchAdd on the requester.
    observed: { post2: 'EINVAL', 'post2.bad_wr': 'wr2' },
    nothingHappened: true,
    why:
      'the FetchAdd an error program posts next is refused by libsiw like every atomic ' +
      '(libsiw-no-atomics): -EINVAL, bad_wr = it, nothing sent, no completion',
    spec: 'RFC 7306 §5',
  },
  {
    id: 'libsiw-refused-atomic-keeps-rts',
    provider: 'siw',
    kernel: SINCE_6_1,
    rdmaCore: SINCE_RDMA_CORE_44,
    scenarios: SIW_ATOMIC_ERRORS,
    // The RDMA Write the responder posts back into the requester's buffer.
    observed: {
      'responder.wc2.status': 'SUCCESS',
      'responder.wc2.opcode': 'RDMA_WRITE',
      'responder.wc2.flags': 'none',
      wire: 'responder> rdma-write stag=local to=local+0 L payload=ad0000000008005a',
    },
    why:
      'libsiw refused the failing atomic at the post, so nothing reached the wire, no Terminate ' +
      'ended the stream, and the Write the responder posts next succeeds (the only message on ' +
      'the wire) where the engine, whose responder Terminated the stream, flushes it',
    spec: 'RFC 7306 §8, RFC 5040 §7 (Terminate ends the stream)',
  },
  {
    id: 'libsiw-refused-atomic-qps-stay-rts',
    provider: 'siw',
    // From the kernel whose siw_query_qp reports the state at all (before it, the state
    // reads RESET: siw-query-qp-state).
    kernel: SIW_QUERY_QP_STATE_REPORTED,
    rdmaCore: SINCE_RDMA_CORE_44,
    scenarios: SIW_ATOMIC_ERRORS,
    observed: { 'q*.*.state': 'RTS' },
    why:
      'libsiw refused the failing atomic at the post (libsiw-refused-atomic-keeps-rts), so no ' +
      'error reached either QP: both stay in RTS where the engine, whose responder Terminated ' +
      'the stream, has both in ERR; measured on 6.12.95 and 7.3.4 with rdma-core 56.1',
    spec: 'RFC 7306 §8, RFC 5040 §7 (Terminate ends the stream)',
  },
  {
    id: 'libsiw-concurrency-refused',
    provider: 'siw',
    kernel: SINCE_6_1,
    rdmaCore: SINCE_RDMA_CORE_44,
    scenarios: ['siw-concurrent-fetch-add*'],
    observed: { 'hammer1.post': 'EINVAL', 'hammer1.succeeded': '0', 'hammer1.distinct': '0' },
    nothingHappened: true,
    why:
      "every QP's first FetchAdd is refused by libsiw (libsiw-no-atomics), in the suite's process " +
      'and in the other processes alike: no atomic executes and the word keeps its value',
    spec: 'RFC 7306 §5',
  },
  {
    id: 'siw-send-without-receive-no-terminate',
    provider: 'siw',
    kernel: SINCE_6_1,
    scenarios: ['siw-send-no-recv'],
    observed: {
      wire: 'requester> send qn=0 msn=1 mo=0 L payload=1122334455667788',
      'responder.wc2.status': 'none',
      'responder.wc2.wr': '—',
      'responder.wc2.vendor_err': '—',
    },
    why:
      'iWARP has no RNR: a Send that finds no posted receive is a DDP error (RFC 5041 §7.2: ' +
      'untagged buffer, "no buffer available"), and the engine answers it with that Terminate; ' +
      'siw (siw_qp_rx.c siw_proc_send: no RQE -> siw_init_terminate(DDP, untagged buffer, ' +
      'no buffer), -ENOENT) puts no Terminate on the wire in the capture, and the RDMA Write the ' +
      'responder posts afterwards gets no completion within 2 s (the engine: flushed). The ' +
      "requester's Send completed SUCCESS on both (RFC 5040 §5.5: completed once sent); why siw's " +
      'Terminate never shows was not traced further',
    spec: 'RFC 5041 §7.2, RFC 5040 §7',
  },
  {
    id: 'libsiw-no-write-imm',
    provider: 'siw',
    kernel: SINCE_6_1,
    rdmaCore: SINCE_RDMA_CORE_44,
    scenarios: ['siw-write-imm*', 'link-siw-write-imm'],
    observed: { post1: 'EINVAL', 'post1.bad_wr': 'wr1' },
    nothingHappened: true,
    why:
      'libsiw maps RDMA_WRITE_WITH_IMM to an unsupported opcode (providers/siw/siw.c): siw sends no ' +
      'RFC 7306 Immediate Data message',
    spec: 'RFC 7306 §6',
  },
  {
    id: 'libsiw-list-refusal-lost',
    provider: 'siw',
    kernel: SINCE_6_1,
    rdmaCore: SINCE_RDMA_CORE_44,
    scenarios: ['siw-order-write-then-write-imm', 'siw-order-send-then-atomic'],
    // Only the first request of the list reaches the wire; the second never completes.
    observed: {
      'requester.wc2.status': 'none',
      wire: /^requester> (rdma-write|send) [^\n]*$/,
    },
    nothingHappened: true,
    why:
      'libsiw bug: when a later request of a list has an opcode it cannot carry, siw_post_send sets ' +
      'bad_wr and rv = -EINVAL, but then rings the doorbell for the requests before it and overwrites ' +
      'rv with the doorbell result (rdma-core providers/siw/siw.c siw_post_send: rv = siw_db(qp)), so ' +
      'ibv_post_send returns 0: the refused request is silently dropped (no error, no completion)',
    spec: 'ibv_post_send(3): on failure returns an errno and bad_wr names the first request not posted',
  },
  {
    id: 'libsiw-no-send-imm',
    provider: 'siw',
    // The patched libsiw (patches/rdma-core/) maps only RDMA Write with Immediate: measured
    // on 6.1.192 with rdma-core 56.1.
    alsoFor: ['siw+rfc7306'],
    kernel: SINCE_6_1,
    rdmaCore: SINCE_RDMA_CORE_44,
    scenarios: ['siw-send-imm*', 'link-siw-send-imm'],
    observed: { post1: 'EINVAL', 'post1.bad_wr': 'wr1' },
    nothingHappened: true,
    why:
      'RFC 7306 has no Send with Immediate (only the V2 draft does); libsiw refuses SEND_WITH_IMM ' +
      'with -EINVAL (providers/siw/siw.c)',
    spec: 'RFC 7306 §6; draft-hilland-iwarp-verbs-v2',
  },
  ...PATCHED_SIW_BEHAVIOUR,
  ...LINK_PAIR_BEHAVIOUR,
  ...LINK_FAULT_BEHAVIOUR,
  {
    id: 'siw-no-solicited-event',
    provider: 'siw',
    kernel: SINCE_6_1,
    scenarios: ['siw-solicited-event'],
    observed: { 'event1.responder': 'none' },
    why:
      'siw never raises the event of a CQ armed for solicited completions on a receive: siw_qp.c ' +
      'siw_rqe_complete asks siw_cq_notify_now(cq, SIW_WQE_SIGNALLED), never with SIW_WQE_SOLICITED, ' +
      'so an arm of IB_CQ_SOLICITED matches only a send-side completion; the Send with SE arrives ' +
      '(the SE bit is on the wire, the receive completes) but ibv_get_cq_event never returns',
    spec: 'IBTA 1.5 §11.4.2.2; RFC 5040 §5.3',
  },
  {
    id: 'siw-query-qp-state',
    provider: 'siw',
    // The patched siw (patches/siw/) leaves siw_query_qp as it is: measured on 6.1.192.
    alsoFor: ['siw+rfc7306'],
    kernel: SIW_QUERY_QP_STATE_UNSET,
    scenarios: ['siw-*'],
    observed: { 'q*.*.state': 'RESET' },
    why:
      "siw_query_qp in Debian's 6.1 kernel does not fill qp_state (it reads as 0 = RESET although the QP is " +
      'in RTS); upstream "RDMA/siw: Set qp_state in siw_query_qp" (6.8 cycle) adds siw_qp_state_to_ib_qp_state, ' +
      'and 6.12 and 7.3 report the real state (RTS, ERR), as the engine does',
  },
];
