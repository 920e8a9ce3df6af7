import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import picomatch from 'picomatch';
import { expect } from 'vitest';
import { SCENARIOS } from '../../../../src/interop/scenarios.js';
import {
  cli,
  type Entry,
  emptyDir,
  expectDeviceMissing,
  expectRefused,
  expectRuntimeStop,
  fakeAssets,
  fakeImage,
  HOST_DEVICES,
  lines,
  NO_SETUP,
  packetLines,
  ROCE_PCAP,
  SIW_PCAP,
  scenarioIds,
  scratch,
} from './harness.js';

export const RUN_ENTRIES: Readonly<Record<string, Entry>> = {
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
      // With the RFC 7306 series the fixes go on top of it (siw+rfc7306+fixes): the same
      // fixed build is looked for, nothing refused.
      expectRuntimeStop(
        await cli(['run', '--kernel', fakeAssets(), '--fixes', '--siw', 'rfc7306']),
        'rdma-interop run',
        /no fixed build for kernel .*rdma_rxe-fixes\.ko.* missing.*fixes\.sh/,
      );
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
};
