/**
 * rdma-core's example programs run as child processes (ibverbs-utils / rdmacm-utils on
 * PATH, the ones the guest sees from the host's root): started, their output collected,
 * their `usec/iter` read.
 */
import { type ChildProcess, spawn } from 'node:child_process';

/** A running example: its exit and output once it ends. */
export interface CExample {
  readonly child: ChildProcess;
  /** Resolves when it exits (never rejects): the code, stdout and stderr. */
  readonly done: Promise<{ code: number | null; out: string; err: string }>;
}

/** Starts `program args` (killed after `limitMs`). */
export function startExample(
  program: string,
  args: readonly string[],
  limitMs = 120_000,
): CExample {
  const child = spawn(program, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout?.on('data', (d: Buffer) => {
    out += d.toString();
  });
  child.stderr?.on('data', (d: Buffer) => {
    err += d.toString();
  });
  const timer = setTimeout(() => child.kill('SIGKILL'), limitMs);
  timer.unref();
  const done = new Promise<{ code: number | null; out: string; err: string }>((resolve) => {
    child.on('error', (e) => {
      clearTimeout(timer);
      resolve({ code: -1, out, err: `${err}${String(e)}` });
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, out, err });
    });
  });
  return { child, done };
}

/** The `usec/iter` a pingpong example printed (`%d iters in %.2f seconds = %.2f usec/iter`). */
export function usecPerIter(out: string): number {
  const m = /iters in [\d.]+ seconds = ([\d.]+) usec\/iter/.exec(out);
  return m === null ? Number.NaN : Number(m[1]);
}

/** The arguments of `ibv_rc_pingpong` for one run on `device`. */
export function rcPingPongArgs(o: {
  device: string;
  gidIndex: number;
  size: number;
  iters: number;
  port: number;
  events: boolean;
  check?: boolean;
  server?: string;
}): string[] {
  return [
    '-d',
    o.device,
    '-g',
    String(o.gidIndex),
    '-s',
    String(o.size),
    '-n',
    String(o.iters),
    '-p',
    String(o.port),
    ...(o.events ? ['-e'] : []),
    ...(o.check === true ? ['-c'] : []),
    ...(o.server === undefined ? [] : [o.server]),
  ];
}
