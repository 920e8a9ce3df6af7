/**
 * The packet tester's assertions (issue 21): one row of data per conformance check, in the
 * shape of the InfiniBand compliance tests. A tester plays one side of a connection
 * (requester or responder) towards a real device, builds every packet with the codec, and
 * compares what the device answers (packets, completions, memory, QP state) with what the
 * reference engine predicts for the same packets. The expectation always comes from the
 * engine, never from a value written per assertion.
 */

/** A JSON value: what `expected` and `observed` hold, so that results.json carries them as is. */
import type { JsonValue } from '../judge/record.js';
import type { Verdict } from '../judge/verdict.js';

export type { JsonValue };

/** The role the TESTER plays; the device under test plays the other one. */
export type TesterRole = 'requester' | 'responder';

/** The soft providers the tester drives. */
export type TesterProvider = 'rxe' | 'siw';

/** The two siw builds the suite runs (stock upstream, and patched with RFC 7306). */
export type SiwVariantName = 'stock' | 'rfc7306';

/**
 * One pass of a `probe` run in the guest: the RoCE tester against rxe, or the iWARP tester
 * against siw0 on one siw build. A crashed guest resumes at `pass/id`.
 */
export type ProbePass = 'rxe' | SiwVariantName;

/** A fix in the kernel that an assertion guards against regressing. */
export interface RegressionRef {
  readonly title: string;
  readonly cve?: string;
  /** The upstream commit (12+ hex digits), when the fix is known by it. */
  readonly commit?: string;
}

/** One assertion: data only (the id, what it checks, who plays which side). */
export interface Assertion {
  /** Stable id, e.g. 'roce-responder-duplicate-atomic', 'siw-mpa-length-underflow'. */
  readonly id: string;
  /** The rule checked, as public sources cite it: 'RFC 5044 §6.1', 'IBTA 1.5 §9.9.2 (C9-...)'. */
  readonly spec: string;
  readonly provider: TesterProvider;
  readonly testerRole: TesterRole;
  readonly title: string;
  /** True when the packets are ones a conformant peer never sends: survival is checked after it. */
  readonly hostile: boolean;
  /** siw only; both variants when omitted. */
  readonly siwVariants?: readonly SiwVariantName[];
  readonly regression?: RegressionRef;
}

/**
 * The verdicts an assertion can get (judge/verdict.ts; the tester never gives `finding`):
 * `match`: the device did what the engine predicts; `fail`: it did not and no record
 * explains it; `known`: it did not and a record (`known`) explains it; `kernel-crash`: the
 * guest died or logged an oops while it ran; `not-run`: it could not run here (`note` says
 * why).
 */
export type AssertionVerdict = Exclude<Verdict, 'finding'>;

/** The kernel's state after a hostile assertion (survival.ts). */
export interface Survival {
  /** dmesg lines matching BUG|Oops|KASAN|WARNING|general protection|RIP: since the last check. */
  readonly dmesg: readonly string[];
  /** The device still completed a verbs FetchAdd (a Write where it has no atomics). */
  readonly deviceWorks: boolean;
  /** The guest still answered (always true when written from inside the guest). */
  readonly guestUp: boolean;
}

/** One assertion's outcome on one device and kernel: one JSON line of the guest runner. */
export interface AssertionResult {
  readonly id: string;
  readonly spec: string;
  /** The device name, e.g. 'rxe_t', 'siw0'. */
  readonly device: string;
  readonly provider: TesterProvider;
  readonly siwVariant?: SiwVariantName;
  /** `uname -r` of the guest. */
  readonly kernel: string;
  /** The role the tester played. */
  readonly topology: TesterRole;
  readonly verdict: AssertionVerdict;
  /** What the engine predicts. */
  readonly expected: JsonValue;
  /** What the device did. */
  readonly observed: JsonValue;
  readonly survival?: Survival;
  /** The id of the record (judge/records/) that explains a `known` verdict. */
  readonly known?: string;
  readonly note?: string;
}

/** True when a survival check found the kernel unhealthy (a hostile assertion then fails). */
export function survivalFailed(survival: Survival): boolean {
  return survival.dmesg.length > 0 || !survival.deviceWorks || !survival.guestUp;
}
