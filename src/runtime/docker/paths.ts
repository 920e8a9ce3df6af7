import { join } from 'node:path';
import { cacheRoot } from '../paths.js';

/** Where the project's own dockerd and its products live, all under the cache. */
export interface DockerPaths {
  readonly root: string;
  readonly dataRoot: string;
  readonly execRoot: string;
  readonly pidFile: string;
  readonly socket: string;
  readonly daemonLog: string;
  readonly logs: string;
  /** The debootstrapped base's root file system (scripts/setup/docker.sh). */
  readonly baseTar: string;
  /** Hand-over products (data disk images, saved tars), named by image id. */
  readonly handover: string;
}

export function dockerPaths(cache: string = cacheRoot()): DockerPaths {
  const root = join(cache, 'docker');
  return {
    root,
    dataRoot: join(root, 'data-root'),
    execRoot: join(root, 'exec-root'),
    pidFile: join(root, 'dockerd.pid'),
    socket: join(root, 'dockerd.sock'),
    daemonLog: join(root, 'dockerd.log'),
    logs: join(root, 'logs'),
    baseTar: join(root, 'base', 'debian-bookworm-minbase.tar'),
    handover: join(root, 'handover'),
  };
}

/** The image `docker build` tags and `docker run` runs. */
export const IMAGE_NAME = 'rdma-interop:latest';
/** The local base imported from the debootstrapped tar. */
export const LOCAL_BASE_IMAGE = 'rdma-interop-base:bookworm';

/** A log file's time stamp: 2026-11-23T10-02-03-456Z. */
export function logStamp(): string {
  return new Date().toISOString().replace(/[:.]/g, '-');
}
