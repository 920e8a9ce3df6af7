/**
 * rdma-core's tests in `rdma-interop compare`: what read.ts takes of a results.json's
 * `rdmaCoreTests` (report.ts), and the one table of test x device x run (kernel line)
 * that comparison.md shows after the scenarios. The merge itself is the comparison's own
 * (merge.ts): each test is a compared value `rdma-core-test` of its device, so a verdict
 * that changes between kernel lines counts as a changed value like any other.
 */
import type { ComparedField, Comparison } from '../interop/comparison/merge.js';

/** The field name a test's verdict is compared under. */
export const TEST_FIELD = 'rdma-core-test';

/** One test as the comparison reads it. */
export interface ReportTest {
  readonly id: string;
  readonly device: string;
  /** Our verdict (pass, skip, known, finding, stale). */
  readonly verdict: string;
  /** The record that explains a failure. */
  readonly explainedBy?: string;
}

/** The `rdmaCoreTests` of a parsed results.json; [] when it has none (older reports). */
export function reportTestsOf(document: Readonly<Record<string, unknown>>): ReportTest[] {
  const raw = document.rdmaCoreTests;
  if (!Array.isArray(raw)) return [];
  return raw.flatMap((x): ReportTest[] => {
    const t = (typeof x === 'object' && x !== null ? x : {}) as Record<string, unknown>;
    if (typeof t.id !== 'string' || typeof t.device !== 'string') return [];
    return [
      {
        id: t.id,
        device: t.device,
        verdict: typeof t.verdict === 'string' ? t.verdict : 'unknown',
        ...(typeof t.explainedBy === 'string' ? { explainedBy: t.explainedBy } : {}),
      },
    ];
  });
}

function md(text: string): string {
  return text.replace(/\|/g, '\\|').replace(/\n/g, '<br>');
}

/**
 * comparison.md's section: one row per test that did something other than skip on some
 * run, one column per device and run; the tests skipped everywhere as a count.
 */
export function renderTestsTable(c: Comparison): string[] {
  const tests = c.fields.filter((f) => f.field === TEST_FIELD);
  if (tests.length === 0) return [];
  const columns = [...new Set(tests.map((f) => f.device))].flatMap((device) =>
    c.runs
      .filter((r) => tests.some((f) => f.device === device && f.values[r.label] !== undefined))
      .map((r) => ({ device, label: r.label })),
  );
  const ids = [...new Set(tests.map((f) => f.scenario))];
  const byKey = new Map<string, ComparedField>(
    tests.map((f) => [`${f.scenario}\u0000${f.device}`, f]),
  );
  const cell = (id: string, device: string, label: string): string => {
    const f = byKey.get(`${id}\u0000${device}`);
    const v = f?.values[label] ?? '—';
    const reason = f?.reasons[label];
    return reason === undefined ? v : `${v} (${reason})`;
  };
  const allSkipped = ids.filter((id) =>
    columns.every(({ device, label }) => ['skip', '—'].includes(cell(id, device, label))),
  );
  const shown = ids.filter((id) => !allSkipped.includes(id));
  const out = ['', "## rdma-core's own tests", ''];
  out.push(`| test | ${columns.map((x) => md(`${x.device} ${x.label}`)).join(' | ')} |`);
  out.push(`|---|${columns.map(() => '---').join('|')}|`);
  for (const id of shown)
    out.push(
      `| ${md(id.replace(/^tests\./, ''))} | ${columns.map((x) => md(cell(id, x.device, x.label))).join(' | ')} |`,
    );
  out.push('', `${allSkipped.length} more tests skipped on every device and run.`);
  return out;
}
