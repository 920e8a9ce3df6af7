/**
 * The records of rxe as the RoCE packet tester meets it (src/probe/roce-*.ts): what rxe
 * answers where the engine predicts otherwise, each with its cause in the driver's source.
 * The tester's observation is a JSON of counts and lists compared with the engine's (one
 * request more, as many steps, retransmitted more often), so each record explains it by a
 * predicate over the engine's and the device's JSON (`matches`): a field glob names a
 * value, not a relation between two observations. rxe-no-atomic-write-before-6.2, which
 * the suite records too, is in rxe.ts.
 */
import type { BehaviourRecord, JsonValue } from '../record.js';
import { RXE_BEFORE_PLACEMENT, RXE_WITH_PLACEMENT } from './ranges.js';

type Step = { answers: JsonValue[]; memory: JsonValue; completions: JsonValue[] };
type Steps = { steps: Step[]; qpState: string };
type Answered = { requests: string[]; completions: JsonValue[]; qpState: string };

/** A `matches` predicate over the expected and observed JSON read as `T`. */
function over<T>(test: (e: T, o: T) => boolean) {
  return (expected: JsonValue, observed: JsonValue): boolean =>
    test(expected as unknown as T, observed as unknown as T);
}

/** Every step got no answer and left memory and completions as predicted; QP state `state`. */
export function silentlyDropped(state: string) {
  return over<Steps>(
    (e, o) =>
      o.qpState === state &&
      o.steps.length === e.steps.length &&
      o.steps.every(
        (s, i) =>
          s.answers.length === 0 &&
          s.memory === e.steps[i]?.memory &&
          s.completions.length === e.steps[i]?.completions.length,
      ),
  );
}

/**
 * The answered requester's observation as the engine predicts it (completions, QP state)
 * but with one request packet more, which `added` accepts.
 */
function oneRequestMore(added: (e: Answered, o: Answered) => boolean) {
  return over<Answered>(
    (e, o) =>
      o.requests.length === e.requests.length + 1 &&
      o.qpState === e.qpState &&
      JSON.stringify(o.completions) === JSON.stringify(e.completions) &&
      added(e, o),
  );
}

/** The tester's one FLUSH (roce-responder-flush-acknowledged). */
const FLUSH_ASSERTION = 'roce-responder-flush-acknowledged';

/**
 * One step, which the engine answers with one `opcode` (its QP then in `expectedState`) and
 * rxe leaves unanswered: memory, completions as predicted, QP still in RTS.
 */
function oneAnswerDropped(opcode: string, syndrome: RegExp, expectedState: string) {
  const dropped = silentlyDropped('RTS');
  return (expected: JsonValue, observed: JsonValue): boolean => {
    const e = expected as unknown as Steps;
    const answers = e.steps.length === 1 ? e.steps[0]?.answers : undefined;
    const answer = answers?.length === 1 ? (answers[0] as Record<string, JsonValue>) : undefined;
    return (
      answer?.opcode === opcode &&
      syndrome.test(String(answer.syndrome)) &&
      e.qpState === expectedState &&
      dropped(expected, observed)
    );
  };
}

