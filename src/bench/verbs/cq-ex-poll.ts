/**
 * Whether the extended CQ (`createCqEx`, `pollEx`: ibv_start_poll / ibv_next_poll /
 * ibv_end_poll, native/cq_ext.cc) makes polling cheaper (issue 34): a busy poller's
 * polls are mostly empty (a ping-pong waits for the peer), so the figure is the cost of
 * one empty poll of 16, `pollEx` against `poll` on a plain CQ of the same context, the
 * same number of calls, in one process. No target: it says which to poll with.
 */
import { performance } from 'node:perf_hooks';
import { createCqEx, openDevice } from '../../verbs/index.js';
import { type Figure, figure } from '../report.js';
import { DEVICE } from './loopback.js';

const CALLS = 5000;

/** us per empty poll of 16: the extended CQ's `pollEx` and a plain CQ's `poll`. */
export function emptyPollCosts(): { ex: number; plain: number } {
  const ctx = openDevice(DEVICE);
  try {
    const ex = createCqEx(ctx, { cqe: 64, channel: false });
    const plain = ctx.createCq({ cqe: 64, channel: false });
    const time = (poll: () => unknown) => {
      for (let i = 0; i < CALLS; i++) poll(); // warm-up (the JIT)
      const t0 = performance.now();
      for (let i = 0; i < CALLS; i++) poll();
      return ((performance.now() - t0) * 1000) / CALLS;
    };
    return { ex: time(() => ex.pollEx(16)), plain: time(() => plain.poll(16)) };
  } finally {
    ctx.close();
  }
}

/** The figure: `pollEx` / `poll`, empty, us per call. */
export function cqExPollFigure(suite: string): Figure {
  const c = emptyPollCosts();
  return figure({
    suite,
    name: 'extended CQ: an empty pollEx(16) (ibv_start_poll) against poll(16) (ibv_poll_cq, a bound call)',
    unit: 'us',
    value: c.ex,
    anchorName: 'poll(16) on a plain CQ',
    anchor: c.plain,
  });
}
