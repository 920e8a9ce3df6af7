import { type ChildProcess, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { FuzzRandom } from '../../../src/fuzz/random.js';
import { GuestRuntimeError, runInGuest } from '../../../src/runtime/index.js';
import { processArgv, processIdentity } from '../../../src/runtime/processes.js';

// The guest runtime's ownership of its QEMU and its output contract. These boot real
// guests (TCG: 10-60 s each, depending on the host's load), so each test shares boots
// where it can: two CLIs at once for SIGINT and SIGTERM, two runs at once for the shared
// --share, and the stale-run clean-up is checked on a run that stops before booting.

const CLI = join(process.cwd(), 'dist', 'cli', 'main.js');
const BOOT_TEST_MS = 400_000;

interface CliRun {
  readonly child: ChildProcess;
  readonly stdout: () => Buffer;
  readonly stderr: () => string;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

function startCli(args: readonly string[]): CliRun {
  const child = spawn(process.execPath, [CLI, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  const out: Buffer[] = [];
  let err = '';
  child.stdout?.on('data', (chunk: Buffer) => out.push(chunk));
  child.stderr?.on('data', (chunk: Buffer) => {
    err += chunk.toString('latin1');
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done) =>
    child.on('close', (code, signal) => done({ code, signal })),
  );
  return { child, stdout: () => Buffer.concat(out), stderr: () => err, exited };
}

async function until(what: string, check: () => boolean, limitMs: number): Promise<void> {
  const deadline = Date.now() + limitMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

/** The QEMU processes whose parent is `parent`, with their run directories. */
function qemuChildrenOf(parent: number): { pid: number; runDir: string }[] {
  const found: { pid: number; runDir: string }[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^[0-9]+$/.test(name)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${name}/stat`, 'utf8');
    } catch {
      continue;
    }
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    const argv = processArgv(Number(name));
    if (ppid !== parent || !(argv[0] ?? '').includes('qemu-system-')) continue;
    const pidFile = argv[argv.indexOf('-pidfile') + 1] ?? '';
    found.push({ pid: Number(name), runDir: dirname(pidFile) });
  }
  return found;
}

/** Starts `vm -- sleep 600` and resolves once the command runs, with its QEMU. */
async function sleepingGuest(): Promise<CliRun & { qemu: { pid: number; runDir: string } }> {
  const run = startCli(['vm', '--timeout', '380', '--', 'sleep', '600']);
  await until('the command to start', () => run.stderr().includes('command started'), 300_000);
  const [qemu] = qemuChildrenOf(run.child.pid ?? -1);
  if (qemu === undefined) throw new Error(`no QEMU under the CLI:\n${run.stderr()}`);
  return { ...run, qemu };
}

function gone(pid: number): boolean {
  return processIdentity(pid) === undefined;
}

const sha256 = (data: Buffer) => createHash('sha256').update(data).digest('hex');

describe('the runtime owns its QEMU', () => {
  it(
    'SIGINT and SIGTERM stop the guest, clean up and exit 130 / 143 with one line',
    async () => {
      const [first, second] = await Promise.all([sleepingGuest(), sleepingGuest()]);
      first.child.kill('SIGINT');
      second.child.kill('SIGTERM');
      const [a, b] = await Promise.all([first.exited, second.exited]);
      expect(a).toEqual({ code: 130, signal: null });
      expect(b).toEqual({ code: 143, signal: null });
      for (const [run, name] of [
        [first, 'SIGINT'],
        [second, 'SIGTERM'],
      ] as const) {
        const lines = run.stderr().trimEnd().split('\n');
        expect(lines.at(-1)).toBe(`[vm] interrupted by ${name}: stopped and cleaned up`);
        expect(run.stderr()).not.toMatch(/^\s+at /m); // no stack trace
        expect(run.stdout().length).toBe(0);
        // Zero QEMU processes of that run remain, and its directory is gone.
        expect(gone(run.qemu.pid)).toBe(true);
        expect(existsSync(run.qemu.runDir)).toBe(false);
      }
    },
    BOOT_TEST_MS,
  );

  it(
    "SIGKILL: QEMU dies with the CLI, and the next run removes the dead run's directory",
    async () => {
      const run = await sleepingGuest();
      run.child.kill('SIGKILL');
      expect(await run.exited).toEqual({ code: null, signal: 'SIGKILL' });
      // PR_SET_PDEATHSIG (setpriv) kills QEMU when the CLI dies; nothing else could.
      await until('QEMU to die with its parent', () => gone(run.qemu.pid), 10_000);
      expect(existsSync(run.qemu.runDir)).toBe(true); // left behind: nobody cleaned up

      // The next run cleans up before it even looks for its assets (which fail here).
      const progress: string[] = [];
      const next = await runInGuest({
        command: ['true'],
        kernelDir: join(tmpdir(), 'rdma-interop-no-such-assets'),
        onProgress: (line) => progress.push(line),
      }).catch((e: unknown) => e);
      expect(next).toBeInstanceOf(GuestRuntimeError);
      expect((next as GuestRuntimeError).failure).toBe('assets-missing');
      expect(progress).toContain(`removed the directory of a dead run: ${run.qemu.runDir}`);
      expect(existsSync(run.qemu.runDir)).toBe(false);
    },
    BOOT_TEST_MS,
  );

  it(
    'an aborted AbortSignal stops runInGuest: typed error, QEMU gone',
    async () => {
      const controller = new AbortController();
      let qemu: { pid: number; runDir: string } | undefined;
      const result = runInGuest({
        command: ['sleep', '600'],
        timeoutSeconds: 380,
        signal: controller.signal,
        onOutput: () => {},
        onProgress: (line) => {
          if (!line.includes('command started')) return;
          qemu = qemuChildrenOf(process.pid)[0];
          controller.abort(new Error('test says stop'));
        },
      }).catch((e: unknown) => e);
      const error = await result;
      expect(error).toBeInstanceOf(GuestRuntimeError);
      expect((error as GuestRuntimeError).failure).toBe('aborted');
      expect((error as GuestRuntimeError).message).toContain('test says stop');
      // The abort, not the run's own 380 s limit, ended it: the failure says 'aborted' (a
      // stopwatch would judge the host's load, issue 38).
      expect(qemu).toBeDefined();
      expect(gone(qemu?.pid ?? -1)).toBe(true);
      expect(existsSync(qemu?.runDir ?? '/')).toBe(false);
    },
    BOOT_TEST_MS,
  );
});

describe('the command output and status', () => {
  it(
    'vm keeps stdout and stderr apart, byte for byte, and passes the exit status',
    async () => {
      const dir = mkdtempSync(join(tmpdir(), 'rdma-interop-output-'));
      // Seeded bytes (FuzzRandom, seed 38): a failure repeats with the same content.
      const random = new FuzzRandom(38);
      const bytes = (n: number) =>
        Buffer.from(Uint8Array.from({ length: n }, () => random.below(256)));
      const outBytes = bytes(3 * 1024 * 1024 + 17);
      const errText = `${bytes(512 * 1024).toString('base64')}\n`;
      writeFileSync(join(dir, 'out.bin'), outBytes);
      writeFileSync(join(dir, 'err.txt'), errText);
      const run = startCli([
        'vm',
        '--timeout',
        '380',
        '--',
        'bash',
        '-c',
        `cat ${dir}/out.bin; echo BEGIN-ERR >&2; cat ${dir}/err.txt >&2; echo END-ERR >&2; exit 9`,
      ]);
      expect(await run.exited).toEqual({ code: 9, signal: null });
      // stdout is exactly the command's bytes: no runtime line, no stderr mixed in.
      const stdout = run.stdout();
      expect(stdout.length).toBe(outBytes.length);
      expect(sha256(stdout)).toBe(sha256(outBytes));
      // stderr has the command's stderr intact, and the runtime's own lines.
      const stderr = run.stderr();
      const between = /BEGIN-ERR\n([\s\S]*)END-ERR\n/.exec(stderr);
      expect(between?.[1]).toBe(errText);
      expect(stderr).toMatch(/^\[vm\] \[devices\] devices: rxe0 siw0$/m);
      expect(stderr).toMatch(/^\[vm\] guest exited 9 after /m);
    },
    BOOT_TEST_MS,
  );

  it(
    'two runs given the same --share get their own status and output',
    async () => {
      const share = mkdtempSync(join(tmpdir(), 'rdma-interop-shared-'));
      const runOne = (name: string, status: number) => {
        const chunks: Buffer[] = [];
        return runInGuest({
          command: [
            'bash',
            '-c',
            `echo "${name}"; echo "${name}" >"$RDMA_INTEROP_SHARE/${name}"; exit ${status}`,
          ],
          shareDir: share,
          timeoutSeconds: 380,
          onOutput: (c) => chunks.push(c),
          onErrorOutput: () => {},
        }).then((result) => ({ result, output: Buffer.concat(chunks).toString() }));
      };
      const [a, b] = await Promise.all([runOne('alpha', 3), runOne('beta', 4)]);
      expect(a.result.exitCode).toBe(3);
      expect(a.output).toBe('alpha\n');
      expect(b.result.exitCode).toBe(4);
      expect(b.output).toBe('beta\n');
      // The share holds what the commands wrote there, and nothing of the runtime's.
      expect(readdirSync(share).sort()).toEqual(['alpha', 'beta']);
    },
    BOOT_TEST_MS,
  );
});
