import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { dockerRun } from '../../../src/runtime/docker/index.js';
import { dockerPaths } from '../../../src/runtime/docker/paths.js';
import { findProcesses } from '../../../src/runtime/processes.js';
import { differingPaths, resultDifferences } from './compare-results.js';

// The container runtime for real, in the order CI needs it: one image build on the
// project's own dockerd, one guest boot that runs the atomic and immediate-data scenarios
// on rxe0 and siw0 directly in the guest, in a privileged container and in a container
// with only the device nodes, a second (warm) boot whose container exits non-zero, and an
// interrupted command that must leave nothing behind.
// One file, run in order: the tests share the cache's dockerd (one user at a time).

const CLI = join(process.cwd(), 'dist', 'cli', 'main.js');
/** An atomic (FetchAdd) and immediate data (RDMA Write with immediate) on both devices. */
const SELECTION = '{rxe,siw}-{fetch-add,write-imm}';
const paths = dockerPaths(join(process.cwd(), '.cache'));

interface CliRun {
  readonly child: ChildProcess;
  readonly stderr: () => string;
  readonly exited: Promise<number | null>;
}

function startCli(args: readonly string[]): CliRun {
  const child = spawn(process.execPath, [CLI, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let err = '';
  child.stdout?.resume();
  child.stderr?.on('data', (chunk: Buffer) => {
    err += chunk.toString();
  });
  const exited = new Promise<number | null>((done) => child.on('close', (code) => done(code)));
  return { child, stderr: () => err, exited };
}

/** Processes of our engine (dockerd, containerd, shims naming our directory). */
function ourEngineProcesses(): number[] {
  return findProcesses(
    (argv) =>
      /(dockerd|containerd|containerd-shim|runc)/.test(argv[0] ?? '') &&
      argv.some((a) => a.includes(paths.root)),
  );
}

/**
 * Is `pid` a live process? A zombie is not: it has exited and holds nothing; once the CLI
 * that spawned it exits, it waits for whichever init inherits it to reap it.
 */
function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0] !== 'Z';
  } catch {
    return false;
  }
}

function mountsUnderOurDirectory(): string[] {
  return readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .map((line) => line.split(' ')[4] ?? '')
    .filter((p) => p.startsWith(paths.root));
}

