import { RdmaInteropError } from '../errors.js';

/** Why the guest runtime could not give a result. */
export type RuntimeFailure =
  | 'assets-missing'
  | 'packages-missing'
  | 'setup-failed'
  | 'qemu-missing'
  | 'boot-failed'
  | 'timeout'
  | 'aborted'
  | 'no-exit-code'
  /** The guest kernel panicked before the command started (runInGuest boots once more). */
  | 'boot-panic'
  | 'output-incomplete'
  /**
   * The guest kernel reported a CPU stuck in a soft lockup for HUNG_AFTER_SECONDS (qemu.ts):
   * the guest is stopped then, not at the run's time-out.
   */
  | 'guest-hung'
  /** One guest of a pair (pair.ts) exited non-zero and the other was stopped. */
  | 'partner-failed';

/** The container runtime's steps (src/runtime/docker/), each naming the log to read. */
export type ContainerStep =
  /** No dockerd or docker client on this machine. */
  | 'engine-missing'
  /** dockerd did not come up (its log says why). */
  | 'engine-start'
  | 'base-image'
  | 'build'
  | 'handover'
  /** The guest that was to run the container did not (boot, time-out). */
  | 'guest'
  /** The guest's kernel lacks what dockerd needs (a module, cgroup2). */
  | 'guest-kernel'
  /** The container did not run or exited non-zero. */
  | 'container';

/**
 * A step of the runtime (a guest's boot and run, or the container runtime's) did not
 * complete. `failure` names the step; `log` is the file to read (dockerd's log, the build
 * log, the guest's output) and `consoleTail` quotes the last lines of the guest's console
 * (kernel messages, panics): the message shows both, so the cause is visible.
 */
export class RuntimeError extends RdmaInteropError {
  override readonly name = 'RuntimeError';
  readonly origin = 'runtime';
  constructor(
    readonly failure: RuntimeFailure | ContainerStep,
    message: string,
    readonly consoleTail: string = '',
    readonly log: string | undefined = undefined,
  ) {
    const withLog = log === undefined ? message : `${message} (log: ${log})`;
    super(consoleTail ? `${withLog}\n--- guest console (last lines) ---\n${consoleTail}` : withLog);
  }
}

/**
 * The guest runtime's name for the same error (one class: the guest's code and the code
 * that catches its failures name it so).
 */
export const GuestRuntimeError = RuntimeError;
export type GuestRuntimeError = RuntimeError;
