/**
 * Running rdma-core's tests: on this machine's devices (inside the guest: the kernel
 * test and the guest side), or in a guest booted per kernel line (the CLI). Either way
 * the runner writes `<dir>/<device>.jsonl`, which is parsed and judged here.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { runInGuest } from '../runtime/index.js';
import { judgeTests, providerOf } from './judge.js';
import type { TestRun } from './report.js';
import { parseRunnerOutput, type RdmaCoreTestResult, RdmaCoreTestsError } from './result.js';
import {
  guestScript,
  RDMA_CORE_TESTS_VERSION,
  runnerArgs,
  type TestPaths,
  testEnvironment,
} from './runner-command.js';

const run = promisify(execFile);

/** The ids of the tests the filters select (listed on this host: no device needed). */
export async function listTests(paths: TestPaths, filters: readonly string[]): Promise<string[]> {
  const dir = mkdtempSync(join(tmpdir(), 'rdma-core-tests-list-'));
  try {
    const [python, ...args] = runnerArgs(paths, 'none', join(dir, 'list.jsonl'), filters);
    await run(python ?? '/usr/bin/python3', [...args, '--list'], {
      env: { ...process.env, ...testEnvironment(paths) },
    });
    return readFileSync(join(dir, 'list.jsonl'), 'utf8')
      .split('\n')
      .flatMap((l) => {
        if (l.trim() === '') return [];
        const v = JSON.parse(l) as { id?: unknown };
        return typeof v.id === 'string' ? [v.id] : [];
      });
  } catch (e) {
    if (e instanceof SyntaxError || (e as NodeJS.ErrnoException).code !== undefined)
      throw new RdmaCoreTestsError(
        'rdma-core-tests',
        `listing the tests failed: ${((e as { stderr?: string }).stderr ?? String(e)).trim().split('\n').at(-1) ?? ''}`,
      );
    throw e;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Parses and judges what the runner wrote into `dir` for `devices`. */
export function collectRun(
  line: string,
  dir: string,
  devices: readonly string[],
  guestSeconds?: number,
): TestRun {
  const results: ReturnType<typeof judgeTests> = [];
  const truncated: string[] = [];
  let kernel = 'unknown';
  let python = 'unknown';
  for (const device of devices) {
    const file = join(dir, `${device}.jsonl`);
    if (!existsSync(file)) {
      truncated.push(device);
      continue;
    }
    const out = parseRunnerOutput(file, readFileSync(file, 'utf8'));
    kernel = out.environment.kernel;
    python = out.environment.python;
    if (out.truncated) truncated.push(device);
    results.push(
      ...judgeTests(out.results as RdmaCoreTestResult[], {
        provider: providerOf(device),
        kernel: out.environment.kernel,
        rdmaCore: RDMA_CORE_TESTS_VERSION,
      }),
    );
  }
  return {
    line,
    kernel,
    rdmaCore: RDMA_CORE_TESTS_VERSION,
    python,
    devices,
    results,
    truncated,
    ...(guestSeconds === undefined ? {} : { guestSeconds }),
  };
}

/** Runs the tests on this machine's devices (in the guest), one device after another. */
export async function runTestsHere(
  paths: TestPaths,
  devices: readonly string[],
  filters: readonly string[],
  excludes: readonly string[] = [],
  onLine: (line: string) => void = () => {},
): Promise<TestRun> {
  const dir = mkdtempSync(join(tmpdir(), 'rdma-core-tests-'));
  try {
    for (const device of devices) {
      const [python, ...args] = runnerArgs(
        paths,
        device,
        join(dir, `${device}.jsonl`),
        filters,
        excludes,
      );
      try {
        const r = await run(python ?? '/usr/bin/python3', args, {
          env: { ...process.env, ...testEnvironment(paths) },
          maxBuffer: 64 * 1024 * 1024,
        });
        for (const l of r.stderr.split('\n')) if (l !== '') onLine(l);
      } catch (e) {
        onLine(`rdma-core-tests: the runner on ${device} failed: ${String(e).split('\n')[0]}`);
      }
    }
    return collectRun('here', dir, devices);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export interface GuestTestOptions {
  readonly line: string;
  readonly devices: readonly string[];
  readonly filters: readonly string[];
  readonly timeoutSeconds: number;
  readonly signal?: AbortSignal;
  readonly onProgress?: (line: string) => void;
}

/** Boots a guest of `line` and runs the tests there on each device. */
export async function runTestsInGuest(paths: TestPaths, o: GuestTestOptions): Promise<TestRun> {
  const share = mkdtempSync(join(tmpdir(), 'rdma-core-tests-'));
  const progress = o.onProgress ?? (() => {});
  try {
    let pending = '';
    const result = await runInGuest({
      command: ['/bin/sh', '-c', guestScript(paths, o.devices, share, o.filters)],
      kernel: o.line,
      rdmaCore: 'host',
      env: testEnvironment(paths),
      shareDir: share,
      timeoutSeconds: o.timeoutSeconds,
      onProgress: (l) => progress(`[vm] ${l}`),
      onOutput: () => {},
      onErrorOutput: (chunk) => {
        pending += chunk.toString('utf8');
        const lines = pending.split('\n');
        pending = lines.pop() ?? '';
        for (const l of lines) progress(`[${o.line}] ${l}`);
      },
      ...(o.signal === undefined ? {} : { signal: o.signal }),
    });
    return collectRun(o.line, share, o.devices, Number(result.wallSeconds.toFixed(1)));
  } finally {
    rmSync(share, { recursive: true, force: true });
  }
}
