import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import {
  argAfter,
  cli,
  type Entry,
  emptyDir,
  expectNoEngine,
  expectRefused,
  expectRuntimeStop,
  fakeAssets,
  HOST_DEVICES,
  ids,
  lines,
  NO_SETUP,
  qemuCommandLine,
  REPORTS,
  scratch,
} from './harness.js';

export const TOOL_ENTRIES: Readonly<Record<string, Entry>> = {
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
  'rdma-interop probe --minimize': {
    coveredBy:
      'test/host/probe/minimize.test.ts and finding-file.test.ts (the minimizer, the finding files); the replay on a device runs in a guest only',
    accepted: async () => {
      const args = ['probe', '--runtime', 'guest', '--fuzz', '3', '--minimize', '20'];
      args.push('--cache-dir', emptyDir('c'));
      expectRuntimeStop(await cli(args, NO_SETUP), 'rdma-interop probe', /no guest assets/);
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
        '--link',
        '--peer-kernel',
        '--siw',
        '--peer-siw',
        '--faults',
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
            '--link': [],
            '--peer-kernel': ['7.3'],
            '--siw': ['rfc7306'],
            '--peer-siw': ['rfc7306'],
            '--faults': ['drop=0.01'],
          }[option];
          const args = ['ulp', option, ...value];
          // The pair's options act with --link only (refused without it: usage error).
          if (['--peer-kernel', '--siw', '--peer-siw', '--faults'].includes(option))
            args.push('--link');
          if (option !== '--cache-dir') args.push('--cache-dir', emptyDir('c'));
          expectRuntimeStop(await cli(args, NO_SETUP), 'rdma-interop ulp', /no guest kernel/);
        },
      } satisfies Entry,
    ]),
  ),
};
