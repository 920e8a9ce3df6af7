/**
 * `run --report <dir>`: results.json (versioned schema), junit.xml (one test case per
 * scenario and device/API, the differences in the failure text), report.md, report.html
 * (report-html/: the matrix and each result's ladder, one self-contained page) and the
 * pcap of every captured scenario.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type { Builder } from 'junit-report-builder';
import { requireArray, requireBoolean, requireObject, requireString } from '../arguments.js';
import { requireResults, requireRunEnvironment } from './arguments.js';
import type { RunEnvironment } from './environment.js';
import { type PairGuest, sideText } from './link/sides.js';
import { columnOf, differenceLines, renderMarkdown } from './report.js';
import { memoryBefore, renderReportHtml, resultsEntryOf } from './report-html/index.js';
import { passed, type ScenarioResult } from './runner.js';
import { deviceOf } from './scenario.js';

// The package is CommonJS whose module.exports is the builder itself (its typings say
// `export default`, which an ESM default import would see as `.default`).
const junit = createRequire(import.meta.url)('junit-report-builder') as Builder;

/** Bumped on any incompatible change to results.json. */
export const RESULTS_SCHEMA = 'rdma-interop/results@2';

/** A link run's guests (`run --link`: link/sides.ts): each one's environment. */
export type PairEnvironments = Readonly<Record<PairGuest, RunEnvironment>>;

/**
 * results.json as a JSON value: bigints never appear (fields are formatted strings). A
 * link run names both guests' environments (`pair`) and each result's sides.
 */
export function resultsDocument(
  results: readonly ScenarioResult[],
  env: RunEnvironment,
  strict: boolean,
  pair?: PairEnvironments,
): unknown {
  requireResults(results);
  requireRunEnvironment(env);
  requireBoolean('interop', 'strict', strict);
  if (pair !== undefined) {
    requireRunEnvironment(pair.A, 'pair.A');
    requireRunEnvironment(pair.B, 'pair.B');
  }
  const count = (v: string) => results.filter((r) => r.verdict === v).length;
  return {
    schema: RESULTS_SCHEMA,
    environment: env,
    ...(pair === undefined ? {} : { pair }),
    strict,
    totals: {
      scenarios: results.length,
      passed: results.filter((r) => passed(r.verdict, strict)).length,
      match: count('match'),
      known: count('known'),
      finding: count('finding'),
      fail: count('fail'),
      'not-run': count('not-run'),
      'not-applicable': count('not-applicable'),
      fieldsCompared: results.reduce(
        (n, r) =>
          n +
          new Set([...Object.keys(r.engine.fields), ...Object.keys(r.kernel?.fields ?? {})]).size,
        0,
      ),
    },
    scenarios: results.map((r) => ({
      id: r.scenario.id,
      name: r.scenario.name,
      family: r.scenario.family,
      title: r.scenario.title,
      device: deviceOf(r.scenario),
      // The reference target a scenario bound to another device is written for (issue 37):
      // compare lines its rows up with the target's own runs.
      ...(deviceOf(r.scenario) === r.scenario.device ? {} : { target: r.scenario.device }),
      postApi: r.scenario.postPath === 'ex' ? 'ibv_wr_*' : 'ibv_post_send',
      verdict: r.verdict,
      ...(r.pair === undefined ? {} : { pair: r.pair }),
      seconds: Number(r.seconds.toFixed(3)),
      engine: r.engine.fields,
      device_fields: r.kernel?.fields ?? null,
      // What the device's run noted beside its fields (not compared): repeats on the wire,
      // the exact words of Reads judged by their window (link/read-window.ts).
      ...(r.kernel?.note === undefined ? {} : { device_note: r.kernel.note }),
      differences: r.differences.map((d) => ({
        field: d.field,
        engine: d.engine,
        device: d.kernel,
        explainedBy:
          d.explainedBy === undefined
            ? null
            : d.explainedBy === 'consequence'
              ? 'consequence-of-refused-post'
              : d.explainedBy.id,
      })),
      stale: r.stale.map((s) => s.id),
      ...(r.error === undefined ? {} : { error: r.error }),
      ...(r.notApplicable === undefined ? {} : { notApplicable: r.notApplicable }),
      ...(r.kernel?.pcap === undefined ? {} : { pcap: `pcap/${r.scenario.id}.pcap` }),
    })),
    findings: [
      ...new Map(
        results
          .flatMap((r) => r.findings)
          .map((f) => [f.id, { id: f.id, why: f.why, spec: f.spec ?? null }]),
      ).values(),
    ],
    // No `probes` since issue 31: run's wire probes are the tester's assertions of the
    // same ids (`rdma-interop probe`); compare and report still read them in older files.
  };
}

