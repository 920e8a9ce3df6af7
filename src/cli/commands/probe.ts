/**
 * `rdma-interop probe`: the reference engine as a packet-level tester (issue 21). Our
 * userspace peers speak RoCEv2 to rxe and iWARP to siw0 from the wire, assertion by
 * assertion, and the engine says what each answer must be; hostile assertions are followed by a survival
 * check, and a guest that dies under one is recorded as `kernel-crash` and replaced.
 * docs/probe.md says how to use it.
 */

import { join, resolve } from 'node:path';
import { type Command, InvalidArgumentError, Option } from 'commander';
import {
  type BlockCoverage,
  type BlockSnapshot,
  blockSites,
  buildBlockCoverage,
  coverageModulesDir,
} from '../../coverage/blocks.js';
import {
  COVERAGE_KINDS,
  type CoverageKind,
  type RawFunctionCoverage,
} from '../../coverage/ftrace.js';
import {
  buildFunctionCoverage,
  type FunctionCoverage,
  mergeFunctionCoverage,
} from '../../coverage/functions.js';
import { writeCoverageHtml } from '../../coverage/html.js';
import { functionFiles } from '../../coverage/source-map.js';
import { RECORDS } from '../../judge/records/index.js';
import { explainFinding, findingRecordText } from '../../judge/records/kernel-findings.js';
import { type Shard, shardLabel } from '../../judge/shard.js';
import type { AssertionResult } from '../../probe/assertion.js';
import type { FuzzSummary } from '../../probe/fuzz-loop.js';
import {
  judgeResources,
  type ResourceJudgement,
  resourceLeaks,
} from '../../probe/oracles/resource-count.js';
import {
  ALL_ASSERTIONS,
  runProbeInGuest,
  SIW_CHOICES,
  type SiwChoice,
  selectAssertions,
} from '../../probe/probe-guest.js';
import { PROBE_AFTER_ENV, PROBE_RESULTS_ENV, probeKernelLine } from '../../probe/probe-host.js';
import {
  assertionPassed,
  observeFixes,
  PROBE_SCHEMA,
  type ProbeDocument,
  type ProbeKernel,
  renderProbeMarkdown,
  writeProbeReport,
} from '../../probe/probe-report.js';
import { FIXES_ENV, onFixedBuild } from '../../runtime/fixes-env.js';
import {
  abortOnSignals,
  GuestRuntimeError,
  hostRdmaDevices,
  KERNEL_LINES,
} from '../../runtime/index.js';
import { reportGuestFailure, resolveRuntime } from '../devices-or-guest.js';
import { usageError } from '../errors.js';
import {
  cacheDirOption,
  deviceListParser,
  kernelLineName,
  kernelLinesList,
  positiveInteger,
  type Runtime,
  runtimeOption,
  timeoutOption,
} from '../options.js';
import { CACHE_DIR_STAYS, type Forwarding, forwardedOptions, requestArgs } from '../request.js';
import { shardOption } from '../shard-option.js';
import { BENCHMARK_DEFAULT_FUZZ, runBenchmarkCommand } from './probe-benchmark.js';

interface ProbeOptions {
  readonly runtime: Runtime;
  readonly device?: string[];
  readonly assertion?: string;
  readonly kernel?: string;
  readonly kernels?: string[];
  readonly siw: SiwChoice;
  readonly report?: string;
  readonly list?: boolean;
  readonly fuzz?: number;
  readonly seed: number;
  readonly timeout: number;
  readonly cacheDir?: string;
  readonly shard?: Shard;
  readonly fixes?: boolean;
  readonly benchmark?: boolean;
  readonly coverage?: CoverageKind;
  readonly guided?: number;
  readonly minimize?: number;
}

const THIS_HOST = { stays: 'the guests are booted and the report written by this process' };

/**
 * Every option of `probe`: whether its guests' `probe` gets it (the selection, the fuzz and
 * its seed), or why not (cli/request.ts; test/host/cli/options-request.test.ts checks each).
 */
export const PROBE_FORWARDING = {
  runtime: { stays: "the guest's probe is on the guest's devices: --runtime host" },
  device: 'forward',
  assertion: 'forward',
  kernel: THIS_HOST,
  kernels: THIS_HOST,
  siw: 'forward',
  report: THIS_HOST,
  list: { stays: 'lists the assertions here and exits: no guest' },
  fuzz: 'forward',
  seed: 'forward',
  timeout: THIS_HOST,
  // The guest's probe selects the same part (judge/shard.ts).
  shard: 'forward',
  cacheDir: CACHE_DIR_STAYS,
  // The guest is set up on the fixed build here (probeKernelLine); its probe checks it is.
  fixes: 'forward',
  benchmark: { stays: 'the benchmark boots a guest per module variant from here' },
  coverage: 'forward',
  guided: 'forward',
  minimize: 'forward',
} as const satisfies Readonly<Record<keyof ProbeOptions, Forwarding>>;

