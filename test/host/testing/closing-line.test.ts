/**
 * Issue 38, done means: each rule of the closing line (src/testing/closing-line.ts) shown
 * failing on real vitest JSON. The fixtures (./fixtures/*.fixture.ts) run once through
 * vitest's JSON reporter; each check then judges the report of one fixture.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  closingLine,
  countsOf,
  type ExpectedSkip,
  FAILURE_EXCERPT,
  type LabelledReport,
  SKIP_CONDITIONS,
  testPath,
  type VitestReport,
} from '../../../src/testing/closing-line.js';

const ROOT = join(import.meta.dirname, '../../..');
const FIXTURES = 'test/host/testing/fixtures';
const dir = mkdtempSync(join(tmpdir(), 'closing-line-'));
let report: VitestReport;
afterAll(() => rmSync(dir, { recursive: true, force: true }));

beforeAll(() => {
  const out = join(dir, 'fixtures.json');
  const r = spawnSync(
    process.execPath,
    [
      'node_modules/vitest/vitest.mjs',
      'run',
      '--config',
      `${FIXTURES}/vitest.fixtures.config.ts`,
      '--reporter=json',
      `--outputFile.json=${out}`,
    ],
    { cwd: ROOT, encoding: 'utf8', timeout: 60_000 },
  );
  // The after-all fixture fails, so vitest exits 1; the report is what is judged.
  expect(r.status, `${r.stdout}${r.stderr}`).toBe(1);
  report = JSON.parse(readFileSync(out, 'utf8')) as VitestReport;
}, 70_000);

/** The report of one fixture alone, labelled as the host run. */
function only(fixture: string): LabelledReport[] {
  const testResults = report.testResults.filter((f) => f.name.endsWith(`/${fixture}`));
  expect(testResults).toHaveLength(1);
  return [{ label: 'host', file: 'host.json', report: { testResults } }];
}
/** Each fixture's own count, as test/test-counts.json would commit it. */
const counts = (fixture: string, n: number) => ({ [`${FIXTURES}/${fixture}`]: n });
const NO_DEVICES = { hostHasRdmaDevices: false };

