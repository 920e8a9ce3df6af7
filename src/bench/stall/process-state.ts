/**
 * What a process and its descendants are doing, read from /proc (proc(5)): each thread's
 * state and wait channel, and its kernel stack where readable (root only). The stall
 * watch (stall-watch.ts) prints this when a benchmark step outlives its limit, so a hang
 * names the wait it is in (a C program in `ib_uverbs_event_read`, our own thread in
 * `ep_poll`, ...) instead of a guest going quiet.
 */
import { readdirSync, readFileSync } from 'node:fs';

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

/**
 * The fields of a stat line after the command (which may hold spaces and parentheses: it
 * ends at the last ')'), so that index 0 is proc(5)'s field 3 (state), 1 is field 4 (ppid).
 */
function statFields(stat: string): string[] {
  return stat
    .slice(stat.lastIndexOf(')') + 2)
    .trim()
    .split(' ');
}

/** The parent of `pid` (undefined when it is gone). */
function parentOf(pid: number): number | undefined {
  const stat = readOr(`/proc/${pid}/stat`, '');
  return stat === '' ? undefined : Number(statFields(stat)[1]);
}

/** Every live descendant of `root`, parents before their children. */
export function descendants(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const pid = Number(name);
    const ppid = parentOf(pid);
    if (ppid === undefined) continue;
    children.set(ppid, [...(children.get(ppid) ?? []), pid]);
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
  const command = readOr(`/proc/${pid}/cmdline`, '').split('\0').filter(Boolean).join(' ');
  const threads = tids.map((t): ThreadState => {
    const base = `/proc/${pid}/task/${t}`;
    const stat = readOr(`${base}/stat`, '');
    return {
      tid: Number(t),
      comm: readOr(`${base}/comm`, '?').trim(),
      state: stat === '' ? '?' : (statFields(stat)[0] ?? '?'),
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