describe.sequential('docker: the suite in a container', () => {
  it('builds the image from docker/Dockerfile on its own dockerd (local debootstrapped base, lock unchanged), then stops it', async () => {
    const run = startCli(['docker', 'build']);
    const code = await run.exited;
    expect(run.stderr(), run.stderr()).toMatch(
      /built rdma-interop:latest \([0-9a-f]{12}, \d+ MB\)/,
    );
    expect(code).toBe(0);
    // The Dockerfile's own check: npm install used the committed lock unchanged.
    expect(run.stderr()).toMatch(/Step \d+\/\d+ : RUN cp package-lock.json/);
    expect(run.stderr()).toMatch(/dockerd \d+ stopped/);
    expect(ourEngineProcesses()).toEqual([]);
    expect(mountsUnderOurDirectory()).toEqual([]);
    expect(existsSync(paths.pidFile)).toBe(false);
  }, 1_800_000);

  it('runs atomics and immediate data on rxe0 and siw0 in a privileged container in the guest: results equal the guest run field by field, the device-nodes-only container too; reports and pcaps come back', async () => {
    const scratch = mkdtempSync(join(process.cwd(), '.cache', 'docker-test-'));
    try {
      const lines: string[] = [];
      const result = await dockerRun({
        suiteArgs: ['--scenario', SELECTION],
        reportDir: join(scratch, 'container'),
        directReportDir: join(scratch, 'direct'),
        devicesReportDir: join(scratch, 'devices'),
        where: 'guest',
        mode: 'privileged',
        handover: 'disk',
        onOutput: () => {},
        onErrorOutput: (chunk) => lines.push(chunk.toString()),
        onProgress: (line) => lines.push(`${line}\n`),
      });
      const log = lines.join('');
      // The figures docs/docker.md quotes, in the CI log.
      console.log(`docker run in the guest: ${JSON.stringify(result.timings)}`);
      expect(result.exitCode, log).toBe(0);
      expect(result.where).toBe('guest');
      // The guest script stopped its dockerd by pid and unmounted everything it mounted.
      expect(result.guestClean, log).toBe(true);
      // The device-nodes-only container (no privileges) ran and exited 0 too.
      expect(result.devicesExitCode, log).toBe(0);
      for (const step of [
        'guest-boot',
        'dockerd-start',
        'handover-guest',
        'container-suite',
        'devices-container-suite',
      ])
        expect(result.timings[step], `${step} timing in:\n${log}`).toBeGreaterThan(0);

      const read = (dir: string) =>
        JSON.parse(readFileSync(join(scratch, dir, 'results.json'), 'utf8'));
      const direct = read('direct');
      const container = read('container');
      const devices = read('devices');
      // The selection ran on both devices, atomics and immediate data, all passing.
      const ids = (doc: { scenarios: { id: string; device: string; family: string }[] }) =>
        doc.scenarios.map((s) => `${s.device}/${s.family}/${s.id}`).sort();
      expect(ids(container)).toEqual(ids(direct));
      expect(new Set(container.scenarios.map((s: { device: string }) => s.device))).toEqual(
        new Set(['rxe0', 'siw0']),
      );
      expect(new Set(container.scenarios.map((s: { family: string }) => s.family))).toEqual(
        new Set(['atomics', 'immediate']),
      );
      expect(container.totals.passed).toBe(container.totals.scenarios);
      // Field by field, timings aside (compare-results.ts says what else may differ).
      expect(resultDifferences(direct, container)).toEqual([]);
      expect(resultDifferences(direct, devices)).toEqual([]);
      // The non-privileged container's results equal the privileged one's.
      expect(resultDifferences(container, devices)).toEqual([]);
      expect(devices.totals).toEqual(container.totals);
      // And the timings did differ somewhere, so the comparison saw two separate runs.
      expect(differingPaths(direct, container).length).toBeGreaterThan(0);
      // `rdma-interop compare` merges the three real reports (guest, privileged container,
      // device-nodes container): every value the same in all three, the host name aside.
      const merged = spawnSync(
        process.execPath,
        [
          'dist/cli/main.js',
          'compare',
          '--json',
          ...['direct', 'container', 'devices'].map((d) => join(scratch, d)),
        ],
        { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 },
      );
      expect(merged.status, merged.stderr).toBe(0);
      const comparison = JSON.parse(merged.stdout) as {
        runs: { label: string }[];
        fields: { field: string; changed: boolean }[];
      };
      expect(comparison.runs.map((r) => r.label)).toEqual(['direct', 'container', 'devices']);
      expect(comparison.fields.length).toBeGreaterThan(0);
      expect(comparison.fields.filter((f) => f.changed)).toEqual([]);
      // The report's pcaps came back with it.
      const pcaps = readdirSync(join(scratch, 'container', 'pcap'));
      expect(pcaps.length).toBeGreaterThan(0);
      for (const f of ['junit.xml', 'report.md'])
        expect(existsSync(join(scratch, 'container', f))).toBe(true);
      expect(ourEngineProcesses()).toEqual([]);
      expect(mountsUnderOurDirectory()).toEqual([]);
    } finally {
      rmSync(scratch, { recursive: true, force: true });
    }
  }, 1_800_000);

  it('a container that exits non-zero (the suite in it refuses a selection that matches nothing): the command exits with its status and names the step and the log; the image and its data disk are reused', async () => {
    const run = startCli([
      'docker',
      'run',
      '--runtime',
      'guest',
      '--',
      '--scenario',
      'no-such-scenario-*',
    ]);
    const code = await run.exited;
    const err = run.stderr();
    // The warm figures docs/docker.md quotes (the table this command prints), in the CI log.
    console.log(`docker run, warm (image and data disk cached):\n${err.slice(err.indexOf('┌'))}`);
    // `rdma-interop run` in the container exits 2 for a selection that matches nothing:
    // the guest passes it on, and so does this command, with the step and the log.
    expect(code, err).toBe(2);
    const line =
      /^rdma-interop docker run: error \(container\): the container exited 2 \(guest; its output: (\S+)\)$/m.exec(
        err,
      );
    expect(line, err).not.toBeNull();
    expect(readFileSync(line?.[1] ?? '-', 'utf8')).toMatch(
      /no scenario matches 'no-such-scenario-\*'/,
    );
    expect(err).not.toMatch(/^\s+at /m);
    // Warm: the image is current (no build at all), the data disk of the same image
    // reused (no mkfs on the host).
    expect(err).not.toMatch(/^\[docker\] docker build /m);
    expect(err).toMatch(/^\[docker\] data disk \S+ \(\d+ MiB, cached\)$/m);
    expect(ourEngineProcesses()).toEqual([]);
    expect(mountsUnderOurDirectory()).toEqual([]);
    expect(existsSync(paths.pidFile)).toBe(false);
  }, 1_800_000);

  it('Ctrl-C while dockerd builds: exit 130, dockerd stopped by its pid, no engine process or mount left, no pid file', async () => {
    // SIGINT as soon as dockerd answers: the command is then importing or building.
    const run = startCli(['docker', 'build']);
    const started = Date.now();
    while (!/dockerd \d+ up/.test(run.stderr()) && Date.now() - started < 120_000) {
      if (run.child.exitCode !== null) break;
      await sleep(20);
    }
    expect(run.stderr()).toMatch(/dockerd (\d+) up/);
    const pid = Number(/dockerd (\d+) up/.exec(run.stderr())?.[1]);
    run.child.kill('SIGINT');
    const code = await run.exited;
    expect(code, run.stderr()).toBe(130);
    expect(run.stderr()).toMatch(/interrupted by SIGINT: dockerd stopped/);
    expect(alive(pid)).toBe(false);
    expect(ourEngineProcesses()).toEqual([]);
    expect(mountsUnderOurDirectory()).toEqual([]);
    expect(existsSync(paths.pidFile)).toBe(false);
    expect(existsSync(join(paths.root, 'owner.json'))).toBe(false);
  }, 300_000);
});
