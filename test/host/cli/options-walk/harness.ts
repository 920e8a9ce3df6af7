/**
 * The harness of the command-line walk (../options-walk.test.ts): the built CLI as a child
 * process with a scratch cache, the stand-ins that stop set-up and the guest before any
 * work, and the forms a refusal, a missing device and a runtime stop take.
 */
import { execFile } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';

export const CLI = join(process.cwd(), 'dist', 'cli', 'main.js');
export const SIW_PCAP = 'test/fixtures/siw-rping.pcap';
export const ROCE_PCAP = 'test/fixtures/link/link-rxe-read.pcap';

/** This host's RDMA devices (none where the walk usually runs: they live in the guest). */
export const HOST_DEVICES = existsSync('/sys/class/infiniband')
  ? readdirSync('/sys/class/infiniband').sort()
  : [];

export const scratch = mkdtempSync(join(tmpdir(), 'rdma-interop-options-walk-'));
/** The scratch directory goes at the end of the walk (the test file's afterAll). */
export const removeScratch = () => rmSync(scratch, { recursive: true, force: true });

/** Stand-ins that make set-up stop at its first step: no package installed, not root. */
export const shims = join(scratch, 'shims');
mkdirSync(shims);
writeFileSync(join(shims, 'dpkg-query'), '#!/bin/sh\nexit 1\n', { mode: 0o755 });
writeFileSync(join(shims, 'id'), '#!/bin/sh\necho 1000\n', { mode: 0o755 });
export const NO_SETUP = { PATH: `${shims}:${process.env.PATH ?? ''}` };

/** A fresh, empty directory under the scratch directory. */
let dirs = 0;
export function emptyDir(name: string): string {
  const dir = join(scratch, `${name}-${++dirs}`);
  mkdirSync(dir);
  return dir;
}

/** Guest assets that findGuestAssets accepts (`.complete`) but that never boot here. */
export function fakeAssets(): string {
  const dir = emptyDir('fake-assets');
  writeFileSync(join(dir, '.complete'), '6.1.999-1 fake\n');
  return dir;
}

/** A file with an x86 boot header and a version string, as a bzImage has (never boots). */
export function fakeImage(release: string): string {
  const file = join(emptyDir('image'), 'bzImage');
  const image = Buffer.alloc(0x1000);
  image.write('HdrS', 0x202, 'latin1');
  image.writeUInt16LE(0x600 - 0x200, 0x20e);
  image.write(`${release} (fake@example) #1 SMP`, 0x600, 'latin1');
  writeFileSync(file, image);
  return file;
}

/** A report directory with one results.json (test/fixtures/reports, as the docs use). */
export const REPORTS = ['guest-6.1', 'guest-7.3', 'lab-container'].map((d) =>
  join('test', 'fixtures', 'reports', d),
);

export interface Run {
  readonly status: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** The built CLI as a child process (asynchronous: the cases run a few at a time). */
export function cli(args: readonly string[], env: NodeJS.ProcessEnv = {}): Promise<Run> {
  return new Promise((done) => {
    execFile(
      process.execPath,
      [CLI, ...args],
      {
        encoding: 'utf8',
        // A case never touches a real cache: one that wants a cache names its own.
        env: { ...process.env, RDMA_INTEROP_CACHE: join(scratch, 'no-cache'), ...env },
        timeout: 60_000,
      },
      (error, stdout, stderr) =>
        done({
          status: error === null ? 0 : typeof error.code === 'number' ? error.code : null,
          stdout,
          stderr,
        }),
    );
  });
}

export const lines = (text: string) => text.replace(/\n$/, '').split('\n');
/** decode's packet lines: its output without the closing `pcap: ...` counts. */
export const packetLines = (r: Run) => lines(r.stdout).filter((l) => !l.startsWith('pcap: '));
export const ids = (r: Run) => lines(r.stdout).map((l) => l.split('\t')[0]);

/** A usage error: exit 2, nothing on stdout, one line in the one form. */
export function expectRefused(r: Run, command: string, message: RegExp): void {
  expect(r.status, r.stderr).toBe(2);
  expect(r.stdout).toBe('');
  expect(lines(r.stderr)).toHaveLength(1);
  expect(r.stderr).toMatch(new RegExp(`^${command}: error: `));
  expect(r.stderr).toMatch(message);
  expect(r.stderr).toMatch(new RegExp(`\\(see '${command} --help'\\)\\n$`));
}

/** A run on this host's device `device`, which is not here: exit 1, one error line naming it. */
export function expectDeviceMissing(r: Run, command: string, device: string): void {
  expect(r.status, r.stderr).toBe(1);
  expect(r.stdout).toBe('');
  expect(r.stderr).toMatch(new RegExp(`^${command}: error: .*${device}`));
  expect(r.stderr).not.toMatch(/\n\s+at /);
}

/** The runtime was reached and stopped before a boot: exit 125, its error line. */
export function expectRuntimeStop(r: Run, command: string, message: RegExp): void {
  expect(r.status, r.stderr).toBe(125);
  expect(r.stderr).toMatch(new RegExp(`^${command}: error \\([a-z-]+\\): `, 'm'));
  expect(r.stderr).toMatch(message);
  expect(r.stderr).not.toMatch(/booting Debian kernel/);
}

/**
 * The command line the guest's QEMU gets from `vm <args> -- true`: a stand-in QEMU (first
 * on PATH) writes its arguments and exits 1, so nothing boots; the runtime says so (125).
 */
export async function qemuCommandLine(args: readonly string[]): Promise<string[]> {
  const bin = emptyDir('qemu');
  const file = join(bin, 'arguments');
  writeFileSync(
    join(bin, 'qemu-system-x86_64'),
    `#!/bin/sh\nprintf '%s\\n' "$@" > '${file}'\nexit 1\n`,
    { mode: 0o755 },
  );
  const r = await cli(['vm', ...args, '--kernel', fakeAssets(), '--', 'true'], {
    PATH: `${bin}:${process.env.PATH ?? ''}`,
    RDMA_INTEROP_CACHE: emptyDir('c'),
  });
  expect(r.status, r.stderr).toBe(125);
  expect(r.stderr).toMatch(/^rdma-interop vm: error \(boot-failed\): qemu exited with status 1/m);
  return lines(readFileSync(file, 'utf8'));
}

/** The argument after `flag` in a command line. */
export function argAfter(argv: readonly string[], flag: string): string | undefined {
  const at = argv.indexOf(flag);
  return at < 0 ? undefined : argv[at + 1];
}

/** What the walk checks for one command x option pair. */
export type Entry =
  /** The effect, seen here without a guest. */
  | { readonly effect: () => Promise<void> }
  /** Refused whatever the value (a renamed option). */
  | { readonly refused: () => Promise<void> }
  /**
   * The effect shows only in a guest or with a Docker engine: `coveredBy` names the test
   * that sees it; `accepted` shows here that the option reaches the runtime unrefused.
   */
  | { readonly coveredBy: string; readonly accepted: () => Promise<void> };

/** A value each validated option refuses; `free` says why an option takes any value. */
export type ValueCheck = { readonly bad: string } | { readonly free: string };

export const scenarioIds = (r: Run) => ids(r).filter((id) => id !== undefined);

/** docker with no engine (RDMA_INTEROP_DOCKERD names no program): refused at its start. */
export async function expectNoEngine(args: readonly string[]): Promise<void> {
  const r = await cli(args, { RDMA_INTEROP_DOCKERD: join(scratch, 'no-such-dockerd') });
  const command = `rdma-interop docker ${args[1]}`;
  expectRuntimeStop(r, command, /error \(engine-missing\)/);
}
