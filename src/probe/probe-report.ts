/**
 * `probe --report <dir>`: results.json (schema `rdma-interop/probe@1`, with the
 * `assertions` array), junit.xml (a suite per kernel and device, a case per assertion)
 * and report.md (the assertion x device x kernel matrix, which 2026 fixes each kernel line
 * has as observed, every difference, and the console tail of each crash).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type { Builder } from 'junit-report-builder';
import { type BlockCoverage, renderBlockCoverage } from '../coverage/blocks.js';
import { type FunctionCoverage, renderFunctionCoverage } from '../coverage/functions.js';
import type { GuidedSummary } from '../coverage/guided-roce.js';
import type { AssertionResult } from './assertion.js';
import { writeFindingFiles } from './finding-files.js';
import type { FuzzSummary } from './fuzz-loop.js';
import { type ResourceJudgement, resourceLeaks } from './oracles/resource-count.js';

// The package is CommonJS whose module.exports is the builder itself (report-files.ts).
const junit = createRequire(import.meta.url)('junit-report-builder') as Builder;

export const PROBE_SCHEMA = 'rdma-interop/probe@1';

/** A regression the assertions check, and whether each kernel line has its fix. */
export interface FixObservation {
  readonly assertion: string;
  readonly title: string;
  readonly cve?: string;
  readonly commit?: string;
  /** Kernel line -> what the run saw. */
  readonly kernels: Readonly<Record<string, FixSeen>>;
}

/**
 * What a kernel line showed for a fix: its assertion left the kernel unhurt, crashed it or
 * left kernel-log lines, did not run, or met a known behaviour saying the kernel has no
 * such code (`codeAbsent` in judge/record.ts: e.g. no ATOMIC WRITE before 6.2).
 */
export type FixSeen = 'has the fix' | 'lacks the fix' | 'not affected' | 'not run';

/** One kernel line's run: its line name and the kernel release the guest reported. */
export interface ProbeKernel {
  readonly line: string;
  readonly release: string;
}

export interface ProbeDocument {
  readonly schema: typeof PROBE_SCHEMA;
  readonly kernels: readonly ProbeKernel[];
  readonly assertions: readonly AssertionResult[];
  readonly fixes: readonly FixObservation[];
  readonly fuzz: readonly FuzzSummary[];
  /** `--coverage`: per kernel, the functions each phase entered (coverage/functions.ts). */
  readonly coverage?: readonly FunctionCoverage[];
  /** `--coverage blocks`: per kernel, the blocks of rxe and siw each phase first reached. */
  readonly blocks?: readonly BlockCoverage[];
  /**
   * The resource-count oracle: per kernel and pass, the counts before the assertions and
   * after the fuzz, judged (oracles/resource-count.ts); a pass that grew is a finding.
   */
  readonly resources?: readonly ResourceJudgement[];
}

/** Whether an assertion's verdict lets the run pass. */
export function assertionPassed(r: AssertionResult): boolean {
  return r.verdict === 'match' || r.verdict === 'known';
}

/** A result hurt the kernel: a crash, or dmesg lines after it. */
function hurt(r: AssertionResult): boolean {
  return r.verdict === 'kernel-crash' || (r.survival?.dmesg.length ?? 0) > 0;
}

/** The matrix column of a result: kernel line, device and siw variant. */
export function columnOf(r: AssertionResult, lineOf: (release: string) => string): string {
  const device = r.siwVariant === 'rfc7306' ? `${r.device}+rfc7306` : r.device;
  return `${lineOf(r.kernel)} ${device}`;
}

/** Which kernel lines have each regression's fix, as the run observed it. */
export function observeFixes(
  regressions: readonly {
    id: string;
    regression: { title: string; cve?: string; commit?: string };
  }[],
  results: readonly AssertionResult[],
  kernels: readonly ProbeKernel[],
  codeAbsent: ReadonlySet<string> = new Set(),
  lacksFix: ReadonlySet<string> = new Set(),
): FixObservation[] {
  return regressions.map((a) => {
    const byKernel: Record<string, FixSeen> = {};
    for (const k of kernels) {
      const rows = results.filter(
        (r) => r.id === a.id && r.kernel === k.release && r.verdict !== 'not-run',
      );
      byKernel[k.line] =
        rows.length === 0
          ? 'not run'
          : rows.some((r) => hurt(r) || (r.known !== undefined && lacksFix.has(r.known)))
            ? 'lacks the fix'
            : rows.every((r) => r.known !== undefined && codeAbsent.has(r.known))
              ? 'not affected'
              : 'has the fix';
    }
    return {
      assertion: a.id,
      title: a.regression.title,
      ...(a.regression.cve === undefined ? {} : { cve: a.regression.cve }),
      ...(a.regression.commit === undefined ? {} : { commit: a.regression.commit }),
      kernels: byKernel,
    };
  });
}

