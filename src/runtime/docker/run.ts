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
import { appendFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { RuntimeError } from '../errors.js';
import { hostRdmaDevices, runInGuest } from '../index.js';
import { cacheRoot, packageRoot } from '../paths.js';
import { buildImage } from './build.js';
import { inspectImage } from './client.js';
import { clientEnv, type Daemon, dockerClient, withDaemon } from './daemon.js';
import { DEFAULT_HANDOVER, dataDisk, type Handover, savedImage } from './handover.js';
import { dockerPaths, IMAGE_NAME, logStamp } from './paths.js';

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
  /**
   * Guest only: the kernel modules the guest script checks before dockerd starts
   * (default: its own list; a test names a module no kernel has to see that failure).
   */
  readonly guestModules?: readonly string[];
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
  /** The image's size in bytes (`docker image inspect`). */
  readonly imageBytes: number;
  /** The file with the container's output (the guest's, in the guest). */
  readonly log: string;
  /** Guest only: the guest script's clean-up check (no dockerd, no mounts left). */
  readonly guestClean?: boolean;
  /** Guest only, with devicesReportDir: the device-nodes-only container's exit status. */
  readonly devicesExitCode?: number;
}

/**
 * The image's id and size, building it first when the daemon has none, or when a base
 * image is named (`--base` always takes effect: docker's layer cache makes a rebuild on
 * the same base quick).
 */
async function ensureImage(
  daemon: Daemon,
  options: DockerRunOptions,
  timings: Record<string, number>,
): Promise<{ id: string; bytes: number }> {
  const existing = inspectImage(daemon, IMAGE_NAME, '{{.Id}}');
  if (existing !== undefined && options.baseImage === undefined)
    return { id: existing, bytes: Number(inspectImage(daemon, IMAGE_NAME, '{{.Size}}') ?? '0') };
  options.onProgress?.(
    existing === undefined
      ? `no image ${IMAGE_NAME} yet: building it first`
      : `building ${IMAGE_NAME} from the base image ${options.baseImage ?? ''} first`,
  );
  const built = await buildImage(daemon, {
    ...(options.baseImage === undefined ? {} : { baseImage: options.baseImage }),
    ...(options.onProgress === undefined ? {} : { onProgress: options.onProgress }),
    ...(options.signal === undefined ? {} : { signal: options.signal }),
  });
  if (built.baseSeconds > 0) timings['base-image'] = built.baseSeconds;
  timings['image-build'] = built.buildSeconds;
  return { id: built.imageId, bytes: built.sizeBytes };
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
  const log = join(dockerPaths().logs, `container-${logStamp()}.log`);
  let imageBytes = 0;
  const exitCode = await withDaemon(
    {
      ...(options.onProgress === undefined ? {} : { onProgress: options.onProgress }),
      ...(options.signal === undefined ? {} : { signal: options.signal }),
    },
    async (daemon) => {
      imageBytes = (await ensureImage(daemon, options, timings)).bytes;
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
      const status = await forward(daemon, args, log, options);
      timings['container-suite-host'] = (Date.now() - started) / 1000;
      return status;
    },
  );
  return { exitCode, where: 'host', timings, imageBytes, log };
}

function uverbsNodes(): string[] {
  const dir = '/dev/infiniband';
  if (!existsSync(dir)) return [];
  return hostRdmaDevices().length === 0
    ? []
    : // uverbs0, uverbs1, ...: one per device.
      hostRdmaDevices().map((_, i) => join(dir, `uverbs${i}`));
}

/** The docker client with its output passed through and kept in `log`; resolves with its status. */
function forward(
  daemon: Daemon,
  args: readonly string[],
  log: string,
  options: DockerRunOptions,
): Promise<number> {
  mkdirSync(dirname(log), { recursive: true });
  appendFileSync(log, `$ docker ${args.join(' ')}\n`);
  return new Promise<number>((resolveRun, rejectRun) => {
    const child = spawn(dockerClient(), [...args], {
      env: clientEnv(daemon),
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    child.stdout.on('data', (chunk: Buffer) => {
      appendFileSync(log, chunk);
      (options.onOutput ?? ((c: Buffer) => process.stdout.write(c)))(chunk);
    });
    child.stderr.on('data', (chunk: Buffer) => {
      appendFileSync(log, chunk);
      (options.onErrorOutput ?? ((c: Buffer) => process.stderr.write(c)))(chunk);
    });
    const onAbort = () => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
      } catch {
        // Gone.
      }
    };
    options.signal?.addEventListener('abort', onAbort, { once: true });
    child.on('error', (error) =>
      rejectRun(new RuntimeError('container', `cannot run the docker client: ${error.message}`)),
    );
    child.on('close', (code) => {
      options.signal?.removeEventListener('abort', onAbort);
      if (options.signal?.aborted) {
        rejectRun(new RuntimeError('aborted', 'stopped while the container ran'));
      } else {
        resolveRun(code ?? 1);
      }
    });
  });
}

/** `[docker-guest] timing <name> <seconds> s [(exit <status>)]` lines of the guest script. */
const TIMING_LINE = /^\[docker-guest\] timing (\S+) ([0-9.]+) s(?: \(exit (\d+)\))?/;
/** The guest script's failure line: the step (a ContainerStep) and why; it exits 69. */
const FAILED_LINE = /^\[docker-guest\] failed (guest-kernel|engine-start|handover): (.*)$/;
/** guest-docker.sh's exit status when a step before the container failed (EX_UNAVAILABLE). */
const GUEST_STEP_FAILED = 69;

