import { RdmaInteropError } from '../../errors.js';

/** The step of the container runtime that failed (each names its log). */
export type DockerStep =
  | 'engine-missing'
  | 'engine-start'
  | 'base-image'
  | 'build'
  | 'handover'
  | 'guest'
  | 'container'
  | 'aborted';

/**
 * The container runtime could not do its step. `log` is the file to read (dockerd's log,
 * the build log, the guest's console); the message already quotes its last lines.
 */
export class DockerRuntimeError extends RdmaInteropError {
  override readonly name = 'DockerRuntimeError';
  readonly origin = 'runtime';
  constructor(
    readonly step: DockerStep,
    message: string,
    readonly log: string | undefined = undefined,
  ) {
    super(log === undefined ? message : `${message} (log: ${log})`);
  }
}
