/**
 * Runs one external program in its own process group with its output read line by line:
 * what the set-up scripts (setup.ts) and the container runtime's steps
 * (docker/spawn-logged.ts) share. An abort stops the whole group (the program and what it
 * started: apt-get, make, docker build) with `killSignal`.
 */
import { spawn } from 'node:child_process';

export interface LineChildOptions {
  readonly env: NodeJS.ProcessEnv;
  readonly cwd?: string;
  readonly signal?: AbortSignal;
  /** What an abort sends to the process group. */
  readonly killSignal: NodeJS.Signals;
  /** Where the output breaks into lines (stdout and stderr each, interleaved as they come). */
  readonly lineBreak: RegExp;
  /** Each line, the last one too when the output does not end with a break. */
  readonly onLine: (line: string) => void;
}

export interface LineChildExit {
  /** The exit status; null when killed by a signal or never started. */
  readonly status: number | null;
  readonly aborted: boolean;
  /** Why it could not start. */
  readonly error?: Error;
}

/** Starts `file` and resolves when it has exited and its output has been read. */
export function runLineChild(
  file: string,
  args: readonly string[],
  options: LineChildOptions,
): Promise<LineChildExit> {
  return new Promise<LineChildExit>((resolveRun) => {
    const child = spawn(file, [...args], {
      env: options.env,
      ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    for (const stream of [child.stdout, child.stderr]) {
      let pending = '';
      stream.on('data', (chunk: Buffer) => {
        pending += chunk.toString();
        const lines = pending.split(options.lineBreak);
        pending = lines.pop() ?? '';
        for (const line of lines) options.onLine(line);
      });
      stream.on('end', () => {
        if (pending !== '') options.onLine(pending);
      });
    }
    let aborted = false;
    const onAbort = () => {
      aborted = true;
      try {
        if (child.pid !== undefined) process.kill(-child.pid, options.killSignal);
      } catch {
        // Already gone.
      }
    };
    options.signal?.addEventListener('abort', onAbort, { once: true });
    child.on('error', (error) => {
      options.signal?.removeEventListener('abort', onAbort);
      resolveRun({ status: null, aborted, error });
    });
    child.on('close', (status) => {
      options.signal?.removeEventListener('abort', onAbort);
      resolveRun({ status, aborted });
    });
  });
}
