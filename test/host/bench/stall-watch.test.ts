/**
 * The stall watch of `bench verbs` (src/bench/stall/): a step past its limit gets its
 * processes printed with each thread's kernel wait, its child processes killed (and the
 * step goes on), and a step whose wait is the run's own ends the run. Each case runs the
 * built watch (its thread is dist/bench/stall/stall-watch-worker.js) in a Node process of
 * its own, since the last case ends that process.
 */
import { spawn, spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { describeProcess, processState } from '../../../src/bench/stall/process-state.js';

/** Runs `body` (ESM, `watch` from the built module in scope) in a Node of its own. */
function runWatched(body: string) {
  const script = `import { startStallWatch, watchedStep } from './dist/bench/stall/stall-watch.js';
import { spawn } from 'node:child_process';
const watch = startStallWatch({ prefix: 'test watch', pollMs: 200 });
${body}`;
  return spawnSync(process.execPath, ['--input-type=module', '-e', script], {
    encoding: 'utf8',
    timeout: 60_000,
  });
}

describe('stall watch', () => {
  it('names a sleeping child with its kernel wait', async () => {
    const child = spawn('sleep', ['30']);
    try {
      await new Promise((r) => setTimeout(r, 300));
      const pid = child.pid ?? -1;
      const state = processState(pid);
      expect(state?.command).toBe('sleep 30');
      expect(state?.threads.map((t) => [t.comm, t.state])).toEqual([['sleep', 'S']]);
      expect(describeProcess(state ?? { pid, command: '', threads: [] })).toMatch(
        new RegExp(`^pid ${pid} sleep 30: 0 running; sleep\\(${pid}\\) S in \\w*sleep`),
      );
    } finally {
      child.kill('SIGKILL');
    }
    expect(processState(2 ** 22 + 1)).toBeUndefined();
  });

  it('kills the children of a step past its limit, which then goes on', () => {
    const run = runWatched(`
const code = await watchedStep('a child that sleeps', 1000, () => new Promise((resolve) => {
  spawn('sleep', ['30']).on('close', (c, signal) => resolve(signal));
}));
const after = await watchedStep('the next step', 1000, () => 'ran');
console.log(JSON.stringify({ code, after, stalls: watch.stalls.map((s) => [s.label, s.killed.length]) }));
await watch.close();`);
    expect(run.status, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual({
      code: 'SIGKILL',
      after: 'ran',
      stalls: [['a child that sleeps', 1]],
    });
    const lines = run.stderr.split('\n');
    expect(lines).toContain('test watch: a child that sleeps');
    expect(
      lines.some((l) => /^test watch: {3}pid \d+ sleep 30: 0 running; sleep\(\d+\) S in /.test(l)),
    ).toBe(true);
    expect(
      lines.some((l) => /^test watch: killed \d+: what they measured is not a figure$/.test(l)),
    ).toBe(true);
  });

  it('ends the run when the stalled wait is its own', () => {
    const run = runWatched(`
await watchedStep('a wait of ours', 1000, () => new Promise((resolve) => setTimeout(resolve, 30_000)));
console.log('not reached');`);
    expect(run.signal).toBe('SIGKILL');
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain(
      'test watch: no child process to end: the wait is in this process; ending the run',
    );
  });

  it('watches an inner step alone and the outer one again after it', () => {
    const run = runWatched(`
const out = await watchedStep('outer', 1500, async () => {
  await watchedStep('inner', 60_000, () => new Promise((resolve) => setTimeout(resolve, 2500)));
  return 'outer done';
});
console.log(out);
await watch.close();`);
    // The inner step outlives the outer one's limit, but the outer is not watched meanwhile.
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout.trim()).toBe('outer done');
    expect(run.stderr).not.toContain('still running');
  });
});
