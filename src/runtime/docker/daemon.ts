/**
 * The project's own dockerd: its data root, exec root, pid file, socket and log all under
 * the git-ignored cache (paths.ts), so it never meets a system Docker. Started for one
 * command and stopped by its pid on every exit path (success, failure, abort by Ctrl-C);
 * what a stop leaves (a containerd it started, a mount under the cache) is removed too.
 * A dockerd left by a run that was killed too hard is found by its pid file AND its
 * command line naming our data root, and stopped before the next one starts.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import {
  accessSync,
  closeSync,
  constants,
  existsSync,
  mkdirSync,
  openSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { request } from 'node:http';
import { basename, delimiter, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { RuntimeError } from '../errors.js';
import {
  findProcesses,
  isAlive,
  type ProcessIdentity,
  processArgv,
  processIdentity,
  statFields,
} from '../processes.js';
import { type DockerPaths, dockerPaths } from './paths.js';

/** sun_path is 108 bytes including the terminating NUL (unix(7)). */
const MAX_SOCKET_PATH = 107;
const READY_TIMEOUT_MS = 90_000;
const STOP_GRACE_MS = 20_000;

export interface Daemon {
  /** DOCKER_HOST for clients of this daemon. */
  readonly host: string;
  readonly pid: number;
  readonly paths: DockerPaths;
}

export interface DaemonOptions {
  readonly paths?: DockerPaths;
  readonly onProgress?: (line: string) => void;
  readonly signal?: AbortSignal;
}

function onPath(name: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (dir !== '' && existsSync(join(dir, name))) return join(dir, name);
  }
  for (const dir of ['/usr/sbin', '/sbin', '/usr/bin']) {
    if (existsSync(join(dir, name))) return join(dir, name);
  }
  return undefined;
}

/**
 * The dockerd program: RDMA_INTEROP_DOCKERD when set (an engine installed elsewhere, or a
 * test naming one that does not exist), else the first dockerd on PATH or in the system
 * directories. A missing one is the step `engine-missing`, before anything starts.
 */
export function dockerdProgram(env: NodeJS.ProcessEnv = process.env): string {
  const override = env.RDMA_INTEROP_DOCKERD;
  if (override !== undefined && override !== '') {
    let usable = false;
    try {
      accessSync(override, constants.X_OK);
      usable = statSync(override).isFile();
    } catch {
      // Absent or not executable: the error below.
    }
    if (!usable) {
      throw new RuntimeError(
        'engine-missing',
        `RDMA_INTEROP_DOCKERD is '${override}', which is no executable file: point it at a dockerd, or unset it to use the one bash scripts/setup/docker.sh installs`,
      );
    }
    return override;
  }
  return requireOnPath(
    'dockerd',
    "no dockerd on this machine: install Debian's docker.io (bash scripts/setup/docker.sh, as root)",
  );
}

/**
 * The docker client to use: Debian's /usr/bin/docker first (it matches Debian's dockerd;
 * a newer client elsewhere on PATH may lack the legacy builder's defaults), else PATH's.
 */
export function dockerClient(): string {
  if (existsSync('/usr/bin/docker')) return '/usr/bin/docker';
  return requireOnPath(
    'docker',
    "no docker client: install Debian's docker.io (bash scripts/setup/docker.sh)",
  );
}

/** `name`'s path on PATH; without one, an `engine-missing` RuntimeError saying `missing`. */
function requireOnPath(name: string, missing: string): string {
  const found = onPath(name);
  if (found === undefined) throw new RuntimeError('engine-missing', missing);
  return found;
}

/** Environment for clients of `daemon` (the legacy builder: no buildx needed). */
export function clientEnv(daemon: Daemon): NodeJS.ProcessEnv {
  return { ...process.env, DOCKER_HOST: daemon.host, DOCKER_BUILDKIT: '0' };
}

function ping(socket: string): Promise<boolean> {
  return new Promise((resolvePing) => {
    const req = request({ socketPath: socket, path: '/_ping', timeout: 2000 }, (res) => {
      res.resume();
      resolvePing(res.statusCode === 200);
    });
    req.on('error', () => resolvePing(false));
    req.on('timeout', () => {
      req.destroy();
      resolvePing(false);
    });
    req.end();
  });
}

function logTail(file: string, lines = 15): string {
  if (!existsSync(file)) return '(no log)';
  return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
}

/** Is `pid` a dockerd of ours (its command line names our data root)? */
function isOurDaemon(pid: number, paths: DockerPaths): boolean {
  const argv = processArgv(pid);
  return argv.some((a) => a.includes('dockerd')) && argv.includes(`--data-root=${paths.dataRoot}`);
}

