/**
 * Every command x option pair of the command line, taken from the program's own
 * definition (src/cli/program.ts), so an option added without an entry here fails: each
 * either shows its effect in the output before any guest boots (the guest's QEMU command
 * line, from a stand-in QEMU), or is refused as a usage error (exit 2, one line), or
 * names the test that sees its effect (in a guest, or with a Docker engine) and is shown
 * here to reach the runtime unrefused. Then the combinations that would leave an option
 * doing nothing are refused, every option whose value can be wrong is checked by
 * commander's own validation (options-request.test.ts: every option of a command that runs
 * itself elsewhere, parsed, requested and parsed there). No guest boots: set-up stops at its first
 * step (stand-in `dpkg-query` and `id`: packages missing, not root), and guest assets are
 * empty or fake directories. The cases run a few at a time (it.concurrent). On a host
 * with RDMA devices (scripts/test.sh runs there too) the entries whose effect here is a
 * run on this host's devices check the form they take there, or are skipped with the
 * reason (NEEDS_NO_DEVICES, listed in test/expected-skips.json).
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
import type { Command, Option } from 'commander';
import picomatch from 'picomatch';
import { afterAll, describe, expect, it } from 'vitest';
import { commandName } from '../../../src/cli/errors.js';
import { allCommands, buildProgram } from '../../../src/cli/program.js';
import { SCENARIOS } from '../../../src/interop/scenarios.js';

const CLI = join(process.cwd(), 'dist', 'cli', 'main.js');
const SIW_PCAP = 'test/fixtures/siw-rping.pcap';
const ROCE_PCAP = 'test/fixtures/link/link-rxe-read.pcap';

/** This host's RDMA devices (none where the walk usually runs: they live in the guest). */
const HOST_DEVICES = existsSync('/sys/class/infiniband')
  ? readdirSync('/sys/class/infiniband').sort()
  : [];

