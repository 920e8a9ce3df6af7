/**
 * comparison.html for `rdma-interop compare --out` (issue 36: the CI matrix's merge job
 * keeps it as an artefact): the page of the compared runs, each read from the report
 * directory (or, for a sharded run, the shard directories) it came from.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Comparison, ReportRun } from '../comparison/index.js';
import { memoryBeforeById } from './index.js';
import { ReportHtmlInputError, type ResultsEntry, type RunInput, resultsEntryOf } from './model.js';
import { renderReportHtml } from './page.js';

function entryOf(file: string): ResultsEntry {
  try {
    return resultsEntryOf(JSON.parse(readFileSync(file, 'utf8')));
  } catch (error) {
    if (error instanceof ReportHtmlInputError)
      throw new ReportHtmlInputError(`${file}: ${error.message}`);
    throw new ReportHtmlInputError(`${file}: ${(error as Error).message}`);
  }
}

/**
 * The page's input for one compared run: its results.json, or its shards' put together
 * in the order the comparison lists the run's scenarios.
 */
export function runInputOf(run: ReportRun, label: string): RunInput {
  const files = run.parts ?? [run.path];
  const entries = files.map(entryOf);
  const first = entries[0];
  if (first === undefined) throw new ReportHtmlInputError(`${label}: no results.json`);
  const rank = new Map(run.scenarios.map((s, i) => [`${s.id}\u0000${s.device}`, i]));
  const at = (s: { id: string; device: string }) => rank.get(`${s.id}\u0000${s.device}`) ?? 0;
  const results: ResultsEntry = {
    ...first,
    environment: { ...first.environment, devices: run.devices },
    scenarios: entries.flatMap((e) => e.scenarios).sort((a, b) => at(a) - at(b)),
    findings: entries.flatMap((e) => e.findings),
    probes: entries.flatMap((e) => e.probes ?? []),
  };
  const dirs = files.map((f) => dirname(f));
  return {
    line: label,
    results,
    pcap: (path) => {
      for (const dir of dirs) {
        const file = join(dir, path);
        if (existsSync(file)) return new Uint8Array(readFileSync(file));
      }
      return undefined;
    },
    memoryBefore: memoryBeforeById,
  };
}

/**
 * Writes `<dir>/comparison.html`: the compared runs side by side and the comparison. A
 * run whose results.json lacks what the page draws (a report of an older schema) is left
 * off the page (it is still in the comparison); its reason is returned.
 */
export function writeComparedRunsHtml(
  dir: string,
  runs: readonly ReportRun[],
  comparison: Comparison,
): { file: string; left: string[] } {
  const inputs: RunInput[] = [];
  const left: string[] = [];
  runs.forEach((run, i) => {
    const label = comparison.runs[i]?.label ?? run.label;
    try {
      inputs.push(runInputOf(run, label));
    } catch (error) {
      if (!(error instanceof ReportHtmlInputError)) throw error;
      left.push(`${label}: ${error.message}`);
    }
  });
  const file = join(dir, 'comparison.html');
  writeFileSync(file, renderReportHtml(inputs, comparison));
  return { file, left };
}
