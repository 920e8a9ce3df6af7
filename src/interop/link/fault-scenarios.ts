/**
 * The link scenarios meant for a faulty wire (`run --link --faults ...`, the relay of
 * src/runtime/faults/): programs whose outcome the engine predicts whatever the wire
 * loses, repeats or reorders, because the transports recover (IBTA 9.7.6 and 9.4.5: rxe's
 * requester retries and its responder answers a duplicate Atomic from its saved result;
 * TCP under siw). Their wire differs from run to run (retransmissions), so they compare
 * the verbs side only (`captureWire: false`); the captures are analysed for
 * retransmissions and duplicate Atomics instead (run.ts).
 */
import type { Access } from '../../verbs/mr.js';
import type { Scenario, Step } from '../scenario.js';

/** Not a byte palindrome; the word every FetchAdd(+1) starts from. */
const WORD = 0x0123456789abcdefn;
const ATOMIC_MR: readonly Access[] = [
  'LOCAL_WRITE',
  'REMOTE_READ',
  'REMOTE_WRITE',
  'REMOTE_ATOMIC',
];

interface FaultRow {
  readonly suffix: string;
  readonly title: string;
  readonly program: readonly Step[];
}

/**
 * rxe only for now: stock libsiw refuses atomics before the wire (known-behaviour.ts), so
 * the siw rows need the RFC 7306 variant on both guests (`--siw rfc7306` with the pair).
 */
const RXE_FAULT_ROWS: readonly FaultRow[] = [
  {
    suffix: 'fetch-add-x1000',
    title: '1000 FetchAdd(+1) from one QP, exactly once',
    program: [{ do: 'hammer', qps: 1, count: 1000, add: 1n }],
  },
  {
    suffix: 'fetch-add-4qp',
    title: '4 QPs at once, 250 FetchAdd(+1) each, exactly once',
    program: [{ do: 'hammer', qps: 4, count: 250, add: 1n }],
  },
];

export const FAULT_LINK_SCENARIOS: readonly Scenario[] = RXE_FAULT_ROWS.map((row) => ({
  id: `link-rxe-${row.suffix}`,
  name: `link-${row.suffix}`,
  title: `${row.title} (across the link)`,
  family: 'link-faults',
  device: 'rxe0',
  postPath: 'legacy',
  initial: WORD,
  remoteAccess: ATOMIC_MR,
  program: row.program,
  captureWire: false,
}));
