/**
 * Runs one external step (the docker client, mkfs, the set-up script) with its output
 * appended to a log file and, line by line, to a progress callback; an abort stops its
 * whole process group. Resolves with the exit status and the last lines, never rejects
 * for a non-zero status (the caller names the step that failed).
 */
import { appendFileSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { runLineChild } from '../line-child.js';

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
  const tail: string[] = [];
  if (options.signal?.aborted) return Promise.resolve({ status: null, aborted: true, tail });
  const onLine = (raw: string) => {
    // The legacy builder colours a step's stderr (ESC[91m ... ESC[0m): plain text here.
    const line = raw.replace(ANSI_COLOUR, '');
    appendFileSync(options.log, `${line}\n`);
    if (line.trim() === '') return;
    tail.push(line);
    if (tail.length > keep) tail.shift();
    options.onLine?.(line);
  };
  return runLineChild(file, args, {
    env: options.env ?? process.env,
    ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
    ...(options.signal === undefined ? {} : { signal: options.signal }),
    killSignal: 'SIGKILL',
    lineBreak: /\r?\n|\r/,
    onLine,
  }).then(({ status, aborted, error }) => {
    if (error !== undefined) onLine(`cannot run ${file}: ${error.message}`);
    return { status, aborted, tail };
  });
}
