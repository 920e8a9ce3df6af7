/**
 * The `ulp` report, in the files `run` writes (results.json, junit.xml, report.md,
 * report.html, the pcaps): results.json carries a `workloads` array (one entry per
 * workload, device and kernel line) beside the suite's empty `scenarios`.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { html } from 'ghtml';
import type { Builder } from 'junit-report-builder';
import { RESULTS_SCHEMA } from '../interop/report-files.js';
import { STYLE } from '../interop/report-html/client.js';
import type { UlpLineRun } from './run.js';
import type { WireJudgement } from './wire-judge.js';
import { throughput, ULP_WORKLOADS, type WorkloadResult } from './workloads.js';

const junit = createRequire(import.meta.url)('junit-report-builder') as Builder;

/** The results.json document. */
export function ulpResultsDocument(runs: readonly UlpLineRun[]): unknown {
  const all = runs.flatMap((r) => r.results);
  const count = (o: WorkloadResult['outcome']): number => all.filter((r) => r.outcome === o).length;
  return {
    schema: RESULTS_SCHEMA,
    environment: { host: hostname(), node: process.versions.node, lines: runs.map((r) => r.line) },
    strict: false,
    totals: {
      scenarios: 0,
      workloads: all.length,
      passed: count('passed'),
      failed: count('failed'),
      notRun: count('not-run'),
    },
    scenarios: [],
    workloads: runs.flatMap((run) => run.results.map((r) => ({ line: run.line, ...r }))),
    guests: runs.map((r) => ({
      line: r.line,
      seconds: r.guestSeconds,
      ...(r.failure === undefined ? {} : { failure: r.failure }),
    })),
  };
}

/** junit.xml: a suite per kernel line, a case per workload and device. */
export function ulpJunitXml(runs: readonly UlpLineRun[]): string {
  const builder = junit.newBuilder();
  for (const run of runs) {
    const suite = builder.testSuite().name(`ulp ${run.line}`);
    for (const r of run.results) {
      const c = suite
        .testCase()
        .className(`ulp.${run.line}.${r.device}`)
        .name(r.workload)
        .time(r.seconds);
      if (r.outcome === 'not-run') c.skipped().standardOutput(r.reason ?? '');
      else if (r.outcome === 'failed') c.failure(r.reason ?? 'failed', 'failed');
    }
    if (run.failure !== undefined)
      suite.testCase().className(`ulp.${run.line}`).name('(guest)').error(run.failure, 'guest');
  }
  return builder.build();
}

const md = (t: string): string => t.replace(/\|/g, '\\|').replace(/\n/g, ' ');

/** The wire column: counts, or why there is no capture. */
export function wireText(w: WorkloadResult['wire']): string {
  if ('notCaptured' in w) return w.notCaptured.split(':')[0] ?? '';
  return `${w.frames} frames, ${w.messages} messages, ${w.undecodable.length} undecodable, ${w.violations.length} violations, ${w.terminates.length} Terminates, CRC ${w.mpaCrc.valid} valid/${w.mpaCrc.invalid} invalid/${w.mpaCrc.notInUse} off, ICRC ${w.icrc.valid} valid/${w.icrc.invalid} invalid`;
}

function opcodeText(w: WireJudgement): string {
  return Object.entries(w.opcodes)
    .map(([k, n]) => `${k} ${n}`)
    .join(', ');
}

function speedText(r: WorkloadResult): string {
  const parts = [
    ['write', throughput(r.facts, 'large-write')],
    ['read', throughput(r.facts, 'large-read')],
  ].flatMap(([k, v]) => (v === undefined ? [] : [`${k} ${v} MB/s`]));
  return parts.join(', ');
}

/** What the fault relay did on a link, both ways. */
function relayText(c: NonNullable<NonNullable<WorkloadResult['link']>['relay']>): string {
  const way = (n: string, f: (typeof c)['aToB']) =>
    `${n} ${f.frames} frames, ${f.dropped} dropped, ${f.duplicated} duplicated, ${f.reordered} reordered`;
  return `${way('A to B', c.aToB)}; ${way('B to A', c.bToA)}`;
}