/** The RoCE tester's records of rxe (the suite's are in rxe.ts). */
export const RXE_WIRE_RECORDS: readonly BehaviourRecord[] = [
  {
    id: 'rxe-flush-icrc-hashes-headers-twice',
    class: 'defect',
    rule: 'IBTA 1.5 Vol. 1 Annex A19 (FLUSH: BTH, FETH, RETH and no payload, answered by an RDMA READ Response without data); Vol. 1 Annex A17.3.3 (the ICRC covers the packet once)',
    unclear:
      "the IBTA clauses are cited from public sources, not read here; rxe-to-rxe FLUSH works because rxe's requester computes the ICRC the same way",
    provider: 'rxe',
    scope: [FLUSH_ASSERTION],
    kernel: RXE_WITH_PLACEMENT,
    why:
      "rxe_opcode.c's IB_OPCODE_RC_FLUSH entry (6.12.95, 7.3.4: lines 393-403) gives offsets for " +
      'RXE_BTH, RXE_FETH and RXE_RETH but none for RXE_PAYLOAD (IB_OPCODE_RC_ATOMIC_WRITE, right ' +
      'after it, has one), so payload_addr() (rxe_hdr.h) points at the BTH and payload_size() ' +
      'covers BTH + FETH + RETH; rxe_icrc_check() (rxe_icrc.c) hashes the headers (rxe_icrc_hdr) ' +
      'and then that "payload", the 32 header bytes a second time. A FLUSH with the standard ICRC ' +
      'fails the check and rxe_rcv drops it: no ACK, no NAK, QP in RTS, memory untouched. Only an ' +
      "ICRC computed over the headers twice, what rxe's own requester sends (rxe_icrc_generate, " +
      'same offsets), is accepted, so FLUSH works rxe to rxe and never between rxe and a standard ' +
      'RoCEv2 peer. Measured on 6.12.95 and 7.3.4 (2026-12-05)',
    spec: 'IBTA 1.5 Vol. 1 Annex A19 (FLUSH); Vol. 1 Annex A17.3.3 (ICRC)',
    matches: oneAnswerDropped('RC_RDMA_READ_RESPONSE_ONLY', /^ACK /, 'RTS'),
  },
  {
    id: 'rxe-no-flush-opcode-before-6.2',
    class: 'unimplemented',
    rule: 'IBTA 1.5 Vol. 1 Annex A19 (FLUSH, a 1.5 addition the 6.1 driver predates)',
    unclear:
      'rxe before 6.2 drops the unknown opcode silently where IBTA Vol. 1 §9.7.5.2.2 asks for NAK Invalid Request (as rxe-no-atomic-write-before-6.2)',
    provider: 'rxe',
    scope: [FLUSH_ASSERTION],
    kernel: RXE_BEFORE_PLACEMENT,
    why:
      'rxe before 6.2 has no FLUSH ("RDMA/rxe: Implement RC RDMA FLUSH service in requester ' +
      'side", 6.2): 6.1.192\'s rxe_opcode.c has no IB_OPCODE_RC_FLUSH (0x1C) entry, so rxe_recv.c ' +
      'rxe_rcv()\'s "!rxe_opcode[pkt->opcode].mask" test drops the packet (no NAK, QP in RTS, ' +
      'memory untouched), measured on 6.1.192 (2026-12-05), where the engine answers an operation the responder does not support ' +
      '(no FLUSH right: the MR cannot be registered with one there) with NAK Invalid Request, its QP then in ERR',
    spec: 'IBTA 1.5 Vol. 1 Annex A19 (FLUSH); Vol. 1 §9.7.5.2.2 (Invalid Request)',
    // The engine's NAK Invalid Request moves its QP to ERR; rxe's stays in RTS.
    matches: oneAnswerDropped('RC_ACKNOWLEDGE', /^NAK INVALID_REQUEST$/, 'ERR'),
    codeAbsent: true,
  },
  {
    id: 'rxe-retry-cnt-7-is-infinite',
    class: 'defect',
    rule: "IBTA Vol. 1 §9.7.6.1.3 (transport timer: retry_cnt bounds the retries, then RETRY_EXC_ERR; 7 means infinite only for rnr_retry, §9.7.5.2.8), as RDMAmojo's ibv_modify_qp page describes retry_cnt and rnr_retry; ibv_modify_qp(3) retry_cnt",
    unclear:
      'the IBTA clauses are cited from public sources, not read here; ibv_modify_qp(3) itself says only "Retry count"',
    provider: 'rxe',
    scope: ['roce-requester-no-answer-retry-7'],
    kernel: { from: '0' },
    why:
      'rxe_comp.c (COMPST_ERROR_RETRY) decrements qp->comp.retry_cnt only when it is not 7: ' +
      '"if (qp->comp.retry_cnt != 7) qp->comp.retry_cnt--;", the rule IBTA gives rnr_retry (7 = ' +
      'infinite) applied to the transport retry count too, so with retry_cnt 7 a request that is never ' +
      'answered is retransmitted for ever and never completes with RETRY_EXC_ERR. This is the cause of ' +
      'the suite record rxe-no-retry-exhaustion-towards-err-qp (its QPs use retry_cnt 7)',
    spec: 'IBTA Vol. 1 §9.7.6.1.3 (transport timer, retry_cnt)',
    matches: over<{ transmissions: number; completion: string | null; qpState: string }>(
      (e, o) => o.completion === null && o.qpState === 'RTS' && o.transmissions > e.transmissions,
    ),
  },
  {
    id: 'rxe-ghost-response-retries-read-or-atomic',
    class: 'defect',
    rule: 'IBTA Vol. 1 §9.7.6.1.3: a response whose PSN no outstanding request has (a ghost) is dropped',
    unclear:
      "rxe_comp.c check_psn reads an ACK past the oldest WQE as an implied NAK for a pending Read or Atomic; the IBTA clause on ghost responses is cited from the engine's reading (public sources), not read here",
    provider: 'rxe',
    scope: ['roce-requester-ghost-ack-outstanding'],
    kernel: { from: '0' },
    why:
      'rxe_comp.c check_psn() compares a response PSN only with the oldest WQE: "check to see if ' +
      'response is past the oldest WQE. if it is, complete send/write or error read/atomic": a PSN ' +
      'beyond its last_psn, with a Read or Atomic pending, returns COMPST_ERROR_RETRY, so a ghost ACK ' +
      '(a PSN never sent) makes rxe send the FetchAdd again instead of dropping the ACK; the Atomic ACK ' +
      'then completes it with the value the wire carried. (With a Write pending the same test returns ' +
      'COMPST_COMP_ACK: a ghost ACK completes the Write.)',
    spec: 'IBTA Vol. 1 §9.7.6.1.3 (ghost responses are dropped)',
    matches: oneRequestMore((e, o) => o.requests.every((r) => r === e.requests[0])),
  },
  {
    id: 'rxe-read-response-too-long-is-loc-prot-err',
    class: 'defect',
    rule: "ibv_poll_cq(3) statuses as RDMAmojo's ibv_poll_cq page, by the man page's author; the man page lists no status meanings: IBV_WC_LOC_PROT_ERR is for an SGE that references no valid MR, data too long for the buffer is a length error (IBV_WC_LOC_LEN_ERR); IBTA Vol. 1 §9.7.6.1.4, §10.8.3",
    unclear:
      'the IBTA clauses are cited from public sources, not read here; the same copy_data() cause as rxe-short-sge-is-protection-error',
    provider: 'rxe',
    scope: ['roce-requester-read-response-too-long'],
    kernel: { from: '0' },
    why:
      "rxe_comp.c do_read() copies the response payload into the Read's scatter list with " +
      'copy_data(), which refuses a length beyond what is left of it, and do_read() reports every ' +
      'copy_data() failure as IB_WC_LOC_PROT_ERR ("RDMA/rxe: Return CQE error if invalid lkey was ' +
      'supplied"), so a Read response longer than the Read completes with LOC_PROT_ERR where the ' +
      'engine reports a length error (LOC_LEN_ERR); the QP goes to ERR either way',
    spec: 'IBTA Vol. 1 §9.7.6.1.4, §10.8.3',
    matches: (expected, observed) =>
      JSON.stringify(expected).replace('"LOC_LEN_ERR"', '"LOC_PROT_ERR"') ===
      JSON.stringify(observed),
  },
  {
    id: 'rxe-duplicate-read-without-resource-dropped',
    class: 'allowed',
    rule: "IBTA Vol. 1 §9.7.5.1.3 (duplicate Reads): a responder answers duplicates from the resources it keeps (max_dest_rd_atomic), rxe_resp.c drops the rest as the spec's Class D error",
    unclear:
      'whether a Read exactly 2^23 PSNs behind is still a duplicate the responder must execute again is not settled from the texts here',
    provider: 'rxe',
    scope: ['roce-responder-read-far-behind'],
    kernel: { from: '0' },
    why:
      'rxe_resp.c duplicate_request() answers a duplicate Read only from its responder resources ' +
      '(find_resource(): the last max_dest_rd_atomic Reads and Atomics, by PSN range); a duplicate Read ' +
      'it has no resource for, here one 2^23 PSNs behind that was never executed, is dropped ("Resource ' +
      'not found. Class D error. Drop the request."), where the engine executes every duplicate Read ' +
      'again. Nothing else differs: the Write before it, the memory, the QP state',
    spec: 'IBTA Vol. 1 §9.7.5.1.3 (duplicate Reads)',
    matches: over<Steps>((e, o) => {
      const last = e.steps.length - 1;
      const got = o.steps[last];
      const want = e.steps[last];
      return (
        o.qpState === e.qpState &&
        o.steps.length === e.steps.length &&
        JSON.stringify(o.steps.slice(0, last)) === JSON.stringify(e.steps.slice(0, last)) &&
        got !== undefined &&
        want !== undefined &&
        want.answers.length > 0 &&
        got.answers.length === 0 &&
        got.memory === want.memory &&
        got.completions.length === want.completions.length
      );
    }),
  },
  {
    id: 'rxe-short-read-response-waits-for-the-rest',
    class: 'defect',
    rule: 'IBTA Vol. 1 §9.7.6.1.3 (the transport timer runs while a request is outstanding, so it completes, retried or in error); §9.7.6.1.4, §10.8.3 (a Read response shorter than the Read)',
    unclear: 'the IBTA clauses are cited from public sources, not read here',
    provider: 'rxe',
    scope: ['roce-requester-read-response-too-short'],
    kernel: { from: '0' },
    why:
      'rxe_comp.c do_read() copies what a Read response carries and returns COMPST_COMP_ACK only when ' +
      '"wqe->dma.resid == 0 && (pkt->mask & RXE_END_MASK)"; a Read Response ONLY shorter than the Read ' +
      'leaves resid > 0, so it is COMPST_UPDATE_COMP, which moves comp.psn past the response: the Read ' +
      'stays outstanding, waiting for the rest, and rxe_completer() re-arms the retransmit timer only ' +
      'while req.psn is beyond comp.psn, so nothing retries it: no retransmission, no completion, QP ' +
      'in RTS for as long as the tester watched (4 s; 6.1.192, 6.12.95, 7.3.4 on 2026-11-28), where the ' +
      'engine ends the Read at once with a length error (LOC_LEN_ERR), QP in ERR',
    spec: 'IBTA Vol. 1 §9.7.6.1.4, §10.8.3, §9.7.6.1.3 (transport timer)',
    matches: over<Answered>(
      (e, o) =>
        JSON.stringify(o.requests) === JSON.stringify(e.requests) &&
        o.completions.length === 0 &&
        o.qpState === 'RTS',
    ),
  },
];
