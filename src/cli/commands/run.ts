import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { SingleBar } from 'cli-progress';
import { type Command, InvalidArgumentError, Option } from 'commander';
import picomatch from 'picomatch';
import { collectEnvironment, environmentFor } from '../../interop/environment.js';
import {
  compareKernels,
  kernelResultsOf,
  renderComparisonMarkdown,
} from '../../interop/kernel-matrix/comparison.js';
import { WIRE_PROBES } from '../../interop/peer/probes.js';
import { type ProbeResult, runProbe } from '../../interop/peer/run-probes.js';
import {
  renderFindings,
  renderProbeReport,
  renderReport,
  summaryLine,
} from '../../interop/report.js';
import { writeReport } from '../../interop/report-files.js';
import { passed, runScenarios } from '../../interop/runner.js';
import { DEVICES, type DeviceName, type Scenario } from '../../interop/scenario.js';
import { SCENARIOS } from '../../interop/scenarios.js';
import { usesRfc7306 } from '../../interop/siw-variant.js';
import { hostRdmaDevices } from '../../runtime/index.js';
import { DEFAULT_KERNEL_LINE, findKernelLine, KERNEL_LINES } from '../../runtime/kernel-lines.js';
import { onDevicesOrGuest } from '../devices-or-guest.js';
import { positiveSeconds } from '../options.js';
import { runLink, selectLinkScenarios } from './run-link.js';
import { inPatchedPass, runPatchedPass, SIW_CHOICES, type SiwChoice } from './run-siw.js';

interface RunOptions {
  readonly runtime: 'auto' | 'host' | 'guest';
  readonly device?: DeviceName[];
  readonly scenario?: string;
  readonly report?: string;
  readonly strict?: boolean;
  readonly list?: boolean;
  readonly link?: boolean;
  readonly timeout: number;
  readonly kernel?: string;
  readonly kernels?: string[];
  readonly siw?: SiwChoice;
}

const DEVICE_NAMES = Object.keys(DEVICES) as DeviceName[];

/** commander argument parser for `--device rxe0,siw0`. */
function parseDevices(value: string): DeviceName[] {
  const names = value
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  const unknown = names.filter((n) => !DEVICE_NAMES.includes(n as DeviceName));
  if (names.length === 0 || unknown.length > 0)
    throw new InvalidArgumentError(
      `unknown device ${unknown.join(', ') || '(none)'}; the suite's devices are ${DEVICE_NAMES.join(', ')}`,
    );
  return names as DeviceName[];
}

/** The scenarios and wire probes the filters select. */
export function selectScenarios(
  options: Pick<RunOptions, 'device' | 'scenario' | 'link' | 'siw'>,
): {
  scenarios: Scenario[];
  probes: typeof WIRE_PROBES;
} {
  if (options.link) return { scenarios: selectLinkScenarios(options), probes: [] };
  const match = options.scenario === undefined ? () => true : picomatch(options.scenario);
  const onDevice = (d: DeviceName) => options.device === undefined || options.device.includes(d);
  // The patched siw pass (run-siw.ts): siw0's scenarios that post RFC 7306 operations.
  if (options.siw === 'rfc7306')
    return {
      scenarios: SCENARIOS.filter(
        (s) => s.device === 'siw0' && onDevice(s.device) && usesRfc7306(s) && match(s.id),
      ),
      probes: [],
    };
  return {
    scenarios: SCENARIOS.filter((s) => onDevice(s.device) && match(s.id)),
    // The wire probes talk to siw0 from our userspace iWARP peer.
    probes: onDevice('siw0') ? WIRE_PROBES.filter((p) => match(p.id)) : [],
  };
}

/** Progress: a bar on a terminal, a plain line per scenario otherwise. */
function progress(total: number): {
  start: (s: Scenario, i: number) => void;
  done: (line: string) => void;
  stop: () => void;
} {
  if (process.stderr.isTTY) {
    const bar = new SingleBar({
      format: 'interop [{bar}] {value}/{total} {device} {scenario}',
      stream: process.stderr,
      hideCursor: true,
    });
    bar.start(total, 0, { device: '', scenario: '' });
    return {
      start: (s, i) => bar.update(i, { device: s.device, scenario: s.id }),
      done: () => bar.increment(),
      stop: () => bar.stop(),
    };
  }
  return { start: () => {}, done: (line) => process.stderr.write(`${line}\n`), stop: () => {} };
}

