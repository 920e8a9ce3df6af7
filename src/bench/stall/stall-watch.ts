/**
 * A watch over a long benchmark's steps (`bench verbs` in the guest): each step is named
 * as it starts (a progress line on stderr) and has a time limit. A thread of its own
 * (stall-watch-worker.ts) checks the step; one that outlives its limit gets every process
 * of the run printed with the kernel wait of each thread (process-state.ts), and its
 * child processes (perftest, rdma-core's examples, pyverbs) are killed, which ends the
 * wait with its figure not measured (the step may go on, with a new limit); with no child
 * to kill, the wait is the run's own, and the run ends.
 *
 * Why: `bench verbs` hung at s43 with the guest idle and nothing printed, and which of its
 * waits it was (a C program on completion events, a perftest anchor, one of ours) could
 * not be told afterwards.
 */
import { Worker } from 'node:worker_threads';

/** What the watch's thread is told: a step began (with its limit), or none runs. */
export type StallMessage =
  | { readonly kind: 'step'; readonly label: string; readonly limitMs: number }
  | { readonly kind: 'idle' };

/** A step that outlived its limit: what every process was waiting in, and what was killed. */
export interface StallReport {
  readonly label: string;
  readonly elapsedMs: number;
  readonly processes: readonly string[];
  readonly killed: readonly number[];
}

export interface StallWatchOptions {
  /** The start of every line it prints (`bench verbs`). */
  readonly prefix: string;
  /** How often the thread looks. */
  readonly pollMs: number;
}

export interface StallWatch {
  /**
   * Runs `run` as the step `label` (printed as it starts), watched against `limitMs`. A
   * step inside another is watched alone; the outer one is watched again, from then, once
   * it ends.
   */
  step<T>(label: string, limitMs: number, run: () => T | Promise<T>): Promise<T>;
  /** The steps that outlived their limits so far. */
  readonly stalls: readonly StallReport[];
  close(): Promise<void>;
}

const DEFAULTS: StallWatchOptions = { prefix: 'stall watch', pollMs: 1000 };

/** The watch of this process's benchmark run, when one runs (watchedStep uses it). */
let active: StallWatch | undefined;

export function startStallWatch(options: Partial<StallWatchOptions> = {}): StallWatch {
  const o = { ...DEFAULTS, ...options };
  const worker = new Worker(new URL('./stall-watch-worker.js', import.meta.url), {
    workerData: o,
    // Its thread needs none of the run's Node options (some, such as --input-type, would
    // stop it from loading).
    execArgv: [],
  });
  // The watch never keeps the process alive by itself.
  worker.unref();
  const stalls: StallReport[] = [];
  worker.on('message', (r: StallReport) => stalls.push(r));
  const open: { label: string; limitMs: number }[] = [];
  const tell = (m: StallMessage) => worker.postMessage(m);
  const watch: StallWatch = {
    stalls,
    async step<T>(label: string, limitMs: number, run: () => T | Promise<T>): Promise<T> {
      process.stderr.write(`${o.prefix}: ${label}\n`);
      open.push({ label, limitMs });
      tell({ kind: 'step', label, limitMs });
      try {
        return await run();
      } finally {
        open.pop();
        const outer = open.at(-1);
        tell(outer === undefined ? { kind: 'idle' } : { kind: 'step', ...outer });
      }
    },
    async close() {
      if (active === watch) active = undefined;
      await worker.terminate();
    },
  };
  active = watch;
  return watch;
}

/**
 * `run` as a step of the running watch (stall watch: `label`, `limitMs`), or just `run`
 * when no watch runs (a figure measured on its own, a test).
 */
export function watchedStep<T>(
  label: string,
  limitMs: number,
  run: () => T | Promise<T>,
): Promise<T> {
  return active === undefined ? Promise.resolve().then(run) : active.step(label, limitMs, run);
}