function cell(r: AssertionResult | undefined): string {
  if (r === undefined) return '';
  if (r.verdict === 'known') return `known (${r.known ?? '?'})`;
  return r.verdict;
}

/** A guided campaign's own figures (coverage/guided-roce.ts), when the summary is one. */
function guidedOf(f: FuzzSummary): GuidedSummary['guided'] | undefined {
  return 'guided' in f ? (f as GuidedSummary).guided : undefined;
}

function guidedText(f: FuzzSummary): string {
  const g = guidedOf(f);
  if (g === undefined) return '';
  const kept = Object.entries(g.kept)
    .filter(([, n]) => n > 0)
    .map(([m, n]) => `${m} ${n}`)
    .join(', ');
  return `; feedback ${g.feedback} ${g.coverageStart} -> ${g.coverageEnd}, corpus ${g.seeds} seeds + ${g.corpus - g.seeds} kept${kept === '' ? '' : ` (${kept})`}`;
}

/** report.md. */
export function renderProbeMarkdown(doc: ProbeDocument): string {
  const lineOf = (release: string) =>
    doc.kernels.find((k) => k.release === release)?.line ?? release;
  const columns = [...new Set(doc.assertions.map((r) => columnOf(r, lineOf)))];
  const ids = [...new Set(doc.assertions.map((r) => r.id))];
  const out: string[] = ['# probe: the packet tester against rxe and siw', ''];
  out.push(
    `Kernels: ${doc.kernels.map((k) => `${k.line} (${k.release})`).join(', ')}. ` +
      `${doc.assertions.length} results, ${doc.assertions.filter(assertionPassed).length} pass or known.`,
    '',
  );
  out.push(`| assertion | ${columns.join(' | ')} |`, `|---|${columns.map(() => '---').join('|')}|`);
  for (const id of ids)
    out.push(
      `| ${id} | ${columns
        .map((c) => cell(doc.assertions.find((r) => r.id === id && columnOf(r, lineOf) === c)))
        .join(' | ')} |`,
    );
  const perDevice = new Map<string, number>();
  for (const c of columns)
    perDevice.set(c, doc.assertions.filter((r) => columnOf(r, lineOf) === c).length);
  out.push('', '## Assertions per column', '');
  for (const [c, n] of perDevice) out.push(`- ${c}: ${n}`);
  if (doc.fixes.length > 0) {
    const lines = doc.kernels.map((k) => k.line);
    out.push('', '## 2026 fixes, as observed', '');
    out.push(
      `| fix | assertion | ${lines.join(' | ')} |`,
      `|---|---|${lines.map(() => '---').join('|')}|`,
    );
    for (const f of doc.fixes)
      out.push(
        `| ${f.title}${f.cve === undefined ? '' : ` (${f.cve})`}${f.commit === undefined ? '' : ` ${f.commit.slice(0, 12)}`} | ${f.assertion} | ${lines.map((l) => f.kernels[l] ?? 'not run').join(' | ')} |`,
      );
  }
  const differences = doc.assertions.filter((r) => r.verdict !== 'match');
  if (differences.length > 0) {
    out.push('', '## Differences', '');
    for (const r of differences) {
      out.push(`### ${r.id} on ${columnOf(r, lineOf)}: ${r.verdict}`, '');
      if (r.known !== undefined) out.push(`Known behaviour \`${r.known}\`.`, '');
      if (r.note !== undefined) out.push(r.note, '');
      out.push(
        '```',
        `expected: ${JSON.stringify(r.expected)}`,
        `observed: ${JSON.stringify(r.observed)}`,
      );
      if (r.survival !== undefined)
        out.push(
          `survival: device works ${r.survival.deviceWorks}, guest up ${r.survival.guestUp}`,
          ...r.survival.dmesg.map((l) => `dmesg: ${l}`),
        );
      out.push('```', '');
    }
  }
  if (doc.fuzz.length > 0) {
    out.push('', '## Fuzz', '');
    for (const f of doc.fuzz)
      out.push(
        `- ${lineOf(f.kernel)} ${f.device}: seed ${f.seed}, ${f.packets} ${guidedOf(f) === undefined ? 'packets' : 'guided sequences'} in ${f.batches} batches, ${f.findings.length} findings${explainedText(f)}${guidedText(f)}`,
        ...f.findings.map(
          (x) =>
            `  - ${x.record === undefined ? 'unexplained' : `recorded (${x.record})`}: ${x.why}`,
        ),
      );
  }
  if (doc.resources !== undefined && doc.resources.length > 0) {
    const leaks = resourceLeaks(doc.resources, lineOf);
    out.push('', '## Resource counts', '');
    out.push(
      `Per pass, \`rdma resource\` and the RDMA and socket-buffer slabs before the assertions and after the fuzz (oracle resource-count): ${doc.resources.length} passes, ${leaks.length} grew.`,
      '',
    );
    for (const leak of leaks) out.push(`- ${leak}`);
  }
  if (doc.coverage !== undefined && doc.coverage.length > 0)
    out.push('', renderFunctionCoverage(doc.coverage, lineOf));
  if (doc.blocks !== undefined && doc.blocks.length > 0)
    out.push('', renderBlockCoverage(doc.blocks));
  return `${out.join('\n')}\n`;
}

