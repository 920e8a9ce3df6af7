/**
 * Every record, split by provider (rxe.ts, siw.ts). Records of rxe and of siw never
 * hold for the same result, so only the order inside each file matters: the judge tries
 * records in it (it decides which record a difference names, and the order of findings).
 */
import type { BehaviourRecord } from '../record.js';
import { RXE_RECORDS } from './rxe.js';
import { SIW_RECORDS } from './siw.js';

/** Every record. */
export const RECORDS: readonly BehaviourRecord[] = [...RXE_RECORDS, ...SIW_RECORDS];

/** The records the suite, the link and the faulty wire judge by: those with field globs. */
export const KNOWN_BEHAVIOUR: readonly BehaviourRecord[] = RECORDS.filter(
  (k) => k.observed !== undefined,
);
