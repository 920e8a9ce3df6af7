import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  dockerdProgram,
  handoverFromEnvironment,
  RuntimeError,
} from '../../../src/runtime/docker/index.js';
import {
  type GuestScriptReport,
  guestOutcome,
  readGuestLine,
} from '../../../src/runtime/docker/run.js';

// The container runtime's failures, each ending with one clear line that names the step
// and the log, a non-zero exit and no stack trace. Real where a real failure is cheap (the
// guest script's kernel check runs on this host), with fakes where it is not (a dockerd
// that cannot start).

const CLI = join(process.cwd(), 'dist', 'cli', 'main.js');
const scratch = mkdtempSync(join(tmpdir(), 'rdma-docker-fail-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

function cli(args: readonly string[], env: NodeJS.ProcessEnv = {}) {
  return spawnSync(process.execPath, [CLI, ...args], {
    encoding: 'utf8',
    env: { ...process.env, ...env },
    timeout: 60_000,
  });
}

/** A user error prints no stack trace: no `    at fn (file:line)` frame. */
const STACK_FRAME = /^\s+at .+[:(]/m;

describe('docker: failures name their step and log', () => {
  it('the guest script says which module the guest kernel lacks, exits 69 and leaves nothing (run for real on this host)', () => {
    const r = spawnSync('bash', [join(process.cwd(), 'docker', 'guest-docker.sh')], {
      encoding: 'utf8',
      env: {
        ...process.env,
        DOCKER_HANDOVER: 'disk',
        DOCKER_IMAGE: 'rdma-interop:latest',
        DOCKER_REPORT: join(scratch, 'report'),
        DOCKER_GUEST_MODULES: 'rdma_interop_no_such_module overlay',
      },
      timeout: 60_000,
    });
    expect(r.status, r.stderr).toBe(69);
    expect(r.stderr).toMatch(
      /^\[docker-guest\] failed guest-kernel: the guest kernel \S+ lacks module rdma_interop_no_such_module, which dockerd needs$/m,
    );
    expect(r.stderr).toMatch(/\[docker-guest\] clean: no dockerd or containerd left/);
  });

  it("the guest script's failure line becomes a RuntimeError of that step naming the guest's log; another status is the container's, passed through", () => {
    const report: GuestScriptReport = { timings: {} };
    for (const line of [
      '[docker-guest] timing dockerd-start 50.2 s',
      '[docker-guest] failed guest-kernel: the guest kernel 6.1.0-56-amd64 lacks module overlay, which dockerd needs',
      '[docker-guest] clean: no dockerd or containerd left, no mounts under /run/rdma-interop-docker',
    ])
      readGuestLine(report, line);
    expect(report.timings).toEqual({ 'dockerd-start': 50.2 });
    expect(report.clean).toBe(true);
    let thrown: unknown;
    try {
      guestOutcome(69, report, '/cache/docker/logs/guest-x.log');
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(RuntimeError);
    const error = thrown as RuntimeError;
    expect(error.failure).toBe('guest-kernel');
    expect(error.log).toBe('/cache/docker/logs/guest-x.log');
    expect(error.message).toBe(
      'in the guest: the guest kernel 6.1.0-56-amd64 lacks module overlay, which dockerd needs (log: /cache/docker/logs/guest-x.log)',
    );
    // The suite's own non-zero status (a scenario that did not match) is not a runtime failure.
    expect(() => guestOutcome(1, { timings: {} }, 'x.log')).not.toThrow();
    // Nor is 69 without the script's failure line (the suite itself never exits 69, but
    // a status alone proves nothing).
    expect(() => guestOutcome(69, { timings: {} }, 'x.log')).not.toThrow();
  });

  it("reads the device-nodes-only container's exit status from its timing line", () => {
    const report: GuestScriptReport = { timings: {} };
    readGuestLine(report, '[docker-guest] timing devices-container-suite 56.2 s (exit 3)');
    expect(report.devicesExitCode).toBe(3);
    expect(report.timings['devices-container-suite']).toBe(56.2);
  });

  it('RDMA_INTEROP_DOCKER_HANDOVER selects the hand-over; a wrong value is a handover error, not a silent default', () => {
    expect(handoverFromEnvironment({})).toBe('disk');
    expect(handoverFromEnvironment({ RDMA_INTEROP_DOCKER_HANDOVER: 'load' })).toBe('load');
    expect(() => handoverFromEnvironment({ RDMA_INTEROP_DOCKER_HANDOVER: 'ftp' })).toThrow(
      /RDMA_INTEROP_DOCKER_HANDOVER is 'ftp': it must be one of disk, load/,
    );
    const r = cli(['docker', 'run', '--runtime', 'guest'], { RDMA_INTEROP_DOCKER_HANDOVER: 'ftp' });
    expect(r.status, r.stderr).toBe(125);
    expect(r.stderr).toMatch(
      /^rdma-interop docker run: error \(handover\): RDMA_INTEROP_DOCKER_HANDOVER is 'ftp'/m,
    );
    expect(r.stderr).not.toMatch(STACK_FRAME);
  });

  it('an unusable engine (a dockerd that exits at start-up, faked): error (engine-start) quoting its log, exit 125, no stack trace, nothing left', () => {
    const bin = join(scratch, 'bin');
    const cache = join(scratch, 'cache');
    spawnSync('mkdir', ['-p', bin, cache]);
    const fake = join(bin, 'dockerd');
    writeFileSync(
      fake,
      '#!/bin/sh\necho "failed to start daemon: fake engine without a usable kernel" >&2\nexit 1\n',
    );
    chmodSync(fake, 0o755);
    const r = cli(['docker', 'build', '--cache-dir', cache], {
      PATH: `${bin}:${process.env.PATH ?? ''}`,
    });
    expect(r.status, r.stderr).toBe(125);
    const log = join(cache, 'docker', 'dockerd.log');
    expect(r.stderr).toMatch(
      /^rdma-interop docker build: error \(engine-start\): dockerd exited during start-up/m,
    );
    expect(r.stderr).toContain('failed to start daemon: fake engine without a usable kernel');
    expect(r.stderr).toContain(`(log: ${log})`);
    expect(readFileSync(log, 'utf8')).toContain('fake engine');
    expect(r.stderr).not.toMatch(STACK_FRAME);
  });

  it('no Docker engine (RDMA_INTEROP_DOCKERD names no program): error (engine-missing) for build and run, exit 125, no stack trace, nothing started or claimed', () => {
    const cache = join(scratch, 'no-engine-cache');
    const missing = join(scratch, 'no-such-dir', 'dockerd');
    for (const args of [
      ['docker', 'build', '--cache-dir', cache],
      ['docker', 'run', '--runtime', 'guest', '--cache-dir', cache, '--', '--scenario', 'rxe-*'],
    ]) {
      const r = cli(args, { RDMA_INTEROP_DOCKERD: missing });
      expect(r.status, r.stderr).toBe(125);
      // One line, at the start of a line, naming the step and what to do.
      expect(r.stderr.split('\n')).toContain(
        `rdma-interop docker ${args[1]}: error (engine-missing): RDMA_INTEROP_DOCKERD is '${missing}', which is no executable file: point it at a dockerd, or unset it to use the one bash scripts/setup/docker.sh installs`,
      );
      expect(r.stderr).not.toMatch(STACK_FRAME);
      // Refused before anything started: no dockerd was spawned, so no progress line says
      // one was, and the cache holds no claim, pid file or socket.
      expect(r.stderr).not.toMatch(/starting dockerd/);
      expect(existsSync(join(cache, 'docker', 'owner.json'))).toBe(false);
      expect(existsSync(join(cache, 'docker', 'dockerd.pid'))).toBe(false);
    }
    // A file that is there but not executable is no engine either; an executable one is used.
    const notExecutable = join(scratch, 'dockerd-not-executable');
    writeFileSync(notExecutable, '#!/bin/sh\n');
    chmodSync(notExecutable, 0o644);
    expect(() => dockerdProgram({ RDMA_INTEROP_DOCKERD: notExecutable })).toThrow(
      expect.objectContaining({ name: 'RuntimeError', failure: 'engine-missing' }),
    );
    chmodSync(notExecutable, 0o755);
    expect(dockerdProgram({ RDMA_INTEROP_DOCKERD: notExecutable })).toBe(notExecutable);
  });

  it('a failed build (a base image that exists nowhere, for real): error (build) naming the failing Step and the build log, exit 125, dockerd stopped', () => {
    // Its own cache: container.test.ts may own the default one's dockerd meanwhile.
    const cache = join(scratch, 'build-cache');
    const r = cli([
      'docker',
      'build',
      '--cache-dir',
      cache,
      '--base',
      'rdma-interop-no-such-base:none',
    ]);
    expect(r.status, r.stderr).toBe(125);
    const failed =
      /^rdma-interop docker build: error \(build\): docker build failed at (Step \d+\/\d+ : FROM \$\{BASE_IMAGE\} AS build)/m.exec(
        r.stderr,
      );
    expect(failed, r.stderr).not.toBeNull();
    const log = /\(log: (\S+build-[^)]+\.log)\)/.exec(r.stderr)?.[1] ?? '';
    expect(readFileSync(log, 'utf8')).toContain(failed?.[1] ?? '?');
    expect(r.stderr).toMatch(/dockerd \d+ stopped/);
    expect(r.stderr).not.toMatch(STACK_FRAME);
  });
});
