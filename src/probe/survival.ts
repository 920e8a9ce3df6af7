/**
 * Kernel survival after a hostile assertion (issue 21): the kernel log lines that mean a
 * bug since the last check, whether the device still completes a verbs operation, and
 * (implicitly, since this code runs in the guest) that the guest is up.
 */
import { execFileSync } from 'node:child_process';
import type { Survival } from './assertion.js';
import { KERNEL_TROUBLE } from './oracles/kernel-log.js';

/** dmesg lines that mean the kernel hit a bug: the named oracles of oracles/kernel-log.ts. */
export { KERNEL_TROUBLE };

/** Reads the kernel log; lines already seen are skipped on the next call. */
export class KernelLog {
  #seen = 0;

  /** Marks everything logged so far as seen. */
  mark(): void {
    this.#seen = readKernelLog().length;
  }

  /** Trouble lines logged since the last mark or check. */
  troubleSinceLastCheck(): string[] {
    const lines = readKernelLog();
    const fresh = lines.slice(Math.min(this.#seen, lines.length));
    this.#seen = lines.length;
    return fresh.filter((line) => KERNEL_TROUBLE.test(line));
  }
}

function readKernelLog(): string[] {
  try {
    return execFileSync('dmesg', [], { encoding: 'utf8', maxBuffer: 64 << 20 }).split('\n');
  } catch {
    return [];
  }
}

/**
 * Survival: `deviceWorks` is the caller's check (a verbs FetchAdd on a loopback pair, or a
 * Write where the device has no atomics), run after the log is read so that its own lines
 * do not hide the assertion's.
 */
export async function checkSurvival(
  log: KernelLog,
  deviceWorks: () => Promise<boolean>,
): Promise<Survival> {
  const dmesg = log.troubleSinceLastCheck();
  let works = false;
  try {
    works = await deviceWorks();
  } catch {
    works = false;
  }
  return { dmesg, deviceWorks: works, guestUp: true };
}
