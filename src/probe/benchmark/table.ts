/** The benchmark's table for docs/probe.md and the report, generated from its results. */
import type { BenchmarkDocument } from './run.js';

/** One table over several runs (e.g. one per device), rows in run order. */
export function benchmarkTable(docs: readonly BenchmarkDocument[]): string {
  const rows = docs
    .flatMap((d) => d.rows)
    .map((r) => {
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
  const alarms = docs.flatMap((doc) =>
    Object.entries(doc.falseAlarms).map(([at, list]) => {
      const line = doc.devices === undefined ? at : `${at} (${doc.devices.join(', ')})`;
      return `| false alarms on the unmodified modules | ${line} | ${list.length} | ${list.join('; ')} | | fuzz ${doc.fuzz} a device, seed ${doc.seed} |`;
    }),
  );
  return [
    '| bug | line | detected? | by | oracle | inputs to detection; variant run |',
    '|---|---|---|---|---|---|',
    ...rows,
    ...alarms,
  ].join('\n');
}
