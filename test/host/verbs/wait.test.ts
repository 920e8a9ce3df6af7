import { describe, expect, it } from 'vitest';
import { VerbsError } from '../../../src/verbs/errors.js';
import { type Pending, waitFor } from '../../../src/verbs/wait.js';

const timeoutError = (ms: number) =>
  new VerbsError('ETIMEDOUT', 110, 'test_wait', undefined, `nothing in ${ms} ms`);

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
});
