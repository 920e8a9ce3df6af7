/**
 * One record model for every runner (issue 31): what a real provider does where it
 * differs from the reference engine, recorded as data with its reason and source, keyed
 * by where it holds (provider and variant, kernel and rdma-core ranges, the side of a
 * link pair and its peer) and by the results it scopes (scenario or assertion ids). A
 * difference a record explains is `known`; one no record explains fails (or is a
 * `finding` on a device without records); a record in scope whose explained values did
 * not occur fails the run, so the tables cannot go stale (judge.ts).
 *
 * A post that the provider refuses (`post1` = an errno) means nothing reached the wire:
 * the completions are then missing and memory is untouched. A record with
 * `nothingHappened` explains those consequences too (interop/runner.ts judge).
 */

import picomatch from 'picomatch';
import { requireObject, requireString } from '../arguments.js';
import { FIXED_RECORD_IDS } from '../findings/fixes.js';
import type { IwarpExpectation } from './iwarp-answer.js';
import { inRange, type VersionRange } from './version-range.js';

/** A JSON value: what the tester's `expected` and `observed` hold, as results.json carries them. */
export type JsonValue =
  | null
  | boolean
  | number
  | string
  | readonly JsonValue[]
  | { readonly [key: string]: JsonValue };

/** Where the suite runs: which provider, which kernel, which rdma-core. */
export interface Environment {
  /** The provider (kernel driver / libibverbs provider): `rxe`, `siw`, `mlx5`, ... */
  readonly provider: string;
  /** `uname -r`. */
  readonly kernel: string;
  /** rdma-core's version (libibverbs), or `unknown`. */
  readonly rdmaCore: string;
}

/** An environment's shape: provider, kernel and rdma-core as strings. */
export function requireEnvironment(env: unknown, field = 'env'): Environment {
  const e = requireObject('interop', field, env) as Readonly<Record<string, unknown>>;
  for (const key of ['provider', 'kernel', 'rdmaCore'] as const)
    requireString('interop', `${field}.${key}`, e[key]);
  return env as Environment;
}

/** The provider key of siw0 on the patched module (with rfc7306=1) and patched libsiw. */
export const PATCHED_SIW_PROVIDER = 'siw+rfc7306';

/** siw's provider key for records: `siw+rfc7306` on the patched module. */
export function siwProvider(variant: 'stock' | 'rfc7306' | undefined): string {
  return variant === 'rfc7306' ? PATCHED_SIW_PROVIDER : 'siw';
}

/**
 * The provider keys of rxe0 and siw0 on the fixed build (issue 33): the fixed modules
 * (patches/rxe-fixes, patches/siw-fixes) and the fixed librxe/libsiw (rdma-core 56.1 with
 * patches/rdma-core-fixes), as `vm --fixes` and `run --fixes` set them up
 * (runtime/fixes-env.ts).
 */
export const FIXES_SUFFIX = '+fixes';

/**
 * The provider key on the fixed build: `rxe+fixes`, `siw+fixes`, and `siw+rfc7306+fixes`
 * (the RFC 7306 series with the fixes on top).
 */
export function fixedProvider(provider: string): string {
  return `${provider}${FIXES_SUFFIX}`;
}

/**
 * True when `k` holds for `provider`: its own, one it names in alsoFor, or (fixed build)
 * one it holds for on the build without the fixes (`siw` for `siw+fixes`, its own or
 * alsoFor `siw+rfc7306` for `siw+rfc7306+fixes`) unless findings/fixes.ts FIXED_RECORD_IDS
 * (DEFECT_FIXES, the one list) names it, so the fixed defects' results turn `match` and
 * nothing else changes.
 */
export function holdsForProvider(k: BehaviourRecord, provider: string): boolean {
  if (k.provider === provider || k.alsoFor?.includes(provider) === true) return true;
  if (!provider.endsWith(FIXES_SUFFIX)) return false;
  const unfixed = provider.slice(0, -FIXES_SUFFIX.length);
  return (
    (k.provider === unfixed || k.alsoFor?.includes(unfixed) === true) && !FIXED_RECORD_IDS.has(k.id)
  );
}

/** The classes of recorded behaviour (issue 33), in the order the findings report lists them. */
export const RECORD_CLASSES = ['defect', 'unimplemented', 'allowed', 'engine'] as const;
export type RecordClass = (typeof RECORD_CLASSES)[number];