/** junit.xml: a suite per device/API column, a case per scenario. */
export function junitXml(results: readonly ScenarioResult[], strict: boolean): string {
  requireResults(results);
  requireBoolean('interop', 'strict', strict);
  const builder = junit.newBuilder();
  const suites = new Map<string, ReturnType<typeof builder.testSuite>>();
  for (const r of results) {
    const column = columnOf(r.scenario);
    let suite = suites.get(column);
    if (suite === undefined) {
      suite = builder.testSuite().name(`interop ${column}`);
      suites.set(column, suite);
    }
    const test = suite
      .testCase()
      .className(`interop.${deviceOf(r.scenario)}.${r.scenario.postPath}`)
      .name(r.scenario.id)
      .time(r.seconds);
    if (r.pair !== undefined)
      test
        .property('requester', sideText(r.pair.requester))
        .property('responder', sideText(r.pair.responder));
    const text = differenceLines(r).join('\n');
    if (r.verdict === 'not-run') test.error(r.error ?? 'not-run', 'not-run', text);
    else if (r.verdict === 'not-applicable')
      test.skipped().standardOutput(`not applicable: lacks ${(r.notApplicable ?? []).join(', ')}`);
    else if (!passed(r.verdict, strict)) test.failure(`${r.verdict}: ${text}`, r.verdict);
    else if (text !== '') test.standardOutput(text);
  }
  return builder.build();
}

/** Writes the five kinds of report file into `dir`. */
export function writeReport(
  dir: string,
  results: readonly ScenarioResult[],
  env: RunEnvironment,
  strict: boolean,
  pair?: PairEnvironments,
): void {
  // Checked before the directory is made: a wrong call writes nothing.
  requireString('interop', 'dir', dir);
  requireArray('interop', 'results', results).forEach((r, i) => {
    requireObject('interop', `results[${i}]`, r);
  });
  requireRunEnvironment(env);
  requireBoolean('interop', 'strict', strict);
  mkdirSync(dir, { recursive: true });
  const document = resultsDocument(results, env, strict, pair);
  writeFileSync(join(dir, 'results.json'), `${JSON.stringify(document, null, 2)}\n`);
  writeFileSync(join(dir, 'junit.xml'), junitXml(results, strict));
  writeFileSync(join(dir, 'report.md'), `${renderMarkdown(results, env, strict, pair)}\n`);
  const byId = new Map(results.map((r) => [r.scenario.id, r]));
  writeFileSync(
    join(dir, 'report.html'),
    renderReportHtml([
      {
        line: env.kernel,
        results: resultsEntryOf(document),
        pcap: (path) => byId.get(path.replace(/^pcap\/|\.pcap$/g, ''))?.kernel?.pcap,
        memoryBefore: (id) => {
          const r = byId.get(id);
          return r === undefined ? undefined : memoryBefore(r.scenario);
        },
      },
    ]),
  );
  const captured = results.filter((r) => r.kernel?.pcap !== undefined);
  if (captured.length > 0) mkdirSync(join(dir, 'pcap'), { recursive: true });
  for (const r of captured)
    if (r.kernel?.pcap !== undefined)
      writeFileSync(join(dir, 'pcap', `${r.scenario.id}.pcap`), r.kernel.pcap);
}
