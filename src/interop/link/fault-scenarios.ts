/**
 * The link scenarios meant for a faulty wire (`run --link --faults ...`, the relay of
 * src/runtime/faults/): programs whose outcome the engine predicts whatever the wire
 * loses, repeats or reorders, because the transports recover (IBTA 9.7.6 and 9.4.5: rxe's
 * requester retries and its responder answers a duplicate Atomic from its saved result;
 * TCP under siw). Their wire differs from run to run (retransmissions), so they compare
 * the verbs side only (`captureWire: false`); the captures are analysed for
 * retransmissions and duplicate Atomics instead (run.ts).
 */
import type { FaultSpec } from '../../runtime/faults/spec.js';
import type { Access } from '../../verbs/mr.js';
import { transportTimeoutMs } from '../rnr-timing.js';
import type { Scenario, Step } from '../scenario.js';
import type { WriteStream } from './write-stream.js';

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
 * The exactly-once rows, on rxe (requester retry, responder duplicate handling) and on siw
 * (TCP below MPA: a lost or repeated segment never reaches RDMAP twice). Stock libsiw
 * refuses atomics before the wire (judge/records/), so the siw rows need the RFC 7306
 * variant on both guests (`--siw rfc7306`); selectLinkScenarios leaves them out otherwise.
 */
