/**
 * `ibv_resize_cq` (issue 34). librxe resizes (providers/rxe/rxe.c rxe_resize_cq, the
 * kernel's rxe_resize_cq on every line); libsiw has no resize_cq, so libibverbs answers
 * EOPNOTSUPP (libibverbs/dummy_ops.c resize_cq): a VerbsError whose message names that
 * cause (provider-causes.ts). A size below the completions the CQ holds is refused by
 * the kernel (EINVAL: drivers/infiniband/sw/rxe/rxe_verbs.c rxe_resize_cq checks cqe against
 * max_cqe and queue_count of the CQ on 7.3).
 */
import type { Cq } from './cq.js';
import { VerbsArgumentError } from './errors.js';
import { verbsExt } from './ext-native.js';
import { withProviderCause } from './provider-causes.js';

/** @internal `Cq.resize`. */
export function resizeCq(cq: Cq, cqe: number): number {
  if (!Number.isInteger(cqe) || cqe < 1 || cqe > 0x7fffffff)
    throw new VerbsArgumentError('cqe', 'must be an integer in [1, 2^31 - 1]');
  try {
    return verbsExt().resizeCq(cq.native, cqe);
  } catch (e) {
    throw withProviderCause(e, cq.context.name);
  }
}
