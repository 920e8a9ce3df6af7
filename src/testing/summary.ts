/**
 * Reads vitest JSON reports (host and guest runs) and prints the one closing line CI
 * reads: `N passed, N failed[, N skipped][, N not run]`, judged by ./closing-line.ts
 * (hook and suite failures, unexpected skips, not-run documentation blocks, tests run
 * against test/test-counts.json). Exits non-zero when anything failed.
 *
 * Usage: node dist/testing/summary.js [--partial] <expected-skips.json> <label>=<report.json>...
 *        (<label>=not-run: that project was left out; --partial: a run of selected files,
 *        judged against their counts only)
 *        node dist/testing/summary.js --write-counts <test-counts.json> <label>=<report.json>...
 * The counts file is read from beside the skips file (test/test-counts.json).
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { closingLine, countsOf, type LabelledReport, type VitestReport } from './closing-line.js';

function readReports(specs: readonly string[]): LabelledReport[] {
  return specs.map((spec) => {
    const [label, file = ''] = spec.split('=', 2) as [string, string | undefined];
    if (file === 'not-run') return { label, file, report: undefined, leftOut: true };
    const report =
      file !== '' && existsSync(file)
        ? (JSON.parse(readFileSync(file, 'utf8')) as VitestReport)
        : undefined;
    return { label, file: file || 'none given', report };
  });
}

function hostHasRdmaDevices(): boolean {
  try {
    return readdirSync('/sys/class/infiniband').length > 0;
  } catch {
    return false;
  }
}

const args = process.argv.slice(2);
if (args[0] === '--write-counts') {
  const [, countsFile, ...specs] = args;
  if (countsFile === undefined || specs.length === 0) {
    process.stderr.write(
      'usage: summary.js --write-counts <test-counts.json> <label>=<report.json>...\n',
    );
    process.exit(2);
  }
  const previous = existsSync(countsFile)
    ? (JSON.parse(readFileSync(countsFile, 'utf8')) as Record<string, number>)
    : {};
  writeFileSync(countsFile, `${JSON.stringify(countsOf(readReports(specs), previous), null, 2)}\n`);
  process.stdout.write(`wrote ${countsFile}\n`);
} else {
  const partial = args[0] === '--partial';
  const [skipsFile, ...specs] = partial ? args.slice(1) : args;
  if (skipsFile === undefined || specs.length === 0) {
    process.stderr.write('usage: summary.js <expected-skips.json> <label>=<report.json>...\n');
    process.exit(2);
  }
  const countsFile = join(dirname(skipsFile), 'test-counts.json');
  const verdict = closingLine(
    readReports(specs),
    JSON.parse(readFileSync(skipsFile, 'utf8')) as unknown[],
    existsSync(countsFile)
      ? (JSON.parse(readFileSync(countsFile, 'utf8')) as Record<string, number>)
      : undefined,
    { hostHasRdmaDevices: hostHasRdmaDevices() },
    { partial },
  );
  for (const line of verdict.lines) process.stdout.write(`${line}\n`);
  process.stdout.write(`${verdict.text}\n`);
  process.exitCode = verdict.failed > 0 ? 1 : 0;
}
