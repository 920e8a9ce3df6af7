import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Command } from 'commander';
import { readCoverage, renderMergedCoverage } from '../../coverage/report-files.js';
import { compareReports, readReports, writeComparison } from '../../interop/comparison/index.js';
import { renderComparisonMarkdown } from '../../interop/comparison/markdown.js';
import { writeComparedRunsHtml } from '../../interop/report-html/compared-runs.js';

interface CompareOptions {
  readonly out?: string;
  readonly json?: boolean;
}

/**
 * `rdma-interop compare <report dir>...`: merges the results.json of any number of
 * `--report` directories (hosts, devices, kernel lines, dates) into one comparison.
 * Markdown on stdout (or JSON with --json); with --out, comparison.md, comparison.json and
 * comparison.html into that directory. The shards of a run (`run --shard`) compare as one run. Exit 0 whether or not values differ: differing is the answer.
 */
export function registerCompare(program: Command): void {
  program
    .command('compare')
    .description(
      'merge the results of several --report directories (hosts, devices, kernel lines) into one comparison: every value that differs, with the record that explains it',
    )
    .argument(
      '<report...>',
      'report directories (run --report; a run --kernels directory gives one run per kernel) or results.json files',
    )
    .option('--out <dir>', 'write comparison.md, comparison.json and comparison.html into <dir>')
    .option('--json', 'print the comparison as JSON instead of Markdown')
    .action((reports: string[], options: CompareOptions) => {
      const runs = readReports(reports);
      const comparison = compareReports(runs);
      if (options.out !== undefined) {
        const written = writeComparison(options.out, comparison);
        const html = writeComparedRunsHtml(options.out, runs, comparison);
        process.stderr.write(
          `compare: ${comparison.changedCount} of ${comparison.fields.length} values differ across ${comparison.runs.length} runs (${written})\n`,
        );
        // A report of an older schema is in the comparison but not drawn on the page.
        if (html.left.length > 0)
          process.stderr.write(
            `compare: comparison.html leaves out ${html.left.length} of ${runs.length} runs: ${html.left.join('; ')}\n`,
          );
      }
      const coverage = renderMergedCoverage(reports.flatMap(readCoverage));
      if (options.out !== undefined && coverage !== '')
        writeFileSync(join(options.out, 'coverage.md'), coverage);
      process.stdout.write(
        options.json === true
          ? `${JSON.stringify(comparison, null, 2)}\n`
          : `${renderComparisonMarkdown(comparison)}\n${coverage === '' ? '' : `\n${coverage}`}`,
      );
    });
}