const EXACTLY_ONCE_ROWS: readonly FaultRow[] = [
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

/** Not a byte palindrome; what each FetchAdd of the mixed row adds. */
const MIX_ADD = 0x1111111122222222n;
const MIX_PAIRS = 8;

/**
 * Reads and Atomics mixed (issue 22), in one post: FetchAdd then a Read of the same word,
 * eight times. Each FetchAdd fetches exactly the sum before it (RFC 7306 §7, IBTA 9.5:
 * Atomics execute once, in order, a repeated one is answered from its saved result);
 * each Read returns the sum its FetchAdd left or a later one (a repeated Read executes
 * again, and an iWARP Read Response may follow later messages: read-window.ts); the
 * ordering checker (src/engine/ordering/) judges the completions the requester polled.
 */
const MIX_ROWS: readonly FaultRow[] = [
  {
    suffix: 'read-atomic-mix',
    title: `${MIX_PAIRS} x (FetchAdd, then a Read of the word), one post: values and order`,
    program: [
      {
        do: 'post-send',
        wrs: Array.from({ length: MIX_PAIRS }).flatMap(() => [
          { kind: 'ATOMIC_FETCH_AND_ADD' as const, add: MIX_ADD },
          { kind: 'RDMA_READ' as const },
        ]),
      },
      { do: 'wait', side: 'requester', count: 2 * MIX_PAIRS },
    ],
  },
];

function faultRowScenario(
  device: 'rxe0' | 'siw0',
  row: FaultRow,
  remoteAccess: readonly Access[] = ATOMIC_MR,
): Scenario {
  return {
    id: `link-${device === 'rxe0' ? 'rxe' : 'siw'}-${row.suffix}`,
    name: `link-${row.suffix}`,
    title: `${row.title} (across the link)`,
    family: 'link-faults',
    device,
    postPath: 'legacy',
    initial: WORD,
    remoteAccess,
    program: row.program,
    captureWire: false,
  };
}

/**
 * The long variant (`npm run soak`, docs/faulty-wire.md): 4 QPs x 1000 FetchAdd(+1). Only a
 * `--scenario` pattern selects it, so that a plain `--faults` run (and CI) stays bounded.
 */
const SOAK_ROWS: readonly FaultRow[] = [
  {
    suffix: 'fetch-add-4qp-x1000',
    title: '4 QPs at once, 1000 FetchAdd(+1) each, exactly once',
    program: [{ do: 'hammer', qps: 4, count: 1000, add: 1n }],
  },
];

/**
 * The write streams (write-stream.ts): RDMA Writes with immediate data in 64 KiB chunks,
 * 8 outstanding. CI writes 1 MiB; the soak 64 MiB (issue 22's size), which under TCG takes
 * minutes rather than seconds.
 */
const CHUNK = 64 * 1024;
const STREAM_WINDOW = 8;
export const CI_STREAM: WriteStream = { bytes: 1024 * 1024, chunk: CHUNK, window: STREAM_WINDOW };
export const SOAK_STREAM: WriteStream = {
  bytes: 64 * 1024 * 1024,
  chunk: CHUNK,
  window: STREAM_WINDOW,
};
const WRITE_MR: readonly Access[] = ['LOCAL_WRITE', 'REMOTE_WRITE'];

interface StreamRow {
  readonly suffix: string;
  readonly title: string;
  readonly stream: WriteStream;
}

const STREAM_ROWS: readonly StreamRow[] = [
  {
    suffix: 'write-imm-stream',
    title:
      '1 MiB of RDMA Writes with immediate (16 x 64 KiB): bytes intact, every immediate once, in order',
    stream: CI_STREAM,
  },
];
const SOAK_STREAM_ROWS: readonly StreamRow[] = [
  {
    suffix: 'write-imm-64m',
    title:
      '64 MiB of RDMA Writes with immediate (1024 x 64 KiB): bytes intact, every immediate once, in order',
    stream: SOAK_STREAM,
  },
];

/** Each stream scenario's stream (looked up by id: both guests hold this table). */
const STREAMS = new Map<string, WriteStream>();

function streamScenario(device: 'rxe0' | 'siw0', row: StreamRow): Scenario {
  // The stream runs outside the step program (guest.ts): the program posts nothing.
  const scenario = faultRowScenario(device, { ...row, program: [] }, WRITE_MR);
  STREAMS.set(scenario.id, row.stream);
  return scenario;
}

/**
 * The MPA CRC case (RFC 5044 §8), with `--faults corrupt-payload=P,mpa-crc=1`: the relay
 * sets the C bit of the MPA Request (siw has no switch of its own: siw_main.c defines
 * `mpa_crc_required` as a constant false, no module parameter, and siw_proc_mpareq keeps
 * a peer's C bit in its Reply, RFC 5044 §7.1 "CRC MUST be used if the peer requests it"),
 * then changes a payload byte and recomputes the TCP checksum: only the CRC can catch it.
 * The stream is the CI write stream; the engine predicts it ends with the LLP Terminate
 * (CRC Error), the receives and requests left flush, nothing wrong is placed and no
 * immediate arrives twice or out of order.
 */
export const MPA_CRC: Scenario = streamScenario('siw0', {
  suffix: 'mpa-crc',
  title: 'a payload byte changed past TCP (corrupt-payload, CRC negotiated): the LLP Terminate',
  stream: CI_STREAM,
});

const SOAK_ROW_SCENARIOS: readonly Scenario[] = [
  ...SOAK_ROWS.map((row) => faultRowScenario('rxe0', row)),
  ...SOAK_ROWS.map((row) => faultRowScenario('siw0', row)),
  ...SOAK_STREAM_ROWS.map((row) => streamScenario('rxe0', row)),
  ...SOAK_STREAM_ROWS.map((row) => streamScenario('siw0', row)),
];

const FAULT_ROW_SCENARIOS: readonly Scenario[] = [
  ...[...EXACTLY_ONCE_ROWS, ...MIX_ROWS].map((row) => faultRowScenario('rxe0', row)),
  ...STREAM_ROWS.map((row) => streamScenario('rxe0', row)),
  ...[...EXACTLY_ONCE_ROWS, ...MIX_ROWS].map((row) => faultRowScenario('siw0', row)),
  ...STREAM_ROWS.map((row) => streamScenario('siw0', row)),
];

/** The write stream of `scenario`, if it is a stream scenario. */
export function writeStreamOf(scenario: Scenario): WriteStream | undefined {
  return STREAMS.get(scenario.id);
}

/** Whether only a `--scenario` pattern selects `scenario` (a long variant, `npm run soak`). */
export function isSoakOnly(scenario: Scenario): boolean {
  return SOAK_ROW_SCENARIOS.includes(scenario);
}

/**
 * Whether `scenario` needs RFC 7306 from siw (the patched siw on both guests): atomics
 * (stock libsiw refuses them before the wire) or Writes with immediate data.
 */
export function needsSiwRfc7306(scenario: Scenario): boolean {
  return (
    scenario.device === 'siw0' &&
    (STREAMS.has(scenario.id) ||
      scenario.program.some(
        (step) =>
          step.do === 'hammer' ||
          (step.do === 'post-send' && step.wrs.some((wr) => wr.kind.startsWith('ATOMIC_'))),
      ))
  );
}

/**
 * The faulty-wire scenarios a `--faults` spec selects without a pattern: `drop=1` the
 * lost-wire one, a `corrupt-payload` the MPA CRC case, any other spec the rest.
 */
export type WireKind = 'lost' | 'corrupt-payload' | 'lossy';

export function wireKindOf(spec: FaultSpec): WireKind {
  return spec.drop === 1 ? 'lost' : spec.corruptPayload > 0 ? 'corrupt-payload' : 'lossy';
}

/** The kind of wire `scenario` is made for. */
export function scenarioWireKind(scenario: Scenario): WireKind {
  return scenario === RETRY_EXHAUSTED ? 'lost' : scenario === MPA_CRC ? 'corrupt-payload' : 'lossy';
}

/**
 * A scenario for a wire that loses every RoCE frame (`--faults drop=1`; the relay spares
 * only the guests' control channel): the requester's one request is never answered, so it
 * is sent 1 + retry_cnt times, one transport timer apart (IBTA 9.7.6.1.3: 4.096 us x
 * 2^timeout), and then completes with RETRY_EXC_ERR (IBTA 9.7.6.1.4, o9-... "retry count
 * exceeded"; rxe_comp.c COMPST_ERROR_RETRY). Nothing is placed at the responder.
 */
export interface LostWire {
  /** The requester QP's retry_cnt (IBTA 9.7.6.1.4: 0-7). */
  readonly retryCnt: number;
  /** The requester QP's timeout exponent. */
  readonly timeout: number;
}

const LOST_WIRE: LostWire = { retryCnt: 3, timeout: 14 };

export const RETRY_EXHAUSTED: Scenario = {
  id: 'link-rxe-retry-exhausted',
  name: 'link-retry-exhausted',
  title: `FetchAdd on a wire that loses everything (drop=1): RETRY_EXC_ERR after retry_cnt ${LOST_WIRE.retryCnt} (across the link)`,
  family: 'link-faults',
  device: 'rxe0',
  postPath: 'legacy',
  initial: WORD,
  remoteAccess: ATOMIC_MR,
  timeout: LOST_WIRE.timeout,
  program: [
    { do: 'post-send', wrs: [{ kind: 'ATOMIC_FETCH_AND_ADD', add: 0x1111111122222222n }] },
    // Not a timed wait: its timers are counted on the wire (`requester.wc1.after`,
    // retryTimersClass), which the link compares; a `wcN.timer` it does not.
    { do: 'wait', side: 'requester', count: 1 },
  ],
  captureWire: false,
};

/** The lost-wire expectation of `scenario`, if it is one. */
export function lostWireOf(scenario: Scenario): LostWire | undefined {
  return scenario.id === RETRY_EXHAUSTED.id ? LOST_WIRE : undefined;
}

/** When RETRY_EXC_ERR is due: every attempt's transport timer, in ms. */
export function retryExhaustionMs(lost: LostWire): number {
  return (lost.retryCnt + 1) * transportTimeoutMs(lost.timeout);
}

/**
 * The class of a lost-wire completion, judged from the wire and the completion, not the
 * guest's clock (issue 38: an emulated guest fires its timers late by however much the
 * host is loaded). On a wire that answers nothing no NAK can start a retry, so every
 * repeat of the request was started by the transport timer (rxe_comp.c: retransmit_timer()
 * -> COMPST_ERROR_RETRY), and RETRY_EXC_ERR is the timer that ran out with no retry left.
 * `repeatedRequests`: the request's repeats at the requester's side of the relay
 * (wire-repeats.ts). On time when that makes 1 + retry_cnt timers; else how many ran.
 */
export function retryTimersClass(lost: LostWire, status: string, repeatedRequests: number): string {
  const timers = repeatedRequests + (status === 'RETRY_EXC_ERR' ? 1 : 0);
  return timers === 1 + lost.retryCnt ? '(1 + retry_cnt) x timeout' : `${timers} x timeout`;
}

export const FAULT_LINK_SCENARIOS: readonly Scenario[] = [
  ...FAULT_ROW_SCENARIOS,
  RETRY_EXHAUSTED,
  MPA_CRC,
  ...SOAK_ROW_SCENARIOS,
];
