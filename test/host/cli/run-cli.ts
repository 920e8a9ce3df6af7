/**
 * The harness of the `rdma-interop run` host tests (run-list.test.ts, and
 * test/host/interop/link-cli.test.ts; findings-cli.test.ts uses rdmaInterop): the built CLI as a child process, and its
 * tab-separated `--list` rows.
 */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import type { Scenario } from '../../../src/interop/scenario.js';

const CLI = join(process.cwd(), 'dist', 'cli', 'main.js');

/** `rdma-interop <args>` (any command, e.g. `findings`): exit status and both streams. */
export function rdmaInterop(args: string[]): { status: number; stdout: string; stderr: string } {
  try {
    const stdout = execFileSync(process.execPath, [CLI, ...args], {
      encoding: 'utf8',
      stdio: 'pipe',
    });
    return { status: 0, stdout, stderr: '' };
  } catch (e) {
    const failure = e as { status: number; stdout: string; stderr: string };
    return { status: failure.status, stdout: failure.stdout, stderr: failure.stderr };
  }
}

/** `rdma-interop run <args>`: exit status and both streams. */
export function runCli(args: string[]): { status: number; stdout: string; stderr: string } {
  return rdmaInterop(['run', ...args]);
}

/** The `--list` output as rows of tab-separated cells. */
export const rowsOf = (out: string): string[][] =>
  out
    .trimEnd()
    .split('\n')
    .map((line) => line.split('\t'));

/** The `--list` row of a scenario: id, device, post API, family, title. */
export const listRowOf = (s: Scenario): string[] => [
  s.id,
  s.device,
  s.postPath === 'ex' ? 'ibv_wr_*' : 'post_send',
  s.family,
  s.title,
];
