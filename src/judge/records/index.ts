/**
 * Every record, split by provider (rxe.ts, siw.ts). Records of rxe and of siw never
 * hold for the same result, so only the order inside each file matters: the judge tries
 * records in it (it decides which record a difference names, and the order of findings).
 */
import type { BehaviourRecord } from '../record.js';
import { MULTICAST_SIW_RECORDS } from './multicast.js';
import { REREG_RXE_RECORDS, REREG_SIW_RECORDS } from './rereg.js';
import { RXE_RECORDS } from './rxe.js';
import { RXE_WIRE_RECORDS } from './rxe-wire.js';
import { SIW_RECORDS } from './siw.js';
import { SIW_WIRE_RECORDS } from './siw-wire.js';

/** Every record: the suite's (rxe.ts, siw.ts) and the tester's (rxe-wire.ts, siw-wire.ts). */
export const RECORDS: readonly BehaviourRecord[] = [
  ...RXE_RECORDS,
  ...REREG_RXE_RECORDS,
  ...SIW_RECORDS,
  ...REREG_SIW_RECORDS,
  ...MULTICAST_SIW_RECORDS,
  ...RXE_WIRE_RECORDS,
  ...SIW_WIRE_RECORDS,
];

/**
 * The records the suite, the link and the faulty wire judge by: the suite's, with field
 * globs. (A provider with records on a kernel is a recorded device there: `finding`
 * becomes `fail`; the tester's records, open from kernel 0, do not make it one.)
 */
export const KNOWN_BEHAVIOUR: readonly BehaviourRecord[] = [
  ...RXE_RECORDS,
  ...REREG_RXE_RECORDS,
  ...SIW_RECORDS,
  ...REREG_SIW_RECORDS,
  ...MULTICAST_SIW_RECORDS,
].filter((k) => k.observed !== undefined);

/** The records the RoCE tester judges by (a predicate over its JSON). */
export const ROCE_RECORDS: readonly BehaviourRecord[] = RECORDS.filter(
  (k) => k.matches !== undefined,
);

/** The records the iWARP tester judges by (its answer derived from the engine's, or field globs). */
export const IWARP_RECORDS: readonly BehaviourRecord[] = SIW_WIRE_RECORDS;
