/**
 * Process identity from /proc (Linux). A pid alone is not an identity: pids are reused,
 * so an owner is recorded as (pid, start time in clock ticks since boot), field 22 of
 * /proc/<pid>/stat (proc(5)), which no later process with the same pid can share.
 */
import { readdirSync, readFileSync } from 'node:fs';

/** A process as recorded in a run directory's owner file. */
export interface ProcessIdentity {
  readonly pid: number;
  /** Field 22 of /proc/<pid>/stat (`starttime`), as text: it can exceed 2^53 in theory. */
  readonly startTicks: string;
}

/**
 * The fields of a /proc stat file after the command, `entry` being `<pid>` or
 * `<pid>/task/<tid>` (undefined when it is gone). The command name (field 2) is in
 * parentheses and may itself contain spaces and parentheses: the fields after it start
 * after the LAST ')'. Index 0 is field 3 (state), 1 field 4 (ppid), 19 field 22
 * (starttime).
 */
export function statFields(entry: string): string[] | undefined {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
}

/** The identity of a live process, or undefined when no such pid exists now. */
export function processIdentity(pid: number): ProcessIdentity | undefined {
  const rest = statFields(String(pid));
  const startTicks = rest?.[19];
  if (startTicks === undefined || rest?.[0] === 'Z') return undefined;
  return { pid, startTicks };
}

/** Is this exact process (same pid AND same start time) still running? */
export function isAlive(identity: ProcessIdentity): boolean {
  return processIdentity(identity.pid)?.startTicks === identity.startTicks;
}

/** The argument vector of a process (empty when it is gone or a kernel thread). */
export function processArgv(pid: number): string[] {
  try {
    const raw = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    return raw === '' ? [] : raw.replace(/\0$/, '').split('\0');
  } catch {
    return [];
  }
}

/** The pid of every process visible in /proc. */
export function processIds(): number[] {
  return readdirSync('/proc')
    .filter((name) => /^[0-9]+$/.test(name))
    .map(Number);
}

/** Pids of every process visible in /proc whose argument vector satisfies `match`. */
export function findProcesses(match: (argv: readonly string[]) => boolean): number[] {
  return processIds().filter((pid) => {
    if (pid === process.pid) return false;
    const argv = processArgv(pid);
    return argv.length > 0 && match(argv);
  });
}
