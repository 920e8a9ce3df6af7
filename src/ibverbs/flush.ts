/**
 * The two small enums of IBTA 1.5 FLUSH as libibverbs names them (rdma-core
 * `libibverbs/verbs.h` >= 45, prefix `IBV_FLUSH_`): `enum ibv_placement_type` (where the
 * flushed data must have reached) and `enum ibv_selectivity_level` (a byte range or the
 * whole MR). The Linux kernel's `IB_FLUSH_*` (include/rdma/ib_verbs.h) and the FETH bits
 * rxe puts on the wire (placement type in bits 3-0, selectivity level in bits 5-4) use
 * the same values. test/host/verbs/flush-constants.test.ts checks them against the addon
 * and the header.
 */

/** `enum ibv_placement_type`. */
export const FLUSH_PLACEMENT = { GLOBAL: 1, PERSISTENT: 2 } as const;
/** A placement type name. */
export type FlushPlacement = keyof typeof FLUSH_PLACEMENT;

/** `enum ibv_selectivity_level`. */
export const FLUSH_SELECTIVITY = { RANGE: 0, MR: 1 } as const;
/** A selectivity level name. */
export type FlushSelectivity = keyof typeof FLUSH_SELECTIVITY;
