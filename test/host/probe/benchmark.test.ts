/**
 * The benchmark of issue 32 on the host: the revert patches per line (written by
 * patches/reverted-2026/revert.py from the line's linux-source; where a line's source lacks
 * the fix there is no patch and not-applicable.txt says so), the judgement of a variant's
 * run against the baseline.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { UnknownNameError } from '../../../src/errors.js';
import type { AssertionResult } from '../../../src/probe/assertion.js';
import {
  BENCHMARK_BUGS,
  BENCHMARK_BUGS_ENV,
  selectBenchmarkBugs,
} from '../../../src/probe/benchmark/bugs.js';
import {
  falseAlarmsOf,
  judgeVariant,
  type ModuleRun,
  oracleOf,
  variantTimeout,
} from '../../../src/probe/benchmark/run.js';
import {
  BENCHMARK_STOP_ENV,
  benchmarkStop,
  benchmarkStopEnv,
} from '../../../src/probe/benchmark/stop.js';
import { benchmarkTable } from '../../../src/probe/benchmark/table.js';
import { TimelineRecorder } from '../../../src/probe/benchmark/timeline.js';
import { ROOT } from '../docs/examples.js';

const PATCHES = join(ROOT, 'patches', 'reverted-2026');

describe('the revert patches (patches/reverted-2026)', () => {
  it('name each bug per line, or say why the line has none', () => {
    const table = ['6.1', '6.12', '7.3'].map((line) => {
      const notApplicable = readFileSync(join(PATCHES, line, 'not-applicable.txt'), 'utf8');
      return BENCHMARK_BUGS.map((b) => {
        const patch = existsSync(join(PATCHES, line, `${b.id}.patch`));
        expect(patch).toBe(!notApplicable.includes(`${b.id}:`));
        return patch ? 'p' : '-';
      }).join('');
    });
    // siw-null-rx-fpdu, siw-mpa-underflow, siw-header-split, rxe-unknown-opcode-icrc,
    // rxe-atomic-write-zero-length, rxe-mr-check-range: 6.1 has no ATOMIC WRITE and a
    // mr_check_range() that never wrapped; 6.12.95 lacks the header-split and the
    // mr_check_range() fixes (the tester shows the first: siw-split-header-takes-payload-byte).
    expect(table).toEqual(['pppp--', 'pp-pp-', 'pppppp']);
  });

  it('each patch changes only its driver', () => {
    for (const line of ['6.1', '6.12', '7.3'])
      for (const b of BENCHMARK_BUGS) {
        const file = join(PATCHES, line, `${b.id}.patch`);
        if (!existsSync(file)) continue;
        const paths = readFileSync(file, 'utf8').match(/^\+\+\+ b\/(\S+)/gm) ?? [];
        expect(paths.length).toBe(1);
        expect(paths[0]).toContain(`drivers/infiniband/sw/${b.driver}/`);
      }
  });
});

const result = (id: string, verdict: AssertionResult['verdict'], dmesg: string[] = []) =>
  ({
    id,
    spec: '',
    device: 'siw0',
    provider: 'siw',
    kernel: '7.3.4+deb13-amd64',
    topology: 'requester',
    verdict,
    expected: null,
    observed: null,
    ...(dmesg.length === 0 ? {} : { survival: { dmesg, deviceWorks: true, guestUp: true } }),
  }) as AssertionResult;

const run = (results: AssertionResult[]): ModuleRun => ({
  kernel: { line: '7.3', release: '7.3.4+deb13-amd64' },
  results,
  fuzz: [],
  seconds: 61.4,
});

describe('a variant judged against the baseline', () => {
  const bug = BENCHMARK_BUGS.find((b) => b.id === 'siw-mpa-underflow');
  if (bug === undefined) throw new Error('no bug');
  const baseline = run([
    result('siw-mpa-bad-crc', 'known'),
    result('siw-mpa-length-underflow', 'known'),
  ]);

  it('the first result that fails where the baseline passed detects it, with its oracle', () => {
    const row = judgeVariant(
      bug,
      '7.3',
      baseline,
      run([
        result('siw-mpa-bad-crc', 'known'),
        result('siw-mpa-length-underflow', 'fail', [
          'BUG: unable to handle page fault for address',
        ]),
      ]),
    );
    expect(row).toMatchObject({
      outcome: 'detected',
      by: 'siw-mpa-length-underflow',
      oracle: 'kernel-log/bug',
      inputsToDetection: 2,
      guestSeconds: 61,
    });
    expect(
      judgeVariant(bug, '7.3', baseline, run([result('siw-mpa-length-underflow', 'kernel-crash')]))
        .oracle,
    ).toBe('guest-up');
    const crashed = {
      ...result('siw-mpa-length-underflow', 'kernel-crash'),
      observed: { consoleTail: 'Oops: general protection fault\nRIP: 0010:memcpy_orig+0x9d' },
    };
    expect(judgeVariant(bug, '7.3', baseline, run([crashed])).oracle).toBe(
      'guest-up, kernel-log/general-protection, kernel-log/rip',
    );
  });

  it('nothing new: not detected; a baseline failure is a false alarm, never a detection', () => {
    const failing = run([result('siw-mpa-bad-crc', 'fail')]);
    expect(judgeVariant(bug, '7.3', failing, failing).outcome).toBe('not detected');
    expect(falseAlarmsOf(failing)).toEqual(['siw-mpa-bad-crc: fail (oracle: engine-expectation)']);
    expect(falseAlarmsOf(baseline)).toEqual([]);
  });
});

describe('the kernel-memory oracle in the benchmark', () => {
  const leak = (provider: 'rxe' | 'siw') =>
    ({
      ...result('x', 'fail'),
      provider,
      expected: { memory: '1122334455667788' },
      observed: { memory: '1122334455667788a5a5a5a5deadbeef' },
    }) as AssertionResult;

  it('names words from nowhere on rxe, never on siw (its Terminates echo the tester)', () => {
    expect(oracleOf(leak('rxe'))).toBe('engine-expectation, kernel-memory');
    expect(oracleOf(leak('siw'))).toBe('engine-expectation');
  });
});

describe('a variant stops at its first detection', () => {
  const stop = benchmarkStop(benchmarkStopEnv(['siw-mpa-bad-crc', 'siw-probe-send']));
  if (stop === undefined) throw new Error('no stop');

  it('at a result that did not pass where the baseline passed, not elsewhere', () => {
    expect(stop(result('siw-mpa-bad-crc', 'fail'))).toBe(true);
    expect(stop(result('siw-probe-send', 'kernel-crash'))).toBe(true);
    expect(stop(result('siw-mpa-bad-crc', 'known'))).toBe(false);
    expect(stop(result('siw-mpa-bad-crc', 'not-run'))).toBe(false);
    // Failing on the baseline too: a false alarm there, not a detection.
    expect(stop(result('siw-mpa-length-underflow', 'fail'))).toBe(false);
  });

  it('outside a benchmark variant nothing stops', () => {
    expect(benchmarkStop({})).toBeUndefined();
    expect(benchmarkStop({ [BENCHMARK_STOP_ENV]: '' })).toBeUndefined();
  });
});

describe('time to detection', () => {
  it('counts from the variant loading to the result line, across cut chunks', () => {
    const t = new TimelineRecorder(100);
    t.chunk('[vm 7.3] booting\nprobe: benchmark variant siw-null', 104);
    t.chunk('-rx-fpdu loaded\nprobe: siw-mpa-bad-crc (stock): kno', 131.25);
    t.chunk('wn\nprobe: siw-mpa-bad-crc (stock): fail\n', 140);
    t.chunk('probe: siw-mpa-markers-not-negotiated (stock): kernel-crash\n', 152.5);
    // The load line ended in the second chunk (131.25); the id's first answer counts.
    expect(t.timeline()).toEqual({
      results: { 'siw-mpa-bad-crc': 8.8, 'siw-mpa-markers-not-negotiated': 21.3 },
      end: 21.3,
    });
  });

  it('the detecting row carries it; a crash with no result line, the run end', () => {
    const bug = BENCHMARK_BUGS.find((b) => b.id === 'siw-null-rx-fpdu');
    if (bug === undefined) throw new Error('no bug');
    const baseline = run([result('siw-mpa-bad-crc', 'known')]);
    const timeline = { results: { 'siw-mpa-bad-crc': 12.5 }, end: 30.1 };
    const failed = { ...run([result('siw-mpa-bad-crc', 'fail')]), timeline };
    expect(judgeVariant(bug, '7.3', baseline, failed).secondsToDetection).toBe(12.5);
    const crashed = {
      ...run([result('siw-mpa-bad-crc', 'kernel-crash')]),
      timeline: { results: {}, end: 30.1 },
    };
    expect(judgeVariant(bug, '7.3', baseline, crashed).secondsToDetection).toBe(30.1);
  });
});

describe('which variants a run measures', () => {
  it("a device's bugs, narrowed by RDMA_INTEROP_BENCHMARK_BUGS; an unknown id is refused", () => {
    const ids = (devices?: string[], env: NodeJS.ProcessEnv = {}) =>
      selectBenchmarkBugs(devices, env).map((b) => b.id);
    expect(ids(['siw0'])).toEqual(['siw-null-rx-fpdu', 'siw-mpa-underflow', 'siw-header-split']);
    expect(ids(undefined, { [BENCHMARK_BUGS_ENV]: 'rxe-mr-check-range,siw-header-split' })).toEqual(
      ['siw-header-split', 'rxe-mr-check-range'],
    );
    expect(ids(['rxe0'], { [BENCHMARK_BUGS_ENV]: 'siw-header-split' })).toEqual([]);
    expect(() => ids(undefined, { [BENCHMARK_BUGS_ENV]: 'rxe-mr-check-rang' })).toThrow(
      UnknownNameError,
    );
  });
});

describe("a variant's guest limit", () => {
  it('is twice the baseline run, at least 180 s (7.3: baseline 72 s, the hung variant stopped at 180 s)', () => {
    expect(variantTimeout(72.4)).toBe(180);
    expect(variantTimeout(127.3)).toBe(255);
  });
});

describe('the resource-count oracle in the benchmark', () => {
  const bug = BENCHMARK_BUGS.find((b) => b.id === 'rxe-unknown-opcode-icrc');
  if (bug === undefined) throw new Error('no bug');
  // The host judges from the two counts; the guest's own list is not trusted.
  const check = (key: string, then: number, now: number) => ({
    pass: 'rxe',
    before: { [key]: then, 'rdma/rxe_t/ctx': 1 },
    after: { [key]: now, 'rdma/rxe_t/ctx': 2 },
    grew: [],
  });
  const quiet = run([result('roce-responder-write-acknowledged', 'match')]);

  it('a leak that logged nothing detects a bug the answers did not, after every input', () => {
    const variant = {
      ...quiet,
      fuzz: [{ kernel: '', device: 'rxe_t', seed: 1, packets: 40, batches: 2, findings: [] }],
      resources: [check('rdma/rxe_t/qp', 17, 18)],
    };
    expect(judgeVariant(bug, '7.3', quiet, variant)).toMatchObject({
      outcome: 'detected',
      by: "the pass's counts (rdma/rxe_t/qp 17 -> 18)",
      oracle: 'resource-count',
      inputsToDetection: 41,
    });
    expect(
      judgeVariant(bug, '7.3', quiet, { ...variant, resources: [check('rdma/rxe_t/qp', 17, 17)] })
        .outcome,
    ).toBe('not detected');
  });

  it('growth on the unmodified modules is a false alarm', () => {
    expect(
      falseAlarmsOf({ ...quiet, resources: [check('slab/skbuff_head_cache', 900, 2000)] }),
    ).toEqual(['rxe: slab/skbuff_head_cache 900 -> 2000 (oracle: resource-count)']);
  });
});

describe('the benchmark table', () => {
  it('a row per bug and line, then the false alarms per run', () => {
    const table = benchmarkTable([
      {
        schema: 'rdma-interop/benchmark@1',
        fuzz: 40,
        seed: 1,
        devices: ['siw0'],
        rows: [
          {
            bug: 'siw-null-rx-fpdu',
            title: 'siw: NULL dereference on a bad first header',
            cve: 'CVE-2026-23242',
            line: '7.3',
            outcome: 'detected',
            by: 'siw-mpa-markers-not-negotiated',
            oracle: 'guest-up',
            inputsToDetection: 4,
            guestSeconds: 83,
          },
          {
            bug: 'siw-header-split',
            title: 'siw: fragmented header copies',
            line: '6.12',
            outcome: 'not applicable',
          },
        ],
        falseAlarms: { '7.3': [] },
      },
    ]).split('\n');
    expect(table.slice(2)).toEqual([
      '| siw: NULL dereference on a bad first header (CVE-2026-23242) | 7.3 | detected | `siw-mpa-markers-not-negotiated` | guest-up | 4 inputs; run 83 s |',
      "| siw: fragmented header copies | 6.12 | not applicable | the fix is not in this line's source |  |  |",
      '| false alarms on the unmodified modules | 7.3 (siw0) | 0 |  | | fuzz 40 a device, seed 1 |',
    ]);
  });
});