/** What the guest script's stderr lines said, as they came. */
export interface GuestScriptReport {
  readonly timings: Record<string, number>;
  clean?: boolean;
  failed?: { step: 'guest-kernel' | 'engine-start' | 'handover'; why: string };
  devicesExitCode?: number;
}

/** Reads one `[docker-guest] ...` line into `report`. */
export function readGuestLine(report: GuestScriptReport, line: string): void {
  const timing = TIMING_LINE.exec(line);
  if (timing?.[1] !== undefined && timing[2] !== undefined) {
    report.timings[timing[1]] = Number(timing[2]);
    if (timing[1] === 'devices-container-suite' && timing[3] !== undefined)
      report.devicesExitCode = Number(timing[3]);
  }
  const failed = FAILED_LINE.exec(line);
  if (failed?.[1] !== undefined && failed[2] !== undefined)
    report.failed = {
      step: failed[1] as 'guest-kernel' | 'engine-start' | 'handover',
      why: failed[2],
    };
  if (line.startsWith('[docker-guest] clean:')) report.clean = true;
  if (line.startsWith('[docker-guest] NOT clean:')) report.clean = false;
}

/**
 * The guest's exit as this command's outcome: a step the guest script reported failed
 * (exit 69 with its `failed` line) is a RuntimeError naming that step and the log; any
 * other status is the container's (the suite's own), passed through.
 */
export function guestOutcome(exitCode: number, report: GuestScriptReport, log: string): void {
  if (exitCode === GUEST_STEP_FAILED && report.failed !== undefined)
    throw new RuntimeError(report.failed.step, `in the guest: ${report.failed.why}`, '', log);
}

async function runInGuestContainer(options: DockerRunOptions): Promise<DockerRunResult> {
  const paths = dockerPaths();
  const handover = options.handover ?? DEFAULT_HANDOVER;
  const progress = options.onProgress ?? (() => {});
  const timings: Record<string, number> = {};
  const signal = options.signal === undefined ? {} : { signal: options.signal };
  let imageTar: string | undefined;
  let imageBytes = 0;
  const imageId = await withDaemon({ onProgress: progress, ...signal }, async (daemon) => {
    const image = await ensureImage(daemon, options, timings);
    imageBytes = image.bytes;
    if (handover === 'load') {
      const saved = await savedImage(daemon, IMAGE_NAME, image.id, {
        onProgress: progress,
        ...signal,
      });
      timings['handover-host'] = saved.seconds;
      imageTar = saved.file;
      progress(
        `image tar ${saved.file} (${(saved.bytes / 2 ** 20).toFixed(0)} MiB, ${saved.seconds === 0 ? 'cached' : `saved in ${saved.seconds.toFixed(1)} s`})`,
      );
    }
    return image.id;
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
  const log = join(paths.logs, `guest-${logStamp()}.log`);
  mkdirSync(paths.logs, { recursive: true });
  progress(`the guest's output (dockerd, the container): ${log}`);
  const report: GuestScriptReport = { timings };
  let pending = '';
  let guestRan = false;
  try {
    const started = Date.now();
    const result = await runInGuest({
      command: ['bash', join(packageRoot(), 'docker', 'guest-docker.sh'), ...options.suiteArgs],
      cwd: packageRoot(),
      shareDir: share,
      memoryMiB: options.memoryMiB ?? 4096,
      timeoutSeconds: options.timeoutSeconds ?? 1800,
      setup: 'if-missing',
      // dockerd and runc are the environment here, and the script can run twice.
      retryHung: true,
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
        ...(options.guestModules === undefined
          ? {}
          : { DOCKER_GUEST_MODULES: options.guestModules.join(' ') }),
      },
      ...(disk === undefined ? {} : { dataDisk: disk }),
      onProgress: progress,
      onOutput: (chunk) => {
        appendFileSync(log, chunk);
        (options.onOutput ?? ((c: Buffer) => process.stdout.write(c)))(chunk);
      },
      onErrorOutput: (chunk) => {
        appendFileSync(log, chunk);
        pending += chunk.toString();
        const lines = pending.split('\n');
        pending = lines.pop() ?? '';
        for (const line of lines) readGuestLine(report, line);
        (options.onErrorOutput ?? ((c: Buffer) => process.stderr.write(c)))(chunk);
      },
      ...signal,
    });
    guestRan = true;
    timings.guest = (Date.now() - started) / 1000;
    if (result.devicesReadySeconds !== undefined)
      timings['guest-boot'] = result.devicesReadySeconds;
    guestOutcome(result.exitCode, report, log);
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
      imageBytes,
      log,
      ...(report.clean === undefined ? {} : { guestClean: report.clean }),
      ...(report.devicesExitCode === undefined ? {} : { devicesExitCode: report.devicesExitCode }),
    };
  } catch (error) {
    // The guest runtime's own failure (boot, time-out): this command's step `guest`.
    if (error instanceof RuntimeError && error.failure !== 'aborted' && !guestRan) {
      throw new RuntimeError(
        'guest',
        `the guest could not run the container (${error.failure}): ${error.message}`,
        '',
        log,
      );
    }
    throw error;
  } finally {
    rmSync(share, { recursive: true, force: true });
  }
}
