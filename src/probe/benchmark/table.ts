/** The benchmark's table for docs/probe.md and the report, generated from its results. */
import type { BenchmarkDocument } from './run.js';

export function benchmarkTable(doc: BenchmarkDocument): string {
  const rows = doc.rows.map((r) => {
    const how =
      r.outcome === 'detected'
        ? `\`${r.by}\``
        : r.outcome === 'not applicable'
          ? "the fix is not in this line's source"
          : '';
    const cost =
      r.outcome === 'detected'
        ? `${r.inputsToDetection} inputs; run ${r.guestSeconds} s`
        : r.guestSeconds === undefined
          ? ''
          : `run ${r.guestSeconds} s`;
    return `| ${r.title}${r.cve === undefined ? '' : ` (${r.cve})`} | ${r.line} | ${r.outcome} | ${how} | ${r.oracle ?? ''} | ${cost} |`;
  });
  const alarms = Object.entries(doc.falseAlarms).map(
    ([line, list]) =>
      `| false alarms on the unmodified modules | ${line} | ${list.length} | ${list.join('; ')} | | |`,
  );
  return [
    '| bug | line | detected? | by | oracle | inputs to detection; variant run |',
    '|---|---|---|---|---|---|',
    ...rows,
    ...alarms,
  ].join('\n');
}
