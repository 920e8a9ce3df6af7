/**
 * What a process and its descendants are doing, read from /proc (proc(5)): each thread's
 * state and wait channel, and its kernel stack where readable (root only). The stall
 * watch (stall-watch.ts) prints this when a benchmark step outlives its limit, so a hang
 * names the wait it is in (a C program in `ib_uverbs_event_read`, our own thread in
 * `ep_poll`, ...) instead of a guest going quiet.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { processArgv, processIds, statFields } from '../../runtime/processes.js';

/** One thread of a process: its name, state letter and where it sleeps in the kernel. */
export interface ThreadState {
  readonly tid: number;
  readonly comm: string;
  /** proc(5) stat field 3: R running, S sleeping, D disk sleep, Z zombie, ... */
  readonly state: string;
  /** /proc/<pid>/task/<tid>/wchan: the kernel function it waits in ('0' when running). */
  readonly wchan: string;
  /** The innermost frames of /proc/<pid>/task/<tid>/stack (empty when not readable). */
  readonly stack: readonly string[];
}

/** One process: its command line and threads. */
export interface ProcessState {
  readonly pid: number;
  readonly command: string;
  readonly threads: readonly ThreadState[];
}

function readOr(path: string, otherwise: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return otherwise;
  }
}

/** Every live descendant of `root`, parents before their children. */
export function descendants(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const pid of processIds()) {
    const ppid = statFields(String(pid))?.[1];
    if (ppid === undefined) continue;
    children.set(Number(ppid), [...(children.get(Number(ppid)) ?? []), pid]);
  }
  const out: number[] = [];
  const walk = (pid: number) => {
    for (const child of children.get(pid) ?? []) {
      out.push(child);
      walk(child);
    }
  };
  walk(root);
  return out;
}

/** How many stack frames of a waiting thread are worth printing. */
const STACK_FRAMES = 6;

/** The state of `pid` and its threads (undefined when it is gone). */
export function processState(pid: number): ProcessState | undefined {
  let tids: string[];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return undefined;
  }
  const command = processArgv(pid).join(' ');
  const threads = tids.map((t): ThreadState => {
    const base = `/proc/${pid}/task/${t}`;
    return {
      tid: Number(t),
      comm: readOr(`${base}/comm`, '?').trim(),
      state: statFields(`${pid}/task/${t}`)?.[0] ?? '?',
      wchan: readOr(`${base}/wchan`, '?').trim(),
      stack: readOr(`${base}/stack`, '')
        .split('\n')
        .map((l) => l.replace(/^\[<[0-9a-f]+>\]\s*/, '').trim())
        .filter(Boolean)
        .slice(0, STACK_FRAMES),
    };
  });
  return { pid, command, threads };
}

/**
 * One line per process: its pid and command, then each thread that sleeps in the kernel
 * (running threads and the usual idle waits of Node's own threads are summed up as a
 * count, so the line names the wait that matters).
 */
export function describeProcess(p: ProcessState): string {
  const waits = p.threads
    .filter((t) => t.state !== 'R')
    .map(
      (t) =>
        `${t.comm}(${t.tid}) ${t.state} in ${t.wchan}${t.stack.length > 0 ? ` [${t.stack.join(' < ')}]` : ''}`,
    );
  const running = p.threads.length - waits.length;
  return `pid ${p.pid} ${p.command || '?'}: ${running} running; ${waits.join('; ') || 'none waiting'}`;
}
