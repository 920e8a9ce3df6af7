/**
 * What rxe does where the packet tester's expectation (the engine) differs, recorded as
 * data with the cause in the driver's source, keyed by kernel range. A difference not
 * listed fails the assertion. Each record names the observation it explains (a predicate
 * over the expected and observed JSON), so a record that stops happening no longer applies.
 */
import { inRange, type VersionRange } from '../version-range.js';
import type { JsonValue } from './assertion.js';

export interface RoceKnownBehaviour {
  readonly id: string;
  readonly assertions: readonly string[];
  readonly kernel: VersionRange;
  readonly why: string;
  readonly source: string;
  /** True when `observed` is the behaviour recorded here. */
  readonly matches: (expected: JsonValue, observed: JsonValue) => boolean;
}

export const ROCE_KNOWN_BEHAVIOURS: readonly RoceKnownBehaviour[] = [];

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