/** ` (n explained by records)` when some findings name a recorded kernel defect. */
function explainedText(f: FuzzSummary): string {
  const n = f.findings.filter((x) => x.record !== undefined).length;
  return n === 0 ? '' : ` (${n} explained by a record)`;
}

/** junit.xml: a suite per column, a case per assertion. */
export function renderProbeJunit(doc: ProbeDocument): string {
  const lineOf = (release: string) =>
    doc.kernels.find((k) => k.release === release)?.line ?? release;
  const builder = junit.newBuilder();
  const suites = new Map<string, ReturnType<typeof builder.testSuite>>();
  for (const r of doc.assertions) {
    const column = columnOf(r, lineOf);
    let suite = suites.get(column);
    if (suite === undefined) {
      suite = builder.testSuite().name(`probe ${column}`);
      suites.set(column, suite);
    }
    const test = suite
      .testCase()
      .className(`probe.${column.replace(/ /g, '.')}`)
      .name(r.id);
    const text = `${r.note ?? ''}\nexpected: ${JSON.stringify(r.expected)}\nobserved: ${JSON.stringify(r.observed)}`;
    if (r.verdict === 'not-run') test.skipped();
    else if (!assertionPassed(r)) test.failure(`${r.verdict}: ${text}`, r.verdict);
    else if (r.verdict === 'known') test.standardOutput(text);
  }
  for (const f of doc.fuzz) {
    const suite = builder.testSuite().name(`fuzz ${lineOf(f.kernel)} ${f.device}`);
    const test = suite.testCase().className('probe.fuzz').name(`seed ${f.seed}`);
    const unexplained = f.findings.filter((x) => x.record === undefined);
    if (unexplained.length > 0)
      test.failure(`${unexplained.length} findings: ${JSON.stringify(unexplained)}`, 'finding');
    else if (f.findings.length > 0)
      test.standardOutput(`recorded kernel defects: ${JSON.stringify(f.findings)}`);
  }
  for (const j of doc.resources ?? []) {
    const suite = builder.testSuite().name(`resources ${lineOf(j.kernel)}`);
    const test = suite.testCase().className('probe.resources').name(j.pass);
    if (j.grew.length > 0) test.failure(`grew: ${j.grew.join(', ')}`, 'resource-count');
  }
  return builder.build();
}

/** Writes results.json, junit.xml, report.md and findings/*.json (one per fuzz finding) into `dir`. */
export function writeProbeReport(dir: string, doc: ProbeDocument): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'results.json'), `${JSON.stringify(doc, null, 2)}\n`);
  writeFileSync(join(dir, 'junit.xml'), renderProbeJunit(doc));
  writeFileSync(join(dir, 'report.md'), renderProbeMarkdown(doc));
  writeFindingFiles(dir, doc.fuzz);
}