async function runHere(options: RunOptions, reportDir: string | undefined): Promise<number> {
  if (options.siw === 'rfc7306' && !inPatchedPass()) return runPatchedPass(options, reportDir);
  if (options.siw === 'both' && !inPatchedPass()) {
    const stock = await runHere({ ...options, siw: 'stock' }, reportDir);
    const patched = runPatchedPass(
      options,
      reportDir === undefined ? undefined : join(reportDir, 'siw-rfc7306'),
    );
    return Math.max(stock, patched);
  }
  const available = hostRdmaDevices();
  const { scenarios: wanted, probes: wantedProbes } = selectScenarios(options);
  const scenarios = wanted.filter((s) => available.includes(s.device));
  const missing = [
    ...new Set(wanted.filter((s) => !available.includes(s.device)).map((s) => s.device)),
  ];
  if (missing.length > 0)
    process.stderr.write(
      `interop: no device ${missing.join(', ')} here; its scenarios are left out\n`,
    );
  const probes = available.includes('siw0') ? wantedProbes : [];
  if (scenarios.length + probes.length === 0) {
    process.stderr.write('interop: nothing to run on the devices here\n');
    return 2;
  }
  const env = collectEnvironment([...new Set(scenarios.map((s) => s.device))]);
  process.stderr.write(
    `interop: ${scenarios.length} scenarios, ${probes.length} wire probes on ${available.join(', ')} (kernel ${env.kernel}, rdma-core ${env.rdmaCore})\n`,
  );
  const shown = progress(scenarios.length);
  const results = await runScenarios(
    scenarios,
    (s) => environmentFor(env, s.device),
    (result, index) =>
      shown.done(
        `  [${index + 1}/${scenarios.length}] ${result.scenario.device} ${result.scenario.id}: ${result.verdict} (${result.seconds.toFixed(2)} s)`,
      ),
    shown.start,
  );
  shown.stop();
  const probeResults: ProbeResult[] = [];
  for (const probe of probes) {
    const result = await runProbe(probe);
    probeResults.push(result);
    process.stderr.write(`  [probe] ${probe.id}: ${result.verdict}\n`);
  }
  if (results.length > 0) process.stdout.write(`${renderReport(results)}\n`);
  if (probeResults.length > 0)
    process.stdout.write(`\nWire probes:\n${renderProbeReport(probeResults)}\n`);
  const findings = renderFindings(results, probeResults);
  if (findings !== '')
    process.stdout.write(`\nKnown provider behaviour seen in this run:\n${findings}\n`);
  const strict = options.strict === true;
  if (reportDir !== undefined) writeReport(reportDir, results, probeResults, env, strict);
  const verdicts = [...results.map((r) => r.verdict), ...probeResults.map((r) => r.verdict)];
  process.stdout.write(`interop: ${summaryLine(verdicts, strict)}\n`);
  return verdicts.every((v) => passed(v, strict)) ? 0 : 1;
}

/** commander argument parser for `--kernels all` / `--kernels 6.1,7.3`. */
function parseKernelLines(value: string): string[] {
  if (value.trim() === 'all') return KERNEL_LINES.map((l) => l.line);
  const names = value
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  const unknown = names.filter((n) => findKernelLine(n) === undefined);
  if (names.length === 0 || unknown.length > 0)
    throw new InvalidArgumentError(
      `unknown kernel line ${unknown.join(', ') || '(none)'}; the lines are ${KERNEL_LINES.map((l) => l.line).join(', ')} (or 'all')`,
    );
  return [...new Set(names)];
}

/** One suite run where the devices are (this host, or a guest booting `kernel`). */
async function runOnce(
  options: RunOptions,
  kernel: string | undefined,
  report: string | undefined,
): Promise<number> {
  const guestArgs = ['run', '--runtime', 'host'];
  if (options.device !== undefined) guestArgs.push('--device', options.device.join(','));
  if (options.scenario !== undefined) guestArgs.push('--scenario', options.scenario);
  if (options.strict) guestArgs.push('--strict');
  if (options.siw !== undefined) guestArgs.push('--siw', options.siw);
  // In the guest, the report goes to a private share first (the guest writes nothing
  // else the host keeps), and is copied to its place afterwards.
  const share = report === undefined ? undefined : mkdtempSync(join(tmpdir(), 'rdma-interop-run-'));
  if (share !== undefined) guestArgs.push('--report', join(share, 'report'));
  try {
    const status = await onDevicesOrGuest(
      {
        where: options.runtime,
        guestArgs,
        timeoutSeconds: options.timeout,
        ...(share === undefined ? {} : { shareDir: share }),
        ...(kernel === undefined ? {} : { kernel }),
      },
      () => runHere(options, share === undefined ? undefined : join(share, 'report')),
    );
    const produced = share === undefined ? undefined : join(share, 'report');
    if (produced !== undefined && report !== undefined && existsSync(produced))
      cpSync(produced, resolve(report), { recursive: true });
    return status;
  } finally {
    if (share !== undefined) rmSync(share, { recursive: true, force: true });
  }
}

/**
 * The suite on each kernel line in turn (a guest each), then, with --report, the
 * comparison of their results. Fails when any kernel's run fails (a record that stops
 * holding on a kernel fails that kernel's run).
 */
