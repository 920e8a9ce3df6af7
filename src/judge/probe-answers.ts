/**
 * siw's recorded answers to the \`run\` wire probes (src/probe/wire-probes.ts) where they
 * differ from the engine's.
 */

/** siw's recorded answer to a wire probe (src/probe/wire-probes.ts), where it differs. */
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
