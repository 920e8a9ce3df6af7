/**
 * `enum ibv_access_flags` of libibverbs (rdma-core `libibverbs/verbs.h`), bit values.
 * `RELAXED_ORDERING` is `OPTIONAL_FIRST` (1 << 20).
 *
 * Naming rule (the whole package): a key is the C name without its prefix (`IBV_ACCESS_`),
 * so C's `IBV_ACCESS_X` is `ACCESS_FLAGS.X`; `C_NAME_PREFIX.ACCESS_FLAGS` records the prefix.
 */
export const ACCESS_FLAGS = {
  LOCAL_WRITE: 1,
  REMOTE_WRITE: 2,
  REMOTE_READ: 4,
  REMOTE_ATOMIC: 8,
  MW_BIND: 16,
  ZERO_BASED: 32,
  ON_DEMAND: 64,
  HUGETLB: 128,
  FLUSH_GLOBAL: 256,
  FLUSH_PERSISTENT: 512,
  RELAXED_ORDERING: 1 << 20,
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
