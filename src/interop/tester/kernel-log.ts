/**
 * The guest's kernel log, read for survival checks: the lines after a mark, and those of
 * them that say the kernel got hurt (issue 21: BUG, Oops, KASAN, WARNING, general
 * protection, RIP).
 */
import { spawnSync } from 'node:child_process';

/** The kernel log lines from index `mark` on (all lines with mark 0); [] where unreadable. */
export function kernelLogSince(mark: number): string[] {
  const run = spawnSync('dmesg', [], { encoding: 'utf8' });
  if (run.status !== 0 || typeof run.stdout !== 'string') return [];
  return run.stdout
    .split('\n')
    .filter((l) => l !== '')
    .slice(mark);
}

const PROBLEM = /\bBUG\b|Oops|KASAN|WARNING|general protection|RIP:/;

/** The lines that report a kernel problem. */
export function kernelProblems(lines: readonly string[]): string[] {
  return lines.filter((l) => PROBLEM.test(l));
}
