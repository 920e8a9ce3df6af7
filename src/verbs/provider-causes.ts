/**
 * Why a provider refuses a verb outright, read in its kernel driver and its libibverbs
 * provider: libibverbs answers a verb the provider leaves out of its `verbs_context_ops`
 * with EOPNOTSUPP (rdma-core libibverbs/dummy_ops.c), a message that names no cause.
 * One row per verb and provider; the wrapper adds the row's cause to the error's message.
 */

import { VerbsError } from './errors.js';

interface ProviderCause {
  /** The C call refused (`VerbsError.call`). */
  readonly call: string;
  /** The devices of that provider, by name (the provider is not asked: siw0, siw_eth1). */
  readonly device: RegExp;
  readonly cause: string;
}

const PROVIDER_CAUSES: readonly ProviderCause[] = [
  {
    call: 'ibv_alloc_mw',
    device: /^siw/,
    cause:
      'siw has no memory windows: drivers/infiniband/sw/siw sets no alloc_mw in its ib_device_ops, and libsiw none in its verbs_context_ops',
  },
  {
    call: 'ibv_query_srq',
    device: /^siw/,
    cause:
      'libsiw implements no ibv_query_srq (providers/siw/siw.c: siw_context_ops sets no query_srq)',
  },
  {
    call: 'ibv_rereg_mr',
    device: /^rxe/,
    cause:
      'librxe implements no rereg_mr (rdma-core 44.0 and 56.1 providers/rxe/rxe.c: rxe_ctx_ops sets none), so libibverbs/dummy_ops.c rereg_mr answers before the kernel, whose rxe_rereg_user_mr (6.12 and later) would change the PD and access flags',
  },
  {
    call: 'ibv_rereg_mr',
    device: /^siw/,
    cause:
      'siw has no MR re-registration: libsiw sets no rereg_mr (providers/siw/siw.c siw_context_ops) and drivers/infiniband/sw/siw no rereg_user_mr',
  },
  {
    call: 'ibv_resize_cq',
    device: /^siw/,
    cause:
      'libsiw implements no ibv_resize_cq (providers/siw/siw.c: siw_context_ops sets no resize_cq, so libibverbs/dummy_ops.c resize_cq answers), and drivers/infiniband/sw/siw sets no resize_cq either',
  },
  {
    call: 'ibv_create_cq_ex',
    device: /^siw/,
    cause:
      'libsiw implements no ibv_create_cq_ex (providers/siw/siw.c: siw_context_ops sets no create_cq_ex, so libibverbs/dummy_ops.c create_cq_ex answers)',
  },
  {
    call: 'ibv_create_cq_ex',
    device: /^rxe/,
    cause:
      'librxe refuses any completion field beyond the standard ones (providers/rxe/rxe.c rxe_create_cq_ex: wc_flags & ~RXE_SUP_WC_EX_FLAGS -> EOPNOTSUPP): no completion timestamps',
  },
];

/**
 * @internal `e` with its cause added to the message when it is a provider's refusal
 * (EOPNOTSUPP or ENOSYS) that a row explains; its code, errno, call and device are kept.
 * Anything else is returned as it is.
 */
export function withProviderCause(e: unknown, device: string): unknown {
  if (!(e instanceof VerbsError) || (e.code !== 'EOPNOTSUPP' && e.code !== 'ENOSYS')) return e;
  const known = PROVIDER_CAUSES.find((c) => c.call === e.call && c.device.test(device));
  if (known === undefined) return e;
  return new VerbsError(e.code, e.errno, e.call, e.device, `${e.message}: ${known.cause}`);
}
