/**
 * How a test that cannot run says so (issue 38): never as a pass.
 *
 * - `notRun(title, reason)`: a block (a documentation example marked `not-run="..."`)
 *   that no test runs. It is registered as a vitest `todo`, which the closing line
 *   (src/testing/closing-line.ts) counts and lists as "not run", beside passed and failed.
 * - `itUnless(condition, reason)`: a test that cannot run on this machine is a visible
 *   skip whose title carries the reason, never an early return that passes. Each skip a
 *   CI run can take is listed in test/expected-skips.json with its condition.
 */
import { it } from 'vitest';

/** Registers `title` as not run, with why, in the title the closing line prints. */
export function notRun(title: string, reason: string): void {
  if (reason.trim().length < 10) throw new Error(`${title}: a not-run mark needs a reason`);
  it.todo(`${title} [not run: ${reason}]`);
}

/** `it`, skipped (visibly, the reason in its title) when `skip` holds. */
export function itUnless(skip: boolean, reason: string) {
  return (title: string, fn: () => void | Promise<void>, timeout?: number) =>
    it.skipIf(skip)(skip ? `${title} [skipped: ${reason}]` : title, fn, timeout);
}
