/**
 * What the real providers do where they differ from the reference engine, recorded as
 * data with the reason and its source. A difference listed here is a named finding, not
 * a failure; a difference not listed fails the run, and so does an entry that no longer
 * happens (so this table stays true).
 *
 * A post that the provider refuses (`post` = an errno) means nothing reached the wire:
 * the completion fields are then absent and memory is untouched. Those consequences are
 * explained by the `post` entry itself (runner.ts) and are not listed one by one.
 */
import type { ComparedField } from './compare.js';

export interface KnownBehaviour {
  /** Short name shown in reports, e.g. `libsiw-no-rfc7306`. */
  readonly id: string;
  /** Scenario ids (src/interop/scenarios.ts) this applies to. */
  readonly scenarios: readonly string[];
  readonly field: ComparedField;
  /** The kernel's value, formatted as in reports (compare.ts formatValue). */
  readonly kernel: string;
  /** Why, with the source that shows it. */
  readonly why: string;
}

const SIW_ATOMICS = [
  'siw-fetch-add',
  'siw-fetch-add-wrap',
  'siw-cmp-swap-match',
  'siw-cmp-swap-mismatch',
];
const SIW_ALL = [
  'siw-write',
  'siw-send',
  'siw-read',
  ...SIW_ATOMICS,
  'siw-write-imm',
  'siw-send-imm',
];

export const KNOWN_BEHAVIOUR: readonly KnownBehaviour[] = [
  {
    id: 'librxe-atomic-alignment',
    scenarios: ['rxe-misaligned-legacy'],
    field: 'post',
    kernel: 'EINVAL',
    why:
      'librxe checks atomic alignment before posting (rdma-core providers/rxe/rxe.c validate_send_wr: ' +
      'remote_addr & 7 -> EINVAL); the ibv_wr_* path has no such check and gets the NAK (rxe-misaligned-ex)',
  },
  {
    id: 'refused-post-keeps-rts',
    scenarios: ['rxe-misaligned-legacy'],
    field: 'requesterQpState',
    kernel: 'RTS',
    why: 'the refused post never reached the wire, so no NAK moved the QP to ERR',
  },
  {
    id: 'libsiw-no-atomics',
    scenarios: SIW_ATOMICS,
    field: 'post',
    kernel: 'EINVAL',
    why:
      'siw implements no RFC 7306 (atomic_cap NONE; iwarp.h knows RDMAP opcodes 0-7 only); libsiw maps ' +
      'ATOMIC_* to an unsupported opcode and ibv_post_send returns -EINVAL (rdma-core providers/siw/siw.c)',
  },
  {
    id: 'libsiw-no-write-imm',
    scenarios: ['siw-write-imm'],
    field: 'post',
    kernel: 'EINVAL',
    why:
      'libsiw maps RDMA_WRITE_WITH_IMM to an unsupported opcode (providers/siw/siw.c): siw sends no ' +
      'RFC 7306 Immediate Data message',
  },
  {
    id: 'libsiw-no-send-imm',
    scenarios: ['siw-send-imm'],
    field: 'post',
    kernel: 'EINVAL',
    why:
      'RFC 7306 has no Send with Immediate (only the V2 draft does); libsiw refuses SEND_WITH_IMM ' +
      'with -EINVAL (providers/siw/siw.c)',
  },
  {
    id: 'siw-query-qp-state',
    scenarios: SIW_ALL,
    field: 'requesterQpState',
    kernel: 'RESET',
    why:
      "siw_query_qp in Debian's 6.1 kernel does not fill qp_state (it reads as 0 = RESET although the QP is " +
      'in RTS); a later upstream patch adds siw_qp_state_to_ib_qp_state',
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
