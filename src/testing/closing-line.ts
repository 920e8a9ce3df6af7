/**
 * The judgement behind the one closing line of `npm test` (src/testing/summary.ts prints
 * it): vitest JSON reports in, counts and problems out. Pure, so that
 * test/host/testing/closing-line.test.ts shows each rule failing on real reports.
 *
 * What it counts (issue 38):
 * - each test's status: passed, failed, skipped (a skip fails unless
 *   test/expected-skips.json lists it with a condition that holds on this run), and
 *   "not run": a `todo` test, which is how a documentation block that cannot run is
 *   registered (its title says why). Not-run blocks are listed and counted, never passed.
 * - failures outside tests: a file that failed to load, and a file vitest marks failed
 *   although none of its tests did (a failing beforeAll/afterAll, an error in a describe
 *   body): vitest leaves those tests "passed" in its JSON, so they count here as failures.
 * - tests collected but never run (vitest's pending state: a run cut short).
 * - tests expected against tests run: test/test-counts.json holds each file's committed
 *   count of tests, not-run (todo) blocks left out (they have their own count): what
 *   `vitest list` collects on a machine where nothing is skipped. A file that ran fewer,
 *   and a committed file of a project that did run but is absent from its reports, fail. A file with more tests than its committed count
 *   is listed as a count to update (refresh with `summary.js --write-counts`).
 */

/** One test as vitest's JSON reporter writes it. */
export interface AssertionResult {
  readonly fullName: string;
  readonly status: string;
  /** What failed (vitest: the assertion's message and stack, ANSI-coloured). */
  readonly failureMessages?: readonly string[];
}

/** How much of a failure's message the closing lines carry. */
export const FAILURE_EXCERPT = 1500;

/**
 * The start of a failed test's first message, colour codes and stack frames left out and
 * indented under its FAILED line: CI keeps only the tail of a run's output, where the
 * closing lines are, and a failure there must say what failed (s43's CI said only which
 * test, and its assertion message was cut off with the log above).
 */