describe('the closing line of npm test (issue 38)', () => {
  it('counts a documentation block that does not run as "not run", never as passed', () => {
    const v = closingLine(
      only('not-run.fixture.ts'),
      [],
      counts('not-run.fixture.ts', 1),
      NO_DEVICES,
    );
    expect(v.text).toBe('1 passed, 0 failed, 1 not run');
    expect(v.lines).toEqual([
      'host: NOT RUN docs/example.md sh block 3 [not run: needs a registry account and network]',
    ]);
  });

  it('shows an early return as a skip with its reason, failing unless listed with a condition that holds', () => {
    const reports = only('early-return.fixture.ts');
    const name = 'the native path agrees [skipped: no native addon on this machine]';
    const c = counts('early-return.fixture.ts', 1);
    const unlisted = closingLine(reports, [], c, NO_DEVICES);
    expect(unlisted.text).toBe('0 passed, 1 failed, 1 skipped');
    expect(unlisted.lines).toEqual([
      `host: UNEXPECTED SKIP ${name} (not in test/expected-skips.json)`,
    ]);
    const entry = {
      test: name,
      reason: 'a host with devices has no ENODEV path',
      condition: 'host-has-rdma-devices',
    };
    const conditionFalse = closingLine(reports, [entry], c, NO_DEVICES);
    expect(conditionFalse.failed).toBe(1);
    expect(conditionFalse.lines[0]).toMatch(/condition host-has-rdma-devices, which does not hold/);
    const holds = closingLine(reports, [entry], c, { hostHasRdmaDevices: true });
    expect(holds.text).toBe('0 passed, 0 failed, 1 skipped');
    const noCondition = closingLine(reports, [{ test: name, reason: entry.reason }], c, NO_DEVICES);
    expect(noCondition.lines[0]).toMatch(/condition undefined is not one of/);
  });

  it('fails on an afterAll that failed although every test passed', () => {
    const v = closingLine(
      only('after-all.fixture.ts'),
      [],
      counts('after-all.fixture.ts', 1),
      NO_DEVICES,
    );
    expect(v.text).toBe('1 passed, 1 failed');
    expect(v.lines).toEqual([
      `host: ${FIXTURES}/after-all.fixture.ts: a hook or suite failed although its tests passed (beforeAll/afterAll, a describe body): see the log above`,
    ]);
  });

  it('fails on a file that ran fewer tests than it has, and on one that did not run at all', () => {
    const reports = only('fewer.fixture.ts');
    const fewer = closingLine(reports, [], counts('fewer.fixture.ts', 3), NO_DEVICES);
    expect(fewer.text).toBe('2 passed, 1 failed');
    expect(fewer.lines).toEqual([
      `${FIXTURES}/fewer.fixture.ts: ran 2 of its 3 tests (test/test-counts.json)`,
    ]);
    const missing = closingLine(
      reports,
      [],
      { ...counts('fewer.fixture.ts', 2), 'test/host/x/gone.test.ts': 4 },
      NO_DEVICES,
    );
    expect(missing.lines).toEqual(['test/host/x/gone.test.ts: has 4 tests and did not run at all']);
    // A project that did not run (kernel tests left out) is not judged by its counts.
    const kernelNotRun = closingLine(
      reports,
      [],
      { ...counts('fewer.fixture.ts', 2), 'test/kernel/a.test.ts': 4 },
      NO_DEVICES,
    );
    expect(kernelNotRun.text).toBe('2 passed, 0 failed');
    // More tests than committed: listed as a count to refresh, not a failure.
    const more = closingLine(reports, [], counts('fewer.fixture.ts', 1), NO_DEVICES);
    expect(more.failed).toBe(0);
    expect([...more.counts]).toEqual([[`${FIXTURES}/fewer.fixture.ts`, 2]]);
    expect(countsOf(reports)).toEqual(counts('fewer.fixture.ts', 2));
    expect(closingLine(reports, [], undefined, NO_DEVICES).failed).toBe(1);
    // A run of selected files (--partial): absent files are not judged, fewer still fails.
    const gone = { 'test/host/x/gone.test.ts': 4 };
    const partial = { partial: true };
    expect(
      closingLine(reports, [], { ...counts('fewer.fixture.ts', 2), ...gone }, NO_DEVICES, partial)
        .failed,
    ).toBe(0);
    expect(
      closingLine(reports, [], counts('fewer.fixture.ts', 3), NO_DEVICES, partial).failed,
    ).toBe(1);
  });

  it("carries the start of a failed test's message, without colours or stack frames", () => {
    const failedWith = (message: string): VitestReport => ({
      testResults: [
        {
          name: '/r/test/host/a.test.ts',
          status: 'failed',
          assertionResults: [{ fullName: 'a fails', status: 'failed', failureMessages: [message] }],
        },
      ],
    });
    const judge = (message: string) =>
      closingLine(
        [{ label: 'host-guests', file: 'h.json', report: failedWith(message) }],
        [],
        { 'test/host/a.test.ts': 1 },
        NO_DEVICES,
      ).lines;
    expect(
      judge(
        "AssertionError: 6.12 rxe: expected [ \u001b[32m'roce-x: differs'\u001b[39m ] to deeply equal []\n    at probe-kernels.test.ts:112:9\n    at run (vitest.mjs:1:1)",
      ),
    ).toEqual([
      "host-guests: FAILED a fails\n    AssertionError: 6.12 rxe: expected [ 'roce-x: differs' ] to deeply equal []",
    ]);
    const long = judge(`E: ${'x'.repeat(FAILURE_EXCERPT + 100)}`)[0] ?? '';
    expect(long.endsWith(`${'x'.repeat(FAILURE_EXCERPT - 3)} [...]`)).toBe(true);
    expect(
      closingLine(
        [{ label: 'host', file: 'h.json', report: failedWith('') }],
        [],
        { 'test/host/a.test.ts': 1 },
        NO_DEVICES,
      ).lines,
    ).toEqual(['host: FAILED a fails']);
  });

  it('counts the committed tests of a project left out (RDMA_INTEROP_SKIP_KERNEL_TESTS) as not run', () => {
    const v = closingLine(
      [{ label: 'kernel', file: 'not-run', report: undefined, leftOut: true }],
      [],
      { 'test/kernel/a.test.ts': 4, 'test/kernel/b.test.ts': 3, 'test/host/c.test.ts': 9 },
      NO_DEVICES,
    );
    expect(v.text).toBe('0 passed, 0 failed, 7 not run');
    expect(v.lines).toEqual(['kernel: NOT RUN: 7 tests in 2 files were left out of this run']);
  });

  it('fails on a missing report and on a test collected but never run', () => {
    const gone = closingLine(
      [{ label: 'kernel', file: 'k.json', report: undefined }],
      [],
      {},
      NO_DEVICES,
    );
    expect(gone.lines).toEqual(['kernel: no test report (k.json): that run did not complete']);
    const cut: VitestReport = {
      testResults: [
        {
          name: '/r/test/kernel/a.test.ts',
          status: 'passed',
          assertionResults: [{ fullName: 'a', status: 'pending' }],
        },
      ],
    };
    expect(
      closingLine(
        [{ label: 'kernel', file: 'k.json', report: cut }],
        [],
        { 'test/kernel/a.test.ts': 1 },
        NO_DEVICES,
      ).lines,
    ).toEqual(['kernel: COLLECTED BUT NEVER RUN a (test/kernel/a.test.ts)']);
    expect(testPath('/mnt/share/repo/test/kernel/verbs/srq.test.ts')).toBe(
      'test/kernel/verbs/srq.test.ts',
    );
  });
});

describe("the repository's own lists", () => {
  const skips = JSON.parse(
    readFileSync(join(ROOT, 'test/expected-skips.json'), 'utf8'),
  ) as ExpectedSkip[];
  it('every expected skip has a reason and a known condition', () => {
    for (const s of skips) {
      expect(s.reason.length, s.test).toBeGreaterThanOrEqual(10);
      expect(Object.keys(SKIP_CONDITIONS), s.test).toContain(s.condition);
    }
    expect(closingLine([], skips, {}, NO_DEVICES).failed).toBe(0);
  });

  it('test/test-counts.json counts every test file of the repository', () => {
    const committed = JSON.parse(
      readFileSync(join(ROOT, 'test/test-counts.json'), 'utf8'),
    ) as Record<string, number>;
    const files = spawnSync(
      'git',
      ['ls-files', '--cached', '--others', '--exclude-standard', 'test/*.test.ts'],
      { cwd: ROOT, encoding: 'utf8' },
    )
      .stdout.trim()
      .split('\n');
    expect(files.filter((f) => committed[f] === undefined)).toEqual([]);
    for (const [file, n] of Object.entries(committed)) expect(n, file).toBeGreaterThan(0);
  });
});
