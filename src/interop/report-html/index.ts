/**
 * report.html for `run --report` and `run --kernels --report` (page.ts draws it): the
 * inputs gathered from a report directory, or from the results this process holds.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fieldName } from '../../judge/observation.js';
import { formatValue } from '../compare-format.js';
import type { Comparison } from '../comparison/index.js';
import { FAULT_LINK_SCENARIOS } from '../link/fault-scenarios.js';
import { LINK_SCENARIOS } from '../link/scenarios.js';
import { initialBuffer, type Scenario, watchedOffsets, wordAt } from '../scenario.js';
import { SCENARIOS } from '../scenarios.js';
import { ReportHtmlInputError, type RunInput, resultsEntryOf } from './model.js';
import { renderReportHtml } from './page.js';

export { ReportHtmlInputError, type RunInput, resultsEntryOf } from './model.js';
export { renderReportHtml } from './page.js';

/** The memory words a scenario's program starts from, named as its fields name them. */
export function memoryBefore(scenario: Scenario): Record<string, string> {
  const buffer = initialBuffer(scenario);
  return Object.fromEntries(
    watchedOffsets(scenario).map((o) => [
      fieldName({ kind: 'memory', offset: o }),
      formatValue(wordAt(buffer, o)),
    ]),
  );
}

/** {@link memoryBefore} of the suite's scenario with this id (undefined for an unknown id). */
export function memoryBeforeById(id: string): Record<string, string> | undefined {
  const scenario = [...SCENARIOS, ...LINK_SCENARIOS, ...FAULT_LINK_SCENARIOS].find(
    (s) => s.id === id,
  );
  return scenario === undefined ? undefined : memoryBefore(scenario);
}

/** A report directory's run: its results.json and pcaps, read as the page needs them. */
export function runFromDirectory(dir: string, line: string): RunInput {
  const file = join(dir, 'results.json');
  if (!existsSync(file)) throw new ReportHtmlInputError(`${file}: no such file`);
  let document: unknown;
  try {
    document = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new ReportHtmlInputError(`${file}: ${(error as Error).message}`);
  }
  return {
    line,
    results: resultsEntryOf(document),
    pcap: (path) => {
      const at = join(dir, path);
      return existsSync(at) ? new Uint8Array(readFileSync(at)) : undefined;
    },
    memoryBefore: memoryBeforeById,
  };
}

/** Writes `<dir>/comparison.html`: the kernel lines' runs (each in `<dir>/<line>/`) side by side. */
export function writeComparisonHtml(
  dir: string,
  lines: readonly string[],
  comparison: Comparison,
): void {
  const runs = lines
    .filter((l) => existsSync(join(dir, l, 'results.json')))
    .map((l) => runFromDirectory(join(dir, l), l));
  writeFileSync(join(dir, 'comparison.html'), renderReportHtml(runs, comparison));
}
