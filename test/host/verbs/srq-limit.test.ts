import { describe, expect, it } from 'vitest';
import { ASYNC_EVENT } from '../../../src/ibverbs/constants.js';
import type { NativeAsyncEvent, NativeContext, NativeSrq } from '../../../src/native/bindings.js';
import { Context } from '../../../src/verbs/device.js';
import { VerbsError } from '../../../src/verbs/errors.js';
import type { Pd } from '../../../src/verbs/pd.js';
import { Srq } from '../../../src/verbs/srq.js';

// The context's own dispatch (pollAsyncEvents, toAsyncEvent, Srq.onAsyncEvent) over a
// scripted async queue: no device on the host. The watcher of the async fd is replaced by
// a count of the waits registered (watchAsyncEvents), which must end at 0.
function scripted(): {
  context: Context;
  srq: Srq;
  queue: NativeAsyncEvent[];
  watching: () => number;
  modified: { srqLimit?: number; maxWr?: number }[];
} {
  const queue: NativeAsyncEvent[] = [];
  const native = {
    name: 'fake0',
    closed: false,
    owned: true,
    asyncFd: -1,
    close() {},
    getAsyncEvent: () => queue.shift() ?? null,
  } as unknown as NativeContext;
  const context = new Context(native);
  let watching = 0;
  context.watchAsyncEvents = (delta: 1 | -1): void => {
    watching += delta;
  };
  const modified: { srqLimit?: number; maxWr?: number }[] = [];
  const nativeSrq = {
    closed: false,
    key: 0x7a11_5e0fn,
    attr: { maxWr: 16, maxSge: 1, srqLimit: 0 },
    close() {
      nativeSrq.closed = true;
    },
    modify(attr: { srqLimit?: number; maxWr?: number }) {
      modified.push(attr);
    },
    query: () => ({ maxWr: 16, maxSge: 1, srqLimit: 0 }),
  };
  const srq = new Srq(nativeSrq as unknown as NativeSrq, { context } as unknown as Pd);
  return { context, srq, queue, watching: () => watching, modified };
}

const LIMIT = ASYNC_EVENT.SRQ_LIMIT_REACHED;

async function outcome(p: Promise<unknown>): Promise<string> {
  try {
    const event = (await p) as { type: string };
    return event.type;
  } catch (e) {
    return e instanceof VerbsError ? e.code : String(e);
  }
}

describe('Srq.limitReached: an event read while nobody waits', () => {
  it('is kept and returned by the next limitReached at once, once', async () => {
    const s = scripted();
    s.srq.modify({ limit: 4 });
    s.queue.push({ eventType: LIMIT, srqKey: 0x7a11_5e0fn });
    // Read by someone else (an iterator's poll, a cq wait's): no limitReached pending.
    expect(s.context.pollAsyncEvents().map((e) => e.type)).toEqual(['SRQ_LIMIT_REACHED']);
    const event = await s.srq.limitReached({ timeoutMs: 1 });
    expect([event.type, event.srq === s.srq]).toEqual(['SRQ_LIMIT_REACHED', true]);
    // Claimed: the next wait waits for the next event.
    expect(await outcome(s.srq.limitReached({ timeoutMs: 5 }))).toBe('ETIMEDOUT');
    expect(s.watching()).toBe(0);
  });

  it('read just after a wait timed out, goes to the next wait', async () => {
    const s = scripted();
    s.srq.modify({ limit: 4 });
    expect(await outcome(s.srq.limitReached({ timeoutMs: 5 }))).toBe('ETIMEDOUT');
    s.queue.push({ eventType: LIMIT, srqKey: 0x7a11_5e0fn });
    s.context.pollAsyncEvents();
    expect(await outcome(s.srq.limitReached({ timeoutMs: 5 }))).toBe('SRQ_LIMIT_REACHED');
    expect(s.watching()).toBe(0);
  });

  it('goes to the waiters present instead of being kept', async () => {
    const s = scripted();
    s.srq.modify({ limit: 4 });
    const waits = [s.srq.limitReached(), s.srq.limitReached({ timeoutMs: 1000 })];
    expect(s.watching()).toBe(2);
    s.queue.push({ eventType: LIMIT, srqKey: 0x7a11_5e0fn });
    s.context.pollAsyncEvents();
    expect(await Promise.all(waits.map(outcome))).toEqual([
      'SRQ_LIMIT_REACHED',
      'SRQ_LIMIT_REACHED',
    ]);
    expect(await outcome(s.srq.limitReached({ timeoutMs: 5 }))).toBe('ETIMEDOUT');
    expect(s.watching()).toBe(0);
  });

  it('is dropped when the limit is armed again, with one still queued; kept by a resize or a 0 limit', async () => {
    const s = scripted();
    s.srq.modify({ limit: 4 });
    s.queue.push({ eventType: LIMIT, srqKey: 0x7a11_5e0fn });
    s.context.pollAsyncEvents();
    s.srq.modify({ maxWr: 32 });
    s.srq.modify({ limit: 0 });
    expect(await outcome(s.srq.limitReached({ timeoutMs: 5 }))).toBe('SRQ_LIMIT_REACHED');
    s.queue.push({ eventType: LIMIT, srqKey: 0x7a11_5e0fn });
    s.context.pollAsyncEvents();
    // And one of the previous arming not read yet: read before the re-arm, dropped too.
    s.queue.push({ eventType: LIMIT, srqKey: 0x7a11_5e0fn });
    s.srq.modify({ limit: 2 });
    expect(s.queue).toHaveLength(0);
    expect(s.modified.map((m) => m.srqLimit ?? m.maxWr)).toEqual([4, 32, 0, 2]);
    expect(await outcome(s.srq.limitReached({ timeoutMs: 5 }))).toBe('ETIMEDOUT');
    expect(s.watching()).toBe(0);
  });

  it('is kept only for the limit event; a closed SRQ refuses the wait (EBADF) even with one kept', async () => {
    const s = scripted();
    s.srq.modify({ limit: 4 });
    s.queue.push({ eventType: ASYNC_EVENT.SRQ_ERR, srqKey: 0x7a11_5e0fn });
    s.context.pollAsyncEvents();
    expect(await outcome(s.srq.limitReached({ timeoutMs: 5 }))).toBe('ETIMEDOUT');
    s.queue.push({ eventType: LIMIT, srqKey: 0x7a11_5e0fn });
    s.context.pollAsyncEvents();
    s.srq.close();
    expect(await outcome(s.srq.limitReached())).toBe('EBADF');
  });
});
