/**
 * Where ibv_rereg_mr is refused (the `rereg` scenario family, src/interop/scenarios/rereg.ts):
 * by the provider library before the kernel, on rxe and on siw alike.
 */
import type { BehaviourRecord } from '../record.js';
import { SINCE_6_1, SINCE_RDMA_CORE_44 } from './ranges.js';

/** rxe's record (tried with RXE_RECORDS). */
export const REREG_RXE_RECORDS: readonly BehaviourRecord[] = [
  {
    id: 'librxe-no-rereg-mr',
    class: 'unimplemented',
    rule: 'ibv_rereg_mr(3): a provider may not support the verb (EOPNOTSUPP)',
    provider: 'rxe',
    kernel: SINCE_6_1,
    rdmaCore: SINCE_RDMA_CORE_44,
    scope: ['rxe-rereg-*'],
    observed: { 'rereg*': 'EOPNOTSUPP' },
    why:
      'librxe sets no rereg_mr (rdma-core 44.0 and 56.1 providers/rxe/rxe.c rxe_ctx_ops), so ' +
      'ibv_rereg_mr (libibverbs/verbs.c, 56.1 line 457: get_ops(mr->context)->rereg_mr) reaches ' +
      "libibverbs' dummy op (libibverbs/dummy_ops.c, 56.1 line 465 rereg_mr: errno = EOPNOTSUPP, " +
      'IBV_REREG_MR_ERR_INPUT) before the kernel, whose rxe_rereg_user_mr (6.12 and later) would ' +
      'change the PD and access flags; the MR keeps its keys and rights, so the Write after it ' +
      'lands as the engine predicts (measured on 6.1.192 / rdma-core 44)',
    spec: 'IBTA 1.5 Vol. 1 §11.2.8.3 (Reregister Memory Region)',
  },
];

/** siw's record (tried with SIW_RECORDS). */
export const REREG_SIW_RECORDS: readonly BehaviourRecord[] = [
  {
    id: 'libsiw-no-rereg-mr',
    class: 'unimplemented',
    rule: 'ibv_rereg_mr(3): a provider may not support the verb (EOPNOTSUPP)',
    provider: 'siw',
    kernel: SINCE_6_1,
    rdmaCore: SINCE_RDMA_CORE_44,
    scope: ['siw-rereg-*'],
    observed: { 'rereg*': 'EOPNOTSUPP' },
    why:
      'libsiw sets no rereg_mr (rdma-core providers/siw/siw.c siw_context_ops), so ibv_rereg_mr ' +
      "reaches libibverbs' dummy op (libibverbs/dummy_ops.c, 56.1 line 465 rereg_mr: errno = " +
      'EOPNOTSUPP), and drivers/infiniband/sw/siw has no rereg_user_mr either; the MR keeps its ' +
      'keys and rights, so the Write after it lands as the engine predicts (measured on 6.1.192 / ' +
      'rdma-core 44)',
    spec: 'IBTA 1.5 Vol. 1 §11.2.8.3 (Reregister Memory Region)',
  },
];
