/**
 * What rxe does where the packet tester's expectation (the engine) differs, recorded as
 * data with the cause in the driver's source, keyed by kernel range. A difference not
 * listed fails the assertion. Each record names the observation it explains (a predicate
 * over the expected and observed JSON), so a record whose behaviour stops no longer applies.
 */
import { inRange, type VersionRange } from '../version-range.js';
import type { JsonValue } from './assertion.js';

export interface RoceKnownBehaviour {
  readonly id: string;
  readonly assertions: readonly string[];
  readonly kernel: VersionRange;
  readonly why: string;
  readonly spec: string;
  /**
   * True when the behaviour is that these kernels lack the code the assertion exercises:
   * a regression assertion it explains is reported as 'not affected' (probe-report.ts).
   */
  readonly codeAbsent?: boolean;
  /** True when `observed` is the behaviour recorded here. */
  readonly matches: (expected: JsonValue, observed: JsonValue) => boolean;
}

type Step = { answers: JsonValue[]; memory: JsonValue; completions: JsonValue[] };
type Steps = { steps: Step[]; qpState: string };

/** Every step got no answer and left memory and completions as predicted; QP state `state`. */
function silentlyDropped(state: string) {
  return (expected: JsonValue, observed: JsonValue): boolean => {
    const e = expected as unknown as Steps;
    const o = observed as unknown as Steps;
    return (
      o.qpState === state &&
      o.steps.length === e.steps.length &&
      o.steps.every(
        (s, i) =>
          s.answers.length === 0 &&
          s.memory === e.steps[i]?.memory &&
          s.completions.length === e.steps[i]?.completions.length,
      )
    );
  };
}

export const ROCE_KNOWN_BEHAVIOURS: readonly RoceKnownBehaviour[] = [
  {
    id: 'rxe-no-atomic-write-before-6.2',
    assertions: [
      'roce-responder-atomic-write-zero-length',
      'roce-responder-atomic-write-misaligned',
    ],
    kernel: { from: '0', before: '6.2' },
    why:
      'rxe implements IBTA 1.5 ATOMIC WRITE (opcode 0x1D) from 6.2 ("RDMA/rxe: Implement RC RDMA ' +
      'ATOMIC WRITE"); before that rxe_opcode.c has no row for 0x1D and rxe_rcv drops the packet as an ' +
      'unknown opcode (no NAK, QP stays RTS), where the engine answers an operation the responder does ' +
      'not support with NAK Invalid Request. Memory is untouched either way, so CVE-2026-46114 cannot ' +
      'happen on these kernels',
    spec: 'IBTA 1.5 Annex A19; Vol. 1 §9.7.5.2.2 (Invalid Request)',
    codeAbsent: true,
    matches: silentlyDropped('RTS'),
  },
  {
    id: 'rxe-retry-cnt-7-is-infinite',
    assertions: ['roce-requester-no-answer-retry-7'],
    kernel: { from: '0' },
    why:
      'rxe_comp.c (COMPST_ERROR_RETRY) decrements qp->comp.retry_cnt only when it is not 7: ' +
      '"if (qp->comp.retry_cnt != 7) qp->comp.retry_cnt--;", the rule IBTA gives rnr_retry (7 = ' +
      'infinite) applied to the transport retry count too, so with retry_cnt 7 a request that is never ' +
      'answered is retransmitted for ever and never completes with RETRY_EXC_ERR. This is the cause of ' +
      'the suite record rxe-no-retry-exhaustion-towards-err-qp (its QPs use retry_cnt 7)',
    spec: 'IBTA Vol. 1 §9.7.6.1.3 (transport timer, retry_cnt)',
    matches: (expected, observed) => {
      const e = expected as { transmissions: number };
      const o = observed as { transmissions: number; completion: string | null; qpState: string };
      return o.completion === null && o.qpState === 'RTS' && o.transmissions > e.transmissions;
    },
  },
];

/** The record explaining this difference, if any. */
export function findRoceKnownBehaviour(
  assertion: string,
  kernel: string,
  expected: JsonValue,
  observed: JsonValue,
): RoceKnownBehaviour | undefined {
  return ROCE_KNOWN_BEHAVIOURS.find(
    (k) =>
      k.assertions.includes(assertion) &&
      inRange(kernel, k.kernel) &&
      k.matches(expected, observed),
  );
}
