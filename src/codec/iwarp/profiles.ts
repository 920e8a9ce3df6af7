/**
 * The seed documents disagree on a few wire details. A profile names which document the
 * codec follows; every difference is recorded as data in `opcodes.ts` with its citation.
 */

import { nameText, requireKnownOptions, requireObject } from '../../arguments.js';
import { type ErrorOrigin, UnknownNameError } from '../../errors.js';

/** Which specification the codec follows. */
export type IwarpProfile = 'rfc7306' | 'draft-01' | 'v2-draft';

/** All profiles, default first. */
export const IWARP_PROFILES: readonly IwarpProfile[] = ['rfc7306', 'draft-01', 'v2-draft'];

/** The profile used when a caller does not name one. */
export const DEFAULT_IWARP_PROFILE: IwarpProfile = 'rfc7306';

/** The document each profile follows (file names under specs/ in the repository). */
export const IWARP_PROFILE_SOURCES: Readonly<Record<IwarpProfile, string>> = {
  rfc7306: 'RFC 7306 (rfc7306-rdmap-extensions.txt)',
  'draft-01':
    'draft-ietf-storm-rdmap-ext-01 (July 2011), with draft-ietf-storm-rdmap-ext-2014-03 for comparison',
  'v2-draft': 'draft-wood-storm-rdmap-ext-v2-00 (November 2013), on top of RFC 7306',
};

/** The RDMAP version (RV field) each profile puts on the wire. */
export const PROFILE_RDMA_VERSION: Readonly<Record<IwarpProfile, number>> = {
  // RFC 5040 §4.2 and RFC 7306 §4.1: RV = 01b.
  rfc7306: 1,
  // draft-ietf-storm-rdmap-ext-01 §4.1: RV = 01b.
  'draft-01': 1,
  // draft-wood-storm-rdmap-ext-v2-00 §4.1: "the RDMAP RV field MUST be set to 2 for all Operations".
  'v2-draft': 2,
};

/** True when `name` is one of the profiles. */
export function isIwarpProfile(name: string): name is IwarpProfile {
  return (IWARP_PROFILES as readonly string[]).includes(name);
}

/**
 * An options object of the codec (`options`, known keys only) whose `profile`, when
 * given, is one of IWARP_PROFILES: ArgumentError or UnknownNameError otherwise.
 */
export function requireProfileOptions(options: unknown, known: readonly string[]): void {
  requireKnownOptions('codec', 'options', options, known);
  const profile = (options as { profile?: unknown } | undefined)?.profile;
  if (profile !== undefined) requireIwarpProfile('codec', profile, 'options.profile');
}

/** `profile` is one of IWARP_PROFILES, or UnknownNameError names it (the lookup convention). */
export function requireIwarpProfile(
  origin: ErrorOrigin,
  profile: unknown,
  field: string,
): IwarpProfile {
  if (typeof profile !== 'string' || !isIwarpProfile(profile))
    throw new UnknownNameError(origin, 'iWARP profile', nameText(profile), IWARP_PROFILES, field);
  return profile;
}

/**
 * The profile an options object names (checked: ArgumentError for a non-object, as
 * `requireIwarpProfile` for an unknown profile), or DEFAULT_IWARP_PROFILE.
 */
export function profileOption(
  origin: ErrorOrigin,
  options: { readonly profile?: IwarpProfile | undefined },
): IwarpProfile {
  requireObject(origin, 'options', options);
  if (options.profile === undefined) return DEFAULT_IWARP_PROFILE;
  return requireIwarpProfile(origin, options.profile, 'options.profile');
}
