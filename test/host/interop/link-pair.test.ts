import { existsSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { findGuestAssets } from '../../../src/runtime/assets.js';
import { GuestRuntimeError } from '../../../src/runtime/errors.js';
import { runGuestPair } from '../../../src/runtime/pair.js';
import { cacheRoot } from '../../../src/runtime/paths.js';

// The guest pair's exit paths: a guest that fails stops its partner, an abort stops both,
// and each QEMU is gone and each run directory removed when the promise settles.

const RUNS = join(cacheRoot(), 'runs');
/** This process's pair runs: other test files boot guests at the same time. */
const TOKEN = `link-pair-test-${process.pid}`;
const runDirs = () =>
  (existsSync(RUNS) ? readdirSync(RUNS) : []).filter((dir) => {
    try {
      return readFileSync(join(RUNS, dir, 'env.sh'), 'utf8').includes(TOKEN);
    } catch {
      return false;
    }
  });

/** Command lines of live processes that name `path` (QEMU's -pidfile is in its run dir). */
function processesNaming(path: string): number[] {
  return readdirSync('/proc')
    .filter((p) => /^\d+$/.test(p))
    .filter((p) => {
      try {
        return readFileSync(`/proc/${p}/cmdline`, 'utf8').includes(path);
      } catch {
        return false;
      }
    })
    .map(Number);
}

function pair(commands: readonly [string[], string[]], signal?: AbortSignal) {
  const work = mkdtempSync(join(tmpdir(), 'rdma-interop-pair-'));
  const lines: string[] = [];
  return {
    lines,
    done: runGuestPair({
      assets: findGuestAssets(),
      accel: 'auto',
      commands,
      cwd: process.cwd(),
      timeoutSeconds: 300,
      shareDir: join(work, 'share'),
      captureDir: join(work, 'captures'),
      env: { RDMA_INTEROP_TEST_TOKEN: TOKEN },
      onOutput: () => {},
      onErrorOutput: () => {},
      onProgress: (line) => lines.push(line),
      ...(signal === undefined ? {} : { signal }),
    }),
  };
}

describe('guest pair exit paths', () => {
  it('a guest that exits non-zero stops its partner: both QEMUs gone, both run dirs removed', async () => {
    const before = new Set(runDirs());
    let mine: string[] = [];
    const run = pair([
      ['bash', '-c', 'exit 3'],
      ['sleep', '600'],
    ]);
    const watcher = setInterval(() => {
      const fresh = runDirs().filter((d) => !before.has(d));
      if (fresh.length > mine.length) mine = fresh;
    }, 200);
    const error = await run.done.catch((e: unknown) => e);
    clearInterval(watcher);
    expect(error).toBeInstanceOf(GuestRuntimeError);
    expect((error as GuestRuntimeError).failure).toBe('partner-failed');
    expect((error as GuestRuntimeError).message).toBe('guest A exited 3; its partner was stopped');
    expect(run.lines).toContain('guest A exited 3: stopping guest B');
    expect(mine).toHaveLength(2);
    for (const dir of mine) {
      expect(existsSync(join(RUNS, dir))).toBe(false);
      expect(processesNaming(join(RUNS, dir))).toEqual([]);
    }
  }, 300_000);

  it('aborting (Ctrl-C in the CLI) stops both QEMUs while they boot', async () => {
    const controller = new AbortController();
    const before = new Set(runDirs());
    const run = pair(
      [
        ['sleep', '600'],
        ['sleep', '600'],
      ],
      controller.signal,
    );
    let mine: string[] = [];
    const watcher = setInterval(() => {
      mine = runDirs().filter((d) => !before.has(d));
      // Both QEMUs are running (each has its run directory): abort, as Ctrl-C does.
      if (mine.length === 2) controller.abort(new Error('received SIGINT'));
    }, 200);
    const error = await run.done.catch((e: unknown) => e);
    clearInterval(watcher);
    expect(error).toBeInstanceOf(GuestRuntimeError);
    expect((error as GuestRuntimeError).failure).toBe('aborted');
    expect((error as GuestRuntimeError).message).toMatch(/received SIGINT$/);
    expect(mine).toHaveLength(2);
    for (const dir of mine) {
      expect(existsSync(join(RUNS, dir))).toBe(false);
      expect(processesNaming(join(RUNS, dir))).toEqual([]);
    }
  }, 300_000);
});
