/**
 * Why rdma-core's own tests fail on rxe and siw where they do: BehaviourRecords
 * (judge/record.ts) whose `scope` is the rdma-core test id and whose `observed` is the
 * runner's `outcome` (and, to tell causes apart, a pattern of its `message`). Each names
 * the provider's or the test's source that explains it; line numbers are those of the
 * source version named. judge.ts tries them in this order; one in scope whose test passed
 * is stale and fails the run.
 */
import type { BehaviourRecord } from '../judge/record.js';
import type { VersionRange } from '../judge/version-range.js';

/** The tests and pyverbs of rdma-core 56.1 (the version pyverbs.sh builds). */
const RDMA_CORE_56: VersionRange = { from: '56' };
/**
 * rxe's requester and completer as work items, no longer run inline or as tasklets: the
 * 6.4 merge of "RDMA/rxe: Add workqueue support for rxe tasks" and "RDMA/rxe: Remove
 * tasklet call from rxe_cq.c" (Bob Pearson, March 2023). Measured: test_resize_cq passes
 * on 6.1.192 and fails on 6.12.95 and 7.3.4 under TCG.
 */
const RXE_TASKS_ON_WORKQUEUE: VersionRange = { from: '6.4' };
/** rxe before ATOMIC WRITE (as src/judge/records/ranges.ts RXE_BEFORE_PLACEMENT). */
const RXE_BEFORE_ATOMIC_WRITE: VersionRange = { from: '6.1', before: '6.2' };
/** siw_query_qp without qp_state (as ranges.ts SIW_QUERY_QP_STATE_UNSET). */
const SIW_QUERY_QP_STATE_UNSET: VersionRange = { from: '6.1', before: '6.8' };

export const RDMA_CORE_TEST_RECORDS: readonly BehaviourRecord[] = [
  {
    id: 'rxe-resize-cq-completions-late',
    provider: 'rxe',
    kernel: RXE_TASKS_ON_WORKQUEUE,
    rdmaCore: RDMA_CORE_56,
    scope: ['tests.test_cq.CQTest.test_resize_cq'],
    observed: { outcome: 'error', message: /Got timeout on polling \(\d+ CQEs remaining\)/ },
    why:
      'The test posts 6 UD Sends and at once shrinks the CQ to 1 entry, expecting EINVAL because 6 ' +
      'completions are unpolled (tests/test_cq.py:121-135). rxe completes Sends asynchronously (its ' +
      'requester and completer run as work items since 6.4, rxe_task.c), so under TCG fewer than 2 completions are ' +
      'in the CQ at the resize: rxe_cq_chk_attr() accepts it (drivers/infiniband/sw/rxe/rxe_cq.c:28-29, ' +
      'torvalds/linux 03ab8e62: EINVAL only when cqe < queue_count) and a later completion that ' +
      'meets the full 1-entry CQ is dropped by rxe_cq_post() (rxe_cq.c:115-125, -EBUSY), so the ' +
      "test's poll of 6 times out with one missing. A race of the test with a software provider, " +
      'not a spec departure: ibv_resize_cq(3) only requires cqe >= the unpolled entries.',
    spec: 'ibv_resize_cq(3)',
    class: 'allowed',
    rule: 'ibv_resize_cq(3): cqe must be at least the number of unpolled completions',
    unclear:
      'a completion that then meets the full CQ is dropped (rxe_cq_post, -EBUSY); IBTA calls a ' +
      'CQ overrun an error the consumer is told of, and whether rxe raises IBV_EVENT_CQ_ERR ' +
      'there was not checked',
  },
  {
    id: 'rxe-atomic-write-before-6.2',
    provider: 'rxe',
    kernel: RXE_BEFORE_ATOMIC_WRITE,
    rdmaCore: RDMA_CORE_56,
    scope: ['tests.test_qpex.QpExTestCase.test_qp_ex_rc_atomic_write'],
    observed: { outcome: 'error', message: /Completion status is local QP operation error/ },
    why:
      'The test skips only where creating the QP with IBV_QP_EX_WITH_ATOMIC_WRITE fails ' +
      '(tests/test_qpex.py:126-128, 240-245); librxe of rdma-core 56.1 accepts the flag ' +
      '(providers/rxe/rxe.c:1282, 1341-1342: wr_atomic_write) and the 6.1 kernel does not ' +
      'check it at create, but has no ATOMIC WRITE opcode: the request completes locally with ' +
      'IBV_WC_LOC_QP_OP_ERR. From 6.2 ("RDMA/rxe: Support RDMA Atomic Write operation") it ' +
      'passes (measured on 6.12.95 and 7.3.4). The suite records the same for its own ' +
      'scenarios: rxe-no-atomic-write-before-6.2 (src/judge/records/rxe.ts).',
    spec: 'IBTA 1.5 Vol. 1 Annex A19 (ATOMIC WRITE)',
    class: 'unimplemented',
    rule: 'IBTA 1.5 Vol. 1 Annex A19 (ATOMIC WRITE, a 1.5 addition the 6.1 driver predates); ibv_wr_post(3) ibv_wr_atomic_write',
  },
  {
    id: 'siw-query-qp-no-state-before-6.8',
    provider: 'siw',
    kernel: SIW_QUERY_QP_STATE_UNSET,
    rdmaCore: RDMA_CORE_56,
    scope: ['tests.test_qp.QPTest.test_query_rc_qp'],
    observed: { outcome: 'fail', message: /IBV_QPS_INIT: 1> != 0/ },
    why:
      'The test queries a QP in INIT and checks qp_state (tests/test_qp.py:238-239). ' +
      "siw_query_qp() (drivers/infiniband/sw/siw/siw_verbs.c) in Debian's 6.1 does not fill " +
      'qp_state, so it reads 0 (RESET); upstream "RDMA/siw: Set qp_state in siw_query_qp" ' +
      '(6.8 cycle) adds it, and 6.12 and 7.3 pass. The suite records the same: ' +
      'siw-query-qp-state (src/judge/records/siw.ts).',
    spec: 'IBTA Vol. 1 §11.2.5 (Query QP: the current QP state)',
    class: 'defect',
    rule: 'ibv_query_qp(3): attr->qp_state is the current QP state',
  },
];
