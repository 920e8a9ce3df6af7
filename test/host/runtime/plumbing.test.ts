import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { LineSplitter, parseGuestMessage } from '../../../src/runtime/guest-channel.js';
import { resolveCacheRoot } from '../../../src/runtime/paths.js';
import { isAlive, processIdentity } from '../../../src/runtime/processes.js';
import { cleanupStaleRuns } from '../../../src/runtime/run-dir.js';

// The runtime's plumbing without booting a guest: the cache directory rule, the control
// channel's messages, and the stale-run clean-up against stand-in processes.

describe('cache directory', () => {
  const installed = mkdtempSync(join(tmpdir(), 'rdma-interop-installed-')); // no .git
  it('prefers RDMA_INTEROP_CACHE, then the checkout .cache, then XDG, then ~/.cache', () => {
    expect(resolveCacheRoot({ RDMA_INTEROP_CACHE: '/c/x' }, process.cwd(), '/home/u')).toBe('/c/x');
    expect(resolveCacheRoot({}, process.cwd(), '/home/u')).toBe(join(process.cwd(), '.cache'));
    expect(resolveCacheRoot({ XDG_CACHE_HOME: '/xdg' }, installed, '/home/u')).toBe(
      '/xdg/rdma-interop',
    );
    // XDG Base Directory: a relative XDG_CACHE_HOME is invalid and ignored.
    expect(resolveCacheRoot({ XDG_CACHE_HOME: 'rel' }, installed, '/home/u')).toBe(
      '/home/u/.cache/rdma-interop',
    );
  });
});

describe('guest control channel', () => {
  it('parses the guest messages and refuses malformed counts', () => {
    expect(parseGuestMessage('exit 7 1048576 12')).toEqual({
      kind: 'exit',
      status: 7,
      stdoutBytes: 1048576,
      stderrBytes: 12,
    });
    expect(parseGuestMessage('devices-ready 12.5')).toEqual({
      kind: 'devices-ready',
      uptimeSeconds: 12.5,
    });
    expect(parseGuestMessage('log [devices] devices: rxe0 siw0')).toEqual({
      kind: 'log',
      text: '[devices] devices: rxe0 siw0',
    });
    expect(parseGuestMessage('exit 7 -1 0').kind).toBe('unknown');
    expect(parseGuestMessage('exit 7 12').kind).toBe('unknown');
  });

  it('splits lines across chunks, including a multi-byte character cut in two', () => {
    const lines: string[] = [];
    const splitter = new LineSplitter((line) => lines.push(line));
    const bytes = Buffer.from('log é1\nlog two\r\nexit 0 0 0\n');
    splitter.push(bytes.subarray(0, 5)); // cuts 'é' (2 bytes) after its first byte
    splitter.push(bytes.subarray(5, 12));
    splitter.push(bytes.subarray(12));
    expect(lines).toEqual(['log é1', 'log two', 'exit 0 0 0']);
  });
});

describe('stale runs', () => {
  const started: number[] = [];
  afterEach(() => {
    for (const pid of started.splice(0)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  });

  /** A process whose argv[0] is `argv0` and whose arguments name `pidFile`, like QEMU's. */
  async function standIn(argv0: string, pidFile: string): Promise<number> {
    const child = spawn(
      'bash',
      ['-c', `exec -a ${argv0} perl -e 'sleep 600' -- -pidfile ${pidFile}`],
      { stdio: 'ignore' },
    );
    if (child.pid === undefined) throw new Error('spawn failed');
    started.push(child.pid);
    // Wait for the exec, so /proc shows the final argument vector.
    for (let i = 0; i < 100 && !(await argvOf(child.pid)).startsWith(argv0); i++) await sleep(20);
    return child.pid;
  }

  async function argvOf(pid: number): Promise<string> {
    try {
      return readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    } catch {
      return '';
    }
  }

  function runDir(cache: string, name: string, owner: { pid: number; startTicks: string }) {
    const dir = join(cache, 'runs', name);
    mkdirSync(join(dir, 'share'), { recursive: true });
    writeFileSync(join(dir, 'owner.json'), JSON.stringify({ ...owner, host: hostname() }));
    return dir;
  }

  it('kills only the QEMU of a run whose owner is dead, and removes only that run', async () => {
    const cache = mkdtempSync(join(tmpdir(), 'rdma-interop-stale-'));
    const self = processIdentity(process.pid);
    if (self === undefined) throw new Error('no /proc/self');
    // Same pid as a live process but another start time: a reused pid, so a dead owner.
    const dead = runDir(cache, 'dead-run', { pid: process.pid, startTicks: '1' });
    const live = runDir(cache, 'live-run', self);
    const staleQemu = await standIn('qemu-system-x86_64', join(dead, 'qemu.pid'));
    const bystander = await standIn('not-qemu', join(dead, 'qemu.pid'));
    const liveQemu = await standIn('qemu-system-x86_64', join(live, 'qemu.pid'));
    const identities = [staleQemu, bystander, liveQemu].map((pid) => processIdentity(pid));

    const cleanup = await cleanupStaleRuns(cache);

    expect(cleanup.removed).toEqual([dead]);
    expect(cleanup.killed).toEqual([staleQemu]);
    expect(existsSync(dead)).toBe(false);
    expect(existsSync(live)).toBe(true);
    const [stale, other, kept] = identities;
    expect(stale !== undefined && isAlive(stale)).toBe(false);
    expect(other !== undefined && isAlive(other)).toBe(true);
    expect(kept !== undefined && isAlive(kept)).toBe(true);
  });
});

describe('rdma-interop setup', () => {
  const cli = join(process.cwd(), 'dist', 'cli', 'main.js');
  const run = promisify(execFile);

  it('in a checkout, uses .cache/ and finds the assets already built', async () => {
    const { stdout, stderr } = await run(process.execPath, [cli, 'setup'], {
      env: { ...process.env, RDMA_INTEROP_CACHE: '' },
    });
    expect(stderr).toContain(`[setup] cache directory: ${join(process.cwd(), '.cache')}`);
    expect(stderr).toMatch(/guest assets for \S+ \(\S+\): cached/);
    expect(stdout).toMatch(/^guest kernel \S+-amd64 \(\S+\) ready: \S+$/m);
  });

  it('without root and with packages missing, names the apt command and exits 125', async () => {
    // Stand-ins: every package reads as not installed, and we are not root.
    const shims = mkdtempSync(join(tmpdir(), 'rdma-interop-shims-'));
    writeFileSync(join(shims, 'dpkg-query'), '#!/bin/sh\nexit 1\n', { mode: 0o755 });
    writeFileSync(join(shims, 'id'), '#!/bin/sh\necho 1000\n', { mode: 0o755 });
    const failure = await run(process.execPath, [cli, 'setup'], {
      env: { ...process.env, PATH: `${shims}:${process.env.PATH}` },
    }).catch((e: { code: number; stdout: string; stderr: string }) => e);
    expect(failure).toMatchObject({ code: 125, stdout: '' });
    const stderr = (failure as { stderr: string }).stderr;
    expect(stderr).toContain('rdma-interop setup: error (packages-missing)');
    expect(stderr).toContain('sudo apt-get install -y --no-install-recommends qemu-system-x86 ');
    expect(stderr).not.toMatch(/^\s+at /m);
  });
});
