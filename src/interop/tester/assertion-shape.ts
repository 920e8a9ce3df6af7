/**
 * The tester's shared record shape (issue 21; /work/helpers/tester-framework.md), as the
 * iWARP side uses it until the framework's assertion.ts lands: the same names and
 * fields, so switching is an import change.
 */
import type { JsonValue } from './json.js';

/** The role the TESTER plays. */
export type TesterRole = 'requester' | 'responder';

export interface Assertion {
  /** 'siw-mpa-length-underflow'. */
  readonly id: string;
  /** 'RFC 5044 §7.2', as public sources cite it. */
  readonly spec: string;
  readonly provider: 'rxe' | 'siw';
  readonly testerRole: TesterRole;
  readonly title: string;
  /** Survival is checked after it. */
  readonly hostile: boolean;
  /** siw only; default both. */
  readonly siwVariants?: readonly ('stock' | 'rfc7306')[];
  readonly regression?: { readonly title: string; readonly cve?: string; readonly commit?: string };
}

export type AssertionVerdict = 'pass' | 'fail' | 'known' | 'kernel-crash' | 'not-run';

export interface Survival {
  readonly dmesg: readonly string[];
  readonly deviceWorks: boolean;
  readonly guestUp: boolean;
}

export interface AssertionResult {
  readonly id: string;
  readonly spec: string;
  readonly device: string;
  readonly provider: 'rxe' | 'siw';
  readonly siwVariant?: 'stock' | 'rfc7306';
  readonly kernel: string;
  readonly topology: TesterRole;
  readonly verdict: AssertionVerdict;
  readonly expected: JsonValue;
  readonly observed: JsonValue;
  readonly survival?: Survival;
  /** The known-behaviour id. */
  readonly known?: string;
  readonly note?: string;
}
