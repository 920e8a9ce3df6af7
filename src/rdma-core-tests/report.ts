/**
 * `rdma-core-tests --report <dir>`: the same report files as `run` (results.json in
 * `run`'s schema, junit.xml, report.md, report.html), with rdma-core's tests as a third
 * kind of result beside scenarios and assertions: results.json's `rdmaCoreTests`, read by
 * `compare` (interop/comparison/read.ts) into one table of test x device x kernel line.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { hostname } from 'node:os';
import { join } from 'node:path';
import type { Builder } from 'junit-report-builder';
import { RESULTS_SCHEMA } from '../interop/report-files.js';
import { type JudgedTest, type TestVerdict, testPassed } from './judge.js';
import { RDMA_CORE_TEST_RECORDS } from './records.js';

const junit = createRequire(import.meta.url)('junit-report-builder') as Builder;

/** One kernel line's run of the tests (one guest). */
export interface TestRun {
  /** The line (`6.12`) or `here` (the host's own devices). */
  readonly line: string;
  /** The guest's `uname -r`. */
  readonly kernel: string;
  readonly rdmaCore: string;
  readonly python: string;
  readonly devices: readonly string[];
  readonly results: readonly JudgedTest[];
  /** Devices whose runner stopped before its last test (a crash or time-out). */
  readonly truncated: readonly string[];
  /** Wall-clock seconds of the guest (boot and tests), when it was booted for them. */
  readonly guestSeconds?: number;
}

/** results.json's entry of one test. */
export function testEntry(t: JudgedTest): Record<string, unknown> {
  return {
    id: t.id,
    device: t.device,
    provider: t.provider,
    outcome: t.outcome,
    verdict: t.verdict,
    ...(t.reason === undefined ? {} : { reason: t.reason }),
    ...(t.message === undefined ? {} : { message: t.message }),
    ...(t.explainedBy === undefined ? {} : { explainedBy: t.explainedBy }),
    seconds: t.seconds,
  };
}

/** How many tests have each verdict. */
export function countVerdicts(results: readonly JudgedTest[]): Record<TestVerdict, number> {
  const n: Record<TestVerdict, number> = { pass: 0, skip: 0, known: 0, finding: 0, stale: 0 };
  for (const r of results) n[r.verdict] += 1;
  return n;
}

/** results.json of one line's run. */
export function testResultsDocument(run: TestRun): unknown {
  const totals = countVerdicts(run.results);
  const records = new Set(run.results.flatMap((r) => r.explainedBy ?? []));
  return {
    schema: RESULTS_SCHEMA,
    environment: {
      host: hostname(),
      kernel: run.kernel,
      rdmaCore: run.rdmaCore,
      node: process.versions.node,
      python: run.python,
      devices: run.devices.map((d) => ({ name: d, provider: d.replace(/\d+$/, '') })),
    },
    strict: false,
    totals: { scenarios: 0, rdmaCoreTests: run.results.length, ...totals },
    scenarios: [],
    rdmaCoreTests: run.results.map(testEntry),
    ...(run.truncated.length === 0 ? {} : { truncated: run.truncated }),
    ...(run.guestSeconds === undefined ? {} : { guestSeconds: run.guestSeconds }),
    findings: RDMA_CORE_TEST_RECORDS.filter((k) => records.has(k.id)).map((k) => ({
      id: k.id,
      why: k.why,
      spec: k.spec ?? null,
    })),
  };
}

/** junit.xml: a suite per device, a case per test (skips skipped, findings failed). */
export function testJunitXml(run: TestRun): string {
  const builder = junit.newBuilder();
  for (const device of run.devices) {
    const suite = builder.testSuite().name(`rdma-core-tests ${device} ${run.kernel}`);
    for (const t of run.results.filter((r) => r.device === device)) {
      const c = suite.testCase().className(`rdma-core.${device}`).name(t.id).time(t.seconds);
      if (t.verdict === 'skip') c.skipped().standardOutput(t.reason ?? '');
      else if (!testPassed(t.verdict))
        c.failure(
          t.verdict === 'stale'
            ? `stale: record ${t.explainedBy ?? ''} says it fails, it passed`
            : `${t.outcome}: ${t.message ?? ''}`,
          t.verdict,
        );
      else if (t.explainedBy !== undefined) c.standardOutput(`known: ${t.explainedBy}`);
    }
    if (run.truncated.includes(device))
      suite
        .testCase()
        .className(`rdma-core.${device}`)
        .name('(runner)')
        .error('the runner stopped before its last test', 'truncated');
  }
  return builder.build();
}

function md(text: string): string {
  return text.replace(/\|/g, '\\|').replace(/\n/g, '<br>');
}

