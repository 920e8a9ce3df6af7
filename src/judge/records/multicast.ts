/**
 * Where UD multicast is refused (the `multicast` scenario family,
 * src/interop/scenarios/multicast.ts): on siw, which has neither UD QPs nor a multicast
 * attach. rxe matches the engine (measured on 6.1.192 / rdma-core 44 and 7.3.4 / rdma-core
 * 56.1, `run --scenario '*-mcast-*'`): no record of its own.
 */
import type { BehaviourRecord } from '../record.js';
import { SINCE_6_1, SINCE_RDMA_CORE_44 } from './ranges.js';

/** The siw multicast programs that bring up a UD pair (all but the RC attach). */
export const SIW_UD_PROGRAMS: readonly string[] = [
  'siw-mcast-send',
  'siw-mcast-send-imm',
  'siw-mcast-detach',
  'siw-mcast-attach-unicast',
];

/** siw's records (tried with SIW_RECORDS). */
export const MULTICAST_SIW_RECORDS: readonly BehaviourRecord[] = [
  {
    id: 'siw-rc-qps-only',
    class: 'allowed',
    rule:
      'RFC 5040 §1 (RDMAP over DDP over a reliable LLP: iWARP defines no datagram service); ' +
      'ibv_create_qp(3) (a QP type the device does not support is refused)',
    provider: 'siw',
    kernel: SINCE_6_1,
    rdmaCore: SINCE_RDMA_CORE_44,
    scope: SIW_UD_PROGRAMS,
    observed: { bringup: 'EOPNOTSUPP ibv_create_qp' },
    nothingHappened: true,
    why:
      'siw creates RC QPs only: siw_create_qp (drivers/infiniband/sw/siw/siw_verbs.c, 6.1.192 ' +
      'line 320, 6.12.95 and 7.3.4 line 334: if (attrs->qp_type != IB_QPT_RC) ... rv = ' +
      '-EOPNOTSUPP, "only RC QP\'s supported"), which libsiw reaches unchecked (rdma-core ' +
      'providers/siw/siw.c siw_create_qp: ibv_cmd_create_qp); so the UD requester QP of the ' +
      "pair is refused first, nothing is attached, sent or received, and the responder's " +
      'memory stays as it was (measured on 6.1.192 / rdma-core 44 and 7.3.4 / rdma-core 56.1)',
    spec: 'IBTA 1.5 Vol. 1 §10.5 (multicast), §11.3 (Attach QP to Multicast Group)',
  },
  {
    id: 'libsiw-no-attach-mcast',
    class: 'unimplemented',
    rule: 'ibv_attach_mcast(3): a provider may not support the verb (EOPNOTSUPP)',
    provider: 'siw',
    kernel: SINCE_6_1,
    rdmaCore: SINCE_RDMA_CORE_44,
    scope: ['siw-mcast-attach-rc'],
    observed: { attach1: 'EOPNOTSUPP' },
    why:
      'libsiw sets no attach_mcast (rdma-core providers/siw/siw.c siw_context_ops; librxe sets ' +
      'ibv_cmd_attach_mcast), so ibv_attach_mcast (libibverbs/verbs.c, 56.1 line 987: ' +
      "get_ops(qp->context)->attach_mcast) reaches libibverbs' dummy op (libibverbs/dummy_ops.c, " +
      '56.1 line 101: return EOPNOTSUPP) before the kernel, where siw has no attach_mcast either ' +
      '(ib_attach_mcast, drivers/infiniband/core/verbs.c: -EOPNOTSUPP before the QP type ' +
      "check that gives the engine's EINVAL); the RC QP is unchanged and the Send after it " +
      'completes as the engine predicts (measured on 6.1.192 / rdma-core 44 and 7.3.4 / 56.1)',
    spec: 'IBTA 1.5 Vol. 1 §11.3 (Attach QP to Multicast Group: UD QPs only)',
  },
];
