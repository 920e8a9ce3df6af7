/**
 * An RDMA Write posted on the responder QP back into the requester's memory (the reverse
 * direction of the RC connection). Its completion depends only on the two QPs' states:
 * - the responder QP in ERR: the request is flushed (IBTA 1.5 §10.3.1, C10-26: work
 *   requests posted to a QP in the Error state complete with a flush error);
 * - the requester QP in ERR: it discards incoming packets (§10.3.1), so nothing answers the
 *   Write; the responder retries until its retry count is exceeded (§9.7.6.1.3-4), completes
 *   it with RETRY_EXC_ERR and goes to ERR itself (§10.3.1: an error completion moves the
 *   QP to Error);
 * - else it succeeds.
 */
import type { QpState } from '../../ibverbs/qp-state.js';
import { errorCompletion, type WorkCompletion } from '../projection/work-completion.js';

/** The completion of a Write of `byteLen` bytes posted on the responder, and its QP state after. */
export function writeBackCompletion(
  wrId: bigint,
  byteLen: number,
  states: { readonly requester: QpState; readonly responder: QpState },
): { readonly completion: WorkCompletion; readonly responderState: QpState } {
  if (states.responder === 'ERR')
    return { completion: errorCompletion(wrId, 'WR_FLUSH_ERR'), responderState: 'ERR' };
  if (states.requester === 'ERR')
    return { completion: errorCompletion(wrId, 'RETRY_EXC_ERR'), responderState: 'ERR' };
  return {
    completion: {
      wrId,
      status: 'SUCCESS',
      opcode: 'RDMA_WRITE',
      byteLen,
      immData: undefined,
      flags: [],
    },
    responderState: states.responder,
  };
}
