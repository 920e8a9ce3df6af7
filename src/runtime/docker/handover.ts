/**
 * Getting the image from the host's dockerd into the guest's. Two ways, both measured
 * (docs/docker.md has the figures):
 *   disk: the host's data root, with its dockerd stopped, copied into an ext4 image by
 *         `mkfs.ext4 -d` and attached to the guest as a copy-on-write virtio disk, which
 *         the guest's dockerd uses as its data root (nothing to unpack in the guest);
 *   load: `docker save` on the host, `docker load` in the guest (it unpacks every layer
 *         under TCG).
 * Both products are cached by image id: a second run of the same image makes nothing.
 */
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { RuntimeError } from '../errors.js';
import { docker } from './client.js';
import type { Daemon } from './daemon.js';
import type { DockerPaths } from './paths.js';
import { spawnLogged } from './spawn-logged.js';

export type Handover = 'disk' | 'load';
export const HANDOVERS: readonly Handover[] = ['disk', 'load'];

/** The faster of the two, measured cold and warm (docs/docker.md has the figures). */
export const DEFAULT_HANDOVER: Handover = 'disk';

/**
 * The hand-over a command uses when none is given: RDMA_INTEROP_DOCKER_HANDOVER if set
 * (disk or load), else the default. Anything else is a clear error, not a silent default.
 */
export function handoverFromEnvironment(env: NodeJS.ProcessEnv = process.env): Handover {
  const value = env.RDMA_INTEROP_DOCKER_HANDOVER;
  if (value === undefined || value === '') return DEFAULT_HANDOVER;
  if ((HANDOVERS as readonly string[]).includes(value)) return value as Handover;
  throw new RuntimeError(
    'handover',
    `RDMA_INTEROP_DOCKER_HANDOVER is '${value}': it must be one of ${HANDOVERS.join(', ')}`,
  );
}

export interface HandoverProduct {
  readonly file: string;
  /** Seconds spent making it (0 when cached). */
  readonly seconds: number;
  readonly bytes: number;
}

function shortId(imageId: string): string {
  return imageId.replace(/^sha256:/, '').slice(0, 12);
}

/** Keeps only `keep` among the hand-over files of its kind (older images' go). */
function pruneOthers(dir: string, keep: string, prefix: string): void {
  for (const name of readdirSync(dir)) {
    if (name.startsWith(prefix) && join(dir, name) !== keep)
      rmSync(join(dir, name), { force: true });
  }
}

function duBytes(dir: string): number {
  let total = 0;
  const walk = (path: string) => {
    for (const entry of readdirSync(path, { withFileTypes: true })) {
      const full = join(path, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.isFile()) total += statSync(full).size;
    }
  };
  walk(dir);
  return total;
}

/**
 * The data disk for `imageId`: an ext4 image of the whole data root. The daemon MUST be
 * stopped (a consistent copy of its metadata).
 */
export async function dataDisk(
  paths: DockerPaths,
  imageId: string,
  options: { onProgress?: (line: string) => void; signal?: AbortSignal } = {},
): Promise<HandoverProduct> {
  mkdirSync(paths.handover, { recursive: true });
  const file = join(paths.handover, `data-root-${shortId(imageId)}.ext4`);
  if (existsSync(file)) return { file, seconds: 0, bytes: statSync(file).size };
  const started = Date.now();
  const content = duBytes(paths.dataRoot);
  // Room for ext4's own metadata and inodes, plus what the guest's dockerd writes
  // (container layers; the file itself is attached copy-on-write, so never grows).
  const sizeMiB = Math.ceil((content * 1.3) / 2 ** 20) + 512;
  options.onProgress?.(
    `mkfs.ext4 -d of the data root (${(content / 1e6).toFixed(0)} MB) into a ${sizeMiB} MiB disk image`,
  );
  const partial = `${file}.partial`;
  rmSync(partial, { force: true });
  const log = join(paths.logs, 'handover.log');
  const made = await spawnLogged(
    'mkfs.ext4',
    ['-q', '-F', '-L', 'rdma-docker', '-d', paths.dataRoot, partial, `${sizeMiB}M`],
    { log, ...(options.signal === undefined ? {} : { signal: options.signal }) },
  );
  if (made.aborted) {
    rmSync(partial, { force: true });
    throw new RuntimeError('aborted', 'stopped during mkfs.ext4');
  }
  if (made.status !== 0) {
    rmSync(partial, { force: true });
    throw new RuntimeError('handover', `mkfs.ext4 -d failed:\n${made.tail.join('\n')}`, '', log);
  }
  renameSync(partial, file);
  pruneOthers(paths.handover, file, 'data-root-');
  return { file, seconds: (Date.now() - started) / 1000, bytes: statSync(file).size };
}

/** `docker save` of the image into a tar the guest loads (over the 9p host root). */
export async function savedImage(
  daemon: Daemon,
  image: string,
  imageId: string,
  options: { onProgress?: (line: string) => void; signal?: AbortSignal } = {},
): Promise<HandoverProduct> {
  const paths = daemon.paths;
  mkdirSync(paths.handover, { recursive: true });
  const file = join(paths.handover, `image-${shortId(imageId)}.tar`);
  if (existsSync(file)) return { file, seconds: 0, bytes: statSync(file).size };
  const started = Date.now();
  options.onProgress?.(`docker save ${image}`);
  const partial = `${file}.partial`;
  const log = join(paths.logs, 'handover.log');
  const saved = await docker(daemon, ['save', '-o', partial, image], {
    log,
    ...(options.signal === undefined ? {} : { signal: options.signal }),
  });
  if (saved.aborted) {
    rmSync(partial, { force: true });
    throw new RuntimeError('aborted', 'stopped during docker save');
  }
  if (saved.status !== 0) {
    rmSync(partial, { force: true });
    throw new RuntimeError('handover', `docker save failed:\n${saved.tail.join('\n')}`, '', log);
  }
  renameSync(partial, file);
  pruneOthers(paths.handover, file, 'image-');
  return { file, seconds: (Date.now() - started) / 1000, bytes: statSync(file).size };
}
