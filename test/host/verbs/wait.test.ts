import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { VerbsError } from '../../../src/verbs/errors.js';
import { onNextTurn, type Pending, pendingWaitOwners, waitFor } from '../../../src/verbs/wait.js';

const timeoutError = { call: 'test_wait', device: undefined, what: 'event', owner: {} };

/** An event source that records how often it was hooked and unhooked. */
function source<T>() {
  const state = { hooked: 0, unhooked: 0, pending: undefined as Pending<T> | undefined };
  const register = (pending: Pending<T>) => {
    state.hooked += 1;
    state.pending = pending;
    return () => {
      state.unhooked += 1;
    };
  };
  return { state, register };
}

describe('waitFor (the wrapper’s one way to wait on the event loop)', () => {
  it('resolves with the event and unhooks once', async () => {
    const s = source<number>();
    const waiting = waitFor({}, timeoutError, s.register);
    s.state.pending?.resolve(0x1234abcd);
    s.state.pending?.reject(new Error('late')); // ignored: already settled
    await expect(waiting).resolves.toBe(0x1234abcd);
    expect(s.state).toMatchObject({ hooked: 1, unhooked: 1 });
  });

  it('holds its owner while the wait is pending, and only then', async () => {
    const owner = {};
    const s = source<number>();
    const before = pendingWaitOwners();
    const waiting = waitFor({}, { ...timeoutError, owner }, s.register);
    expect(pendingWaitOwners()).toBe(before + 1);
    s.state.pending?.resolve(0x51f2_0a37);
    await expect(waiting).resolves.toBe(0x51f2_0a37);
    expect(pendingWaitOwners()).toBe(before);
    // A registration that throws releases it too.
    await expect(
      waitFor({}, { ...timeoutError, owner }, () => {
        throw new Error('arm failed');
      }),
    ).rejects.toThrow('arm failed');
    expect(pendingWaitOwners()).toBe(before);
  });

  it('keeps an owner reachable only through its own wait alive across garbage collections', () => {
    // As an exchange or a CQ: the event source (here an interval, a root) holds the owner
    // weakly and settles the owner's pending wait; the awaiting function holds the owner.
    // Without the hold, V8 collects the owner, its wait and the awaiting frame, and the
    // process exits 13 (unsettled top-level await) with the wait never ended.
    // (The source is made in a function of its own: closures made in one function share
    // its context, and the interval's would then hold the owner.)
    const script = `import { waitFor } from './dist/verbs/wait.js';
function startSource(ref) {
  let ticks = 0;
  const source = setInterval(() => {
    globalThis.gc();
    if (++ticks < 20) return;
    clearInterval(source);
    const o = ref.deref();
    if (o === undefined) console.log('collected');
    else o.pending.resolve('ended');
  }, 5);
}
function start() {
  const owner = { pending: undefined };
  startSource(new WeakRef(owner));
  return waitFor({}, { call: 'test_wait', device: undefined, what: 'event', owner }, (p) => {
    owner.pending = p;
    return () => {};
  });
}
console.log(await start());`;
    const run = spawnSync(process.execPath, ['--expose-gc', '--input-type=module', '-e', script], {
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(run.stdout.trim(), run.stderr).toBe('ended');
    expect(run.status).toBe(0);
  });

  it('unhooks once when the source settles during registration', async () => {
    const s = source<string>();
    const waiting = waitFor({}, timeoutError, (pending) => {
      const unhook = s.register(pending);
      pending.resolve('already queued');
      return unhook;
    });
    await expect(waiting).resolves.toBe('already queued');
    expect(s.state).toMatchObject({ hooked: 1, unhooked: 1 });
  });

  it('times out with a VerbsError ETIMEDOUT and unhooks', async () => {
    const s = source<number>();
    const error = await waitFor({ timeoutMs: 5 }, timeoutError, s.register).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(VerbsError);
    expect(error).toMatchObject({ code: 'ETIMEDOUT', errno: 110, call: 'test_wait' });
    expect((error as Error).message).toContain('no event in 5 ms');
    expect(s.state.unhooked).toBe(1);
  });

  it('rejects with the abort reason, before or during the wait, and unhooks', async () => {
    const before = new AbortController();
    before.abort(new Error('stopped before'));
    const s1 = source<number>();
    await expect(waitFor({ signal: before.signal }, timeoutError, s1.register)).rejects.toThrow(
      'stopped before',
    );
    expect(s1.state.hooked).toBe(0); // never hooked at all

    const during = new AbortController();
    const s2 = source<number>();
    const waiting = waitFor(
      { signal: during.signal, timeoutMs: 10_000 },
      timeoutError,
      s2.register,
    );
    during.abort(new Error('stopped during'));
    await expect(waiting).rejects.toThrow('stopped during');
    expect(s2.state).toMatchObject({ hooked: 1, unhooked: 1 });
  });

  // Timed waits share one timer (armed for the earliest deadline): each must still end at
  // its own time, whatever order they come in, and not before it.
  it('times out each of several waits at its own deadline, in any order of arrival', async () => {
    const started = performance.now();
    const ended: [number, number][] = [];
    const waits = [60, 20, 40, 20].map((ms) => {
      const s = source<number>();
      return waitFor({ timeoutMs: ms }, timeoutError, s.register).catch(() => {
        ended.push([ms, performance.now() - started]);
      });
    });
    // One that settles first does not take the shared timer with it.
    const s = source<number>();
    const early = waitFor({ timeoutMs: 10 }, timeoutError, s.register);
    s.state.pending?.resolve(7);
    await expect(early).resolves.toBe(7);
    await Promise.all(waits);
    expect(ended.map(([ms]) => ms)).toEqual([20, 20, 40, 60]);
    for (const [ms, at] of ended) expect(at).toBeGreaterThanOrEqual(ms);
  });

  it('a timed wait that ended keeps no timer: the process exits at once', () => {
    // A 60 s timeout settled at once: the process must not stay up for the timer. Judged
    // from the process's own evidence, not a stopwatch (issue 38): the resources still
    // holding its event loop open once both waits are over, which must include no Timeout.
    const script = `
      import { waitFor } from './dist/verbs/wait.js';
      const err = { call: 'test_wait', device: undefined, what: 'event' };
      const later = await waitFor({ timeoutMs: 60000 }, err, (pending) => {
        setTimeout(() => pending.resolve(1), 5);
        return () => {};
      });
      const atOnce = await waitFor({ timeoutMs: 60000 }, err, (pending) => {
        pending.resolve(2);
        return () => {};
      });
      await new Promise((r) => setImmediate(r));
      console.log(later + atOnce, JSON.stringify(process.getActiveResourcesInfo()));`;
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
      encoding: 'utf8',
      timeout: 300_000, // a hang guard only
    });
    expect([r.status, r.signal], r.stderr).toEqual([0, null]);
    const [sum, resources] = r.stdout.trim().split(' ', 2) as [string, string];
    expect(sum).toBe('3');
    expect(JSON.parse(resources) as string[]).not.toContain('Timeout');
  });

  it('onNextTurn runs every callback of a turn once, in order, after the current one', async () => {
    const order: string[] = [];
    onNextTurn(() => order.push('a'));
    onNextTurn(() => order.push('b'));
    order.push('now');
    await new Promise((r) => setImmediate(r));
    expect(order).toEqual(['now', 'a', 'b']);
  });
});