const scratch = mkdtempSync(join(tmpdir(), 'rdma-interop-options-walk-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** Stand-ins that make set-up stop at its first step: no package installed, not root. */
const shims = join(scratch, 'shims');
mkdirSync(shims);
writeFileSync(join(shims, 'dpkg-query'), '#!/bin/sh\nexit 1\n', { mode: 0o755 });
writeFileSync(join(shims, 'id'), '#!/bin/sh\necho 1000\n', { mode: 0o755 });
const NO_SETUP = { PATH: `${shims}:${process.env.PATH ?? ''}` };

/** A fresh, empty directory under the scratch directory. */
let dirs = 0;
function emptyDir(name: string): string {
  const dir = join(scratch, `${name}-${++dirs}`);
  mkdirSync(dir);
  return dir;
}

/** Guest assets that findGuestAssets accepts (`.complete`) but that never boot here. */
function fakeAssets(): string {
  const dir = emptyDir('fake-assets');
  writeFileSync(join(dir, '.complete'), '6.1.999-1 fake\n');
  return dir;
}

/** A file with an x86 boot header and a version string, as a bzImage has (never boots). */
function fakeImage(release: string): string {
  const file = join(emptyDir('image'), 'bzImage');
  const image = Buffer.alloc(0x1000);
  image.write('HdrS', 0x202, 'latin1');
  image.writeUInt16LE(0x600 - 0x200, 0x20e);
  image.write(`${release} (fake@example) #1 SMP`, 0x600, 'latin1');
  writeFileSync(file, image);
  return file;
}

/** A report directory with one results.json (test/fixtures/reports, as the docs use). */
const REPORTS = ['guest-6.1', 'guest-7.3', 'lab-container'].map((d) =>
  join('test', 'fixtures', 'reports', d),
);

interface Run {
  readonly status: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** The built CLI as a child process (asynchronous: the cases run a few at a time). */
function cli(args: readonly string[], env: NodeJS.ProcessEnv = {}): Promise<Run> {
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

const lines = (text: string) => text.replace(/\n$/, '').split('\n');
/** decode's packet lines: its output without the closing `pcap: ...` counts. */
const packetLines = (r: Run) => lines(r.stdout).filter((l) => !l.startsWith('pcap: '));
const ids = (r: Run) => lines(r.stdout).map((l) => l.split('\t')[0]);

/** A usage error: exit 2, nothing on stdout, one line in the one form. */
function expectRefused(r: Run, command: string, message: RegExp): void {
  expect(r.status, r.stderr).toBe(2);
  expect(r.stdout).toBe('');
  expect(lines(r.stderr)).toHaveLength(1);
  expect(r.stderr).toMatch(new RegExp(`^${command}: error: `));
  expect(r.stderr).toMatch(message);
  expect(r.stderr).toMatch(new RegExp(`\\(see '${command} --help'\\)\\n$`));
}

/** A run on this host's device `device`, which is not here: exit 1, one error line naming it. */
function expectDeviceMissing(r: Run, command: string, device: string): void {
  expect(r.status, r.stderr).toBe(1);
  expect(r.stdout).toBe('');
  expect(r.stderr).toMatch(new RegExp(`^${command}: error: .*${device}`));
  expect(r.stderr).not.toMatch(/\n\s+at /);
}

/** The runtime was reached and stopped before a boot: exit 125, its error line. */
function expectRuntimeStop(r: Run, command: string, message: RegExp): void {
  expect(r.status, r.stderr).toBe(125);
  expect(r.stderr).toMatch(new RegExp(`^${command}: error \\([a-z-]+\\): `, 'm'));
  expect(r.stderr).toMatch(message);
  expect(r.stderr).not.toMatch(/booting Debian kernel/);
}

/**
 * The command line the guest's QEMU gets from `vm <args> -- true`: a stand-in QEMU (first
 * on PATH) writes its arguments and exits 1, so nothing boots; the runtime says so (125).
 */
async function qemuCommandLine(args: readonly string[]): Promise<string[]> {
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
function argAfter(argv: readonly string[], flag: string): string | undefined {
  const at = argv.indexOf(flag);
  return at < 0 ? undefined : argv[at + 1];
}

/** What the walk checks for one command x option pair. */
type Entry =
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
type ValueCheck = { readonly bad: string } | { readonly free: string };

const scenarioIds = (r: Run) => ids(r).filter((id) => id !== undefined);

const ENTRIES: Readonly<Record<string, Entry>> = {
  'rdma-interop --version': {
    effect: async () => {
      const { version } = JSON.parse(readFileSync('package.json', 'utf8')) as { version: string };
      expect((await cli(['--version'])).stdout).toBe(`${version}\n`);
    },
  },
  'rdma-interop devices --json': {
    effect: async () => {
      // This host's devices as JSON (an empty list on a host without: they live in the
      // guest), where the text output is a table (none at all without devices).
      const r = await cli(['devices', '--json']);
      const json = JSON.parse(r.stdout) as { device: { name: string } }[];
      expect(json.map((d) => d.device.name).sort()).toEqual(HOST_DEVICES);
      const text = (await cli(['devices'])).stdout;
      if (HOST_DEVICES.length === 0) expect(text).toBe('');
      else expect(text).toMatch(/^┌/);
    },
  },
  'rdma-interop run --runtime': {
    effect: async () => {
      // host: this host's devices, never a guest: with none here, nothing to run; with
      // some, a guest's option is refused as idle (no run on this host's devices here).
      if (HOST_DEVICES.length === 0) {
        const r = await cli(['run', '--runtime', 'host', '--scenario', 'rxe-*']);
        expect(r.status).toBe(2);
        expect(r.stderr).toMatch(/^interop: no device rxe0 here; its scenarios are left out$/m);
        expect(r.stderr).not.toMatch(/\[vm\]/);
      } else
        expectRefused(
          await cli(['run', '--runtime', 'host', '--timeout', '60']),
          'rdma-interop run',
          /this run is on this host's devices \(--runtime host\)/,
        );
      // guest: the guest runtime (here stopped at set-up, in an empty cache).
      const g = await cli(
        ['run', '--runtime', 'guest', '--scenario', 'rxe-*', '--cache-dir', emptyDir('c')],
        NO_SETUP,
      );
      expectRuntimeStop(g, 'rdma-interop run', /^\[vm\] no guest assets for kernel line 6\.1/m);
    },
  },
  'rdma-interop run --device': {
    effect: async () => {
      const rows = lines((await cli(['run', '--list', '--device', 'siw0'])).stdout);
      expect(rows.length).toBeGreaterThan(0);
      for (const row of rows) expect(row.split('\t')[1]).toBe('siw0');
    },
  },
  'rdma-interop run --address': {
    effect: async () => {
      // Listed with the device it is for; the address is checked where the device is.
      const r = await cli(['run', '--list', '--device', 'lab_roce', '--address', 'fd37::1']);
      expect(r.status).toBe(0);
      expect(lines(r.stdout).length).toBe(SCENARIOS.length);
    },
  },
  'rdma-interop run --gid-index': {
    effect: async () => {
      const r = await cli(['run', '--list', '--device', 'lab_roce', '--gid-index', '1']);
      expect(r.status).toBe(0);
      expect(lines(r.stdout).length).toBe(SCENARIOS.length);
    },
  },
  'rdma-interop run --scenario': {
    effect: async () => {
      const listed = scenarioIds(await cli(['run', '--list', '--scenario', 'rxe-*atomic*']));
      const isMatch = picomatch('rxe-*atomic*');
      const wanted = SCENARIOS.map((s) => s.id).filter((id) => isMatch(id));
      expect(listed).toEqual(wanted);
      expect(listed.length).toBeGreaterThan(1);
    },
  },
  'rdma-interop run --shard': {
    // h-matrix (issue 36): the partition itself is test/host/cli/shard.test.ts.
    effect: async () => {
      const all = scenarioIds(await cli(['run', '--list', '--scenario', 'rxe-*atomic*']));
      const half = scenarioIds(
        await cli(['run', '--list', '--scenario', 'rxe-*atomic*', '--shard', '2/2']),
      );
      expect(half).toEqual(all.filter((_, i) => i % 2 === 1));
    },
  },
  'rdma-interop run --report': {
    coveredBy:
      'test/host/interop/kernel-matrix.test.ts (guests), test/kernel/siw-rfc7306/suite.test.ts',
    accepted: async () =>
      expectRuntimeStop(
        await cli(['run', '--report', join(scratch, 'r'), '--kernel', emptyDir('k')]),
        'rdma-interop run',
        /no guest kernel at/,
      ),
  },
  'rdma-interop run --strict': {
    coveredBy: 'test/host/interop/kernel-matrix.test.ts (guests: run --kernels all --strict)',
    accepted: async () =>
      expectRuntimeStop(
        await cli(['run', '--strict', '--kernel', emptyDir('k')]),
        'rdma-interop run',
        /no guest kernel at/,
      ),
  },
  'rdma-interop run --coverage': {
    coveredBy: 'test/kernel/coverage/functions.test.ts (the suite with ftrace in the guest)',
    accepted: async () =>
      expectRuntimeStop(
        await cli(['run', '--coverage', '--kernel', emptyDir('k')]),
        'rdma-interop run',
        /no guest kernel at/,
      ),
  },
  'rdma-interop probe --coverage': {
    coveredBy:
      'test/kernel/coverage/functions.test.ts, test/host/interop/probe-kernels.test.ts (guests)',
    accepted: async () =>
      expectRuntimeStop(
        await cli(
          ['probe', '--runtime', 'guest', '--coverage', '--cache-dir', emptyDir('c')],
          NO_SETUP,
        ),
        'rdma-interop probe',
        /no guest assets/,
      ),
  },
  'rdma-interop run --json': {
    effect: async () => {
      const json = JSON.parse(
        (await cli(['run', '--list', '--json', '--device', 'rxe0'])).stdout,
      ) as {
        id: string;
        device: string;
      }[];
      expect(json.map((s) => s.id)).toEqual(
        scenarioIds(await cli(['run', '--list', '--device', 'rxe0'])),
      );
      expect(new Set(json.map((s) => s.device))).toEqual(new Set(['rxe0']));
    },
  },
  'rdma-interop run --list': {
    effect: async () => {
      const r = await cli(['run', '--list']);
      expect(r.status).toBe(0);
      expect(scenarioIds(r)).toEqual(expect.arrayContaining(SCENARIOS.map((s) => s.id)));
    },
  },
  'rdma-interop run --peer': {
    coveredBy: 'test/kernel/interop/peer.test.ts, test/host/interop/peer.test.ts',
    accepted: async () => {
      // Unrefused: the run probes its device here (none of this name on this host).
      const r = await cli(['run', '--device', 'lab_roce', '--peer', '192.0.2.9:4000']);
      expectDeviceMissing(r, 'rdma-interop run', 'lab_roce');
      expectRefused(
        await cli(['run', '--peer', '192.0.2.9']),
        'rdma-interop run',
        /--peer runs one device of this host against the peer: give one --device/,
      );
    },
  },
  ...Object.fromEntries(
    (
      [
        ['--device', []],
        ['--address', ['--address', '192.0.2.1']],
        ['--gid-index', ['--gid-index', '1']],
        ['--listen', ['--listen', '127.0.0.1']],
        ['--port', ['--port', '4000']],
        ['--timeout', ['--timeout', '5']],
      ] as const
    ).map(([option, more]) => [
      `rdma-interop peer serve ${option}`,
      {
        coveredBy: 'test/kernel/interop/peer.test.ts',
        accepted: async () => {
          const r = await cli(['peer', 'serve', '--device', 'lab_roce', ...more]);
          expectDeviceMissing(r, 'rdma-interop peer', 'lab_roce');
        },
      } satisfies Entry,
    ]),
  ),
  'rdma-interop run --link': {
    effect: async () => {
      const listed = scenarioIds(await cli(['run', '--link', '--list']));
      expect(listed.length).toBeGreaterThan(0);
      for (const id of listed) expect(id).toMatch(/^link-/);
    },
  },
  'rdma-interop run --faults': {
    effect: async () => {
      const listed = scenarioIds(await cli(['run', '--link', '--list', '--faults', 'drop=1']));
      expect(listed).toEqual(['link-rxe-retry-exhausted']);
    },
  },
  'rdma-interop run --siw': {
    effect: async () => {
      const stock = scenarioIds(await cli(['run', '--list', '--device', 'siw0']));
      const patched = scenarioIds(await cli(['run', '--list', '--siw', 'rfc7306']));
      expect(patched.length).toBeGreaterThan(0);
      expect(patched.length).toBeLessThan(stock.length);
      for (const id of patched) expect(stock).toContain(id);
      // With --link it sets up guest A's siw0: the patched module and libsiw are looked for.
      expectRuntimeStop(
        await cli(['run', '--link', '--kernel', fakeAssets(), '--siw', 'rfc7306']),
        'rdma-interop run',
        /no patched siw for kernel fake-assets-\d+ /,
      );
    },
  },
  'rdma-interop run --peer-kernel': {
    effect: async () => {
      // Guest A's kernel is found; guest B's is looked for where --peer-kernel says.
      const dir = emptyDir('peer');
      expectRuntimeStop(
        await cli(['run', '--link', '--kernel', fakeAssets(), '--peer-kernel', dir]),
        'rdma-interop run',
        new RegExp(`no guest kernel at ${dir}`),
      );
    },
  },
  'rdma-interop run --peer-siw': {
    effect: async () => {
      // Guest A on the stock siw needs nothing more; guest B's patched siw is looked for.
      expectRuntimeStop(
        await cli(['run', '--link', '--kernel', fakeAssets(), '--peer-siw', 'rfc7306']),
        'rdma-interop run',
        /no patched siw for kernel fake-assets-\d+ /,
      );
    },
  },
  'rdma-interop run --timeout': {
    coveredBy: 'test/host/runtime/lifecycle.test.ts (the same runtime limit, through vm --timeout)',
    accepted: async () =>
      expectRuntimeStop(
        await cli(['run', '--timeout', '0.5', '--kernel', emptyDir('k')]),
        'rdma-interop run',
        /no guest kernel at/,
      ),
  },
  'rdma-interop run --kernel': {
    effect: async () => {
      const dir = emptyDir('k');
      expectRuntimeStop(
        await cli(['run', '--kernel', dir]),
        'rdma-interop run',
        new RegExp(`no guest kernel at ${dir}`),
      );
      // With --link, both guests boot that kernel: the same assets are looked for.
      expectRuntimeStop(
        await cli(['run', '--link', '--kernel', dir]),
        'rdma-interop run',
        new RegExp(`no guest kernel at ${dir}`),
      );
      // ... and a line's guests get its own rdma-core (6.12: 56.1 built from source), as
      // vm and the one-guest run do: a cache with the line's kernel but not that build.
      const cache = emptyDir('c');
      mkdirSync(join(cache, 'guest', 'line-6.12'), { recursive: true });
      writeFileSync(join(cache, 'guest', 'line-6.12', '.complete'), '6.12.999-1 fake\n');
      expectRuntimeStop(
        await cli(['run', '--link', '--kernel', '6.12', '--cache-dir', cache]),
        'rdma-interop run',
        /rdma-core 56\.1 is not built/,
      );
    },
  },
  'rdma-interop run --kernels': {
    effect: async () => {
      const cache = emptyDir('c');
      const r = await cli(['run', '--kernels', '6.1,6.12', '--cache-dir', cache], NO_SETUP);
      expect(r.stdout).toMatch(/^interop: kernel 6\.1: exit status 125$/m);
      expect(r.stdout).toMatch(/^interop: kernel 6\.12: exit status 125$/m);
      expect(r.stderr).toMatch(/no guest assets for kernel line 6\.12 in /);
      expect(r.status).toBe(125);
    },
  },
  'rdma-interop run --cache-dir': {
    effect: async () => {
      const cache = emptyDir('c');
      const r = await cli(['run', '--runtime', 'guest', '--cache-dir', cache], NO_SETUP);
      expectRuntimeStop(
        r,
        'rdma-interop run',
        new RegExp(`no guest assets for kernel line 6\\.1 in ${cache} yet`),
      );
    },
  },
  'rdma-interop decode --profile': {
    effect: async () => {
      expect((await cli(['decode', SIW_PCAP])).stdout).not.toMatch(/wrong-profile/);
      expect((await cli(['decode', '--profile', 'v2-draft', SIW_PCAP])).stdout).toMatch(
        /wrong-profile: RDMAP version 1 is valid in profile 'rfc7306', not 'v2-draft'/,
      );
    },
  },
  'rdma-interop decode --json': {
    effect: async () => {
      const doc = JSON.parse((await cli(['decode', '--json', SIW_PCAP])).stdout) as {
        items: unknown[];
      };
      expect(doc.items.length).toBeGreaterThan(0);
    },
  },
  'rdma-interop decode --summary': {
    effect: async () => {
      const r = await cli(['decode', '--summary', SIW_PCAP]);
      expect(packetLines(r).length).toBeGreaterThan(0);
      for (const line of packetLines(r)) expect(line).toMatch(/^\d+ \d{4}-\d\d-\d\dT/);
    },
  },
  'rdma-interop decode --fields': {
    effect: async () => {
      const r = await cli(['decode', '--fields', 'frame,opcode', SIW_PCAP]);
      expect(lines(r.stdout)[0]).toBe('4\tmpa-request');
      for (const line of packetLines(r)) expect(line.split('\t')).toHaveLength(2);
    },
  },
  'rdma-interop decode --filter': {
    effect: async () => {
      const all = packetLines(await cli(['decode', '--summary', SIW_PCAP]));
      const sends = packetLines(await cli(['decode', '--filter', 'opcode=send', SIW_PCAP]));
      expect(sends.length).toBeGreaterThan(0);
      expect(sends.length).toBeLessThan(all.length);
      for (const line of sends) expect(line).toMatch(/ iWARP send /);
    },
  },
  'rdma-interop decode --header': {
    effect: async () => {
      const r = await cli(['decode', '--header', '--fields', 'frame.number,ip.src', SIW_PCAP]);
      expect(lines(r.stdout)[0]).toBe('frame.number\tip.src');
      expect(lines(r.stdout)[1]).toBe('1\t198.51.100.1');
    },
  },
  'rdma-interop decode --count': {
    effect: async () => {
      const r = await cli(['decode', '--count', '3', '--fields', 'frame.number', SIW_PCAP]);
      expect(r.stdout).toBe('1\n2\n3\n');
    },
  },
  'rdma-interop decode --jsonl': {
    effect: async () => {
      const out = lines((await cli(['decode', '--jsonl', SIW_PCAP])).stdout);
      expect(out.length).toBeGreaterThan(1);
      for (const line of out) expect(() => JSON.parse(line)).not.toThrow();
    },
  },
  'rdma-interop decode --roce-port': {
    effect: async () => {
      expect((await cli(['decode', ROCE_PCAP])).stdout).toMatch(/2 RoCEv2 packets/);
      expect((await cli(['decode', '--roce-port', '1', ROCE_PCAP])).stdout).toMatch(
        /0 RoCEv2 packets.* 2 other frames/,
      );
    },
  },
  'rdma-interop bench --report': {
    effect: async () => {
      // verbs goes to the guest here (no devices), which stops at set-up: no figures,
      // and the file says so.
      const file = join(scratch, 'figures.json');
      await cli(['bench', 'verbs', '--report', file, '--cache-dir', emptyDir('c')], NO_SETUP);
      expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({ figures: [] });
    },
  },
  'rdma-interop bench --json': {
    refused: async () =>
      expectRefused(
        await cli(['bench', '--json', 'x.json']),
        'rdma-interop bench',
        /Renamed: '--json <file>' is now '--report <file>'/,
      ),
  },
  'rdma-interop bench --no-summary': {
    // Hidden: the host's `bench` passes it to its guest run of `bench verbs`.
    coveredBy: 'npm run bench (bench verbs in the guest: the host prints the one summary)',
    accepted: async () =>
      expectRuntimeStop(
        await cli(['bench', 'verbs', '--no-summary', '--cache-dir', emptyDir('c')], NO_SETUP),
        'rdma-interop bench',
        /packages-missing/,
      ),
  },
  'rdma-interop bench --cache-dir': {
    effect: async () => {
      if (HOST_DEVICES.length > 0) {
        // bench verbs runs on this host's devices: the guest's cache is refused as idle.
        expectRefused(
          await cli(['bench', 'verbs', '--cache-dir', emptyDir('c')]),
          'rdma-interop bench',
          /--cache-dir holds the guest that bench verbs runs in on a host without RDMA devices; this host has devices/,
        );
        return;
      }
      const cache = emptyDir('c');
      expectRuntimeStop(
        await cli(['bench', 'verbs', '--cache-dir', cache], NO_SETUP),
        'rdma-interop bench',
        new RegExp(`no guest assets for kernel line 6\\.1 in ${cache} yet`),
      );
    },
  },
  'rdma-interop run --modules': {
    effect: async () => {
      // With a bzImage: its modules tree is read for the image's release (none here).
      const mods = emptyDir('m');
      expectRuntimeStop(
        await cli(['run', '--kernel', fakeImage('6.1.999-walk'), '--modules', mods]),
        'rdma-interop run',
        new RegExp(`--modules ${mods} has no lib/modules/6\\.1\\.999-walk`),
      );
    },
  },
  'rdma-interop vm --modules': {
    effect: async () => {
      const mods = emptyDir('m');
      expectRuntimeStop(
        await cli(['vm', '--kernel', fakeImage('6.1.999-walk'), '--modules', mods, '--', 'true']),
        'rdma-interop vm',
        new RegExp(`--modules ${mods} has no lib/modules/6\\.1\\.999-walk`),
      );
      // A bzImage without its modules is refused before anything is made.
      expectRuntimeStop(
        await cli(['vm', '--kernel', fakeImage('6.1.999-walk'), '--', 'true']),
        'rdma-interop vm',
        /is a kernel image: name its modules with --modules/,
      );
    },
  },
  'rdma-interop vm --siw': {
    effect: async () => {
      // rfc7306: the patched module and libsiw are looked for beside the kernel's assets.
      expectRuntimeStop(
        await cli(['vm', '--kernel', fakeAssets(), '--siw', 'rfc7306', '--', 'true']),
        'rdma-interop vm',
        /no patched siw for kernel .*siw-rfc7306\.ko.* missing/,
      );
    },
  },
  'rdma-interop vm --fixes': {
    effect: async () => {
      // The fixed modules and rdma-core are looked for beside the kernel's assets (issue 33).
      expectRuntimeStop(
        await cli(['vm', '--kernel', fakeAssets(), '--fixes', '--', 'true']),
        'rdma-interop vm',
        /no fixed build for kernel .*rdma_rxe-fixes\.ko.* missing.*fixes\.sh/,
      );
    },
  },
  'rdma-interop run --fixes': {
    effect: async () => {
      // The guest is set up on the fixed build: its modules and rdma-core are looked for
      // beside the kernel's assets (issue 33), as for vm --fixes.
      expectRuntimeStop(
        await cli(['run', '--kernel', fakeAssets(), '--fixes']),
        'rdma-interop run',
        /no fixed build for kernel .*rdma_rxe-fixes\.ko.* missing.*fixes\.sh/,
      );
      // One siw module at a time: the RFC 7306 one is refused with it.
      const both = await cli(['run', '--fixes', '--siw', 'rfc7306']);
      expect(both.status).toBe(2);
      expect(both.stderr).toMatch(/--fixes runs siw0 on the fixed stock siw/);
    },
  },
  'rdma-interop probe --fixes': {
    effect: async () => {
      // One siw module at a time, as run --fixes; on this host's devices only where they
      // are on the fixed build (RDMA_INTEROP_FIXES=1).
      const rfc = await cli(['probe', '--fixes', '--siw', 'rfc7306']);
      expect(rfc.status).toBe(2);
      expect(rfc.stderr).toMatch(/--fixes runs siw0 on the fixed stock siw/);
      const here = await cli(['probe', '--runtime', 'host', '--fixes'], { RDMA_INTEROP_FIXES: '' });
      expect(here.status).toBe(2);
      expect(here.stderr).toMatch(/not on the fixed build/);
    },
  },
  'rdma-interop compare --out': {
    effect: async () => {
      const out = join(emptyDir('compare'), 'out');
      const r = await cli(['compare', '--out', out, ...REPORTS]);
      expect(r.status, r.stderr).toBe(0);
      expect(readFileSync(join(out, 'comparison.md'), 'utf8')).toBe(r.stdout);
      expect(existsSync(join(out, 'comparison.json'))).toBe(true);
    },
  },
  'rdma-interop compare --json': {
    effect: async () => {
      const r = await cli(['compare', '--json', ...REPORTS]);
      const doc = JSON.parse(r.stdout) as { runs: { label: string }[] };
      expect(doc.runs.map((x) => x.label)).toEqual(['guest-6.1', 'guest-7.3', 'lab-container']);
      expect((await cli(['compare', ...REPORTS])).stdout).toMatch(/^# Interop results compared/);
    },
  },
  'rdma-interop findings --kernels': {
    effect: async () => {
      const r = await cli(['findings', '--kernels', '7.3', '--format', 'json']);
      expect(r.status, r.stderr).toBe(0);
      expect((JSON.parse(r.stdout) as { lines: string[] }).lines).toEqual(['7.3']);
    },
  },
  'rdma-interop findings --report': {
    effect: async () => {
      const out = join(emptyDir('findings'), 'out');
      const r = await cli(['findings', '--report', out]);
      expect(r.status, r.stderr).toBe(0);
      expect(readFileSync(join(out, 'findings.md'), 'utf8')).toBe(r.stdout);
      expect(existsSync(join(out, 'findings.html'))).toBe(true);
    },
  },
  'rdma-interop findings --format': {
    effect: async () => {
      expect((await cli(['findings', '--format', 'html'])).stdout).toMatch(/^<!DOCTYPE html>/);
      expect((await cli(['findings'])).stdout).toMatch(/^# findings: /);
    },
  },
  'rdma-interop findings --results': {
    effect: async () => {
      // guest-6.1's run explained a difference by siw-query-qp-state.
      const r = await cli(['findings', '--results', REPORTS[0] as string, '--format', 'md']);
      expect(r.status, r.stderr).toBe(0);
      expect(r.stdout).toMatch(
        /`siw-query-qp-state` .*\| present, fixed here \(stock run: seen\) \|/,
      );
    },
  },
  'rdma-interop findings --fixed-results': {
    effect: async () => {
      const r = await cli(['findings', '--fixed-results', REPORTS[1] as string]);
      expect(r.status, r.stderr).toBe(0);
      expect(r.stdout).toMatch(/\| present \(fixed run: gone\) \|/);
    },
  },
  'rdma-interop wireshark-plugin --install': {
    effect: async () => {
      // Without it the plugin goes to stdout; with it, into the plugin folder (HOME's).
      const printed = await cli(['wireshark-plugin']);
      expect(printed.stdout).toMatch(/^-- /);
      const home = emptyDir('home');
      const r = await cli(['wireshark-plugin', '--install'], { HOME: home });
      expect(r.status, r.stderr).toBe(0);
      const path = join(home, '.local', 'lib', 'wireshark', 'plugins', 'rdma-interop.lua');
      expect(lines(r.stdout)[0]).toBe(path);
      expect(readFileSync(path, 'utf8')).toBe(printed.stdout);
    },
  },
  'rdma-interop wireshark-plugin --dir': {
    effect: async () => {
      const dir = join(emptyDir('plugins'), 'here');
      const r = await cli(['wireshark-plugin', '--install', '--dir', dir]);
      expect(lines(r.stdout)[0]).toBe(join(dir, 'rdma-interop.lua'));
      expect(existsSync(join(dir, 'rdma-interop.lua'))).toBe(true);
    },
  },
  'rdma-interop vm --kernel': {
    effect: async () => {
      const r = await cli(
        ['vm', '--kernel', '6.12', '--cache-dir', emptyDir('c'), '--', 'true'],
        NO_SETUP,
      );
      expectRuntimeStop(r, 'rdma-interop vm', /no guest assets for kernel line 6\.12 in /);
    },
  },
  'rdma-interop vm --rdma-core': {
    effect: async () => {
      const r = await cli(['vm', '--kernel', fakeAssets(), '--rdma-core', '9.9', '--', 'true']);
      expectRuntimeStop(r, 'rdma-interop vm', /rdma-core 9\.9 is not built/);
    },
  },
  'rdma-interop vm --timeout': {
    coveredBy: 'test/host/runtime/lifecycle.test.ts (guests: vm --timeout)',
    accepted: async () =>
      expectRuntimeStop(
        await cli(['vm', '--timeout', '0.5', '--kernel', emptyDir('k'), '--', 'true']),
        'rdma-interop vm',
        /no guest kernel at/,
      ),
  },
  'rdma-interop vm --memory': {
    effect: async () => {
      expect(argAfter(await qemuCommandLine(['--accel', 'tcg']), '-m')).toBe('2048M');
      expect(argAfter(await qemuCommandLine(['--accel', 'tcg', '--memory', '1024']), '-m')).toBe(
        '1024M',
      );
    },
  },
  'rdma-interop vm --cpus': {
    effect: async () => {
      expect(argAfter(await qemuCommandLine(['--accel', 'tcg']), '-smp')).toBe('2');
      expect(argAfter(await qemuCommandLine(['--accel', 'tcg', '--cpus', '1']), '-smp')).toBe('1');
    },
  },
  'rdma-interop vm --accel': {
    effect: async () => {
      const tcg = await qemuCommandLine(['--accel', 'tcg']);
      expect([argAfter(tcg, '-accel'), argAfter(tcg, '-cpu')]).toEqual(['tcg,thread=multi', 'max']);
      const kvm = await qemuCommandLine(['--accel', 'kvm']);
      expect([argAfter(kvm, '-accel'), argAfter(kvm, '-cpu')]).toEqual(['kvm', 'host']);
    },
  },
  'rdma-interop vm --share': {
    coveredBy: 'scripts/test.sh (kernel tests write their results through vm --share)',
    accepted: async () =>
      expectRuntimeStop(
        await cli([
          'vm',
          '--share',
          join(scratch, 'share'),
          '--kernel',
          emptyDir('k'),
          '--',
          'true',
        ]),
        'rdma-interop vm',
        /no guest kernel at/,
      ),
  },
  'rdma-interop vm --cache-dir': {
    effect: async () => {
      const cache = emptyDir('c');
      expectRuntimeStop(
        await cli(['vm', '--cache-dir', cache, '--', 'true'], NO_SETUP),
        'rdma-interop vm',
        new RegExp(`no guest assets for kernel line 6\\.1 in ${cache} yet`),
      );
    },
  },
  'rdma-interop setup --kernel': {
    effect: async () => {
      const r = await cli(['setup', '--kernel', '7.3', '--cache-dir', emptyDir('c')], NO_SETUP);
      expect(r.stderr).toMatch(/^\[setup\] cache directory: .*; kernel line 7\.3$/m);
      expectRuntimeStop(r, 'rdma-interop setup', /packages-missing/);
    },
  },
  'rdma-interop setup --cache-dir': {
    effect: async () => {
      const cache = emptyDir('c');
      const r = await cli(['setup', '--cache-dir', cache], NO_SETUP);
      expect(r.stderr).toMatch(
        new RegExp(`^\\[setup\\] cache directory: ${cache}; kernel line 6\\.1$`, 'm'),
      );
    },
  },
  'rdma-interop docker build --base': {
    coveredBy:
      'test/host/docker/failures.test.ts (a base image that exists nowhere: the build fails naming it)',
    accepted: async () => expectNoEngine(['docker', 'build', '--base', 'debian:bookworm']),
  },
  'rdma-interop docker build --cache-dir': {
    coveredBy: 'test/host/docker/failures.test.ts (--cache-dir: nothing claimed in it)',
    accepted: async () => expectNoEngine(['docker', 'build', '--cache-dir', emptyDir('c')]),
  },
  'rdma-interop docker run --runtime': {
    coveredBy:
      'test/host/docker/container.test.ts (docker run --runtime guest, a container in the guest)',
    accepted: async () => expectNoEngine(['docker', 'run', '--runtime', 'guest']),
  },
  'rdma-interop docker run --where': {
    refused: async () =>
      expectRefused(
        await cli(['docker', 'run', '--where', 'guest']),
        'rdma-interop docker run',
        /Renamed: '--where' is now '--runtime <where>'/,
      ),
  },
  'rdma-interop docker run --mode': {
    coveredBy:
      'test/host/docker/container.test.ts (the device-nodes-only container, through the API)',
    accepted: async () =>
      expectNoEngine(['docker', 'run', '--runtime', 'guest', '--mode', 'devices']),
  },
  'rdma-interop docker run --handover': {
    coveredBy:
      'test/host/docker/container.test.ts (the disk hand-over, through the API); failures.test.ts (a wrong one)',
    accepted: async () =>
      expectNoEngine(['docker', 'run', '--runtime', 'guest', '--handover', 'load']),
  },
  'rdma-interop docker run --base': {
    coveredBy:
      'test/host/docker/failures.test.ts (as for docker build: docker run --base builds the image from it first)',
    accepted: async () => expectNoEngine(['docker', 'run', '--runtime', 'guest', '--base', 'x:y']),
  },
  'rdma-interop docker run --timeout': {
    coveredBy: 'test/host/docker/container.test.ts (the guest run, with the default limit)',
    accepted: async () =>
      expectNoEngine(['docker', 'run', '--runtime', 'guest', '--timeout', '0.5']),
  },
  'rdma-interop docker run --cache-dir': {
    coveredBy: 'test/host/docker/failures.test.ts (--cache-dir: nothing claimed in it)',
    accepted: async () =>
      expectNoEngine(['docker', 'run', '--runtime', 'guest', '--cache-dir', emptyDir('c')]),
  },
  'rdma-interop probe --runtime': {
    effect: async () => {
      // host: this host's devices (none here: refused, no guest; with some, a guest's
      // kernel is refused).
      if (!HOST_DEVICES.includes('siw0'))
        expectRefused(
          await cli(['probe', '--runtime', 'host']),
          'rdma-interop probe',
          /no siw0 here/,
        );
      else
        expectRefused(
          await cli(['probe', '--runtime', 'host', '--kernel', '6.1']),
          'rdma-interop probe',
          /cannot run with --runtime host/,
        );
      // guest: the guest runtime (here stopped at set-up, in an empty cache).
      const g = await cli(['probe', '--runtime', 'guest', '--cache-dir', emptyDir('c')], NO_SETUP);
      expectRuntimeStop(g, 'rdma-interop probe', /no guest assets for kernel line 6\.1/);
    },
  },
  'rdma-interop probe --device': {
    effect: async () => {
      const rows = lines((await cli(['probe', '--list', '--device', 'siw0'])).stdout);
      expect(rows.length).toBeGreaterThan(1);
      for (const row of rows) expect(row.split('\t')[1]).toBe('siw');
      const rxe = lines((await cli(['probe', '--list', '--device', 'rxe0'])).stdout);
      expect(rxe.length).toBeGreaterThan(1);
      for (const row of rxe) expect(row.split('\t')[1]).toBe('rxe');
      // nothing selected is refused.
      expectRefused(
        await cli(['probe', '--device', 'rxe0', '--assertion', 'siw-*']),
        'rdma-interop probe',
        /on rxe0/,
      );
    },
  },
  'rdma-interop probe --assertion': {
    effect: async () => {
      const listed = ids(await cli(['probe', '--list', '--assertion', 'siw-mpa-*']));
      expect(listed).toEqual([
        'siw-mpa-length-underflow',
        'siw-mpa-header-split',
        'siw-mpa-length-over-buffer',
        'siw-mpa-markers-not-negotiated',
        'siw-mpa-bad-crc',
      ]);
    },
  },
  'rdma-interop probe --shard': {
    effect: async () => {
      const all = ids(await cli(['probe', '--list', '--assertion', 'siw-mpa-*']));
      const first = ids(
        await cli(['probe', '--list', '--assertion', 'siw-mpa-*', '--shard', '1/2']),
      );
      expect(first).toEqual(all.filter((_, i) => i % 2 === 0));
    },
  },
  'rdma-interop probe --siw': {
    effect: async () => {
      const rows = lines((await cli(['probe', '--list', '--siw', 'rfc7306'])).stdout);
      expect(rows.some((r) => r.startsWith('siw-rfc7306-fetch-add\t'))).toBe(true);
      // --siw picks siw0's module; rxe0's rows are listed as they are.
      expect([...new Set(rows.map((row) => row.split('\t')[1]))]).toEqual(['rxe', 'siw+rfc7306']);
    },
  },
  'rdma-interop probe --benchmark': {
    effect: async () => {
      // Refused with what it cannot mean (a listing, a part of the assertions); no guest.
      expect((await cli(['probe', '--benchmark', '--list'])).status).toBe(2);
      expect((await cli(['probe', '--benchmark', '--assertion', 'siw-*'])).status).toBe(2);
    },
  },
  'rdma-interop probe --list': {
    effect: async () => {
      const rows = lines((await cli(['probe', '--list'])).stdout).map((l) => l.split('\t'));
      expect(rows.map((r) => r.length)).toEqual(rows.map(() => 5));
      expect(rows.map((r) => r[0])).toContain('siw-requester-terminate-on-read');
      expect(rows.map((r) => r[0])).toContain('roce-responder-duplicate-atomic');
    },
  },
  ...Object.fromEntries(
    (
      [
        '--kernel',
        '--kernels',
        '--report',
        '--fuzz',
        '--guided',
        '--seed',
        '--timeout',
        '--cache-dir',
      ] as const
    ).map((option) => [
      `rdma-interop probe ${option}`,
      {
        coveredBy: 'test/host/interop/probe-kernels.test.ts (guests)',
        accepted: async () => {
          const value = {
            '--kernel': '6.1',
            '--kernels': '6.1',
            '--report': join(scratch, 'probe-report'),
            '--fuzz': '3',
            '--guided': '3',
            '--seed': '7',
            '--timeout': '60',
            '--cache-dir': emptyDir('c'),
          }[option];
          // --runtime guest: where auto would be this host's devices, a probe would run.
          const args = ['probe', '--runtime', 'guest', option, value];
          if (option !== '--cache-dir') args.push('--cache-dir', emptyDir('c'));
          expectRuntimeStop(await cli(args, NO_SETUP), 'rdma-interop probe', /no guest assets/);
        },
      } satisfies Entry,
    ]),
  ),
  // rdma-core-tests: with an empty cache every option reaches the action, which stops
  // at the first thing it needs (pyverbs.sh's build), exit 1, one line; the runs themselves
  // are test/host/cli/rdma-core-tests.test.ts (--list on the real cache) and the kernel test.
  ...Object.fromEntries(
    (
      [
        '--kernel',
        '--kernels',
        '--device',
        '--report',
        '--filter',
        '--list',
        '--timeout',
        '--cache-dir',
      ] as const
    ).map((option) => [
      `rdma-interop rdma-core-tests ${option}`,
      {
        coveredBy:
          'test/kernel/rdma-core-tests/rdma-core-tests.test.ts, test/host/cli/rdma-core-tests.test.ts',
        accepted: async () => {
          const value = {
            '--kernel': ['6.12'],
            '--kernels': ['all'],
            '--device': ['siw0'],
            '--report': [join(scratch, 'rct-report')],
            '--filter': ['tests.test_qp.*'],
            '--list': [],
            '--timeout': ['60'],
            '--cache-dir': [emptyDir('c')],
          }[option];
          const r = await cli(['rdma-core-tests', option, ...value]);
          expect(r.status, r.stderr).toBe(1);
          expect(r.stdout).toBe('');
          expect(r.stderr).toMatch(
            /^rdma-interop rdma-core-tests: error: \S+pyverbs-build: pyverbs 56\.1 is not built: run 'bash scripts\/setup\/pyverbs\.sh 56\.1'\n$/,
          );
        },
      } satisfies Entry,
    ]),
  ),
  // ulp: with an empty cache every option reaches the action, which stops at the first
  // line's missing guest assets (before the tools' set-up), exit 125, one line; the runs
  // themselves are test/kernel/ulp/ulp.test.ts and `npm run ulp`.
  ...Object.fromEntries(
    (
      [
        '--workload',
        '--device',
        '--kernel',
        '--kernels',
        '--report',
        '--mib',
        '--files',
        '--timeout',
        '--cache-dir',
      ] as const
    ).map((option) => [
      `rdma-interop ulp ${option}`,
      {
        coveredBy: 'test/kernel/ulp/ulp.test.ts, npm run ulp',
        accepted: async () => {
          const value = {
            '--workload': ['nfs'],
            '--device': ['siw0'],
            '--kernel': ['6.12'],
            '--kernels': ['all'],
            '--report': [join(scratch, 'ulp-report')],
            '--mib': ['2'],
            '--files': ['8'],
            '--timeout': ['60'],
            '--cache-dir': [emptyDir('c')],
          }[option];
          const args = ['ulp', option, ...value];
          if (option !== '--cache-dir') args.push('--cache-dir', emptyDir('c'));
          expectRuntimeStop(await cli(args, NO_SETUP), 'rdma-interop ulp', /no guest kernel/);
        },
      } satisfies Entry,
    ]),
  ),
};

/** docker with no engine (RDMA_INTEROP_DOCKERD names no program): refused at its start. */
async function expectNoEngine(args: readonly string[]): Promise<void> {
  const r = await cli(args, { RDMA_INTEROP_DOCKERD: join(scratch, 'no-such-dockerd') });
  const command = `rdma-interop docker ${args[1]}`;
  expectRuntimeStop(r, command, /error \(engine-missing\)/);
}

/** Per validated option, a value it refuses; per free option, why any value goes. */
const VALUES: Readonly<Record<string, ValueCheck>> = {
  'rdma-interop run --runtime': { bad: 'moon' },
  'rdma-interop run --device': { bad: 'mlx5/0' },
  'rdma-interop run --address': { bad: '192.0.2' },
  'rdma-interop run --gid-index': { bad: '-1' },
  'rdma-interop run --scenario': { free: 'a glob; one that matches nothing is refused (exit 2)' },
  'rdma-interop run --report': { free: 'a directory, created' },
  'rdma-interop run --siw': { bad: 'patched' },
  'rdma-interop run --shard': { bad: '6/5' },
  'rdma-interop run --timeout': { bad: '0' },
  'rdma-interop run --kernel': { bad: '9.9' },
  'rdma-interop run --kernels': { bad: '6.1,9.9' },
  'rdma-interop run --peer-kernel': { bad: '9.9' },
  'rdma-interop run --peer-siw': { bad: 'patched' },
  'rdma-interop run --faults': { bad: 'drop=2' },
  'rdma-interop run --cache-dir': { free: 'a directory, created' },
  'rdma-interop run --peer': { bad: 'lab-b:0' },
  'rdma-interop peer serve --device': { bad: 'mlx5/0' },
  'rdma-interop peer serve --address': { bad: '192.0.2' },
  'rdma-interop peer serve --gid-index': { bad: '-1' },
  'rdma-interop peer serve --listen': { bad: 'lab-b' },
  'rdma-interop peer serve --port': { bad: '0' },
  'rdma-interop peer serve --timeout': { bad: '0' },
  'rdma-interop decode --profile': { bad: 'rfc9999' },
  'rdma-interop decode --fields': { bad: 'frame.number,nope' },
  'rdma-interop decode --filter': { bad: 'infiniband.bth.opcode ==' },
  'rdma-interop decode --count': { bad: '0' },
  'rdma-interop decode --roce-port': { bad: '65536' },
  'rdma-interop bench --report': { free: 'a file, written' },
  'rdma-interop bench --json': { free: 'renamed: refused whatever the value' },
  'rdma-interop bench --cache-dir': { free: 'a directory, created' },
  'rdma-interop vm --kernel': { bad: '6.2' },
  'rdma-interop vm --modules': { free: 'a directory: the runtime names what it lacks' },
  'rdma-interop vm --siw': { bad: 'patched' },
  'rdma-interop run --modules': { free: 'a directory: the runtime names what it lacks' },
  'rdma-interop compare --out': { free: 'a directory, created' },
  'rdma-interop findings --kernels': { bad: '6.1,9.9' },
  'rdma-interop findings --report': { free: 'a directory, created' },
  'rdma-interop findings --format': { bad: 'pdf' },
  'rdma-interop findings --results': { bad: 'no-such-directory' },
  'rdma-interop findings --fixed-results': { bad: 'no-such-directory' },
  'rdma-interop wireshark-plugin --dir': { free: 'a directory, created' },
  'rdma-interop vm --rdma-core': { bad: 'newest' },
  'rdma-interop vm --timeout': { bad: '-1' },
  'rdma-interop probe --runtime': { bad: 'moon' },
  'rdma-interop probe --device': { bad: 'mlx5_0' },
  'rdma-interop probe --assertion': {
    free: 'a glob; one that matches nothing is refused (exit 2)',
  },
  'rdma-interop probe --kernel': { bad: '9.9' },
  'rdma-interop probe --kernels': { bad: '6.1,9.9' },
  'rdma-interop probe --siw': { bad: 'patched' },
  'rdma-interop probe --report': { free: 'a directory, created' },
  'rdma-interop probe --fuzz': { bad: '0' },
  'rdma-interop probe --guided': { bad: '0' },
  'rdma-interop probe --coverage': { bad: 'lines' },
  'rdma-interop probe --seed': { bad: '-1' },
  'rdma-interop probe --shard': { bad: '0/5' },
  'rdma-interop probe --timeout': { bad: '0' },
  'rdma-interop probe --cache-dir': { free: 'a directory, created' },
  'rdma-interop rdma-core-tests --kernel': { bad: '9.9' },
  'rdma-interop rdma-core-tests --kernels': { bad: '6.1,9.9' },
  'rdma-interop rdma-core-tests --device': { bad: 'mlx5_0' },
  'rdma-interop rdma-core-tests --report': { free: 'a directory, created' },
  'rdma-interop rdma-core-tests --filter': { bad: '' },
  'rdma-interop rdma-core-tests --timeout': { bad: '0' },
  'rdma-interop rdma-core-tests --cache-dir': { free: 'a directory, created' },
  'rdma-interop ulp --workload': { bad: 'afs' },
  'rdma-interop ulp --device': { bad: 'mlx5_0' },
  'rdma-interop ulp --kernel': { bad: '9.9' },
  'rdma-interop ulp --kernels': { bad: '6.1,9.9' },
  'rdma-interop ulp --report': { free: 'a directory, created' },
  'rdma-interop ulp --mib': { bad: '0' },
  'rdma-interop ulp --files': { bad: '2000' },
  'rdma-interop ulp --timeout': { bad: '0' },
  'rdma-interop ulp --cache-dir': { free: 'a directory, created' },
  'rdma-interop vm --memory': { bad: '1.5' },
  'rdma-interop vm --cpus': { bad: 'two' },
  'rdma-interop vm --accel': { bad: 'hvf' },
  'rdma-interop vm --share': { free: 'a directory, created' },
  'rdma-interop vm --cache-dir': { free: 'a directory, created' },
  'rdma-interop setup --kernel': { bad: 'current' },
  'rdma-interop setup --cache-dir': { free: 'a directory, created' },
  'rdma-interop docker build --base': { free: 'an image name' },
  'rdma-interop docker build --cache-dir': { free: 'a directory, created' },
  'rdma-interop docker run --runtime': { bad: 'moon' },
  'rdma-interop docker run --where': { free: 'renamed: refused whatever the value' },
  'rdma-interop docker run --mode': { bad: 'root' },
  'rdma-interop docker run --handover': { bad: 'ftp' },
  'rdma-interop docker run --base': { free: 'an image name' },
  'rdma-interop docker run --timeout': { bad: 'soon' },
  'rdma-interop docker run --cache-dir': { free: 'a directory, created' },
};

/** Combinations in which an option would do nothing: each refused, before any work. */
const REFUSED: readonly (readonly [readonly string[], RegExp])[] = [
  [['wireshark-plugin', '--dir', '/tmp'], /--dir goes with --install/],
  [['run', '--modules', '/tmp'], /--modules goes with --kernel/],
  [
    ['probe', '--shard', '1/2', '--fuzz', '3'],
    /'--shard <k>\/<n>' cannot be used with option '--fuzz/,
  ],
  [['run', '--link', '--kernel', '6.1', '--modules', '/tmp'], /--modules goes with --kernel/],
  [['run', '--list', '--modules', '/tmp'], /'--list' cannot be used with option '--modules/],
  [
    ['run', '--link', '--kernels', '6.1'],
    /'--kernels <lines>' cannot be used with option '--link'/,
  ],
  [['run', '--link', '--siw', 'both'], /--link boots each guest on one siw/],
  [['run', '--peer-kernel', '7.3'], /--peer-kernel sets up the second guest of --link/],
  [['run', '--peer-siw', 'stock'], /--peer-siw sets up the second guest of --link/],
  [
    ['run', '--kernels', '6.1', '--peer-kernel', '7.3'],
    /'--kernels <lines>' cannot be used with option '--peer-kernel/,
  ],
  [['run', '--link', '--runtime', 'host'], /--link boots two guests/],
  [['run', '--kernels', '6.1', '--kernel', '6.12'], /cannot be used with option '--kernel/],
  [['run', '--kernels', '6.1', '--json'], /cannot be used with option '--json'/],
  [['run', '--kernels', 'all', '--runtime', 'host'], /--kernels boots a guest per kernel/],
  [['run', '--kernel', '6.12', '--runtime', 'host'], /--kernel picks the guest's kernel/],
  [['run', '--runtime', 'host', '--timeout', '60'], /--timeout limits the guest/],
  [['run', '--runtime', 'host', '--cache-dir', '/tmp'], /--cache-dir holds the guest kernels/],
  [['run', '--json', '--siw', 'both'], /--json prints one document/],
  [['run', '--device', 'a,b', '--peer', 'lab-b'], /--peer runs one device of this host/],
  [['run', '--device', 'a', '--peer', 'lab-b', '--kernel', '6.1'], /--kernel is for a guest/],
  [['run', '--device', 'a', '--peer', 'lab-b', '--link'], /cannot be used with option '--link'/],
  [
    ['run', '--device', 'a', '--peer', 'lab-b', '--runtime', 'guest'],
    /--peer runs on this host's device/,
  ],
  [['run', '--device', 'a', '--peer', 'lab-b', '--siw', 'rfc7306'], /--siw sets up a guest's/],
  [['run', '--scenario', 'no-such-*'], /no scenario matches 'no-such-\*'/],
  ...[
    '--runtime guest',
    '--report r',
    '--strict',
    '--timeout 5',
    '--kernel 6.1',
    '--kernels all',
    '--cache-dir c',
    '--peer-kernel 7.3',
    '--peer-siw stock',
  ].map(
    (option) =>
      [
        ['run', '--list', ...option.split(' ')],
        new RegExp(`'--list' cannot be used with option '${option.split(' ')[0]}`),
      ] as const,
  ),
  [['rdma-core-tests', '--list', '--report', 'r'], /'--list' cannot be used with option '--report/],
  [
    ['rdma-core-tests', '--kernels', '6.1', '--kernel', '6.12'],
    /'--kernels <lines>' cannot be used with option '--kernel/,
  ],
  [['docker', 'run', '--runtime', 'host', '--timeout', '5'], /--timeout is for the guest/],
  [['docker', 'run', '--runtime', 'host', '--handover', 'load'], /--handover is for the guest/],
  [
    ['bench', 'codec', '--cache-dir', '/tmp'],
    /--cache-dir holds the guest that bench verbs runs in/,
  ],
  // The suite's own arguments, refused before an image is built or a guest boots.
  [
    ['docker', 'run', '--', '--bogus'],
    /as 'rdma-interop run --runtime host --bogus': unknown option '--bogus'/,
  ],
  [['docker', 'run', '--', '--kernel', '7.3'], /--kernel picks the guest's kernel/],
  [['docker', 'run', '--', '--list'], /'--list' cannot be used with option '--runtime/],
  [['docker', 'run', '--', '--device', 'mlx5/0'], /bad device name mlx5\/0/],
  [['run', '--address', '192.0.2.1'], /--address and --gid-index choose the address of one device/],
  [
    ['run', '--device', 'rxe0,siw0', '--gid-index', '1'],
    /--address and --gid-index choose the address of one device/,
  ],
  [['docker', 'run', '--', '--help'], /the suite's options are in 'rdma-interop run --help'/],
];

/** Every command x option pair of the program, as `rdma-interop <command> --option`. */
function optionPairs(): { key: string; command: Command; option: Option }[] {
  return allCommands(buildProgram()).flatMap((command) =>
    command.options.map((option) => ({
      key: `${commandName(command)} ${option.long ?? option.flags}`,
      command,
      option,
    })),
  );
}

/**
 * Entries whose case runs `bench verbs`, which on a host with RDMA devices runs there
 * against perftest for minutes (no guest to stop at): skipped on such a host, and listed
 * in test/expected-skips.json with this reason.
 */
const NEEDS_NO_DEVICES: Readonly<Record<string, string>> = {
  'rdma-interop bench --report': 'bench verbs would run on the devices of this host',
  'rdma-interop bench --no-summary': 'bench verbs would run on the devices of this host',
};

describe('every command x option pair of the command line', () => {
  it('has an entry here, and every entry names a pair that exists', () => {
    const keys = optionPairs().map((p) => p.key);
    expect(keys.length).toBeGreaterThan(40);
    expect(Object.keys(ENTRIES).sort()).toEqual([...keys].sort());
  });

  const check = async (_key: string, entry: Entry) => {
    if ('effect' in entry) await entry.effect();
    else if ('refused' in entry) await entry.refused();
    else {
      expect(entry.coveredBy).not.toBe('');
      await entry.accepted();
    }
  };
  const anyHost = Object.entries(ENTRIES).filter(([key]) => NEEDS_NO_DEVICES[key] === undefined);
  const noDevices = Object.entries(ENTRIES).filter(([key]) => NEEDS_NO_DEVICES[key] !== undefined);
  it.concurrent.each(anyHost)('%s', check);
  it.skipIf(HOST_DEVICES.length > 0).each(noDevices)('%s', check);
  it('every entry that needs a host without devices exists, with its reason', () => {
    for (const [key, reason] of Object.entries(NEEDS_NO_DEVICES)) {
      expect(ENTRIES[key], key).toBeDefined();
      expect(reason.length).toBeGreaterThan(10);
    }
  });
});

describe('option values: checked by commander before any work', () => {
  const valued = optionPairs().filter((p) => p.option.required || p.option.optional);

  it('every option that takes a value has a bad value here, or a reason it takes any', () => {
    expect(Object.keys(VALUES).sort()).toEqual(valued.map((p) => p.key).sort());
  });

  it.concurrent.each(valued.filter((p) => 'bad' in (VALUES[p.key] ?? {})))(
    '$key',
    async ({ key, command, option }) => {
      const check = VALUES[key];
      if (check === undefined || !('bad' in check)) throw new Error(`no bad value for ${key}`);
      // commander's own validation: choices, or a parser that throws InvalidArgumentError.
      expect(option.argChoices !== undefined || option.parseArg !== undefined).toBe(true);
      const path = commandName(command).split(' ').slice(1);
      const r = await cli([...path, option.long ?? '', check.bad]);
      expectRefused(
        r,
        commandName(command),
        // Flags are escaped: an optional value (`--coverage [kind]`) has regex brackets.
        new RegExp(
          `option '${option.flags.replace(/[[\]]/g, '\\$&')}' argument '${check.bad}' is invalid`,
        ),
      );
    },
  );
});

describe('combinations in which an option would do nothing are refused', () => {
  it.concurrent.each(REFUSED)('%j', async (args, message) => {
    const command = `rdma-interop ${args[0] === 'docker' ? 'docker run' : args[0]}`;
    expectRefused(await cli(args, NO_SETUP), command, message);
  });
});
