/** The interop suite's human report: a table per scenario and one closing line. */
import Table from 'cli-table3';
import { formatValue } from './compare.js';
import type { ProbeResult } from './peer/run-probes.js';
import type { ScenarioResult } from './runner.js';

const VERDICT_LABEL = {
  match: 'match',
  known: 'known difference',
  divergence: 'DIVERGENCE',
  error: 'ERROR',
} as const;

function details(result: ScenarioResult): string {
  if (result.error !== undefined) return result.error;
  const lines: string[] = [];
  let consequences = 0;
  for (const d of result.differences) {
    const finding = result.findings.find((f) => f.field === d.field && f.kernel === d.kernel);
    if (finding === undefined && result.verdict === 'known') {
      consequences += 1; // absent completion fields / untouched memory after a refused post
      continue;
    }
    const mark = finding === undefined ? '!' : '~';
    lines.push(
      `${mark} ${d.field}: engine ${d.engine}, kernel ${d.kernel}${finding ? ` [${finding.id}]` : ''}`,
    );
  }
  if (consequences > 0)
    lines.push(`~ ${consequences} more: nothing happened after the refused post`);
  const wire = result.kernel?.wire;
  if (lines.length > 0 && wire && !result.differences.some((d) => d.field === 'wire')) {
    lines.push(`= ${wire.split('\n').length} wire messages identical to the engine's`);
  }
  for (const s of result.stale)
    lines.push(`! recorded ${s.field}=${s.kernel} [${s.id}] did not happen`);
  if (lines.length === 0 && result.kernel !== undefined) {
    const k = result.kernel;
    lines.push(
      [
        k.requesterStatus,
        k.fetched === undefined ? undefined : `fetched ${formatValue(k.fetched)}`,
        `memory ${formatValue(k.memoryAfter)}`,
        k.wire === undefined
          ? undefined
          : `${k.wire.split('\n').filter(Boolean).length} wire messages identical`,
      ]
        .filter((x) => x !== undefined)
        .join(', '),
    );
  }
  return lines.join('\n');
}

/** Each recorded behaviour that explained a difference in this run, once. */
export function renderFindings(
  results: readonly ScenarioResult[],
  probes: readonly ProbeResult[] = [],
): string {
  const seen = new Map<string, string>();
  for (const f of results.flatMap((r) => r.findings)) seen.set(f.id, f.why);
  for (const p of probes) if (p.finding !== undefined) seen.set(p.finding.id, p.finding.why);
  return [...seen].map(([id, why]) => `[${id}] ${why}`).join('\n');
}

/** The wire probes: what the engine and siw answered to our peer's message. */
export function renderProbeReport(results: readonly ProbeResult[]): string {
  const table = new Table({
    head: ['wire probe', 'verdict', 'engine answer / siw answer'],
    colWidths: [26, 18, 110],
    wordWrap: true,
    style: { head: [], border: [] },
  });
  for (const r of results) {
    const answers =
      r.error ??
      [
        `engine: ${r.engine || '(nothing)'}${r.engineDelivered ? ` delivered=${r.engineDelivered}` : ''}`,
        `siw:    ${r.kernel || '(nothing)'}${r.kernelDelivered ? ` delivered=${r.kernelDelivered}` : ''}${r.finding ? ` [${r.finding.id}]` : ''}`,
      ].join('\n');
    table.push([r.probe.id, VERDICT_LABEL[r.verdict], answers]);
  }
  return table.toString();
}

export function renderReport(results: readonly ScenarioResult[]): string {
  const table = new Table({
    head: ['scenario', 'device', 'post API', 'verdict', 'details'],
    colWidths: [26, 8, 11, 18, 78],
    wordWrap: true,
    style: { head: [], border: [] },
  });
  for (const r of results) {
    table.push([
      r.scenario.id,
      r.scenario.device,
      r.scenario.postPath === 'ex' ? 'ibv_wr_*' : 'post_send',
      VERDICT_LABEL[r.verdict],
      details(r),
    ]);
  }
  return table.toString();
}

/** `N passed, N failed`: a check passes when it matches or differs only as recorded. */
export function summaryLine(verdicts: readonly string[]): string {
  const passed = verdicts.filter((v) => v === 'match' || v === 'known').length;
  return `${passed} passed, ${verdicts.length - passed} failed`;
}
