/**
 * PSN arithmetic of an RC queue pair, shared by the RC responder, the RC requester and the
 * packet exchange the suite predicts (one place for the modulo and the two halves).
 *
 * IBTA Vol. 1 §9.7.1: a PSN is 24 bits and wraps modulo 2^24. §9.7.5.1.2 / §9.7.4.1: the
 * responder splits the space at its expected PSN into two halves of 2^23 PSNs, the "valid"
 * region behind it (duplicates, §9.7.5.1.3) and the "invalid" region from it on (out of
 * sequence, C9-113); a requester keeps at most 2^23 PSNs outstanding so that both sides
 * agree on the split.
 */

/** 2^24 PSNs (IBTA §9.7.1). */
export const PSN_SPACE = 0x100_0000;
/** 2^23: where the valid (duplicate) region and the invalid region meet (§9.7.5.1.2). */
export const HALF_PSN_SPACE = PSN_SPACE / 2;
/** The 24 bits a BTH carries a PSN in (§9.2, §9.7.1). */
export const PSN_MASK = PSN_SPACE - 1;

/** `a - b` modulo 2^24. */
export function psnDistance(a: number, b: number): number {
  return (a - b + PSN_SPACE) % PSN_SPACE;
}

/** `psn + n` modulo 2^24. */
export function psnAdd(psn: number, n: number): number {
  return (psn + n) % PSN_SPACE;
}
