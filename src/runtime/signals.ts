/**
 * SIGINT and SIGTERM as an AbortSignal, for command-line programs that run a guest: the
 * first signal aborts (the runtime stops QEMU and removes the run's directory), a second
 * one exits at once (QEMU still dies with us: see qemuCommand in qemu.ts).
 */
import { constants } from 'node:os';
import { requireArray, requireName } from '../arguments.js';

export interface SignalAbort {
  readonly signal: AbortSignal;
  /** The signal that aborted, if one did. */
  readonly received: () => NodeJS.Signals | undefined;
  /** The shell's status for death by that signal: 128 + its number (130, 143). */
  readonly exitCode: () => number | undefined;
  /** Removes the handlers (the default behaviour of the signals comes back). */
  readonly dispose: () => void;
}

/** 128 + the signal's number: what a shell reports for a process killed by it. */
export function signalExitCode(name: NodeJS.Signals): number {
  return 128 + constants.signals[requireName('runtime', 'signal name', constants.signals, name)];
}

export function abortOnSignals(
  names: readonly NodeJS.Signals[] = ['SIGINT', 'SIGTERM'],
): SignalAbort {
  // Checked before any handler is installed.
  requireArray('runtime', 'names', names).forEach((name, i) => {
    requireName('runtime', 'signal name', constants.signals, name, `names[${i}]`);
  });
  const controller = new AbortController();
  let received: NodeJS.Signals | undefined;
  const handler = (name: NodeJS.Signals) => {
    if (received !== undefined) process.exit(signalExitCode(received));
    received = name;
    controller.abort(new Error(`received ${name}`));
  };
  for (const name of names) process.on(name, handler);
  return {
    signal: controller.signal,
    received: () => received,
    exitCode: () => (received === undefined ? undefined : signalExitCode(received)),
    dispose: () => {
      for (const name of names) process.off(name, handler);
    },
  };
}
