/**
 * rdma-core-tests' report files (the same four as `run`) and their merge by `compare`:
 * results.json carries `rdmaCoreTests` beside `scenarios`, and two kernel lines compare
 * into one table of test x device x line in comparison.md.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ArgumentError } from '../../../src/errors.js';
import {
  compareReports,
  readReports,
  renderComparisonMarkdown,
} from '../../../src/interop/comparison/index.js';
import {
  judgeTests,
  type RdmaCoreTestResult,
  type TestRun,
  testJunitXml,
  testMarkdown,
  writeTestReport,
} from '../../../src/rdma-core-tests/index.js';

const scratch = mkdtempSync(join(tmpdir(), 'rdma-core-tests-report-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const RESIZE = 'tests.test_cq.CQTest.test_resize_cq';
const ALLOC = 'tests.test_pd.PDTest.test_alloc_pd';
const RC = 'tests.test_qp.QPTest.test_create_rc_qp';
const MLX5 = 'tests.test_mlx5_dc.DCTest.test_dc_rdma_write';

function runOf(line: string, kernel: string, resize: RdmaCoreTestResult['outcome']): TestRun {
  const r = (id: string, device: string, outcome: RdmaCoreTestResult['outcome'], extra = {}) => ({
    id,
    device,
    outcome,
    seconds: 0.5,
    ...extra,
  });
  const rxe = judgeTests(
    [
      r(ALLOC, 'rxe0', 'pass'),
      r(
        RESIZE,
        'rxe0',
        resize,
        resize === 'error' ? { message: 'Got timeout on polling (1 CQEs remaining)' } : {},
      ),
      r(RC, 'rxe0', 'pass'),
      r(MLX5, 'rxe0', 'skip', { reason: 'Can not run the test over non MLX5 device' }),
    ],
    { provider: 'rxe', kernel, rdmaCore: '56.1' },
  );
  const siw = judgeTests(
    [
      r(ALLOC, 'siw0', 'pass'),
      r(RESIZE, 'siw0', 'skip', { reason: "No supported port is up, can't run traffic" }),
      r(RC, 'siw0', 'fail', { message: 'AssertionError: 1 != 2' }),
      r(MLX5, 'siw0', 'skip', { reason: 'Can not run the test over non MLX5 device' }),
    ],
    { provider: 'siw', kernel, rdmaCore: '56.1' },
  );
  return {
    line,
    kernel,
    rdmaCore: '56.1',
    python: '3.11.2',
    devices: ['rxe0', 'siw0'],
    results: [...rxe, ...siw],
    truncated: [],
  };
}

describe('the report files of rdma-core-tests', () => {
  const run = runOf('6.12', '6.12.95+deb12-amd64', 'error');
  const dir = join(scratch, 'one');
  writeTestReport(dir, run);

  it('results.json: run’s schema, no scenarios, one entry per test and device', () => {
    const doc = JSON.parse(readFileSync(join(dir, 'results.json'), 'utf8'));
    expect(doc.schema).toBe('rdma-interop/results@2');
    expect(doc.scenarios).toEqual([]);
    expect(doc.environment.kernel).toBe('6.12.95+deb12-amd64');
    expect(doc.environment.devices).toEqual([
      { name: 'rxe0', provider: 'rxe' },
      { name: 'siw0', provider: 'siw' },
    ]);
    expect(doc.rdmaCoreTests).toHaveLength(8);
    expect(
      doc.rdmaCoreTests.find(
        (t: { id: string; device: string }) => t.id === RESIZE && t.device === 'rxe0',
      ),
    ).toMatchObject({
      outcome: 'error',
      verdict: 'known',
      explainedBy: 'rxe-resize-cq-completions-late',
    });
    expect(doc.totals).toMatchObject({ rdmaCoreTests: 8, pass: 3, skip: 3, known: 1, finding: 1 });
    expect(doc.findings.map((f: { id: string }) => f.id)).toEqual([
      'rxe-resize-cq-completions-late',
    ]);
  });

  it('junit.xml: skips skipped, the finding failed, the known failure passed', () => {
    const xml = testJunitXml(run);
    expect(xml.match(/<skipped/g)).toHaveLength(3);
    expect(xml.match(/<failure/g)).toHaveLength(1);
    expect(xml).toContain('AssertionError: 1 != 2');
    expect(xml).toContain('known: rxe-resize-cq-completions-late');
  });

  it('report.md: the counts, each failure with its cause, the skip reasons per device', () => {
    const md = testMarkdown(run);
    expect(md).toContain('| rxe0 | 4 | pass 2, skip 1, known 1 |');
    expect(md).toContain('| siw0 | 4 | pass 1, skip 2, finding 1 |');
    expect(md).toMatch(
      /tests\.test_qp\.QPTest\.test_create_rc_qp \| siw0 \| fail \| finding \| \*\*unrecorded\*\*: AssertionError: 1 != 2/,
    );
    expect(md).toContain('| Can not run the test over non MLX5 device | 1 | 1 |');
    expect(readFileSync(join(dir, 'report.html'), 'utf8')).toContain('<td class="known"');
  });
});

describe('compare: rdma-core tests x device x kernel line in one table', () => {
  const a = join(scratch, 'lines', '6.12');
  const b = join(scratch, 'lines', '7.3');
  writeTestReport(a, runOf('6.12', '6.12.95+deb12-amd64', 'error'));
  writeTestReport(b, runOf('7.3', '7.3.4+deb13-amd64', 'pass'));
  const runs = readReports([join(scratch, 'lines')]);
  const comparison = compareReports(runs);

  it('reads the tests of each run', () => {
    expect(runs.map((r) => r.rdmaCoreTests?.length)).toEqual([8, 8]);
    expect(comparison.runs.map((r) => r.devices.map((d) => d.name))).toEqual([
      ['rxe0', 'siw0'],
      ['rxe0', 'siw0'],
    ]);
  });

  it('a verdict that changes between lines is a changed value', () => {
    const changed = comparison.fields.filter((f) => f.changed && f.field === 'rdma-core-test');
    expect(changed.map((f) => [f.scenario, f.device, f.values])).toEqual([
      [RESIZE, 'rxe0', { '6.12': 'known', '7.3': 'stale' }],
    ]);
  });

  it('comparison.md has the table, tests skipped everywhere counted', () => {
    const md = renderComparisonMarkdown(comparison);
    expect(md).toContain("## rdma-core's own tests");
    expect(md).toContain('| test | rxe0 6.12 | rxe0 7.3 | siw0 6.12 | siw0 7.3 |');
    expect(md).toContain(
      '| test_cq.CQTest.test_resize_cq | known (rxe-resize-cq-completions-late) | stale (rxe-resize-cq-completions-late) | skip | skip |',
    );
    expect(md).toContain('| test_qp.QPTest.test_create_rc_qp | pass | pass | finding | finding |');
    expect(md).toContain('1 more tests skipped on every device and run.');
  });

  it('a run whose rdmaCoreTests are not tests is a typed error, not a TypeError', () => {
    const [first] = runs;
    if (first === undefined) throw new Error('no run');
    for (const bad of ['x', [{ id: 1, device: 'rxe0', verdict: 'pass' }], [null]])
      expect(() => compareReports([{ ...first, rdmaCoreTests: bad as unknown as [] }])).toThrow(
        ArgumentError,
      );
  });

  it('a suite report without rdmaCoreTests compares as before (no table)', () => {
    const md = renderComparisonMarkdown(
      compareReports(readReports([join('test', 'fixtures', 'reports', 'guest-6.1')])),
    );
    expect(md).not.toContain("rdma-core's own tests");
  });
});