export interface BehaviourRecord {
  /** Short name shown in reports, e.g. `libsiw-no-atomics`. */
  readonly id: string;
  /**
   * What the difference is (docs/findings.md defines each class with its rule): the
   * device breaks a rule it means to follow (`defect`), it lacks a feature and refuses it
   * cleanly (`unimplemented`), the spec leaves the answer to the implementation
   * (`allowed`), or the engine is wrong or incomplete (`engine`: a bug of ours, flagged
   * in the reports until the engine is fixed and the record deleted).
   */
  readonly class: RecordClass;
  /**
   * The rule the class rests on: the RFC section (RFC 5040, 5041, 5044, 7306), the IBTA
   * Vol. 1 chapter and rule as public sources cite them, or the verbs man page
   * (`ibv_post_send(3)`). For `allowed`, where the spec leaves the answer open.
   */
  readonly rule: string;
  /** Where the evidence for the class is unclear: what is not established, and why. */
  readonly unclear?: string;
  readonly provider: string;
  /**
   * Further providers it holds for: `siw+rfc7306` (siw-variant.ts) where the patched siw
   * behaves as the stock one.
   */
  readonly alsoFor?: readonly string[];
  /**
   * The kernel lines it holds for (`uname -r`, compared by version: version-range.ts).
   * Inside the range a record that stops happening fails that kernel's run; when a newer
   * kernel changes the behaviour, end the range there (`before`) and add a record for the
   * new behaviour, naming the upstream change.
   */
  readonly kernel: VersionRange;
  /** The rdma-core versions it holds for, where the userspace provider decides. */
  readonly rdmaCore?: VersionRange;
  /**
   * The results it scopes, as globs: scenario ids (src/interop/scenarios.ts, the suite,
   * the link and the faulty wire) or assertion ids (src/probe/, the tester).
   */
  readonly scope: readonly string[];
  /**
   * What it explains, as field globs over the flattened observation: the field (`post1`,
   * `responder.wc*.flags`, `status`) to the device's value, formatted as in reports
   * (compare-format.ts), or a pattern. The suite, the link, the faulty wire and the
   * tester's iWARP requester judge by it.
   */
  readonly observed?: Readonly<Record<string, string | RegExp>>;
  /**
   * What it explains where field values cannot say it, because the device's answer is a
   * function of the engine's for each assertion: the iWARP tester's answer (the engine's
   * wire lines, receive and memory, with its Terminates rewritten as siw lays them out).
   * Every record in scope applies, in table order.
   */
  readonly derive?: (engine: IwarpExpectation) => IwarpExpectation;
  /**
   * What it explains where the RoCE tester compares a count or a list with the engine's
   * (one request more, as many steps, retransmitted more often): a predicate over the
   * engine's and the device's JSON. A field glob says a value, not a relation between two.
   */
  readonly matches?: (expected: JsonValue, observed: JsonValue) => boolean;
  /**
   * These kernels lack the code the assertion exercises: a regression assertion it
   * explains is reported as 'not affected' (probe/probe-report.ts).
   */
  readonly codeAbsent?: boolean;
  /**
   * These kernels lack a public fix the assertion reproduces (a `defect` record of the bug
   * itself): a regression assertion it explains is reported as 'lacks the fix'.
   */
  readonly lacksFix?: boolean;
  /**
   * The side of a link pair whose provider shows it (link/sides.ts): the requester's
   * (default: its library and driver drive the program) or the responder's (what it
   * answers on the wire). The one-guest suite has the same provider on both sides.
   */
  readonly role?: 'requester' | 'responder';
  /**
   * The provider the other side of a link pair must be for it to hold: a stock siw answers
   * RFC 7306 messages only where a patched requester sends them (`siw+rfc7306`).
   */
  readonly peer?: string;
  /** Explains the missing completions and untouched memory after a refused post. */
  readonly nothingHappened?: boolean;
  /** Why, with the source that shows it. */
  readonly why: string;
  /** The spec sections the engine follows here. */
  readonly spec?: string;
}

/** True when `k` applies in `env`. */
export function appliesIn(k: BehaviourRecord, env: Environment): boolean {
  requireObject('interop', 'k', k);
  requireEnvironment(env);
  return (
    holdsForProvider(k, env.provider) &&
    inRange(env.kernel, k.kernel) &&
    (k.rdmaCore === undefined || inRange(env.rdmaCore, k.rdmaCore))
  );
}

/** True when the records know this provider on this kernel at all. */
export function hasRecordsFor(env: Environment, known: readonly BehaviourRecord[]): boolean {
  return known.some((k) => appliesIn(k, env));
}

const matchers = new Map<string, (s: string) => boolean>();
function glob(pattern: string): (s: string) => boolean {
  let m = matchers.get(pattern);
  if (m === undefined) {
    m = picomatch(pattern, { dot: true, literalBrackets: true });
    matchers.set(pattern, m);
  }
  return m;
}

/** True when `k` scopes the result `id` (a scenario or an assertion). */
export function coversScenario(k: BehaviourRecord, id: string): boolean {
  return k.scope.some((p) => glob(p)(id));
}

/** True when `k` is about `field`. */
export function namesField(k: BehaviourRecord, field: string): boolean {
  return Object.keys(k.observed ?? {}).some((pattern) => glob(pattern)(field));
}

/** True when `k` explains the device value `value` of `field`. */
export function explainsField(k: BehaviourRecord, field: string, value: string): boolean {
  return Object.entries(k.observed ?? {}).some(
    ([pattern, expected]) =>
      glob(pattern)(field) &&
      (typeof expected === 'string' ? expected === value : expected.test(value)),
  );
}

/** The record's observations as one line (reports). */
export function observedText(k: BehaviourRecord): string {
  return Object.entries(k.observed ?? {})
    .map(([field, value]) => `${field}=${String(value)}`)
    .join(', ');
}