/** `pass 37, skip 270, known 1` */
export function verdictCounts(results: readonly JudgedTest[]): string {
  return Object.entries(countVerdicts(results))
    .filter(([, n]) => n > 0)
    .map(([v, n]) => `${v} ${n}`)
    .join(', ');
}

/** Each skip reason with how many tests gave it, most first. */
export function skipReasons(results: readonly JudgedTest[]): [string, number][] {
  const n = new Map<string, number>();
  for (const r of results)
    if (r.verdict === 'skip') n.set(r.reason ?? '', (n.get(r.reason ?? '') ?? 0) + 1);
  return [...n].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
}

/** report.md of one line's run: the counts, every failure with its cause, the skips. */
export function testMarkdown(run: TestRun): string {
  const out = [
    "# rdma-interop: rdma-core's own tests",
    '',
    `Kernel ${run.kernel} (line ${run.line}), rdma-core ${run.rdmaCore} tests and pyverbs, Python ${run.python}.`,
    '',
    '| device | tests | verdicts |',
    '|---|---|---|',
  ];
  for (const d of run.devices) {
    const of = run.results.filter((r) => r.device === d);
    out.push(
      `| ${d} | ${of.length}${run.truncated.includes(d) ? ' (runner stopped early)' : ''} | ${verdictCounts(of)} |`,
    );
  }
  const failed = run.results.filter((r) => r.outcome === 'fail' || r.outcome === 'error');
  const stale = run.results.filter((r) => r.verdict === 'stale');
  out.push('', '## Failures', '');
  if (failed.length + stale.length === 0) out.push('None.');
  else {
    out.push('| test | device | outcome | verdict | cause |', '|---|---|---|---|---|');
    for (const t of [...failed, ...stale]) {
      const k = RDMA_CORE_TEST_RECORDS.find((r) => r.id === t.explainedBy);
      const cause =
        t.verdict === 'stale'
          ? `**stale record** ${t.explainedBy ?? ''}: the test passed`
          : k === undefined
            ? `**unrecorded**: ${t.message?.split('\n').at(-1) ?? ''}`
            : `${k.id}: ${k.why}`;
      out.push(`| ${md(t.id)} | ${t.device} | ${t.outcome} | ${t.verdict} | ${md(cause)} |`);
    }
  }
  out.push('', '## Skips (rdma-core’s reasons)', '');
  out.push(
    `| reason | ${run.devices.join(' | ')} |`,
    `|---|${run.devices.map(() => '---').join('|')}|`,
  );
  for (const [reason] of skipReasons(run.results))
    out.push(
      `| ${md(reason)} | ${run.devices
        .map(
          (d) =>
            run.results.filter(
              (r) => r.device === d && r.verdict === 'skip' && (r.reason ?? '') === reason,
            ).length,
        )
        .join(' | ')} |`,
    );
  return out.join('\n');
}

function html(text: string): string {
  return text
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;');
}

/** report.html: one self-contained page, the table of tests x devices. */
export function testHtml(run: TestRun): string {
  const ids = [...new Set(run.results.map((r) => r.id))];
  const rows = ids.map((id) => {
    const cells = run.devices.map((d) => {
      const t = run.results.find((r) => r.id === id && r.device === d);
      if (t === undefined) return '<td></td>';
      const title = t.reason ?? t.explainedBy ?? t.message ?? '';
      return `<td class="${t.verdict}" title="${html(title)}">${t.verdict}</td>`;
    });
    return `<tr><th>${html(id)}</th>${cells.join('')}</tr>`;
  });
  return [
    '<!doctype html><html lang="en"><head><meta charset="utf-8">',
    `<title>rdma-core tests, ${html(run.kernel)}</title>`,
    '<style>body{font:14px sans-serif}td,th{padding:2px 8px;text-align:left}',
    '.pass{background:#cfc}.skip{background:#eee}.known{background:#ffc}.finding,.stale{background:#fcc}</style>',
    '</head><body>',
    `<h1>rdma-core's own tests</h1><p>Kernel ${html(run.kernel)}, rdma-core ${html(run.rdmaCore)}.</p>`,
    `<table><thead><tr><th>test</th>${run.devices.map((d) => `<th>${html(d)}</th>`).join('')}</tr></thead>`,
    `<tbody>${rows.join('\n')}</tbody></table>`,
    '</body></html>',
    '',
  ].join('\n');
}

/** Writes the four report files of one line's run into `dir`. */
export function writeTestReport(dir: string, run: TestRun): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, 'results.json'),
    `${JSON.stringify(testResultsDocument(run), null, 2)}\n`,
  );
  writeFileSync(join(dir, 'junit.xml'), testJunitXml(run));
  writeFileSync(join(dir, 'report.md'), `${testMarkdown(run)}\n`);
  writeFileSync(join(dir, 'report.html'), testHtml(run));
}