/** report.md. */
export function ulpMarkdown(runs: readonly UlpLineRun[]): string {
  const out = [
    "# rdma-interop: the kernel's own RDMA users",
    '',
    '| line | kernel | workload | device | outcome | seconds | speed (large transfer, TCG) | wire | reason |',
    '|---|---|---|---|---|---|---|---|---|',
  ];
  for (const run of runs)
    for (const r of run.results)
      out.push(
        `| ${run.line} | ${r.kernel} | ${r.workload} | ${r.device} | ${r.outcome} | ${r.seconds} | ${speedText(r)} | ${md(wireText(r.wire))} | ${md(r.reason ?? '')} |`,
      );
  for (const run of runs)
    if (run.failure !== undefined) out.push('', `**${run.line}: ${md(run.failure)}**`);
  out.push(
    '',
    '## Speed, a reference (TCG guest; a table, not a target)',
    '',
    '| line | workload | device | large write MB/s | large read MB/s | 4 KiB write s | 4 KiB read s |',
    '|---|---|---|---|---|---|---|',
  );
  for (const run of runs)
    for (const r of run.results)
      if (r.outcome === 'passed')
        out.push(
          `| ${run.line} | ${r.workload} | ${r.device} | ${throughput(r.facts, 'large-write') ?? ''} | ${throughput(r.facts, 'large-read') ?? ''} | ${r.facts['small-write-seconds'] ?? ''} | ${r.facts['small-read-seconds'] ?? ''} |`,
        );
  out.push('', '## The wire per capture', '');
  for (const run of runs)
    for (const r of run.results) {
      if ('notCaptured' in r.wire) continue;
      out.push(
        `### ${run.line} ${r.workload} on ${r.device}${r.pcap === undefined ? '' : ` (${r.pcap})`}`,
        '',
        `Messages per opcode: ${opcodeText(r.wire)}.`,
        '',
        '| opcode | sizes (bytes: FPDUs or packets) |',
        '|---|---|',
        ...Object.entries(r.wire.sizes).map(
          ([k, s]) =>
            `| ${k} | ${Object.entries(s)
              .map(([c, n]) => `${c}: ${n}`)
              .join(', ')} |`,
        ),
        '',
        r.wire.undecodable.length === 0
          ? 'Every frame decoded.'
          : `Undecodable: ${r.wire.undecodable.map((u) => `frame ${u.frame}: ${md(u.why)}`).join('; ')}.`,
        r.wire.violations.length === 0
          ? 'No protocol rule broken (MSN order, Reads within the IRD, invalidations of used STags, no STag used after its invalidation).'
          : `Violations: ${r.wire.violations.map((v) => `${v.rule} at frame ${v.frame}: ${md(v.detail)}`).join('; ')}.`,
        ...(r.wire.roce === undefined
          ? []
          : [
              `RoCE: ${r.wire.roce.repeats} repeated packets (retransmissions, duplicates), ${r.wire.roce.gapsFilled} PSN gaps filled later (lost before the capture), ${r.wire.roce.gapsAfterRelay} gaps after the relay, at most ${r.wire.roce.maxOutstandingReads} Reads outstanding on a QP, ${r.wire.roce.cmMessages} CM REQ/REP read.`,
            ]),
        ...(r.link?.relay === undefined
          ? []
          : [
              `Relay (${r.link.faults ?? ''}, the whole boot on this link): ${relayText(r.link.relay)}.`,
            ]),
        `Terminates: ${r.wire.terminates.length === 0 ? 'none' : r.wire.terminates.map((t) => `frame ${t.frame} layer ${t.layer} type ${t.errorType} code ${t.errorCode}`).join('; ')}. NAKs: ${r.wire.naks}.`,
        ...r.wire.notes.map((n) => `Note: ${n}.`),
        '',
      );
    }
  out.push('## Workloads', '');
  for (const [name, w] of Object.entries(ULP_WORKLOADS))
    out.push(`- **${name}**: ${w.title}${w.implemented ? '' : ' (not implemented yet)'}`);
  return `${out.join('\n')}\n`;
}

/** report.html: the same tables in the suite report's style. */
export function ulpHtml(runs: readonly UlpLineRun[]): string {
  const title = "rdma-interop: the kernel's own RDMA users";
  const rows = runs.flatMap((run) =>
    run.results.map(
      (r) =>
        html`<tr class="${r.outcome === 'passed' ? 'pass' : r.outcome === 'failed' ? 'fail' : 'skip'}"><td>${run.line}</td><td>${r.kernel}</td><td>${r.workload}</td><td>${r.device}</td><td>${r.outcome}</td><td>${String(r.seconds)}</td><td>${speedText(r)}</td><td>${wireText(r.wire)}</td><td>${'notCaptured' in r.wire ? '' : opcodeText(r.wire)}</td><td>${r.pcap ?? ''}</td><td class="reason">${r.reason ?? ''}</td></tr>`,
    ),
  );
  return html`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title}</title><style>!${STYLE}</style></head><body>
<h1>${title}</h1>
<table class="fields"><tr><th>line</th><th>kernel</th><th>workload</th><th>device</th><th>outcome</th><th>s</th><th>speed</th><th>wire</th><th>opcodes</th><th>pcap</th><th>reason</th></tr>!${rows}</table>
</body></html>
`;
}

/** Writes the four files into `dir` (the pcaps are already there). */
export function writeUlpReport(dir: string, runs: readonly UlpLineRun[]): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, 'results.json'),
    `${JSON.stringify(ulpResultsDocument(runs), null, 2)}\n`,
  );
  writeFileSync(join(dir, 'junit.xml'), ulpJunitXml(runs));
  writeFileSync(join(dir, 'report.md'), ulpMarkdown(runs));
  writeFileSync(join(dir, 'report.html'), ulpHtml(runs));
}
