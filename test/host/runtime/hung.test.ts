import { describe, expect, it } from 'vitest';
import { ArgumentError } from '../../../src/errors.js';
import { runInGuest } from '../../../src/runtime/index.js';
import { HUNG_AFTER_SECONDS, hungLineOf } from '../../../src/runtime/qemu.js';

/** The console of the CI guest that hung in runc (2026-11-29), abridged: lockup reports grow. */
function consoleWith(stuck: readonly number[]): string {
  return [
    '[   39.203836] rcu: INFO: rcu_preempt detected stalls on CPUs/tasks:',
    ...stuck.flatMap((s, i) => [
      `[ ${(64 + 28 * i).toFixed(6)}] watchdog: BUG: soft lockup - CPU#0 stuck for ${s}s! [runc:346]`,
      `[ ${(64.1 + 28 * i).toFixed(6)}] watchdog: BUG: soft lockup - CPU#1 stuck for ${s + 1}s! [exe:352]`,
    ]),
  ].join('\n');
}

describe('a hung guest is stopped when its kernel reports a long soft lockup (qemu.ts)', () => {
  it('finds the longest report once a CPU was stuck HUNG_AFTER_SECONDS', () => {
    expect(HUNG_AFTER_SECONDS).toBe(150);
    expect(hungLineOf(consoleWith([45, 71, 105, 131]))).toBeUndefined();
    expect(hungLineOf(consoleWith([45, 71, 105, 131, 164]))).toBe(
      '[ 176.100000] watchdog: BUG: soft lockup - CPU#1 stuck for 165s! [exe:352]',
    );
    // A short stall a loaded TCG guest recovers from is not a hang.
    expect(hungLineOf(consoleWith([22]), 150)).toBeUndefined();
    expect(hungLineOf('[ 1.0] Kernel panic - not syncing: fatal exception')).toBeUndefined();
  });

  it('retryHung is a boolean: anything else is a typed error before any boot', async () => {
    const error = await runInGuest({
      command: ['true'],
      retryHung: 'yes' as unknown as boolean,
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ArgumentError);
    expect((error as Error).message).toMatch(/options\.retryHung/);
  });
});
