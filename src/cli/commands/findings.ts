import { existsSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { type Command, InvalidArgumentError, Option } from 'commander';
import { findingsDocument } from '../../findings/model.js';
import {
  FINDINGS_FORMATS,
  type FindingsFormat,
  renderFindings,
  writeFindings,
} from '../../findings/report-files.js';
import { readSightings } from '../../findings/results.js';
import { KERNEL_LINES } from '../../runtime/index.js';
import { kernelLinesList } from '../options.js';

interface FindingsOptions {
  readonly kernels: readonly string[];
  readonly report?: string;
  readonly format: FindingsFormat;
  readonly results?: string;
  readonly fixedResults?: string;
}

/** A directory that exists (`--results`, `--fixed-results`). */
function directory(value: string): string {
  if (existsSync(value) && statSync(value).isDirectory()) return value;
  throw new InvalidArgumentError('Expected a directory (a run or probe --report directory).');
}

/**
 * `rdma-interop findings`: every recorded behaviour with its class, rule, source lines,
 * reproducer and patch, and per kernel line whether it is present, fixed upstream or fixed
 * by the patch here (findings/model.ts), opening with the defects still present upstream.
 * Host only: it reads the records, fixes.ts and, when given, the results of runs.
 */
export function registerFindings(program: Command): void {
  program
    .command('findings')
    .description(
      'the recorded behaviours classed (defect, unimplemented, allowed, engine) with their rule, source, reproducer, patch and state per kernel line, defects still present upstream first',
    )
    .addOption(
      new Option(
        '--kernels <lines>',
        `the kernel lines to show ('all' or e.g. 6.1,7.3; lines: ${KERNEL_LINES.map((l) => l.line).join(', ')})`,
      )
        .argParser(kernelLinesList)
        .default(
          KERNEL_LINES.map((l) => l.line),
          'all',
        ),
    )
    .option('--report <dir>', 'write findings.md, findings.html and findings.json into <dir>')
    .addOption(
      new Option('--format <format>', 'what to print on stdout')
        .choices([...FINDINGS_FORMATS])
        .default('md'),
    )
    .addOption(
      new Option(
        '--results <dir>',
        "a stock run's --report directory (run, run --kernels or probe): the per-line cells say whether each record was seen",
      ).argParser(directory),
    )
    .addOption(
      new Option(
        '--fixed-results <dir>',
        'a --report directory of a run on the fixed build: the per-line cells say whether each record is gone',
      ).argParser(directory),
    )
    .action((options: FindingsOptions) => {
      const stock = options.results === undefined ? undefined : readSightings(options.results);
      const fixed =
        options.fixedResults === undefined ? undefined : readSightings(options.fixedResults);
      const doc = findingsDocument({
        lines: options.kernels,
        ...(stock === undefined ? {} : { stock }),
        ...(fixed === undefined ? {} : { fixed }),
      });
      if (options.report !== undefined) {
        const written = writeFindings(resolve(options.report), doc);
        process.stderr.write(`findings: wrote ${written.join(', ')}\n`);
      }
      process.stdout.write(renderFindings(doc, options.format));
    });
}