/** The engine's own programs (never a QEMU or a node process that names our paths). */
const ENGINE_PROGRAMS = /^(dockerd|containerd|containerd-shim.*|runc|docker-proxy)$/;

/** Pids of processes that belong to our daemon's tree (dockerd, its containerd, shims). */
function ourProcesses(paths: DockerPaths): number[] {
  return findProcesses(
    (argv) =>
      ENGINE_PROGRAMS.test(basename(argv[0] ?? '')) && argv.some((a) => a.includes(paths.root)),
  );
}

/** Mount points at or under our directory, deepest first. */
export function mountsUnder(dir: string): string[] {
  const mountinfo = readFileSync('/proc/self/mountinfo', 'utf8');
  const points = mountinfo
    .split('\n')
    .map((line) => line.split(' ')[4])
    .filter((p): p is string => p !== undefined && (p === dir || p.startsWith(`${dir}/`)))
    // mountinfo escapes spaces and such as octal; our paths have none worth decoding.
    .map((p) => p.replace(/\\040/g, ' '));
  return [...new Set(points)].sort((a, b) => b.length - a.length);
}

/** What was still there after a stop, and removed. */
export interface StopReport {
  readonly killed: number[];
  readonly unmounted: string[];
}

async function waitGone(pid: number, ms: number): Promise<boolean> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (!existsSync(`/proc/${pid}`) || readState(pid) === 'Z') return true;
    await sleep(100);
  }
  return false;
}

function readState(pid: number): string | undefined {
  return statFields(String(pid))?.[0];
}

function kill(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch {
    // Gone already.
  }
}

/**
 * Stops our dockerd by its pid (SIGTERM, then SIGKILL after a grace period), then kills
 * any process still naming our directory (containerd, shims) and unmounts anything still
 * mounted under it. Safe to call when nothing runs.
 */
export async function stopDaemon(paths: DockerPaths, pid?: number): Promise<StopReport> {
  const daemonPid = pid ?? readPid(paths);
  const killed: number[] = [];
  if (daemonPid !== undefined && isOurDaemon(daemonPid, paths)) {
    kill(daemonPid, 'SIGTERM');
    if (!(await waitGone(daemonPid, STOP_GRACE_MS))) {
      kill(daemonPid, 'SIGKILL');
      await waitGone(daemonPid, 5000);
      killed.push(daemonPid);
    }
  }
  for (const leftover of ourProcesses(paths)) {
    kill(leftover, 'SIGKILL');
    await waitGone(leftover, 5000);
    killed.push(leftover);
  }
  const unmounted: string[] = [];
  for (const point of mountsUnder(paths.root)) {
    // Lazy: a busy mount is detached now and freed when its last user goes.
    const result = spawnSync('umount', ['-l', point], { stdio: 'ignore' });
    if (result.status === 0) unmounted.push(point);
  }
  rmSync(paths.pidFile, { force: true });
  rmSync(paths.socket, { force: true });
  releaseOwnership(paths);
  return { killed, unmounted };
}