/**
 * The devices the tester speaks to. rxe0 names the RoCE tester's pass: it makes its own
 * rxe device (rxe_t, on a veth whose far end it owns), which the results name.
 */
const PROBE_DEVICES = ['rxe0', 'siw0'] as const;

function parseSeed(value: string): number {
  const n = Number(value);
  if (value.trim() === '' || !Number.isInteger(n) || n < 0 || n > 0xffffffff)
    throw new InvalidArgumentError('Expected a whole number, 0 to 4294967295.');
  return n;
}

/**
 * The arguments that make the guest's `probe` select what this one selected (`command`:
 * probe's definition, which writes them).
 */
export function probeGuestArgs(command: Command, options: ProbeOptions): string[] {
  const forwarded = forwardedOptions(PROBE_FORWARDING, options);
  return [
    'probe',
    ...requestArgs(command, {
      ...forwarded,
      shard: forwarded.shard === undefined ? undefined : shardLabel(forwarded.shard),
      runtime: 'host',
    }),
  ];
}

/** A line's recordings (one per guest it took) as results.json carries them, merged. */
function coverageOf(raw: readonly RawFunctionCoverage[]): FunctionCoverage[] {
  return mergeFunctionCoverage(raw.map((r) => buildFunctionCoverage(r, functionFiles(r.kernel))));
}

/** A line's block snapshots (one list per guest it took), mapped to source lines. */
function blocksOf(raw: readonly { kernel: string; snapshots: BlockSnapshot[] }[]): BlockCoverage[] {
  return raw.map((r) =>
    buildBlockCoverage(r.kernel, r.snapshots, (module) =>
      blockSites(join(coverageModulesDir(r.kernel), `${module}.ko`)),
    ),
  );
}

/** The report and the exit status of a finished run. */
function finish(
  options: ProbeOptions,
  kernels: readonly ProbeKernel[],
  results: readonly AssertionResult[],
  rawFuzz: readonly FuzzSummary[],
  coverage: readonly FunctionCoverage[] = [],
  blocks: readonly BlockCoverage[] = [],
  resources: readonly ResourceJudgement[] = [],
): number {
  // Each finding a recorded kernel defect explains carries the record's id.
  const lines: string[] = [];
  const fuzz = rawFuzz.map((f) => ({
    ...f,
    findings: f.findings.map((x) => {
      const record = explainFinding(f.kernel, f.device, x);
      lines.push(
        `probe: fuzz ${f.device} on ${f.kernel}: ${record === undefined ? `an unexplained finding (${(x.oracles ?? []).join(', ') || 'no oracle named'})` : `a recorded kernel defect, ${findingRecordText(record)}`}: ${x.why}\n`,
      );
      return record === undefined ? x : { ...x, record: record.id };
    }),
  }));
  const doc: ProbeDocument = {
    schema: PROBE_SCHEMA,
    kernels,
    assertions: results,
    fixes: observeFixes(
      ALL_ASSERTIONS.flatMap((a) =>
        a.regression === undefined ? [] : [{ id: a.id, regression: a.regression }],
      ),
      results,
      kernels,
      new Set(RECORDS.filter((k) => k.codeAbsent === true).map((k) => k.id)),
      new Set(RECORDS.filter((k) => k.lacksFix === true).map((k) => k.id)),
    ),
    fuzz,
    ...(coverage.length === 0 ? {} : { coverage }),
    ...(blocks.length === 0 ? {} : { blocks }),
    ...(resources.length === 0 ? {} : { resources }),
  };
  process.stdout.write(renderProbeMarkdown(doc));
  if (options.report !== undefined) {
    writeProbeReport(resolve(options.report), doc);
    writeCoverageHtml(resolve(options.report), coverage, blocks);
  }
  const failed = results.filter((r) => !assertionPassed(r) && r.verdict !== 'not-run');
  for (const line of lines) process.stdout.write(line);
  const found = fuzz.flatMap((f) => f.findings);
  const findings = found.filter((x) => x.record === undefined).length;
  const known = found.length - findings;
  // A pass whose RDMA objects (or, past the tolerance, slabs) grew is a finding (issue 32).
  const leaks = resourceLeaks(
    resources,
    (release) => kernels.find((k) => k.release === release)?.line ?? release,
  );
  for (const leak of leaks) process.stdout.write(`probe: ${leak}\n`);
  process.stdout.write(
    `probe: ${results.length} results, ${failed.length} failed or crashed, ${findings} fuzz findings${known > 0 ? ` (and ${known} explained by a record)` : ''}, ${leaks.length} resource leaks\n`,
  );
  return failed.length === 0 && findings === 0 && leaks.length === 0 ? 0 : 1;
}

