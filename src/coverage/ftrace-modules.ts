/** The modules whose functions are recorded: the two drivers, then the core they call. */
export const COVERED_MODULES = ['rdma_rxe', 'siw', 'ib_core', 'ib_uverbs'] as const;
export type CoveredModule = (typeof COVERED_MODULES)[number];
