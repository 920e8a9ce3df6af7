/**
 * The stall watch's thread (stall-watch.ts): it runs on its own event loop, so it sees a
 * step outlive its limit even while the main thread is blocked in a native call, and it
 * writes with writeSync on fd 2 (a worker's process.stderr goes through the main
 * thread's loop, which may be the one that is stuck).
 */
import { writeSync } from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';
import { descendants, describeProcess, processState } from './process-state.js';
import type { StallMessage, StallReport, StallWatchOptions } from './stall-watch.js';

const { prefix, pollMs } = workerData as StallWatchOptions;
const port = parentPort;
if (port === null) throw new Error('stall-watch-worker.js runs as a worker thread');

interface Current {
  readonly label: string;
  readonly limitMs: number;
  /** When the step started, or when its children were last killed. */
  since: number;
}
let current: Current | undefined;

const say = (line: string) => writeSync(2, `${prefix}: ${line}\n`);

/** Every process of this run (ours first, then each descendant) in a line each. */
function diagnosis(): { lines: string[]; children: number[] } {
  const children = descendants(process.pid);
  const lines = [process.pid, ...children].flatMap((pid) => {
    const state = processState(pid);
    return state === undefined ? [] : [describeProcess(state)];
  });
  return { lines, children };
}

/**
 * Past the limit: print every process; kill the children, after which the step may go on
 * (a perftest anchor re-runs on the next port) with a new limit; with no child to kill,
 * the wait is this process's own and nothing else would end it, so the run ends: a run
 * that ends says more than a guest that waits for its time limit.
 */
function check(): void {
  if (current === undefined) return;
  const elapsed = Date.now() - current.since;
  if (elapsed <= current.limitMs) return;
  const { lines, children } = diagnosis();
  say(
    `step "${current.label}" still running after ${(elapsed / 1000).toFixed(0)} s (its limit ${current.limitMs / 1000} s); its processes:`,
  );
  for (const l of lines) say(`  ${l}`);
  const report: StallReport = {
    label: current.label,
    elapsedMs: elapsed,
    processes: lines,
    killed: children,
  };
  port?.postMessage(report);
  if (children.length === 0) {
    say('no child process to end: the wait is in this process; ending the run');
    process.kill(process.pid, 'SIGKILL');
    return;
  }
  for (const pid of children) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone meanwhile
    }
  }
  say(`killed ${children.join(', ')}: what they measured is not a figure`);
  current.since = Date.now();
}

port.on('message', (m: StallMessage) => {
  current =
    m.kind === 'step' ? { label: m.label, limitMs: m.limitMs, since: Date.now() } : undefined;
});
setInterval(check, pollMs);