async function runOnKernels(options: RunOptions, lines: readonly string[]): Promise<number> {
  if (options.runtime === 'host') {
    process.stderr.write(
      'interop: --kernels boots a guest per kernel; it cannot run with --runtime host\n',
    );
    return 2;
  }
  const statuses: Record<string, number> = {};
  for (const line of lines) {
    process.stderr.write(`interop: kernel line ${line}\n`);
    const report = options.report === undefined ? undefined : join(resolve(options.report), line);
    statuses[line] = await runOnce({ ...options, runtime: 'guest' }, line, report);
    process.stdout.write(`interop: kernel ${line}: exit status ${statuses[line]}\n`);
  }
  if (options.report !== undefined) {
    const dir = resolve(options.report);
    const runs = lines
      .filter((l) => existsSync(join(dir, l, 'results.json')))
      .map((l) =>
        kernelResultsOf(l, JSON.parse(readFileSync(join(dir, l, 'results.json'), 'utf8'))),
      );
    const comparison = compareKernels(runs);
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'comparison.json'), `${JSON.stringify(comparison, null, 2)}\n`);
    writeFileSync(join(dir, 'comparison.md'), `${renderComparisonMarkdown(comparison)}\n`);
    process.stdout.write(
      `interop: ${comparison.changedCount} observed values differ between kernels ${runs.map((r) => r.line).join(', ')} (${join(dir, 'comparison.md')})\n`,
    );
  }
  const failed = Object.entries(statuses).filter(([, s]) => s !== 0);
  if (failed.length > 0)
    process.stdout.write(
      `interop: failed on ${failed.map(([l, s]) => `${l} (status ${s})`).join(', ')}\n`,
    );
  return failed.length === 0 ? 0 : Math.max(...failed.map(([, s]) => s));
}

/** `rdma-interop run`: the interop suite on the default runtime. */
export function registerRun(program: Command): void {
  program
    .command('run')
    .description(
      'run the interop scenarios on the reference engine and on real rxe/siw devices and compare them field by field',
    )
    .addOption(
      new Option(
        '--runtime <where>',
        'host: devices of this machine; guest: the QEMU guest; auto: host if it has devices',
      )
        .choices(['auto', 'host', 'guest'])
        .default('auto'),
    )
    .addOption(
      new Option(
        '--device <names>',
        `only these devices, comma-separated (${DEVICE_NAMES.join(', ')})`,
      ).argParser(parseDevices),
    )
    .option('--scenario <glob>', "only scenarios whose id matches the glob (e.g. 'rxe-*atomic*')")
    .option('--report <dir>', 'write results.json, junit.xml, report.md and the pcaps into <dir>')
    .option('--strict', 'fail on differences the records do not cover (devices without records)')
    .option('--list', 'list the scenarios the filters select and exit')
    .option(
      '--link',
      'the wire scenarios across a link between two guests (RoCEv2 and iWARP frames captured and compared with the engine)',
    )
    .addOption(
      new Option(
        '--siw <variant>',
        "which siw siw0 runs on: stock; rfc7306 (the project's patched siw, docs/siw-rfc7306.md: siw0's scenarios that post atomics or immediate data, keyed siw+rfc7306); both (stock, then the patched pass into <report>/siw-rfc7306/)",
      )
        .choices([...SIW_CHOICES])
        .default('stock'),
    )
    .option('--timeout <seconds>', 'guest runtime limit', positiveSeconds, 900)
    .option(
      '--kernel <line|dir>',
      `the guest's kernel line (${KERNEL_LINES.map((l) => l.line).join(', ')}) or guest assets directory (default ${DEFAULT_KERNEL_LINE})`,
    )
    .addOption(
      new Option(
        '--kernels <lines>',
        "run on several kernel lines, one guest each ('all' or e.g. 6.1,7.3); with --report: <dir>/<line>/ per kernel plus comparison.md and comparison.json",
      )
        .argParser(parseKernelLines)
        .conflicts(['kernel']),
    )
    .action(async (options: RunOptions) => {
      const { scenarios, probes } = selectScenarios(options);
      if (scenarios.length + probes.length === 0) {
        process.stderr.write(
          `interop: no scenario matches${options.scenario === undefined ? '' : ` '${options.scenario}'`}${options.device === undefined ? '' : ` on ${options.device.join(',')}`}\n`,
        );
        process.exitCode = 2;
        return;
      }
      if (options.list) {
        for (const s of scenarios)
          process.stdout.write(
            `${s.id}\t${s.device}\t${s.postPath === 'ex' ? 'ibv_wr_*' : 'post_send'}\t${s.family}\t${s.title}\n`,
          );
        for (const p of probes) process.stdout.write(`${p.id}\tsiw0\tprobe\twire\t${p.title}\n`);
        return;
      }
      if (options.link) {
        process.exitCode = await runLink(scenarios, options);
        return;
      }
      if (options.kernels !== undefined) {
        process.exitCode = await runOnKernels(options, options.kernels);
        return;
      }
      process.exitCode = await runOnce(options, options.kernel, options.report);
    });
}
