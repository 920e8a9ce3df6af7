/**
 * Reads vitest JSON reports (host and guest runs) and prints the one closing line CI
 * reads: `N passed, N failed` (`, N skipped` where there are skips). Exits non-zero on
 * any failure, on a test file that failed to load, on a report that is missing, and on a
 * skip that test/expected-skips.json does not list with its reason.
 *
 * Usage: node dist/testing/summary.js <expected-skips.json> <label>=<report.json>...
 */
import { existsSync, readFileSync } from 'node:fs';

interface AssertionResult {
  readonly fullName: string;
  readonly status: string;
}
interface FileResult {
  readonly name: string;
  readonly status: string;
  readonly message?: string;
  readonly assertionResults: readonly AssertionResult[];
}
interface VitestReport {
  readonly testResults: readonly FileResult[];
}
interface ExpectedSkip {
  readonly test: string;
  readonly reason: string;
}

const [skipsFile, ...reports] = process.argv.slice(2);
if (skipsFile === undefined || reports.length === 0) {
  process.stderr.write('usage: summary.js <expected-skips.json> <label>=<report.json>...\n');
  process.exit(2);
}
const expectedSkips = new Map(
  (JSON.parse(readFileSync(skipsFile, 'utf8')) as ExpectedSkip[]).map((s) => [s.test, s.reason]),
);

let passed = 0;
let failed = 0;
let skipped = 0;
const problems: string[] = [];

for (const spec of reports) {
  const [label, file] = spec.split('=', 2) as [string, string | undefined];
  if (file === undefined || !existsSync(file)) {
    problems.push(`${label}: no test report (${file ?? 'none given'}): that run did not complete`);
    failed += 1;
    continue;
  }
  const report = JSON.parse(readFileSync(file, 'utf8')) as VitestReport;
  for (const result of report.testResults) {
    if (result.assertionResults.length === 0 && result.status === 'failed') {
      failed += 1;
      problems.push(`${label}: ${result.name} failed to load: ${result.message ?? ''}`.trim());
    }
    for (const test of result.assertionResults) {
      if (test.status === 'passed') passed += 1;
      else if (test.status === 'failed') {
        failed += 1;
        problems.push(`${label}: FAILED ${test.fullName}`);
      } else {
        skipped += 1;
        const reason = expectedSkips.get(test.fullName);
        if (reason === undefined) {
          failed += 1;
          problems.push(`${label}: UNEXPECTED SKIP ${test.fullName} (not in ${skipsFile})`);
        } else {
          process.stdout.write(`${label}: skipped as expected: ${test.fullName}: ${reason}\n`);
        }
      }
    }
  }
}

for (const problem of problems) process.stdout.write(`${problem}\n`);
process.stdout.write(
  `${passed} passed, ${failed} failed${skipped > 0 ? `, ${skipped} skipped` : ''}\n`,
);
process.exitCode = failed > 0 ? 1 : 0;
