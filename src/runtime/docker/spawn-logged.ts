/**
 * Runs one external step (the docker client, mkfs, the set-up script) with its output
 * appended to a log file and, line by line, to a progress callback; an abort stops its
 * whole process group. Resolves with the exit status and the last lines, never rejects
 * for a non-zero status (the caller names the step that failed).
 */
import { spawn } from 'node:child_process';
import { appendFileSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';

const ANSI_COLOUR = new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, 'g');

export interface LoggedRun {
  readonly status: number | null;
  readonly aborted: boolean;
  /** The last lines of output (stdout and stderr interleaved as they came). */
  readonly tail: readonly string[];
}

export interface SpawnLoggedOptions {
  readonly log: string;
  readonly env?: NodeJS.ProcessEnv;
  readonly cwd?: string;
  readonly onLine?: (line: string) => void;
  readonly signal?: AbortSignal;
  readonly tailLines?: number;
}

export function spawnLogged(
  file: string,
  args: readonly string[],
  options: SpawnLoggedOptions,
): Promise<LoggedRun> {
  mkdirSync(dirname(options.log), { recursive: true });
  // Long arguments (a PEM build argument) shortened: the log shows the command, not data.
  const shown = args.map((a) => (a.length > 200 ? `${a.slice(0, 40)}...(${a.length} chars)` : a));
  appendFileSync(options.log, `$ ${file} ${shown.join(' ')}\n`);
  const keep = options.tailLines ?? 30;
  return new Promise<LoggedRun>((resolveRun) => {
    const tail: string[] = [];
    if (options.signal?.aborted) {
      resolveRun({ status: null, aborted: true, tail });
      return;
    }
    const child = spawn(file, [...args], {
      env: options.env ?? process.env,
      ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
      stdio: ['ignore', 'pipe', 'pipe'],
      // Its own process group: an abort stops it and what it started, together.
      detached: true,
    });
    const onLine = (raw: string) => {
      // The legacy builder colours a step's stderr (ESC[91m ... ESC[0m): plain text here.
      const line = raw.replace(ANSI_COLOUR, '');
      appendFileSync(options.log, `${line}\n`);
      if (line.trim() === '') return;
      tail.push(line);
      if (tail.length > keep) tail.shift();
      options.onLine?.(line);
    };
    for (const stream of [child.stdout, child.stderr]) {
      let pending = '';
      stream.on('data', (chunk: Buffer) => {
        pending += chunk.toString();
        const lines = pending.split(/\r?\n|\r/);
        pending = lines.pop() ?? '';
        for (const line of lines) onLine(line);
      });
      stream.on('end', () => {
        if (pending !== '') onLine(pending);
      });
    }
    let aborted = false;
    const onAbort = () => {
      aborted = true;
      try {
        if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
      } catch {
        // Already gone.
      }
    };
    options.signal?.addEventListener('abort', onAbort, { once: true });
    child.on('error', (error) => {
      options.signal?.removeEventListener('abort', onAbort);
      onLine(`cannot run ${file}: ${error.message}`);
      resolveRun({ status: null, aborted, tail });
    });
    child.on('close', (status) => {
      options.signal?.removeEventListener('abort', onAbort);
      resolveRun({ status, aborted, tail });
    });
  });
}
