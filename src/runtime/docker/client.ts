/** One docker client call against our daemon, with its output in a log. */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { clientEnv, type Daemon, dockerClient } from './daemon.js';
import { type LoggedRun, spawnLogged } from './spawn-logged.js';

export interface DockerCallOptions {
  readonly log?: string;
  readonly onLine?: (line: string) => void;
  readonly signal?: AbortSignal;
}

export function docker(
  daemon: Daemon,
  args: readonly string[],
  options: DockerCallOptions = {},
): Promise<LoggedRun> {
  return spawnLogged(dockerClient(), args, {
    log: options.log ?? join(daemon.paths.logs, 'docker.log'),
    env: clientEnv(daemon),
    ...(options.onLine === undefined ? {} : { onLine: options.onLine }),
    ...(options.signal === undefined ? {} : { signal: options.signal }),
  });
}

/** `docker image inspect` of one field, undefined when there is no such image. */
export function inspectImage(daemon: Daemon, image: string, format: string): string | undefined {
  const result = spawnSync(dockerClient(), ['image', 'inspect', '--format', format, image], {
    env: clientEnv(daemon),
    encoding: 'utf8',
  });
  return result.status === 0 ? result.stdout.trim() : undefined;
}
