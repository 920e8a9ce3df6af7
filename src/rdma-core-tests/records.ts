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
/** Every kernel line the guest boots (6.1, 6.12, 7.3). */
const SINCE_6_1: VersionRange = { from: '6.1' };

export const RDMA_CORE_TEST_RECORDS: readonly BehaviourRecord[] = [
  {
    id: 'rxe-resize-cq-completions-late',
    provider: 'rxe',
    kernel: SINCE_6_1,
    rdmaCore: RDMA_CORE_56,
    scope: ['tests.test_cq.CQTest.test_resize_cq'],
    observed: { outcome: 'error', message: /Got timeout on polling \(\d+ CQEs remaining\)/ },
    why:
      'The test posts 6 UD Sends and at once shrinks the CQ to 1 entry, expecting EINVAL because 6 ' +
      'completions are unpolled (tests/test_cq.py:121-135). rxe completes Sends asynchronously (its ' +
      'requester and completer run as tasks, rxe_task.c), so under TCG fewer than 2 completions are ' +
      'in the CQ at the resize: rxe_cq_chk_attr() accepts it (drivers/infiniband/sw/rxe/rxe_cq.c:28-29, ' +
      'torvalds/linux 03ab8e62: EINVAL only when cqe < queue_count) and a later completion that ' +
      'meets the full 1-entry CQ is dropped by rxe_cq_post() (rxe_cq.c:115-125, -EBUSY), so the ' +
      "test's poll of 6 times out with one missing. A race of the test with a software provider, " +
      'not a spec departure: ibv_resize_cq(3) only requires cqe >= the unpolled entries.',
    spec: 'ibv_resize_cq(3)',
  },
];
