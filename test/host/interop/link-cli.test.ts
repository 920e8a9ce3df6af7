import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LINK_SCENARIOS } from '../../../src/interop/link/scenarios.js';

const CLI = join(process.cwd(), 'dist', 'cli', 'main.js');

function run(args: string[]): { status: number; stdout: string; stderr: string } {
  try {
    const stdout = execFileSync(process.execPath, [CLI, 'run', ...args], {
      encoding: 'utf8',
      stdio: 'pipe',
    });
    return { status: 0, stdout, stderr: '' };
  } catch (e) {
    const failure = e as { status: number; stdout: string; stderr: string };
    return { status: failure.status, stdout: failure.stdout, stderr: failure.stderr };
  }
}

const rowsOf = (out: string) =>
  out
    .trimEnd()
    .split('\n')
    .map((line) => line.split('\t'));

describe('rdma-interop run --link (no boot)', () => {
  it('--list shows the link scenarios with device, post API, family and title', () => {
    const rows = rowsOf(run(['--link', '--list']).stdout);
    expect(rows).toEqual(
      LINK_SCENARIOS.map((s) => [
        s.id,
        s.device,
        s.postPath === 'ex' ? 'ibv_wr_*' : 'post_send',
        s.family,
        s.title,
      ]),
    );
    expect(rows).toContainEqual([
      'link-rxe-misaligned-ex',
      'rxe0',
      'ibv_wr_*',
      'link-naks',
      'misaligned FetchAdd (NAK invalid request), ibv_wr_* (across the link)',
    ]);
  });

  it('honours --device and --scenario; a filter that matches nothing boots nothing (exit 2)', () => {
    const siw = rowsOf(run(['--link', '--list', '--device', 'siw0']).stdout).map((r) => r[0]);
    expect(siw).toEqual(LINK_SCENARIOS.filter((s) => s.device === 'siw0').map((s) => s.id));
    const naks = rowsOf(run(['--link', '--list', '--scenario', '*-bad-rkey']).stdout).map(
      (r) => r[0],
    );
    expect(naks).toEqual(['link-rxe-atomic-bad-rkey', 'link-rxe-write-bad-rkey']);
    const none = run(['--link', '--scenario', 'rxe-*']);
    expect(none.status).toBe(2);
    expect(none.stderr).toBe("interop: no scenario matches 'rxe-*'\n");
  });
});
