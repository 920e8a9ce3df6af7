/**
 * `rdma-interop rdma-core-tests`: rdma-core's own Python tests (tests/ of rdma-core 56.1,
 * with the pyverbs scripts/setup/pyverbs.sh builds) run in the guest on rxe0 and siw0,
 * per kernel line, judged with the records of src/rdma-core-tests/records.ts: a second
 * oracle beside the engine (issue 36). docs/rdma-core-tests.md says how to read it.
 */
import { join, resolve } from 'node:path';
import { type Command, InvalidArgumentError, Option } from 'commander';
import { compareReports, readReports, writeComparison } from '../../interop/comparison/index.js';
import { testPassed } from '../../rdma-core-tests/judge.js';
import { type TestRun, verdictCounts, writeTestReport } from '../../rdma-core-tests/report.js';
import { listTests, runTestsInGuest } from '../../rdma-core-tests/run.js';
import { TEST_DEVICES, testPaths } from '../../rdma-core-tests/runner-command.js';
import { abortOnSignals, GuestRuntimeError, KERNEL_LINES } from '../../runtime/index.js';
import { reportGuestFailure } from '../devices-or-guest.js';
import { usageError } from '../errors.js';
import {
  cacheDirOption,
  deviceListParser,
  kernelLineName,
  kernelLinesList,
  timeoutOption,
} from '../options.js';

interface RdmaCoreTestsOptions {
  readonly kernel?: string;
  readonly kernels?: string[];
  readonly device: string[];
  readonly report?: string;
  readonly filter?: string[];
  readonly list?: boolean;
  readonly timeout: number;
  readonly cacheDir?: string;
}

/** `--filter <glob>`, repeatable: a unittest id glob (fnmatch), e.g. 'tests.test_qp.*'. */
export function collectFilter(value: string, previous: string[] | undefined): string[] {
  if (value.trim() === '' || /[\n\0]/.test(value))
    throw new InvalidArgumentError('Expected a test id glob, e.g. tests.test_qp.*');
  return [...(previous ?? []), value];
}

/** One line per device of a run. */
function summary(run: TestRun): string {
  return run.devices
    .map((d) => {
      const of = run.results.filter((r) => r.device === d);
      const stopped = run.truncated.includes(d) ? ', the runner stopped early' : '';
      return `rdma-core-tests: ${run.line} (${run.kernel}) ${d}: ${of.length} tests: ${verdictCounts(of) || 'none'}${stopped}\n`;
    })
    .join('');
}

/** Each finding or stale record of a run, one line each. */
function failureLines(run: TestRun): string {
  return run.results
    .filter((r) => !testPassed(r.verdict))
    .map(
      (r) =>
        `  ${r.verdict.toUpperCase()} ${r.device} ${r.id}: ${r.verdict === 'stale' ? `record ${r.explainedBy ?? ''} did not happen` : (r.message?.split('\n').at(-1) ?? r.outcome)}\n`,
    )
    .join('');
}

export function registerRdmaCoreTests(program: Command): void {
  program
    .command('rdma-core-tests')
    .description(
      "rdma-core's own Python tests (56.1, with pyverbs) in the guest on rxe0 and siw0, per kernel line; failures judged by the records",
    )
    .addOption(new Option('--kernel <line>', 'the guest kernel line').argParser(kernelLineName))
    .addOption(
      new Option('--kernels <lines>', "several kernel lines, a guest each ('all' or e.g. 6.1,7.3)")
        .argParser(kernelLinesList)
        .conflicts(['kernel']),
    )
    .addOption(
      new Option('--device <names>', `the devices, comma-separated (${TEST_DEVICES.join(', ')})`)
        .argParser(deviceListParser(TEST_DEVICES, "the guest's"))
        .default([...TEST_DEVICES], TEST_DEVICES.join(',')),
    )
    .option(
      '--report <dir>',
      'write results.json, junit.xml, report.md and report.html into <dir> (a subdirectory per line and comparison.md with --kernels)',
    )
    .addOption(
      new Option(
        '--filter <glob>',
        "only tests whose unittest id matches the glob (repeatable), e.g. 'tests.test_qp.*'",
      ).argParser(collectFilter),
    )
    .addOption(
      new Option('--list', 'list the tests the filters select and exit (no guest)').conflicts([
        'report',
        'kernels',
        'kernel',
      ]),
    )
    .addOption(timeoutOption('limit per guest (boot + tests)', 1200))
    .addOption(cacheDirOption())
    .action(async (options: RdmaCoreTestsOptions, command: Command) => {
      const paths = testPaths();
      const filters = options.filter ?? [];
      const ids = await listTests(paths, filters);
      if (ids.length === 0) usageError(command, `no rdma-core test matches ${filters.join(', ')}`);
      if (options.list === true) {
        process.stdout.write(ids.map((id) => `${id}\n`).join(''));
        return;
      }
      const lines = options.kernels ?? [options.kernel ?? KERNEL_LINES[0]?.line ?? '6.1'];
      const interrupt = abortOnSignals();
      const runs: TestRun[] = [];
      try {
        for (const line of lines) {
          process.stderr.write(`rdma-core-tests: kernel line ${line}, ${ids.length} tests\n`);
          const run = await runTestsInGuest(paths, {
            line,
            devices: options.device,
            filters,
            timeoutSeconds: options.timeout,
            signal: interrupt.signal,
            onProgress: (l) => process.stderr.write(`${l}\n`),
          });
          runs.push(run);
          if (options.report !== undefined)
            writeTestReport(
              lines.length === 1 ? resolve(options.report) : join(resolve(options.report), line),
              run,
            );
        }
      } catch (error) {
        if (!(error instanceof GuestRuntimeError)) throw error;
        process.exitCode = reportGuestFailure(
          error,
          interrupt.received(),
          'rdma-interop rdma-core-tests',
        );
        return;
      } finally {
        interrupt.dispose();
      }
      if (options.report !== undefined && lines.length > 1) {
        const dir = resolve(options.report);
        writeComparison(dir, compareReports(readReports([dir])));
      }
      for (const run of runs) process.stdout.write(summary(run) + failureLines(run));
      const bad = runs.some(
        (r) => r.truncated.length > 0 || r.results.some((t) => !testPassed(t.verdict)),
      );
      process.exitCode = bad ? 1 : 0;
    });
}
