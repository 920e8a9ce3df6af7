/**
 * `enum ibv_access_flags` of libibverbs (rdma-core `libibverbs/verbs.h`), bit values.
 * `IBV_ACCESS_RELAXED_ORDERING` is `IBV_ACCESS_OPTIONAL_FIRST` (1 << 20).
 */
export const ACCESS_FLAGS = {
  IBV_ACCESS_LOCAL_WRITE: 1,
  IBV_ACCESS_REMOTE_WRITE: 2,
  IBV_ACCESS_REMOTE_READ: 4,
  IBV_ACCESS_REMOTE_ATOMIC: 8,
  IBV_ACCESS_MW_BIND: 16,
  IBV_ACCESS_ZERO_BASED: 32,
  IBV_ACCESS_ON_DEMAND: 64,
  IBV_ACCESS_HUGETLB: 128,
  IBV_ACCESS_FLUSH_GLOBAL: 256,
  IBV_ACCESS_FLUSH_PERSISTENT: 512,
  IBV_ACCESS_RELAXED_ORDERING: 1 << 20,
} as const;

/** A libibverbs access flag name. */
export type AccessFlag = keyof typeof ACCESS_FLAGS;

/** The numeric access mask of a set of flag names. */
export function accessMask(flags: readonly AccessFlag[]): number {
  let mask = 0;
  for (const flag of flags) mask |= ACCESS_FLAGS[flag];
  return mask;
}

/** Whether `mask` grants `flag`. */
export function hasAccess(mask: number, flag: AccessFlag): boolean {
  return (mask & ACCESS_FLAGS[flag]) !== 0;
}
