import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SCENARIOS } from '../../../src/interop/scenarios.js';

const CLI = join(process.cwd(), 'dist', 'cli', 'main.js');

describe('rdma-interop run --list', () => {
  it('lists every scenario with its device and title, in suite order', () => {
    const out = execFileSync(process.execPath, [CLI, 'run', '--list'], { encoding: 'utf8' });
    const rows = out
      .trimEnd()
      .split('\n')
      .map((line) => line.split('\t'));
    expect(rows).toEqual(SCENARIOS.map((s) => [s.id, s.device, s.title]));
    expect(rows).toContainEqual(['siw-fetch-add', 'siw0', 'FetchAdd']);
  });

  it('rejects an unknown runtime with a usage error', () => {
    const failure = (() => {
      try {
        execFileSync(process.execPath, [CLI, 'run', '--runtime', 'moon'], { stdio: 'pipe' });
        return undefined;
      } catch (e) {
        return e as { status: number; stderr: Buffer };
      }
    })();
    expect(failure?.status).toBe(2);
    expect(failure?.stderr.toString()).toMatch(/Allowed choices are auto, host, guest/);
  });
});
