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
  /** Kernel releases it was seen on: a prefix of `uname -r` (e.g. `6.1.`). */
  readonly kernel: string;
  /** rdma-core versions (prefix), where the userspace provider decides. */
  readonly rdmaCore?: string;
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
  /** Explains the missing completions and untouched memory after a refused post. */
  readonly nothingHappened?: boolean;
  /** Why, with the source that shows it. */
  readonly why: string;
  /** The spec sections the engine follows here. */
  readonly spec?: string;
}

/** True when `k` applies in `env`. */
export function appliesIn(k: KnownBehaviour, env: Environment): boolean {
  return (
    k.provider === env.provider &&
    env.kernel.startsWith(k.kernel) &&
    (k.rdmaCore === undefined || env.rdmaCore.startsWith(k.rdmaCore))
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

/** The kernel line the records were taken on (Debian bookworm, kernel-runtime.md). */
const BOOKWORM = '6.1.';
/** rdma-core as Debian bookworm ships it. */
const RDMA_CORE_44 = '44.';

export const KNOWN_BEHAVIOUR: readonly KnownBehaviour[] = [
  {
    id: 'librxe-atomic-alignment',
    provider: 'rxe',
    kernel: BOOKWORM,
    rdmaCore: RDMA_CORE_44,
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
    kernel: BOOKWORM,
    rdmaCore: RDMA_CORE_44,
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
    kernel: BOOKWORM,
    rdmaCore: RDMA_CORE_44,
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
    kernel: BOOKWORM,
    rdmaCore: RDMA_CORE_44,
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
    kernel: BOOKWORM,
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
    kernel: BOOKWORM,
    scenarios: [
      'rxe-atomic-invalid-lkey*',
      'rxe-atomic-short-sge-ex',
      'rxe-atomic-no-sge-ex',
      'rxe-send-imm-no-recv*',
      'rxe-write-imm-no-recv*',
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
      'completion within 2 s and the QP stays in RTS, although timeout 14 (67 ms) and retry_cnt 7 ' +
      'should end it with RETRY_EXC_ERR in about 0.5 s; not investigated further (seen under TCG)',
    spec: 'IBTA 9.7.6.1.3 (transport timer), 10.3.1 (Error state)',
  },
  {
    id: 'rxe-qp-access-is-invalid-request',
    provider: 'rxe',
    kernel: BOOKWORM,
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
    id: 'rxe-grh-on-rc-receive',
    provider: 'rxe',
    kernel: BOOKWORM,
    scenarios: ['rxe-*'],
    // Every program's receive is the responder's first completion.
    observed: { 'responder.wc1.flags': /^GRH(\|.+)?$/ },
    why:
      'rxe sets IB_WC_GRH on every receive completion of a RoCE QP, RC included (rxe_resp.c do_complete: ' +
      'wc_flags = IB_WC_GRH for RoCE), where the engine follows IBTA (a GRH flag only when a GRH was ' +
      'received into the buffer, which RC receives do not report)',
    spec: 'IBTA 11.4.2.1 (ibv_wc wc_flags)',
  },
  {
    id: 'rxe-send-cqe-with-imm',
    provider: 'rxe',
    kernel: BOOKWORM,
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
    id: 'engine-write-imm-places-before-rnr',
    side: 'engine',
    provider: 'rxe',
    kernel: BOOKWORM,
    scenarios: ['rxe-write-imm-no-recv*'],
    observed: { 'mem[8]': '0x0123456789abcdef' },
    why:
      'engine gap: the engine responder places a Write with Immediate before it finds no receive, ' +
      'then answers RNR; rxe (rightly) checks for a receive first (rxe_resp.c check_resource) and ' +
      'places nothing, since an RNR NAK means the request was not executed',
    spec: 'IBTA 9.7.5.2.8 (RNR NAK)',
  },
  {
    id: 'libsiw-no-atomics',
    provider: 'siw',
    kernel: BOOKWORM,
    rdmaCore: RDMA_CORE_44,
    scenarios: [
      'siw-fetch-add*',
      'siw-cmp-swap*',
      'siw-atomic-*',
      'siw-order-atomic-*',
      'siw-order-two-atomics',
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
    id: 'libsiw-no-write-imm',
    provider: 'siw',
    kernel: BOOKWORM,
    rdmaCore: RDMA_CORE_44,
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
    kernel: BOOKWORM,
    rdmaCore: RDMA_CORE_44,
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
    kernel: BOOKWORM,
    rdmaCore: RDMA_CORE_44,
    scenarios: ['siw-send-imm*', 'link-siw-send-imm'],
    observed: { post1: 'EINVAL', 'post1.bad_wr': 'wr1' },
    nothingHappened: true,
    why:
      'RFC 7306 has no Send with Immediate (only the V2 draft does); libsiw refuses SEND_WITH_IMM ' +
      'with -EINVAL (providers/siw/siw.c)',
    spec: 'RFC 7306 §6; draft-hilland-iwarp-verbs-v2',
  },
  {
    id: 'siw-query-qp-state',
    provider: 'siw',
    kernel: BOOKWORM,
    scenarios: ['siw-*'],
    observed: { 'q*.*.state': 'RESET' },
    why:
      "siw_query_qp in Debian's 6.1 kernel does not fill qp_state (it reads as 0 = RESET although the QP is " +
      'in RTS); a later upstream patch (about 6.8) adds siw_qp_state_to_ib_qp_state',
  },
  {
    id: 'engine-no-solicited-flag',
    side: 'engine',
    provider: 'siw',
    kernel: BOOKWORM,
    scenarios: ['siw-send-solicited', 'link-siw-send-solicited'],
    observed: { wire: 'requester> send-se qn=0 msn=1 mo=0 L payload=1122334455667788' },
    why:
      'engine gap: the engine work requests carry no solicited flag (src/engine/requester/work-request.ts), ' +
      'so it sends a plain Send; siw sends Send with Solicited Event as RFC 5040 §5.3 asks for IBV_SEND_SOLICITED',
    spec: 'RFC 5040 §4.4, §5.3',
  },
  {
    id: 'engine-no-solicited-flag-roce',
    side: 'engine',
    provider: 'rxe',
    kernel: BOOKWORM,
    scenarios: ['link-rxe-send-solicited'],
    observed: { 'wire.req1.se': '1' },
    why:
      'engine gap, seen on the link between two guests: the engine work requests carry no solicited ' +
      'flag (src/engine/requester/work-request.ts), so its RoCEv2 encoding (to-roce.ts) leaves the BTH ' +
      'SE bit clear; rxe sets it for IBV_SEND_SOLICITED (rxe_req.c init_req_packet: solicited = ' +
      'IB_SEND_SOLICITED on the last packet) as IBTA asks',
    spec: 'IBTA Vol. 1 §9.2.1 (BTH SE), §9.4 (Send with solicited event)',
  },
];

/** siw's recorded answer to a wire probe (src/interop/peer/probes.ts), where it differs. */
export interface KnownProbeAnswer {
  readonly id: string;
  readonly probe: string;
  /** siw's answer exactly as the wire lines print it. */
  readonly kernel: string;
  readonly why: string;
}

/** What siw sends back for the RFC 7306 messages it does not implement. */
const SIW_UNEXPECTED_OPCODE_TERMINATE =
  'responder> terminate qn=2 msn=1 mo=0 L layer=2 type=0 code=0x06 hdrct=---';

const SIW_TERMINATE_WHY =
  'siw answers an opcode above 7 with Terminate RDMAP / Remote Operation Error / Unexpected ' +
  'OpCode (siw_qp_rx.c siw_get_hdr), as RFC 7306 §1.1 says a peer without the extension ' +
  'does, but (1) on little-endian hosts its struct iwarp_terminate bitfields ' +
  '(__LITTLE_ENDIAN_BITFIELD: layer:4 then etype:4) put Layer in the low nibble, so the wire ' +
  'reads Layer 2 (LLP), Error Type 0 instead of Layer 0, Error Type 2; (2) it copies no ' +
  'header for opcode errors (siw_send_terminate), where the engine copies the DDP header ' +
  'with its segment length per RFC 7306 §8.1 and RFC 5040 §4.8';

export const KNOWN_PROBE_ANSWERS: readonly KnownProbeAnswer[] = [
  {
    id: 'siw-terminate-layout',
    probe: 'siw-probe-atomic-request',
    kernel: SIW_UNEXPECTED_OPCODE_TERMINATE,
    why: SIW_TERMINATE_WHY,
  },
  {
    id: 'siw-terminate-layout',
    probe: 'siw-probe-immediate-data',
    kernel: SIW_UNEXPECTED_OPCODE_TERMINATE,
    why: SIW_TERMINATE_WHY,
  },
];
