/**
 * The interop scenarios, as data: families of short verbs programs (docs/interop.md).
 * Values are exact 64-bit numbers that are not byte palindromes, so that a byte-order
 * slip anywhere (wire, memory, completion) shows.
 */
import type { Scenario } from './scenario.js';
import { EVERY_TARGET, family, type Row, RXE_CM_TARGETS } from './scenarios/family.js';
import { IBTA15, IBTA15_TARGETS } from './scenarios/ibta15.js';
import { MEMORY_WINDOWS, WINDOW_TARGETS } from './scenarios/memory-windows.js';
import { MULTICAST, MULTICAST_TARGETS } from './scenarios/multicast.js';
import { ATOMIC_ERRORS, ATOMICS, BASIC, IMMEDIATE } from './scenarios/one-request.js';
import { CONCURRENCY, ORDERING } from './scenarios/ordering.js';
import { REREG, REREG_TARGETS } from './scenarios/rereg.js';
import { RNR } from './scenarios/rnr.js';
import { SOLICITED } from './scenarios/solicited.js';
import { SRQ } from './scenarios/srq.js';

/**
 * One-operation programs of the first suite, and the solicited event, on rdma_cm-connected
 * rxe pairs: the bring-up differs (ib_cm sets the QP attributes), the programs do not.
 */
const RDMA_CM: readonly Row[] = [
  ...BASIC,
  ...ATOMICS.filter((row) => row.suffix === 'fetch-add'),
  ...SOLICITED.filter((row) => row.suffix === 'solicited-event'),
];

/** Every scenario, rxe first (the faster device to fail on), then siw. */
export const SCENARIOS: readonly Scenario[] = [
  ...family(
    'basic',
    EVERY_TARGET.filter((t) => t.postPath === 'legacy'),
    BASIC,
  ),
  ...family('atomics', EVERY_TARGET, ATOMICS),
  ...family('atomic-errors', EVERY_TARGET, ATOMIC_ERRORS),
  ...family('immediate', EVERY_TARGET, IMMEDIATE),
  ...family('ordering', EVERY_TARGET, ORDERING),
  ...family('rnr', EVERY_TARGET, RNR),
  ...family('concurrency', EVERY_TARGET, CONCURRENCY),
  ...family('ibta15', IBTA15_TARGETS, IBTA15),
  ...family('solicited', EVERY_TARGET, SOLICITED),
  ...family('rdma-cm', RXE_CM_TARGETS, RDMA_CM),
  ...family('memory-windows', WINDOW_TARGETS, MEMORY_WINDOWS),
  ...family('srq', EVERY_TARGET, SRQ),
  ...family('rereg', REREG_TARGETS, REREG),
  ...family('multicast', MULTICAST_TARGETS, MULTICAST),
].sort((a, b) => (a.device === b.device ? 0 : a.device === 'rxe0' ? -1 : 1));
