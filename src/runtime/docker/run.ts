/**
 * `rdma-interop docker run`: the interop suite in a container.
 *   - On a host with RDMA devices: a privileged container (or one with only the device
 *     nodes) on our own dockerd, right here.
 *   - On a host without (this project's CI machine): the QEMU guest boots with the image
 *     handed over (handover.ts), starts its own dockerd (docker/guest-docker.sh) and runs
 *     the container there against rxe0 and siw0.
 * The suite's report directory (results.json, junit.xml, report.md, pcaps) comes back
 * to the host in both cases.
 */
import { spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { GuestRuntimeError } from '../errors.js';
import { hostRdmaDevices, runInGuest } from '../index.js';
import { cacheRoot, packageRoot } from '../paths.js';
import { buildImage } from './build.js';
import { inspectImage } from './client.js';
import { clientEnv, type Daemon, dockerClient, withDaemon } from './daemon.js';
import { DockerRuntimeError } from './errors.js';
import { dataDisk, type Handover, savedImage } from './handover.js';
import { dockerPaths, IMAGE_NAME } from './paths.js';

/** privileged: all capabilities (module loads, device creation); devices: only the nodes. */
export type ContainerMode = 'privileged' | 'devices';

export interface DockerRunOptions {
  /** Arguments for the suite (`rdma-interop run ...`), without --report. */
  readonly suiteArgs: readonly string[];
  /** Where the suite's report lands on this host (default: none kept). */
  readonly reportDir?: string;
  readonly where?: 'auto' | 'host' | 'guest';
  readonly mode?: ContainerMode;
  readonly handover?: Handover;
  /** Build argument for the image when it has to be built first. */
  readonly baseImage?: string;
  readonly timeoutSeconds?: number;
  readonly memoryMiB?: number;
  /**
   * Guest only: first run the same suite directly in the guest, its report here (the
   * comparison the tests make between the container and the guest).
   */
  readonly directReportDir?: string;
  /**
   * Guest only: afterwards the same suite in a container with only the device nodes (no
   * privileges), its report here.
   */
  readonly devicesReportDir?: string;
  readonly onOutput?: (chunk: Buffer) => void;
  readonly onErrorOutput?: (chunk: Buffer) => void;
  readonly onProgress?: (line: string) => void;
  readonly signal?: AbortSignal;
}

export interface DockerRunResult {
  readonly exitCode: number;
  readonly where: 'host' | 'guest';
  /** Named durations in seconds (image, hand-over, guest boot, dockerd start, suite). */
  readonly timings: Readonly<Record<string, number>>;
  /** Guest only: the guest script's clean-up check (no dockerd, no mounts left). */
  readonly guestClean?: boolean;
}

/** The image's id, building it first when the daemon has none. */
async function ensureImage(
  daemon: Daemon,
  options: DockerRunOptions,
  timings: Record<string, number>,
): Promise<string> {
  const existing = inspectImage(daemon, IMAGE_NAME, '{{.Id}}');
  if (existing !== undefined) return existing;
  options.onProgress?.(`no image ${IMAGE_NAME} yet: building it first`);
  const built = await buildImage(daemon, {
    ...(options.baseImage === undefined ? {} : { baseImage: options.baseImage }),
    ...(options.onProgress === undefined ? {} : { onProgress: options.onProgress }),
    ...(options.signal === undefined ? {} : { signal: options.signal }),
  });
  timings['image-build'] = built.buildSeconds;
  return built.imageId;
}

export async function dockerRun(options: DockerRunOptions): Promise<DockerRunResult> {
  const where =
    options.where === undefined || options.where === 'auto'
      ? hostRdmaDevices().length > 0
        ? 'host'
        : 'guest'
      : options.where;
  return where === 'host' ? runOnHost(options) : runInGuestContainer(options);
}

function containerArgs(mode: ContainerMode, devices: readonly string[]): string[] {
  const args = ['--rm', '--network', 'host', '--ulimit', 'memlock=-1'];
  if (mode === 'privileged') return [...args, '--privileged', '-v', '/lib/modules:/lib/modules:ro'];
  return [...args, ...devices.flatMap((d) => ['--device', d])];
}

async function runOnHost(options: DockerRunOptions): Promise<DockerRunResult> {
  const timings: Record<string, number> = {};
  const report = options.reportDir === undefined ? undefined : resolve(options.reportDir);
  if (report !== undefined) mkdirSync(report, { recursive: true });
  const exitCode = await withDaemon(
    {
      ...(options.onProgress === undefined ? {} : { onProgress: options.onProgress }),
      ...(options.signal === undefined ? {} : { signal: options.signal }),
    },
    async (daemon) => {
      await ensureImage(daemon, options, timings);
      const nodes = ['/dev/infiniband/rdma_cm', ...uverbsNodes()];
      const args = [
        'run',
        ...containerArgs(options.mode ?? 'privileged', nodes),
        ...(report === undefined ? [] : ['-v', `${report}:/report`]),
        IMAGE_NAME,
        'run',
        '--runtime',
        'host',
        ...(report === undefined ? [] : ['--report', '/report']),
        ...options.suiteArgs,
      ];
      const started = Date.now();
      const status = await forward(daemon, args, options);
      timings['container-suite'] = (Date.now() - started) / 1000;
      return status;
    },
  );
  return { exitCode, where: 'host', timings };
}

function uverbsNodes(): string[] {
  const dir = '/dev/infiniband';
  if (!existsSync(dir)) return [];
  return hostRdmaDevices().length === 0
    ? []
    : // uverbs0, uverbs1, ...: one per device.
      hostRdmaDevices().map((_, i) => join(dir, `uverbs${i}`));
}

/** The docker client with its output passed through; resolves with its status. */
function forward(
  daemon: Daemon,
  args: readonly string[],
  options: DockerRunOptions,
): Promise<number> {
  return new Promise<number>((resolveRun, rejectRun) => {
    const child = spawn(dockerClient(), [...args], {
      env: clientEnv(daemon),
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    child.stdout.on('data', (chunk: Buffer) =>
      (options.onOutput ?? ((c: Buffer) => process.stdout.write(c)))(chunk),
    );
    child.stderr.on('data', (chunk: Buffer) =>
      (options.onErrorOutput ?? ((c: Buffer) => process.stderr.write(c)))(chunk),
    );
    const onAbort = () => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
      } catch {
        // Gone.
      }
    };
    options.signal?.addEventListener('abort', onAbort, { once: true });
    child.on('error', (error) =>
      rejectRun(
        new DockerRuntimeError('container', `cannot run the docker client: ${error.message}`),
      ),
    );
    child.on('close', (code) => {
      options.signal?.removeEventListener('abort', onAbort);
      if (options.signal?.aborted) {
        rejectRun(new DockerRuntimeError('aborted', 'stopped while the container ran'));
      } else {
        resolveRun(code ?? 1);
      }
    });
  });
}

/** `[docker-guest] timing <name> <seconds> s` lines of the guest script. */
const TIMING_LINE = /^\[docker-guest\] timing (\S+) ([0-9.]+) s/;

async function runInGuestContainer(options: DockerRunOptions): Promise<DockerRunResult> {
  const paths = dockerPaths();
  const handover = options.handover ?? 'disk';
  const progress = options.onProgress ?? (() => {});
  const timings: Record<string, number> = {};
  const signal = options.signal === undefined ? {} : { signal: options.signal };
  let imageTar: string | undefined;
  const imageId = await withDaemon({ onProgress: progress, ...signal }, async (daemon) => {
    const id = await ensureImage(daemon, options, timings);
    if (handover === 'load') {
      const saved = await savedImage(daemon, IMAGE_NAME, id, { onProgress: progress, ...signal });
      timings['handover-host'] = saved.seconds;
      imageTar = saved.file;
      progress(
        `image tar ${saved.file} (${(saved.bytes / 2 ** 20).toFixed(0)} MiB, ${saved.seconds === 0 ? 'cached' : `saved in ${saved.seconds.toFixed(1)} s`})`,
      );
    }
    return id;
  });
  let disk: string | undefined;
  if (handover === 'disk') {
    // After the daemon stopped: a consistent copy of its data root.
    const made = await dataDisk(paths, imageId, { onProgress: progress, ...signal });
    timings['handover-host'] = made.seconds;
    disk = made.file;
    progress(
      `data disk ${made.file} (${(made.bytes / 2 ** 20).toFixed(0)} MiB, ${made.seconds === 0 ? 'cached' : `made in ${made.seconds.toFixed(1)} s`})`,
    );
  }

  mkdirSync(join(cacheRoot(), 'docker'), { recursive: true });
  const share = mkdtempSync(join(cacheRoot(), 'docker', 'share-'));
  let guestClean: boolean | undefined;
  let pending = '';
  const onGuestLine = (line: string) => {
    const timing = TIMING_LINE.exec(line);
    if (timing?.[1] !== undefined && timing[2] !== undefined)
      timings[timing[1]] = Number(timing[2]);
    if (line.startsWith('[docker-guest] clean:')) guestClean = true;
    if (line.startsWith('[docker-guest] NOT clean:')) guestClean = false;
  };
  try {
    const started = Date.now();
    const result = await runInGuest({
      command: ['bash', join(packageRoot(), 'docker', 'guest-docker.sh'), ...options.suiteArgs],
      cwd: packageRoot(),
      shareDir: share,
      memoryMiB: options.memoryMiB ?? 4096,
      timeoutSeconds: options.timeoutSeconds ?? 1800,
      setup: 'if-missing',
      env: {
        DOCKER_HANDOVER: handover,
        DOCKER_IMAGE: IMAGE_NAME,
        DOCKER_MODE: options.mode ?? 'privileged',
        DOCKER_REPORT: join(share, 'report'),
        ...(imageTar === undefined ? {} : { DOCKER_IMAGE_TAR: imageTar }),
        ...(options.directReportDir === undefined
          ? {}
          : { DOCKER_DIRECT_REPORT: join(share, 'direct') }),
        ...(options.devicesReportDir === undefined
          ? {}
          : { DOCKER_DEVICES_REPORT: join(share, 'devices') }),
      },
      ...(disk === undefined ? {} : { dataDisk: disk }),
      onProgress: progress,
      ...(options.onOutput === undefined ? {} : { onOutput: options.onOutput }),
      onErrorOutput: (chunk) => {
        pending += chunk.toString();
        const lines = pending.split('\n');
        pending = lines.pop() ?? '';
        for (const line of lines) onGuestLine(line);
        (options.onErrorOutput ?? ((c: Buffer) => process.stderr.write(c)))(chunk);
      },
      ...signal,
    });
    timings.guest = (Date.now() - started) / 1000;
    if (result.devicesReadySeconds !== undefined)
      timings['guest-devices-ready'] = result.devicesReadySeconds;
    const copy = (from: string, to: string | undefined) => {
      if (to !== undefined && existsSync(from)) cpSync(from, resolve(to), { recursive: true });
    };
    copy(join(share, 'report'), options.reportDir);
    copy(join(share, 'direct'), options.directReportDir);
    copy(join(share, 'devices'), options.devicesReportDir);
    return {
      exitCode: result.exitCode,
      where: 'guest',
      timings,
      ...(guestClean === undefined ? {} : { guestClean }),
    };
  } catch (error) {
    if (error instanceof GuestRuntimeError) {
      throw new DockerRuntimeError(
        error.failure === 'aborted' ? 'aborted' : 'guest',
        `the guest could not run the container (${error.failure}): ${error.message}`,
      );
    }
    throw error;
  } finally {
    rmSync(share, { recursive: true, force: true });
  }
}
