/**
 * `enum ibv_access_flags` of libibverbs (rdma-core `libibverbs/verbs.h`), bit values.
 * `RELAXED_ORDERING` is `OPTIONAL_FIRST` (1 << 20).
 *
 * Naming rule (the whole package): a key is the C name without its prefix (`IBV_ACCESS_`),
 * so C's `IBV_ACCESS_X` is `ACCESS_FLAGS.X`; `C_NAME_PREFIX.ACCESS_FLAGS` records the prefix.
 */
import { requireArray, requireInteger, requireName } from '../arguments.js';

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

/**
 * The numeric access mask of a set of flag names. A name that is not a key of ACCESS_FLAGS
 * (a C name such as `IBV_ACCESS_REMOTE_ATOMIC`, a typo) throws UnknownNameError, as the
 * verbs layer's `accessMaskOf` does.
 */
export function accessMask(flags: readonly AccessFlag[]): number {
  let mask = 0;
  requireArray('engine', 'flags', flags).forEach((flag, i) => {
    mask |= ACCESS_FLAGS[requireName('engine', 'access flag', ACCESS_FLAGS, flag, `flags[${i}]`)];
  });
  return mask;
}

/** Whether `mask` grants `flag`; an unknown flag name throws UnknownNameError. */
export function hasAccess(mask: number, flag: AccessFlag): boolean {
  requireInteger('engine', 'mask', mask, 0, 0xffff_ffff);
  return (
    (mask & ACCESS_FLAGS[requireName('engine', 'access flag', ACCESS_FLAGS, flag, 'flag')]) !== 0
  );
}
