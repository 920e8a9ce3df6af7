/**
 * The perftest anchors: a server and client pair on rxe0, its result columns, re-run when
 * implausible.
 */
import { spawn } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { watchedStep } from '../stall/stall-watch.js';
import { DEVICE } from './loopback.js';

export const rawOutputs: string[] = [];

/**
 * How long one perftest pair may run (TCG, host load 1: 2 to 10 s; the stall watch kills
 * a pair past it, which anchor() then re-runs as a failed run).
 */
const PERFTEST_LIMIT_MS = 90_000;

/** Runs a perftest server and client on DEVICE: the client's stdout ('' if it failed). */
function perftest(tool: string, args: string[], port: number): Promise<string> {
  return watchedStep(`${tool} ${args.join(' ')} (port ${port})`, PERFTEST_LIMIT_MS, () =>
    perftestPair(tool, args, port),
  );
}

async function perftestPair(tool: string, args: string[], port: number): Promise<string> {
  const common = ['-d', DEVICE, '-x', '1', '-F', '-p', String(port), ...args];
  const server = spawn(tool, common, { stdio: ['ignore', 'pipe', 'pipe'] });
  await sleep(1500);
  const client = spawn(tool, [...common, '127.0.0.1'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  client.stdout.on('data', (d: Buffer) => {
    out += d.toString();
  });
  client.stderr.on('data', (d: Buffer) => {
    err += d.toString();
  });
  const code = await new Promise<number | null>((resolve) => client.on('close', resolve));
  await new Promise((resolve) => {
    if (server.exitCode !== null) resolve(null);
    else server.on('close', resolve);
    setTimeout(() => {
      server.kill();
      resolve(null);
    }, 5000).unref();
  });
  // A failed run (on a loaded host the client can start before the server listens) is a
  // measurement failure for anchor() to retry, not a result.
  rawOutputs.push(`${tool} (exit ${code}):\n${out}${err}`);
  return code === 0 ? out : '';
}

/**
 * The columns of perftest's result line (the one after the header starting `#bytes`).
 * Header names may contain one space (`BW peak[MB/sec]`, `99% percentile[usec]`), so they
 * are matched as tokens, not split on whitespace.
 */
export function perftestColumns(out: string): Map<string, number> {
  const lines = out.split('\n').map((l) => l.trim());
  const h = lines.findIndex((l) => l.startsWith('#bytes'));
  const header = (lines[h] ?? '').match(/#\w+|[\w.%]+(?: \w+)?\[[^\]]+\]/g) ?? [];
  const values = (lines[h + 1] ?? '').split(/\s+/).map(Number);
  const cols = new Map<string, number>();
  header.forEach((name, i) => {
    const v = values[i];
    if (v !== undefined) cols.set(name, v);
  });
  return cols;
}

/** Anchor runs rejected as implausible, printed with the figures (the round was re-run). */
export const rejected: string[] = [];

/**
 * Runs a perftest pair, re-running it (up to three more times, on the next port) when its
 * result is not plausible (`check`): under TCG perftest sometimes reports `inf` or a
 * typical latency below its own minimum (its cycle-counter calibration fails), and on a
 * loaded host a client may fail to connect: measurement failures, not results.
 */
export async function anchor(
  tool: string,
  args: string[],
  port: number,
  check: (cols: ReadonlyMap<string, number>) => string | undefined,
): Promise<Map<string, number>> {
  let cols = new Map<string, number>();
  for (let attempt = 0; attempt < 4; attempt++) {
    cols = perftestColumns(await perftest(tool, args, port + 10 * attempt));
    const why = cols.size === 0 ? 'no result line (the run failed)' : check(cols);
    if (why === undefined) return cols;
    rejected.push(
      `${tool} (port ${port + 10 * attempt}) rejected: ${why}; ${attempt < 3 ? 're-run' : 'no anchor this round'}`,
    );
  }
  // Four implausible runs: no anchor (NaN), so the figure has no verdict.
  return new Map();
}
