/**
 * Every guest run owns a directory `<cache>/runs/<id>/`: the owner record, the run
 * description the guest reads (env.sh, run.sh), QEMU's pid file and console log, and the
 * default writable share. Nothing of one run is at a fixed path another run could read.
 *
 * A run killed too hard to clean up after itself (SIGKILL, a crash, a power cut) leaves
 * its directory behind; the next run finds it by its dead owner, kills a QEMU still
 * running for it (identified by its command line naming that directory's pid file, never
 * by name alone) and removes it.
 */
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { hostname } from 'node:os';
import { basename, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { findProcesses, isAlive, type ProcessIdentity, processIdentity } from './processes.js';

/** The owner record, `owner.json` in each run directory. */
interface OwnerRecord extends ProcessIdentity {
  readonly host: string;
  readonly created: string;
}

/** One run's private directory. */
export interface RunDir {
  readonly id: string;
  readonly path: string;
  /** QEMU's `-pidfile`: its path in QEMU's command line is how a stale QEMU is recognised. */
  readonly qemuPidFile: string;
  readonly consoleLog: string;
  /** The writable share used when the caller gives none. */
  readonly defaultShare: string;
}

/** A directory being created (before its owner record is complete) is this old at most. */
const CREATION_GRACE_MS = 10 * 60_000;

function runsRoot(cache: string): string {
  return join(cache, 'runs');
}

function layout(path: string): RunDir {
  return {
    id: basename(path),
    path,
    qemuPidFile: join(path, 'qemu.pid'),
    consoleLog: join(path, 'console.log'),
    defaultShare: join(path, 'share'),
  };
}

/**
 * Creates this run's directory with its owner record in place before the directory
 * appears under its final name (built under `.new-*`, then renamed), so another run's
 * clean-up never sees a run directory without an owner.
 */
export function createRunDir(cache: string): RunDir {
  const root = runsRoot(cache);
  mkdirSync(root, { recursive: true });
  const self = processIdentity(process.pid);
  if (self === undefined) throw new Error('cannot read /proc/self/stat');
  const owner: OwnerRecord = { ...self, host: hostname(), created: new Date().toISOString() };
  const staging = mkdtempSync(join(root, '.new-'));
  writeFileSync(join(staging, 'owner.json'), `${JSON.stringify(owner)}\n`);
  const path = join(root, `${process.pid}-${basename(staging).slice('.new-'.length)}`);
  renameSync(staging, path);
  return layout(path);
}

/** Removes this run's directory (the default share with it). */
export function removeRunDir(run: RunDir): void {
  rmSync(run.path, { recursive: true, force: true });
}

function readOwner(path: string): OwnerRecord | undefined {
  try {
    const record = JSON.parse(readFileSync(join(path, 'owner.json'), 'utf8')) as OwnerRecord;
    return typeof record.pid === 'number' && typeof record.startTicks === 'string'
      ? record
      : undefined;
  } catch {
    return undefined;
  }
}

/** QEMU processes started for this run directory: argv[0] is QEMU and names its pid file. */
export function qemuProcessesOf(run: RunDir): number[] {
  return findProcesses(
    (argv) => basename(argv[0] ?? '').startsWith('qemu-system-') && argv.includes(run.qemuPidFile),
  );
}

/** What a clean-up of stale runs did. */
export interface StaleCleanup {
  /** Run directories removed (their owner was dead). */
  readonly removed: readonly string[];
  /** Pids of QEMU processes killed because their run's owner was dead. */
  readonly killed: readonly number[];
}

/**
 * Finds run directories whose owner process is gone, kills the QEMU of each that is still
 * running, and removes them. Directories of live owners are left alone, whoever they are.
 */
export async function cleanupStaleRuns(cache: string): Promise<StaleCleanup> {
  const root = runsRoot(cache);
  if (!existsSync(root)) return { removed: [], killed: [] };
  const removed: string[] = [];
  const killed: number[] = [];
  const me = hostname();
  for (const name of readdirSync(root)) {
    const path = join(root, name);
    if (name.startsWith('.new-')) {
      // A creation that died half-way; a live one renames it within milliseconds.
      if (ageMs(path) > CREATION_GRACE_MS) rmSync(path, { recursive: true, force: true });
      continue;
    }
    const owner = readOwner(path);
    if (owner === undefined && ageMs(path) < CREATION_GRACE_MS) continue;
    // A cache shared between machines (NFS home): only this host's processes are checkable.
    if (owner !== undefined && owner.host !== me) continue;
    if (owner !== undefined && isAlive(owner)) continue;
    const run = layout(path);
    const pids = qemuProcessesOf(run);
    for (const pid of pids) {
      try {
        process.kill(pid, 'SIGKILL');
        killed.push(pid);
      } catch {
        // Gone in the meantime.
      }
    }
    await waitUntilGone(pids, 5_000);
    rmSync(path, { recursive: true, force: true });
    removed.push(path);
  }
  return { removed, killed };
}

function ageMs(path: string): number {
  try {
    return Date.now() - statSync(path).mtimeMs;
  } catch {
    return 0;
  }
}

async function waitUntilGone(pids: readonly number[], limitMs: number): Promise<void> {
  const deadline = Date.now() + limitMs;
  while (pids.some((pid) => processIdentity(pid) !== undefined) && Date.now() < deadline) {
    await sleep(50);
  }
}