/** `rdma-interop probe`. */
export function registerProbe(program: Command): void {
  program
    .command('probe')
    .description(
      'the reference engine as a packet-level tester: assertions sent from the wire to rxe0 (RoCEv2) and siw0 (iWARP), each answer judged against the engine, the kernel’s survival checked, on one or every kernel line',
    )
    .addOption(runtimeOption())
    .addOption(
      new Option(
        '--device <names>',
        `only these devices, comma-separated (${PROBE_DEVICES.join(', ')})`,
      ).argParser(deviceListParser(PROBE_DEVICES, "the tester's")),
    )
    .option('--assertion <glob>', "only assertions whose id matches the glob (e.g. 'siw-mpa-*')")
    .addOption(new Option('--kernel <line>', 'the guest kernel line').argParser(kernelLineName))
    .addOption(
      new Option('--kernels <lines>', "several kernel lines, a guest each ('all' or e.g. 6.1,7.3)")
        .argParser(kernelLinesList)
        .conflicts(['kernel']),
    )
    .addOption(
      new Option('--siw <variant>', "siw0's module: stock, rfc7306 (the patched siw) or both")
        .choices([...SIW_CHOICES])
        .default('stock'),
    )
    .option('--report <dir>', 'write results.json, junit.xml, report.md and pcaps/ into <dir>')
    .addOption(
      new Option('--list', 'list the assertions the filters select and exit').conflicts([
        'report',
        'kernels',
        'kernel',
        'fuzz',
        'guided',
      ]),
    )
    .addOption(
      new Option(
        '--fuzz <count>',
        'also send <count> seeded, field-aware mutated packets to rxe0 and to siw0 (each)',
      ).argParser(positiveInteger),
    )
    .addOption(new Option('--seed <n>', 'the fuzz seed').argParser(parseSeed).default(1))
    .addOption(
      new Option(
        '--coverage [kind]',
        "record what the assertions and the fuzz reached: 'functions' of rdma_rxe, siw, ib_core and ib_uverbs (ftrace, the stock modules), or 'blocks' of rxe and siw (the trace-pc builds of scripts/setup/coverage-modules.sh; --siw stock) (docs/coverage.md)",
      )
        .choices([...COVERAGE_KINDS])
        .preset('functions'),
    )
    .addOption(
      new Option(
        '--guided <inputs>',
        'also send <inputs> coverage-guided packet sequences to rxe_t and <inputs> FPDU sequences to the stock siw0 (a corpus kept by --coverage feedback; docs/coverage.md)',
      ).argParser(positiveInteger),
    )
    .addOption(
      new Option(
        '--minimize <calls>',
        'minimize each fuzz finding by replaying it on the device, at most <calls> replays per finding; the report gets findings/*.json (docs/coverage.md)',
      ).argParser(positiveInteger),
    )
    .addOption(timeoutOption('limit per guest (boot + assertions)', 900))
    .addOption(cacheDirOption())
    // The fuzz is not split: n shards would send it n times over.
    .addOption(shardOption('(assertion, pass) pairs').conflicts(['fuzz', 'guided']))
    .option(
      '--fixes',
      "rxe and siw0 on the project's fixed modules and providers (patches/*-fixes, docs/findings.md), judged as rxe+fixes and siw+fixes: the fixed defects' records stop applying; not with --siw rfc7306|both",
    )
    .addOption(
      new Option(
        '--benchmark',
        `the assertions and the fuzz (default --fuzz ${BENCHMARK_DEFAULT_FUZZ}) against module variants with one 2026 receive-path fix each taken back out (scripts/setup/benchmark-modules.sh), and the unmodified modules; writes benchmark.json and benchmark.md into --report (default out/benchmark)`,
      ).conflicts(['list', 'shard', 'assertion', 'runtime', 'fixes']),
    )
    .action(async (options: ProbeOptions, command: Command) => {
      if (options.fixes === true && options.siw !== 'stock')
        usageError(
          command,
          `--fixes runs siw0 on the fixed stock siw; --siw ${options.siw} needs the RFC 7306 one (one siw module at a time)`,
        );
      if (options.benchmark) {
        const fuzz = options.fuzz ?? BENCHMARK_DEFAULT_FUZZ;
        const interrupt = abortOnSignals();
        try {
          process.exitCode = await runBenchmarkCommand({
            lines: options.kernels ?? [options.kernel ?? KERNEL_LINES[0]!.line],
            ...(options.device === undefined ? {} : { devices: options.device }),
            fuzz,
            seed: options.seed,
            timeoutSeconds: options.timeout,
            report: options.report ?? join('out', 'benchmark'),
            guestArgs: (device) => [
              process.argv[1] ?? '',
              ...probeGuestArgs(command, {
                ...options,
                benchmark: false,
                fuzz,
                siw: 'stock',
                ...(device === undefined ? {} : { device: [device] }),
              }),
            ],
            signal: interrupt.signal,
          });
        } catch (error) {
          if (!(error instanceof GuestRuntimeError)) throw error;
          process.exitCode = reportGuestFailure(error, interrupt.received(), 'rdma-interop probe');
        } finally {
          interrupt.dispose();
        }
        return;
      }
      const pairs = selectAssertions({
        siw: options.siw,
        ...(options.device === undefined ? {} : { devices: options.device }),
        ...(options.assertion === undefined ? {} : { assertion: options.assertion }),
        ...(options.shard === undefined ? {} : { shard: options.shard }),
      });
      if (pairs.length === 0 && options.fuzz === undefined && options.guided === undefined)
        usageError(
          command,
          `no assertion matches${options.assertion === undefined ? '' : ` '${options.assertion}'`}${options.device === undefined ? '' : ` on ${options.device.join(',')}`}`,
        );
      // The trace-pc builds replace the stock siw; the patched one would replace them.
      if (options.coverage === 'blocks' && options.siw !== 'stock')
        usageError(
          command,
          '--coverage blocks runs siw0 on its trace-pc build of the stock siw: use --siw stock',
        );
      // Both load modules of their own build: the trace-pc one or the fixed one, not both.
      if (options.coverage === 'blocks' && options.fixes === true)
        usageError(
          command,
          '--coverage blocks loads the trace-pc builds of the stock modules; --fixes loads the fixed ones: one at a time',
        );
      if (options.list) {
        for (const { assertion, variant } of pairs)
          process.stdout.write(
            `${assertion.id}\t${assertion.provider}${variant === 'rfc7306' ? '+rfc7306' : ''}\t${assertion.testerRole}\t${assertion.spec}\t${assertion.title}\n`,
          );
        return;
      }
      const here = options.kernel === undefined && options.kernels === undefined;
      if (here && resolveRuntime(options.runtime) === 'host') {
        if (options.fixes === true && !onFixedBuild())
          usageError(
            command,
            `--fixes on this host's devices: they are not on the fixed build (${FIXES_ENV} is not 1); use --runtime guest`,
          );
        const wantsSiw = options.device === undefined || options.device.includes('siw0');
        if (wantsSiw && !hostRdmaDevices().includes('siw0'))
          usageError(command, 'no siw0 here: run with --runtime guest');
        // The host's probe names the results file and where to resume (probe-host.ts).
        const results = process.env[PROBE_RESULTS_ENV] ?? resolve('probe-results.jsonl');
        const after = process.env[PROBE_AFTER_ENV];
        process.exitCode = await runProbeInGuest(
          {
            ...options,
            ...(options.device === undefined ? {} : { devices: options.device }),
            ...(after === undefined || after === '' ? {} : { after }),
            results,
            childArgs: [process.argv[1] ?? '', ...process.argv.slice(2)],
          },
          (line) => process.stderr.write(`${line}\n`),
        );
        return;
      }
      if (options.runtime === 'host')
        usageError(command, '--kernel/--kernels boot guests; they cannot run with --runtime host');
      const lines = options.kernels ?? [options.kernel ?? KERNEL_LINES[0]!.line];
      const kernels: ProbeKernel[] = [];
      const results: AssertionResult[] = [];
      const fuzz: FuzzSummary[] = [];
      const coverage: FunctionCoverage[] = [];
      const blocks: BlockCoverage[] = [];
      const resources: ResourceJudgement[] = [];
      const interrupt = abortOnSignals();
      try {
        for (const line of lines) {
          process.stderr.write(`probe: kernel line ${line}\n`);
          const run = await probeKernelLine({
            line,
            timeoutSeconds: options.timeout,
            guestArgs: [process.argv[1] ?? '', ...probeGuestArgs(command, options)],
            signal: interrupt.signal,
            ...(options.fixes === true ? { fixes: true } : {}),
            onProgress: (l) => process.stderr.write(`${l}\n`),
            ...(options.report === undefined
              ? {}
              : { pcapDir: join(resolve(options.report), 'pcaps') }),
          });
          kernels.push(run.kernel);
          results.push(...run.results);
          fuzz.push(...run.fuzz);
          coverage.push(...coverageOf(run.coverage));
          blocks.push(...blocksOf(run.blocks));
          resources.push(...judgeResources(run.kernel.release, run.resources));
        }
      } catch (error) {
        if (!(error instanceof GuestRuntimeError)) throw error;
        process.exitCode = reportGuestFailure(error, interrupt.received(), 'rdma-interop probe');
        return;
      } finally {
        interrupt.dispose();
      }
      process.exitCode = finish(options, kernels, results, fuzz, coverage, blocks, resources);
    });
}
