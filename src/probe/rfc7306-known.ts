/**
 * Recorded, explained differences between the patched siw (patches/siw/, rfc7306=1) and
 * the reference engine on the RFC 7306 wire probes. Each row says how siw's answer
 * differs, as a function of the engine's, and why.
 */
import type { Rfc7306Answer } from './rfc7306-probes.js';

export interface KnownRfc7306ProbeAnswer {
  readonly probe: string;
  readonly finding: string;
  readonly explanation: string;
  /** siw's answer, derived from the engine's. */
  readonly kernel: (engine: Rfc7306Answer) => Rfc7306Answer;
}

export const KNOWN_RFC7306_PROBE_ANSWERS: readonly KnownRfc7306ProbeAnswer[] = [];
