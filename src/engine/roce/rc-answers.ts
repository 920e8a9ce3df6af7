/**
 * What an RC responder answers, one place for the RC responder (the tester's expectations)
 * and the packet exchange the suite predicts (projection/roce-exchange.ts).
 *
 *   - IBTA Vol. 1 §9.7.5.1: a request that executed is acknowledged by an ACK (Send,
 *     Write; ATOMIC WRITE, IBTA 1.5 Annex A19), an ATOMIC Acknowledge carrying the original
 *     value (§9.7.4.1.6, AtomicAckETH §9.3.5), or RDMA READ Response packets carrying the
 *     data (§9.7.4.1.5); FLUSH (A19) is answered by a Read Response without data once the
 *     earlier requests are placed (rxe_comp.c check_ack accepts it for IB_WR_FLUSH);
 *   - §9.7.5.2.8, Table 44: a NAK names its class in the AETH syndrome; an RNR NAK carries
 *     the responder's min_rnr_timer code (Table 45);
 *   - the credit count: the engine has no end-to-end credit policy (§9.7.7.2), its ACKs
 *     carry 31 (invalid / unlimited credits), and no comparison reads it.
 */

import type { AethNakCodeName, AethSyndrome } from '../../codec/roce/aeth.js';

/** The AETH syndrome of a positive acknowledgement (§9.7.5.1; credit count 31, see above). */
export const ACK_SYNDROME: AethSyndrome = { kind: 'ACK', creditCount: 31 };

/** The AETH syndrome of a NAK of class `code` (§9.7.5.2.8, Table 44). */
export function nakSyndrome(code: AethNakCodeName): AethSyndrome {
  return { kind: 'NAK', code };
}

/** The AETH syndrome of an RNR NAK with the responder's min_rnr_timer code (Table 45). */
export function rnrNakSyndrome(minRnrTimer: number): AethSyndrome {
  return { kind: 'RNR_NAK', timer: minRnrTimer };
}

/**
 * The BTH opcode of the `index`-th of `span` RDMA READ Response packets (§9.7.4.1.5,
 * §9.7.5.1.5: the Read's data in PMTU-sized packets, FIRST / MIDDLE / LAST, or ONLY).
 */
export function readResponseOpcode(index: number, span: number): string {
  if (span === 1) return 'RC_RDMA_READ_RESPONSE_ONLY';
  if (index === 0) return 'RC_RDMA_READ_RESPONSE_FIRST';
  return index === span - 1 ? 'RC_RDMA_READ_RESPONSE_LAST' : 'RC_RDMA_READ_RESPONSE_MIDDLE';
}
