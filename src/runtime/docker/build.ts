/**
 * `rdma-interop docker build`: the project's image from docker/Dockerfile, on our own
 * dockerd. The base is a build argument: the local Debian bookworm imported from the
 * debootstrapped tar (scripts/setup/docker.sh) by default, since no registry may be
 * reachable; any image name otherwise (e.g. node:26-bookworm-slim where a registry is).
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { RuntimeError } from '../errors.js';
import { packageRoot } from '../paths.js';
import { docker, inspectImage } from './client.js';
import type { Daemon } from './daemon.js';
import { IMAGE_NAME, LOCAL_BASE_IMAGE, logStamp } from './paths.js';
import { spawnLogged } from './spawn-logged.js';

export interface BuildOptions {
  /** The Dockerfile's BASE_IMAGE (default: the local debootstrapped base). */
  readonly baseImage?: string;
  /**
   * PEM files of extra certificate authorities for npm in the build (a TLS-intercepting
   * proxy). Default: this host's local ones, /usr/local/share/ca-certificates/*.crt.
   */
  readonly caCertFiles?: readonly string[];
  readonly tag?: string;
  readonly onProgress?: (line: string) => void;
  readonly signal?: AbortSignal;
}

export interface BuildResult {
  readonly image: string;
  readonly imageId: string;
  readonly sizeBytes: number;
  /** Seconds to create and import the local base (0 when it was there already). */
  readonly baseSeconds: number;
  readonly buildSeconds: number;
  readonly log: string;
}

/** Debian's place for locally added authorities (update-ca-certificates(8)). */
const LOCAL_CA_DIR = '/usr/local/share/ca-certificates';

function localCaFiles(): string[] {
  if (!existsSync(LOCAL_CA_DIR)) return [];
  return readdirSync(LOCAL_CA_DIR, { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.crt'))
    .sort()
    .map((name) => join(LOCAL_CA_DIR, name));
}

/** Imports the local base into the daemon, creating its tar first if needed. */
async function ensureLocalBase(
  daemon: Daemon,
  options: BuildOptions,
  log: string,
): Promise<number> {
  if (inspectImage(daemon, LOCAL_BASE_IMAGE, '{{.Id}}') !== undefined) return 0;
  const progress = options.onProgress ?? (() => {});
  const started = Date.now();
  const signal = options.signal === undefined ? {} : { signal: options.signal };
  const tar = daemon.paths.baseTar;
  if (!existsSync(tar)) {
    progress('no local base yet: debootstrap of Debian bookworm (once, cached)');
    const setup = await spawnLogged(
      'bash',
      [join(packageRoot(), 'scripts', 'setup', 'docker.sh')],
      {
        log,
        onLine: progress,
        ...signal,
      },
    );
    if (setup.aborted) throw new RuntimeError('aborted', 'stopped during the base set-up');
    if (setup.status !== 0 || !existsSync(tar)) {
      throw new RuntimeError(
        'base-image',
        `the base image set-up (scripts/setup/docker.sh) failed:\n${setup.tail.join('\n')}`,
        '',
        log,
      );
    }
  }
  progress(`docker import ${tar} ${LOCAL_BASE_IMAGE}`);
  const imported = await docker(daemon, ['import', tar, LOCAL_BASE_IMAGE], { log, ...signal });
  if (imported.aborted) throw new RuntimeError('aborted', 'stopped during docker import');
  if (imported.status !== 0) {
    throw new RuntimeError(
      'base-image',
      `docker import of the base failed:\n${imported.tail.join('\n')}`,
      '',
      log,
    );
  }
  return (Date.now() - started) / 1000;
}

export async function buildImage(daemon: Daemon, options: BuildOptions = {}): Promise<BuildResult> {
  const progress = options.onProgress ?? (() => {});
  const log = join(daemon.paths.logs, `build-${logStamp()}.log`);
  const base = options.baseImage ?? LOCAL_BASE_IMAGE;
  const baseSeconds = base === LOCAL_BASE_IMAGE ? await ensureLocalBase(daemon, options, log) : 0;
  const image = options.tag ?? IMAGE_NAME;
  const previous = inspectImage(daemon, image, '{{.Id}}');
  const caFiles = options.caCertFiles ?? localCaFiles();
  const caPem = caFiles.map((file) => readFileSync(file, 'utf8').trim()).join('\n');
  if (caFiles.length > 0)
    progress(`trusting ${caFiles.length} extra CA file(s) for npm: ${caFiles.join(', ')}`);
  const started = Date.now();
  progress(`docker build ${image} from ${base} (log: ${log})`);
  let currentStep = '(before the first step)';
  const built = await docker(
    daemon,
    [
      'build',
      // A failed step's container goes too (the data root becomes the guest's disk).
      '--force-rm',
      // apt and npm reach their registries through the host's network; the default build
      // network of a daemon started with --bridge=none has none.
      '--network',
      'host',
      '--build-arg',
      `BASE_IMAGE=${base}`,
      ...(caPem === '' ? [] : ['--build-arg', `EXTRA_CA_CERTS=${caPem}`]),
      '-f',
      join(packageRoot(), 'docker', 'Dockerfile'),
      '-t',
      image,
      packageRoot(),
    ],
    {
      log,
      onLine: (line) => {
        // The legacy builder's progress: one "Step N/M : INSTRUCTION" line per step.
        if (/^Step \d+\/\d+ : /.test(line)) {
          currentStep = line;
          progress(line);
        } else if (/^ ---> Using cache$/.test(line)) {
          progress('  (cached)');
        }
      },
      ...(options.signal === undefined ? {} : { signal: options.signal }),
    },
  );
  if (built.aborted) throw new RuntimeError('aborted', `stopped during ${currentStep}`);
  if (built.status !== 0) {
    throw new RuntimeError(
      'build',
      `docker build failed at ${currentStep}:\n${built.tail.slice(-15).join('\n')}`,
      '',
      log,
    );
  }
  const imageId = inspectImage(daemon, image, '{{.Id}}') ?? '';
  // The previous image (now untagged) goes with its own layers: the data root becomes the
  // guest's disk. Not `docker image prune`: the build stage's image is untagged too, and
  // pruning it would take the build cache with it (every build cold again).
  if (previous !== undefined && previous !== imageId) {
    await docker(daemon, ['rmi', previous], { log });
  }
  const sizeBytes = Number(inspectImage(daemon, image, '{{.Size}}') ?? '0');
  const buildSeconds = (Date.now() - started) / 1000;
  progress(
    `built ${image} (${imageId.slice(7, 19)}, ${(sizeBytes / 1e6).toFixed(0)} MB) in ${buildSeconds.toFixed(1)} s`,
  );
  return { image, imageId, sizeBytes, baseSeconds, buildSeconds, log };
}
