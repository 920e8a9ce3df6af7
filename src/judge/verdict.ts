/**
 * The one verdict set of every runner (issue 31): the suite, the link and faulty-wire
 * runs, and the tester (the former wire probes of `run` among its assertions). A judge gives one of `match`, `known`, `finding`,
 * `fail`; a run that could not judge gives `kernel-crash` or `not-run` (with its reason).
 *
 * - `match`: the device did what the engine predicts, field for field.
 * - `known`: it differed, and every difference is a record (judge/records) that holds here;
 *   no record scoped to it went stale.
 * - `finding`: it differed on a provider and kernel no record covers (reported; `--strict`
 *   fails it).
 * - `fail`: an unrecorded difference on a recorded provider, a record that did not happen
 *   (stale), or a kernel that did not survive a hostile packet.
 * - `kernel-crash`: the guest died or logged an oops while it ran (the tester).
 * - `not-run`: it could not run here; the result's `error` or `note` says why.
 * - `not-applicable`: the device lacks what the scenario needs (a capability, the post
 *   API, the bring-up: interop/requirements.ts), and no record covers the scenario there;
 *   the result's `notApplicable` names what is missing (issue 37). Not a failure: the
 *   scenario is reported, not run, on a device that cannot run it.
 */

export const VERDICTS = [
  'match',
  'known',
  'finding',
  'fail',
  'kernel-crash',
  'not-run',
  'not-applicable',
] as const;
export type Verdict = (typeof VERDICTS)[number];

/**
 * The names results.json files written before issue 31 used, and what each is now: the
 * suite's `divergence` and the tester's `fail` were one thing; the suite's `error` (the
 * scenario threw before it could be judged) is the tester's `not-run`, its reason kept in
 * `error`; the tester's `pass` is the suite's `match`.
 */
export const FORMER_VERDICT_NAMES: Readonly<Record<string, Verdict>> = {
  divergence: 'fail',
  error: 'not-run',
  pass: 'match',
};

/** A verdict as read from a results file of any version: former names become today's. */
export function verdictFromFile(name: string): string {
  return Object.hasOwn(FORMER_VERDICT_NAMES, name) ? (FORMER_VERDICT_NAMES[name] as Verdict) : name;
}