export function failureExcerpt(messages: readonly string[] | undefined): string {
  const text = (messages?.[0] ?? '')
    // biome-ignore lint/suspicious/noControlCharactersInRegex: ANSI colour codes
    .replace(/\u001b\[[0-9;]*m/g, '')
    .split('\n')
    .filter((l) => !/^\s+at /.test(l))
    .join('\n')
    .trim();
  if (text === '') return '';
  const cut = text.length > FAILURE_EXCERPT ? `${text.slice(0, FAILURE_EXCERPT)} [...]` : text;
  return `\n${cut.replace(/^/gm, '    ')}`;
}
/** One test file as vitest's JSON reporter writes it. */
export interface FileResult {
  readonly name: string;
  readonly status: string;
  readonly message?: string;
  readonly assertionResults: readonly AssertionResult[];
}
/** The part of a vitest JSON report read here. */
export interface VitestReport {
  readonly testResults: readonly FileResult[];
}
/** One entry of test/expected-skips.json. */
export interface ExpectedSkip {
  /** The test's full name as vitest reports it. */
  readonly test: string;
  /** Why it is skipped. */
  readonly reason: string;
  /** When the skip is allowed: a name from {@link SKIP_CONDITIONS}. */
  readonly condition: string;
}
/** One labelled report; `report` undefined when the run left none. */
export interface LabelledReport {
  readonly label: string;
  readonly file: string;
  readonly report: VitestReport | undefined;
  /**
   * The project was left out on purpose (`kernel=not-run`: RDMA_INTEROP_SKIP_KERNEL_TESTS):
   * its committed tests count as not run.
   */
  readonly leftOut?: boolean;
}
/** How the run was selected. */
export interface JudgeOptions {
  /**
   * A run of selected files (a check, not `npm test`): only the files in the reports are
   * judged against their counts; a committed file absent from them is not a failure.
   */
  readonly partial?: boolean;
}

/**
 * The conditions an expected skip may name, and what decides them on this run. Facts about
 * the machine come in through {@link RunFacts} so the judgement stays pure.
 */
export const SKIP_CONDITIONS = {
  /** The machine running the tests has RDMA devices (`/sys/class/infiniband` not empty). */
  'host-has-rdma-devices': (facts: RunFacts) => facts.hostHasRdmaDevices,
  /** Left out of every `npm test` run by design (its reason says why and how to run it). */
  'not-in-npm-test': () => true,
} as const satisfies Record<string, (facts: RunFacts) => boolean>;
export type SkipCondition = keyof typeof SKIP_CONDITIONS;

/** What the summary knows about the machine it runs on. */
export interface RunFacts {
  readonly hostHasRdmaDevices: boolean;
}

/** The verdict: counts for the closing line, and every problem and note, in order. */
export interface ClosingLine {
  readonly passed: number;
  readonly failed: number;
  readonly skipped: number;
  readonly notRun: number;
  /** Lines printed before the closing line: expected skips, not-run blocks, problems. */
  readonly lines: readonly string[];
  /** Files whose run count differs from the committed one (path to tests run). */
  readonly counts: ReadonlyMap<string, number>;
  /** The closing line itself. */
  readonly text: string;
}

/** A report's absolute file name as the repository-relative path the counts are keyed by. */
export function testPath(name: string): string {
  const m = /(?:^|\/)(test\/(?:host|kernel|browser)\/.*)$/.exec(name);
  return m?.[1] ?? name;
}

/** A file's tests as the counts count them: every one but the not-run (todo) blocks. */
function testsIn(result: FileResult): number {
  return result.assertionResults.filter((t) => t.status !== 'todo').length;
}

/** The test project a report label covers (host-guests is the host project's other half). */
function projectOf(label: string): string {
  return label.startsWith('host') ? 'host' : label;
}

/** Whether an expected-skips.json entry is well formed. */
function checkSkipEntry(entry: unknown, index: number): string | undefined {
  const e = entry as Partial<ExpectedSkip>;
  if (typeof e?.test !== 'string' || typeof e.reason !== 'string' || e.reason.length < 10)
    return `expected-skips entry ${index}: needs "test" and a "reason" of 10 characters or more`;
  if (!Object.hasOwn(SKIP_CONDITIONS, e.condition ?? ''))
    return `expected-skips entry ${index} (${e.test}): condition ${JSON.stringify(e.condition)} is not one of ${Object.keys(SKIP_CONDITIONS).join(', ')}`;
  return undefined;
}

/**
 * Judges the reports. `counts` is test/test-counts.json (path to the number of tests the
 * file has); undefined leaves the expected-against-run check out (the problems say so).
 */
export function closingLine(
  reports: readonly LabelledReport[],
  expectedSkips: readonly unknown[],
  counts: Readonly<Record<string, number>> | undefined,
  facts: RunFacts,
  options: JudgeOptions = {},
): ClosingLine {
  let passed = 0;
  let failed = 0;
  let skipped = 0;
  let notRun = 0;
  const notes: string[] = [];
  const problems: string[] = [];
  const fail = (text: string) => {
    failed += 1;
    problems.push(text);
  };

  const skips = new Map<string, ExpectedSkip>();
  expectedSkips.forEach((entry, i) => {
    const bad = checkSkipEntry(entry, i);
    if (bad !== undefined) fail(bad);
    else skips.set((entry as ExpectedSkip).test, entry as ExpectedSkip);
  });

  const ran = new Map<string, number>();
  const projectsRun = new Set<string>();
  for (const { label, file, report, leftOut } of reports) {
    if (leftOut === true) {
      const files = Object.entries(counts ?? {}).filter(([p]) => p.startsWith(`test/${label}/`));
      const tests = files.reduce((n, [, c]) => n + c, 0);
      notRun += tests;
      notes.push(
        `${label}: NOT RUN: ${tests} tests in ${files.length} files were left out of this run`,
      );
      continue;
    }
    if (report === undefined) {
      fail(`${label}: no test report (${file}): that run did not complete`);
      continue;
    }
    projectsRun.add(projectOf(label));
    for (const result of report.testResults) {
      const path = testPath(result.name);
      ran.set(path, (ran.get(path) ?? 0) + testsIn(result));
      const testFailed = result.assertionResults.some((t) => t.status === 'failed');
      if (result.status === 'failed' && result.assertionResults.length === 0)
        fail(`${label}: ${path} failed to load: ${result.message ?? ''}`.trim());
      else if (result.status === 'failed' && !testFailed)
        fail(
          `${label}: ${path}: a hook or suite failed although its tests passed (beforeAll/afterAll, a describe body): ${result.message || 'see the log above'}`,
        );
      for (const test of result.assertionResults) {
        const where = `${label}: ${test.fullName}`;
        if (test.status === 'passed') passed += 1;
        else if (test.status === 'failed')
          fail(`${label}: FAILED ${test.fullName}${failureExcerpt(test.failureMessages)}`);
        else if (test.status === 'todo') {
          notRun += 1;
          notes.push(`${label}: NOT RUN ${test.fullName}`);
        } else if (test.status === 'pending') {
          fail(`${label}: COLLECTED BUT NEVER RUN ${test.fullName} (${path})`);
        } else {
          skipped += 1;
          const skip = skips.get(test.fullName);
          if (skip === undefined)
            fail(`${label}: UNEXPECTED SKIP ${test.fullName} (not in test/expected-skips.json)`);
          else if (!SKIP_CONDITIONS[skip.condition as SkipCondition](facts))
            fail(
              `${label}: UNEXPECTED SKIP ${test.fullName}: listed for condition ${skip.condition}, which does not hold on this run`,
            );
          else notes.push(`${where}: skipped as expected (${skip.condition}): ${skip.reason}`);
        }
      }
    }
  }

  const changed = new Map<string, number>();
  if (counts === undefined) fail('no test/test-counts.json: the tests run cannot be checked');
  else {
    for (const [path, expected] of Object.entries(counts)) {
      const project = /^test\/(\w+)\//.exec(path)?.[1] ?? '';
      if (!projectsRun.has(project)) continue;
      const got = ran.get(path);
      if (got === undefined && options.partial === true) continue;
      if (got === undefined) fail(`${path}: has ${expected} tests and did not run at all`);
      else if (got < expected)
        fail(`${path}: ran ${got} of its ${expected} tests (test/test-counts.json)`);
      else if (got > expected) changed.set(path, got);
    }
    for (const [path, got] of ran) if (counts[path] === undefined) changed.set(path, got);
    for (const [path, got] of changed)
      notes.push(
        `${path}: ${got} tests, test/test-counts.json says ${counts[path] ?? 'nothing'}: refresh it (summary.js --write-counts)`,
      );
  }

  const parts = [`${passed} passed`, `${failed} failed`];
  if (skipped > 0) parts.push(`${skipped} skipped`);
  if (notRun > 0) parts.push(`${notRun} not run`);
  return {
    passed,
    failed,
    skipped,
    notRun,
    lines: [...notes, ...problems],
    counts: changed,
    text: parts.join(', '),
  };
}

/** Every file's number of tests in these reports, for test/test-counts.json. */
export function countsOf(
  reports: readonly LabelledReport[],
  previous: Readonly<Record<string, number>> = {},
): Record<string, number> {
  const counts: Record<string, number> = { ...previous };
  const fresh = new Map<string, number>();
  for (const { report } of reports)
    for (const result of report?.testResults ?? []) {
      const path = testPath(result.name);
      fresh.set(path, (fresh.get(path) ?? 0) + testsIn(result));
    }
  for (const [path, n] of fresh) counts[path] = n;
  return Object.fromEntries(Object.entries(counts).sort(([a], [b]) => a.localeCompare(b)));
}