function readPid(paths: DockerPaths): number | undefined {
  try {
    const pid = Number(readFileSync(paths.pidFile, 'utf8').trim());
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

/**
 * One command at a time uses a cache's dockerd: the owner file records the command's
 * process (pid and start time); a live owner other than us is a clear error, a dead one
 * is a run killed too hard, whose leftovers the caller then stops.
 */
function claimOwnership(paths: DockerPaths): void {
  const ownerFile = join(paths.root, 'owner.json');
  mkdirSync(paths.root, { recursive: true });
  try {
    const owner = JSON.parse(readFileSync(ownerFile, 'utf8')) as ProcessIdentity;
    if (owner.pid !== process.pid && isAlive(owner)) {
      throw new RuntimeError(
        'engine-start',
        `another rdma-interop command (pid ${owner.pid}) is using the dockerd of ${paths.root}: wait for it, or use another --cache-dir`,
      );
    }
  } catch (error) {
    if (error instanceof RuntimeError) throw error;
    // No owner file, or an unreadable one: nobody owns it.
  }
  const me = processIdentity(process.pid);
  if (me !== undefined) writeFileSync(ownerFile, JSON.stringify(me));
}

function releaseOwnership(paths: DockerPaths): void {
  const ownerFile = join(paths.root, 'owner.json');
  try {
    const owner = JSON.parse(readFileSync(ownerFile, 'utf8')) as ProcessIdentity;
    if (owner.pid === process.pid) rmSync(ownerFile, { force: true });
  } catch {
    // Not there.
  }
}

/**
 * Starts our dockerd and resolves once it answers on its socket. The caller must stop it
 * (withDaemon does that on every path).
 */
export async function startDaemon(options: DaemonOptions = {}): Promise<Daemon> {
  const paths = options.paths ?? dockerPaths();
  const progress = options.onProgress ?? (() => {});
  const dockerd = dockerdProgram();
  if (process.getuid?.() !== 0) {
    throw new RuntimeError(
      'engine-start',
      'the project starts its own dockerd, which needs root (or use --docker-host with an engine you run)',
    );
  }
  if (paths.socket.length > MAX_SOCKET_PATH) {
    throw new RuntimeError(
      'engine-start',
      `the socket path ${paths.socket} is longer than ${MAX_SOCKET_PATH} bytes: use a shorter --cache-dir`,
    );
  }
  claimOwnership(paths);
  const stale = readPid(paths);
  if (stale !== undefined || ourProcesses(paths).length > 0 || mountsUnder(paths.root).length > 0) {
    const report = await stopDaemon(paths, stale);
    if (report.killed.length + report.unmounted.length > 0) {
      progress(
        `cleaned up after a dead run: killed ${report.killed.join(', ') || 'nothing'}, unmounted ${report.unmounted.length}`,
      );
    }
  }
  // The clean-up above released a dead owner's claim: ours again.
  claimOwnership(paths);
  for (const dir of [paths.dataRoot, paths.execRoot, paths.logs])
    mkdirSync(dir, { recursive: true });
  const args = [
    `--data-root=${paths.dataRoot}`,
    `--exec-root=${paths.execRoot}`,
    `--pidfile=${paths.pidFile}`,
    `--host=unix://${paths.socket}`,
    // No iptables rules, no docker0 bridge: nothing on the host's network changes. Builds
    // and runs use --network host.
    '--iptables=false',
    '--ip6tables=false',
    '--bridge=none',
  ];
  const logFd = openSync(paths.daemonLog, 'w');
  const started = Date.now();
  progress(`starting dockerd (data root ${paths.dataRoot})`);
  // setpriv --pdeathsig: dockerd dies with this process, even a SIGKILLed one.
  const useSetpriv = onPath('setpriv') !== undefined;
  let child: ChildProcess;
  try {
    child = spawn(
      useSetpriv ? 'setpriv' : dockerd,
      useSetpriv ? ['--pdeathsig', 'KILL', '--', dockerd, ...args] : args,
      { stdio: ['ignore', logFd, logFd], detached: true },
    );
  } finally {
    closeSync(logFd);
  }
  let exited: number | null | undefined;
  child.on('exit', (code) => {
    exited = code;
  });
  child.on('error', () => {
    exited = -1;
  });
  const pid = child.pid;
  const daemon: Daemon = { host: `unix://${paths.socket}`, pid: pid ?? -1, paths };
  while (true) {
    if (exited !== undefined || pid === undefined) {
      await stopDaemon(paths);
      throw new RuntimeError(
        'engine-start',
        `dockerd exited during start-up (status ${exited}):\n${logTail(paths.daemonLog)}`,
        '',
        paths.daemonLog,
      );
    }
    if (options.signal?.aborted) {
      await stopDaemon(paths, pid);
      throw new RuntimeError('aborted', 'stopped while dockerd was starting');
    }
    if (Date.now() - started > READY_TIMEOUT_MS) {
      await stopDaemon(paths, pid);
      throw new RuntimeError(
        'engine-start',
        `dockerd did not answer within ${READY_TIMEOUT_MS / 1000} s:\n${logTail(paths.daemonLog)}`,
        '',
        paths.daemonLog,
      );
    }
    if (await ping(paths.socket)) break;
    await sleep(100);
  }
  child.unref();
  progress(`dockerd ${pid} up in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  return daemon;
}

/** Runs `fn` with our dockerd up; stops it by its pid however `fn` ends. */
export async function withDaemon<T>(
  options: DaemonOptions,
  fn: (daemon: Daemon) => Promise<T>,
): Promise<T> {
  const daemon = await startDaemon(options);
  try {
    return await fn(daemon);
  } finally {
    const report = await stopDaemon(daemon.paths, daemon.pid);
    const extra = [
      ...(report.killed.length > 0 ? [`killed ${report.killed.join(', ')}`] : []),
      ...(report.unmounted.length > 0 ? [`unmounted ${report.unmounted.join(', ')}`] : []),
    ];
    options.onProgress?.(
      `dockerd ${daemon.pid} stopped${extra.length > 0 ? ` (${extra.join('; ')})` : ''}`,
    );
  }
}
