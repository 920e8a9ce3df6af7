import { cpSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { isIP } from 'node:net';
import { release, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { SingleBar } from 'cli-progress';
import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import picomatch from 'picomatch';
import { attachCoverage, startSuiteCoverage } from '../../coverage/report-files.js';
import { compareReports, readReports, writeComparison } from '../../interop/comparison/index.js';
import type { DeviceDescription } from '../../interop/device-description.js';
import { collectEnvironment, environmentFor, rdmaCoreVersion } from '../../interop/environment.js';
import { probeDevice } from '../../interop/kernel/device-target.js';
import { renderFindings, renderReport, summaryLine } from '../../interop/report.js';
import { resultsDocument, writeReport } from '../../interop/report-files.js';
import { writeComparisonHtml } from '../../interop/report-html/index.js';
import { planRun } from '../../interop/run-plan.js';
import { runExitStatus, runScenarios } from '../../interop/runner.js';
import { DEVICES, type DeviceName, deviceOf, type Scenario } from '../../interop/scenario.js';
import { SCENARIOS } from '../../interop/scenarios.js';
import { usesRfc7306 } from '../../interop/siw-variant.js';
import { markShard, type ShardOf, selectShard, shardLabel, withShard } from '../../judge/shard.js';
import { WIRE_PROBES } from '../../probe/wire-probes.js';
import { FIXES_ENV, onFixedBuild } from '../../runtime/fixes-env.js';
import { hostRdmaDevices } from '../../runtime/index.js';
import { SIW_VARIANTS } from '../../runtime/siw-variant-env.js';
import { onDevicesOrGuest, resolveRuntime } from '../devices-or-guest.js';
import { errorLine, usageError } from '../errors.js';
import {
  cacheDirOption,
  faultsValue,
  JSON_HELP,
  kernelChoice,
  kernelLinesList,
  kernelOption,
  modulesOption,
  runtimeOption,
  timeoutOption,
} from '../options.js';
import { shardOption } from '../shard-option.js';
import { runLink, selectLinkScenarios } from './run-link.js';
import { parsePeerOption, runAgainstPeer } from './run-peer.js';
import { type RunOptions, runElsewhereArgs } from './run-request.js';
import { inPatchedPass, runPatchedPass, runStockPass, SIW_CHOICES } from './run-siw.js';

const DEVICE_NAMES = Object.keys(DEVICES) as DeviceName[];

/** An RDMA device name as the kernel allows one (IB_DEVICE_NAME_MAX 64, no '/' or space). */
const DEVICE_NAME = /^[A-Za-z0-9_.:-]{1,63}$/;

/**
 * commander argument parser for `--device rxe0,siw0` or any device present
 * (`--device mlx5_0`, issue 37): a device of another name is probed where the suite runs.
 */
function parseDevices(value: string): string[] {
  const names = value
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  const bad = names.filter((n) => !DEVICE_NAME.test(n));
  if (names.length === 0 || bad.length > 0)
    throw new InvalidArgumentError(
      `bad device name ${bad.join(', ') || '(none)'}; give RDMA device names (rdma dev show), e.g. ${DEVICE_NAMES.join(', ')}`,
    );
  return [...new Set(names)];
}

/** commander argument parser for one device name (`peer serve --device`). */
export function parseDeviceName(value: string): string {
  const [name, ...more] = parseDevices(value);
  if (name === undefined || more.length > 0)
    throw new InvalidArgumentError('give one RDMA device name (rdma dev show)');
  return name;
}

/** commander argument parser for `--gid-index <n>`. */
export function parseGidIndex(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || n > 0xffff)
    throw new InvalidArgumentError('a GID index is an integer from 0 (ibv_devinfo -v lists them)');
  return n;
}

/** commander argument parser for `--address <ip>`: an IPv4 or IPv6 address. */
export function parseAddress(value: string): string {
  if (isIP(value) === 0)
    throw new InvalidArgumentError("an IPv4 or IPv6 address of the device's netdev (ip addr)");
  return value;
}

/** True when every name given is a reference target: the scenarios can be chosen by name. */
function byTargetName(device: readonly string[] | undefined): device is DeviceName[] {
  return device?.every((d) => DEVICE_NAMES.includes(d as DeviceName)) === true;
}

/**
 * The scenarios the filters select; with --shard, that shard's part of them (as --list
 * shows them, dealt round-robin: judge/shard.ts).
 */
export function selectScenarios(
  options: Pick<
    RunOptions,
    'device' | 'scenario' | 'link' | 'siw' | 'peerSiw' | 'faults' | 'shard'
  >,
): Scenario[] {
  const all = selectUnsharded(options);
  return options.shard === undefined ? all : selectShard(all, options.shard);
}

/**
 * What a sharded run split: the filters that chose its selection, in a fixed order, so
 * that shards of one selection say the same (`device=rxe0 siw=stock`).
 */
function shardOf(options: RunOptions): ShardOf | undefined {
  if (options.shard === undefined) return undefined;
  const filters = [
    options.device === undefined ? [] : [`device=${[...options.device].sort().join(',')}`],
    options.scenario === undefined ? [] : [`scenario=${options.scenario}`],
    [`siw=${options.siw ?? 'stock'}`],
  ].flat();
  return { shard: options.shard, selection: filters.join(' ') };
}

function selectUnsharded(
  options: Pick<RunOptions, 'device' | 'scenario' | 'link' | 'siw' | 'peerSiw' | 'faults'>,
): Scenario[] {
  // --link refuses --siw both before this (one siw per guest).
  if (options.link)
    return selectLinkScenarios({
      ...options,
      // refuseIdleOptions: --link takes the reference targets only.
      device: byTargetName(options.device) ? options.device : undefined,
      siw: options.siw === 'both' ? undefined : options.siw,
    });
  const match = options.scenario === undefined ? () => true : picomatch(options.scenario);
  // A device of another name is chosen by transport once probed (run-plan.ts): every
  // scenario stays selected here.
  const onDevice = (d: DeviceName) => !byTargetName(options.device) || options.device.includes(d);
  // The patched siw pass (run-siw.ts): siw0's scenarios that post RFC 7306 operations.
  if (options.siw === 'rfc7306')
    return SCENARIOS.filter(
      (s) => s.device === 'siw0' && onDevice(s.device) && usesRfc7306(s) && match(s.id),
    );
  return SCENARIOS.filter((s) => onDevice(s.device) && match(s.id));
}

/**
 * Where a glob that selects no scenario but names a former wire probe of `run` went:
 * the tester's assertions of the same ids (issue 31).
 */
function formerProbesHint(glob: string | undefined): string {
  if (glob === undefined) return '';
  const match = picomatch(glob);
  return WIRE_PROBES.some((p) => match(p.id))
    ? `; the wire probes are the tester's assertions now: rdma-interop probe --assertion '${glob}'`
    : '';
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
      start: (s, i) => bar.update(i, { device: deviceOf(s), scenario: s.id }),
      done: () => bar.increment(),
      stop: () => bar.stop(),
    };
  }
  return { start: () => {}, done: (line) => process.stderr.write(`${line}\n`), stop: () => {} };
}

/** The suite on this host's devices; `command`: run's definition (for the siw passes). */
async function runHere(
  command: Command,
  options: RunOptions,
  reportDir: string | undefined,
): Promise<number> {
  // The patched pass: siw0's RFC 7306 scenarios, the patched module, this CLI again.
  const patchedPass = (report: string | undefined) =>
    runPatchedPass(
      runElsewhereArgs(command, options, { report, siw: 'rfc7306', device: ['siw0'] }),
    );
  if (options.siw === 'rfc7306' && !inPatchedPass()) return patchedPass(reportDir);
  if (options.siw === 'both' && !inPatchedPass()) {
    const stock = runStockPass(
      runElsewhereArgs(command, options, { report: reportDir, siw: 'stock' }),
    );
    const patched = patchedPass(
      reportDir === undefined ? undefined : join(reportDir, 'siw-rfc7306'),
    );
    return Math.max(stock, patched);
  }
  const available = hostRdmaDevices();
  const wanted = selectScenarios(options);
  // The devices: those named, else every device here (a guest: rxe0 and siw0), else (none
  // here) the reference targets the selection is for, which are then reported absent.
  const named =
    options.device ??
    (available.length > 0 ? available : [...new Set(wanted.map((s) => s.device))]);
  const absent = named.filter((d) => !available.includes(d));
  if (absent.length > 0)
    process.stderr.write(
      `interop: no device ${absent.join(', ')} here; its scenarios are left out\n`,
    );
  const present = named.filter((d) => available.includes(d));
  const choice = {
    ...(options.address === undefined ? {} : { address: options.address }),
    ...(options.gidIndex === undefined ? {} : { gidIndex: options.gidIndex }),
  };
  let described: DeviceDescription[];
  try {
    described = present.map((d) => probeDevice(d, choice));
  } catch (error) {
    process.stderr.write(
      errorLine('rdma-interop run', error instanceof Error ? error.message : String(error)),
    );
    return 2;
  }
  const plan = planRun(wanted, described, { kernel: release(), rdmaCore: rdmaCoreVersion() });
  const scenarios = plan.runs;
  if (plan.otherTransport > 0 && options.device !== undefined)
    process.stderr.write(
      `interop: ${plan.otherTransport} selected scenarios are for a transport none of ${present.join(', ')} speaks\n`,
    );
  if (scenarios.length === 0 && plan.notApplicable.length === 0) {
    process.stderr.write(
      errorLine(
        'rdma-interop run',
        'nothing to run on the devices here (--runtime guest boots a guest that has rxe0 and siw0)',
      ),
    );
    return 2;
  }
  const used = [
    ...new Set([...scenarios, ...plan.notApplicable.map((r) => r.scenario)].map(deviceOf)),
  ];
  const env = collectEnvironment(
    used,
    described.filter((d) => used.includes(d.name)),
  );
  process.stderr.write(
    `interop: ${scenarios.length} scenarios on ${used.join(', ')}${plan.notApplicable.length === 0 ? '' : `, ${plan.notApplicable.length} not applicable`} (kernel ${env.kernel}, rdma-core ${env.rdmaCore})\n`,
  );
  for (const d of described)
    process.stderr.write(
      `interop: ${d.name}: ${d.transport}, driver ${d.kernelDriver}, provider ${d.provider}, ${d.address} (GID ${d.gidIndex}), offers ${d.capabilities.join(',') || 'nothing'}\n`,
    );
  const recording = options.coverage === true ? startSuiteCoverage() : undefined;
  const shown = progress(scenarios.length);
  const results = [
    ...(await runScenarios(
      scenarios,
      (s) => environmentFor(env, deviceOf(s)),
      (result, index) =>
        shown.done(
          `  [${index + 1}/${scenarios.length}] ${deviceOf(result.scenario)} ${result.scenario.id}: ${result.verdict} (${result.seconds.toFixed(2)} s)`,
        ),
      shown.start,
    )),
    ...plan.notApplicable,
  ];
  shown.stop();
  const coverage = await recording?.stop();
  const strict = options.strict === true;
  if (options.json === true) {
    // The document results.json holds (report-files.ts), on stdout instead of the text.
    process.stdout.write(
      `${JSON.stringify(withShard(resultsDocument(results, env, strict), shardOf(options)), null, 2)}\n`,
    );
  } else {
    if (results.length > 0) process.stdout.write(`${renderReport(results)}\n`);
    const findings = renderFindings(results);
    if (findings !== '')
      process.stdout.write(`\nKnown provider behaviour seen in this run:\n${findings}\n`);
  }
  if (reportDir !== undefined) {
    writeReport(reportDir, results, env, strict);
    if (coverage !== undefined) attachCoverage(reportDir, [coverage]);
    const of = shardOf(options);
    if (of !== undefined) markShard(reportDir, of);
  }
  const verdicts = results.map((r) => r.verdict);
  // With --json the summary goes to stderr: stdout is the document alone.
  (options.json === true ? process.stderr : process.stdout).write(
    `interop: ${summaryLine(verdicts, strict)}\n`,
  );
  return runExitStatus(results, strict);
}

/**
 * One suite run where the devices are (this host, or a guest booting `kernel`).
 * `command`: run's definition, which writes the guest's request.
 */
async function runOnce(
  command: Command,
  options: RunOptions,
  kernel: string | undefined,
  report: string | undefined,
): Promise<number> {
  // In the guest, the report goes to a private share first (the guest writes nothing
  // else the host keeps), and is copied to its place afterwards.
  const share = report === undefined ? undefined : mkdtempSync(join(tmpdir(), 'rdma-interop-run-'));
  const guestArgs = runElsewhereArgs(command, options, {
    report: share === undefined ? undefined : join(share, 'report'),
  });
  try {
    const status = await onDevicesOrGuest(
      {
        command: 'rdma-interop run',
        where: options.runtime,
        guestArgs,
        timeoutSeconds: options.timeout,
        ...(share === undefined ? {} : { shareDir: share }),
        ...(kernel === undefined ? {} : { kernel }),
        ...(options.modules === undefined ? {} : { modules: options.modules }),
        ...(options.fixes === true ? { fixes: true } : {}),
      },
      () => runHere(command, options, share === undefined ? undefined : join(share, 'report')),
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
async function runOnKernels(
  command: Command,
  options: RunOptions,
  lines: readonly string[],
): Promise<number> {
  const statuses: Record<string, number> = {};
  for (const line of lines) {
    process.stderr.write(`interop: kernel line ${line}\n`);
    const report = options.report === undefined ? undefined : join(resolve(options.report), line);
    statuses[line] = await runOnce(command, { ...options, runtime: 'guest' }, line, report);
    process.stdout.write(`interop: kernel ${line}: exit status ${statuses[line]}\n`);
  }
  if (options.report !== undefined) {
    const dir = resolve(options.report);
    // The same comparison as `rdma-interop compare <dir>/<line>...`, each run labelled by
    // its kernel line.
    const runs = lines
      .filter((l) => existsSync(join(dir, l, 'results.json')))
      .flatMap((l) => readReports([join(dir, l, 'results.json')]).map((r) => ({ ...r, label: l })));
    const comparison = compareReports(runs);
    const written = writeComparison(dir, comparison);
    writeComparisonHtml(
      dir,
      runs.map((r) => r.label),
      comparison,
    );
    process.stdout.write(
      `interop: ${comparison.changedCount} observed values differ between kernels ${runs.map((r) => r.label).join(', ')} (${written})\n`,
    );
  }
  const failed = Object.entries(statuses).filter(([, s]) => s !== 0);
  if (failed.length > 0)
    process.stdout.write(
      `interop: failed on ${failed.map(([l, s]) => `${l} (status ${s})`).join(', ')}\n`,
    );
  return failed.length === 0 ? 0 : Math.max(...failed.map(([, s]) => s));
}

/**
 * The combinations in which an option would do nothing, refused as usage errors before any
 * work (program.ts: every option takes effect or is refused). commander's `.conflicts()`
 * covers the plain pairs; these depend on values or on where the run goes.
 */
function refuseIdleOptions(command: Command, options: RunOptions): void {
  const given = (name: string) => command.getOptionValueSource(name) === 'cli';
  if (options.faults !== undefined && !options.link)
    usageError(command, '--faults sets the wire between the two guests of --link');
  refuseIdleFixes(command, options);
  if (options.modules !== undefined && (options.kernel === undefined || options.link))
    usageError(
      command,
      '--modules goes with --kernel <bzImage|build tree> of the one-guest suite (docs/kernel-developers.md)',
    );
  if (options.link) {
    if (options.device !== undefined && !byTargetName(options.device))
      usageError(
        command,
        `--link runs between the guests' own ${DEVICE_NAMES.join(' and ')}; a device of another name runs without --link`,
      );
    if (options.address !== undefined || options.gidIndex !== undefined)
      usageError(
        command,
        "--address and --gid-index choose a device's address; --link uses the guests' own",
      );
    if (options.runtime === 'host')
      usageError(
        command,
        '--link boots two guests on this host; it cannot run with --runtime host',
      );
    if (options.siw === 'both')
      usageError(
        command,
        "--link boots each guest on one siw: --siw (guest A) and --peer-siw (guest B) take 'stock' or 'rfc7306'",
      );
    return;
  }
  if (options.peer !== undefined) {
    if (options.device?.length !== 1)
      usageError(
        command,
        '--peer runs one device of this host against the peer: give one --device',
      );
    for (const [name, flag] of [
      ['kernel', '--kernel'],
      ['kernels', '--kernels'],
      ['modules', '--modules'],
      ['shard', '--shard'],
    ] as const)
      if (options[name] !== undefined)
        usageError(command, `${flag} is for a guest; --peer runs on this host's device`);
    if (options.runtime === 'guest' || given('timeout') || given('cacheDir'))
      usageError(command, "--peer runs on this host's device, never in a guest");
    if (given('siw'))
      usageError(command, "--peer runs on the siw each host has loaded; --siw sets up a guest's");
  }
  for (const name of ['peerKernel', 'peerSiw'] as const)
    if (options[name] !== undefined)
      usageError(
        command,
        `--${name === 'peerKernel' ? 'peer-kernel' : 'peer-siw'} sets up the second guest of --link`,
      );
  if (options.json === true && options.siw === 'both')
    usageError(
      command,
      '--json prints one document; --siw both makes two runs (use --report <dir> for both)',
    );
  if (
    (options.address !== undefined || options.gidIndex !== undefined) &&
    options.device?.length !== 1
  )
    usageError(
      command,
      '--address and --gid-index choose the address of one device: give one --device',
    );
  if (options.kernels !== undefined) {
    if (options.runtime === 'host')
      usageError(command, '--kernels boots a guest per kernel; it cannot run with --runtime host');
    return;
  }
  if (options.kernel !== undefined && options.runtime === 'host')
    usageError(command, "--kernel picks the guest's kernel; it cannot run with --runtime host");
  // --kernel asks for a guest, so `auto` goes there whatever this host has.
  const where = options.kernel !== undefined ? 'guest' : resolveRuntime(options.runtime);
  if (where === 'host')
    for (const [name, what] of [
      ['timeout', 'limits the guest'],
      ['cacheDir', 'holds the guest kernels'],
    ] as const)
      if (given(name))
        usageError(
          command,
          `--${name === 'cacheDir' ? 'cache-dir' : name} ${what}, and this run is on this host's devices (--runtime ${options.runtime}); use --runtime guest`,
        );
}

/**
 * `--fixes`: one guest on the fixed build. With --siw rfc7306 (or both) the patched pass
 * runs on the RFC 7306 series with the fixes on top, keyed `siw+rfc7306+fixes`
 * (run-siw.ts); the link's guests are set up by --siw and --peer-siw. On this host's devices (the guest's own run gets --fixes forwarded) it holds
 * only where they are on the fixed build, as RDMA_INTEROP_FIXES=1 says (runtime/fixes-env.ts).
 */
function refuseIdleFixes(command: Command, options: RunOptions): void {
  if (options.fixes !== true) return;
  if (options.link)
    usageError(
      command,
      "--fixes sets up one guest; --link's guests run stock siw or --siw/--peer-siw",
    );
  const where =
    options.kernel !== undefined || options.kernels !== undefined
      ? 'guest'
      : resolveRuntime(options.runtime);
  if (where === 'host' && !onFixedBuild())
    usageError(
      command,
      `--fixes on this host's devices: they are not on the fixed build (${FIXES_ENV} is not 1); use --runtime guest`,
    );
}

/** `rdma-interop run`: the interop suite on the default runtime. */
export function registerRun(program: Command): void {
  program
    .command('run')
    .description(
      'run the interop scenarios on the reference engine and on real rxe/siw devices and compare them field by field',
    )
    .addOption(runtimeOption())
    .addOption(
      new Option(
        '--device <names>',
        `only these devices, comma-separated: ${DEVICE_NAMES.join(', ')} or any device present (mlx5_0, irdma0...: probed, its scenarios chosen by transport and capability, docs/nic.md)`,
      ).argParser(parseDevices),
    )
    .addOption(
      new Option(
        '--address <ip>',
        "with one --device: the address of its netdev to use (IPv4 or IPv6; default: its first RoCE v2 IPv4 GID's, an iWARP netdev's first IPv4)",
      ).argParser(parseAddress),
    )
    .addOption(
      new Option(
        '--gid-index <n>',
        'with one --device: the GID index of port 1 a by-hand bring-up uses (ibv_devinfo -v)',
      ).argParser(parseGidIndex),
    )
    .option('--scenario <glob>', "only scenarios whose id matches the glob (e.g. 'rxe-*atomic*')")
    .option(
      '--report <dir>',
      'write results.json, junit.xml, report.md, report.html and the pcaps into <dir>',
    )
    .option(
      '--coverage',
      'record which functions of rdma_rxe, siw and the core the suite entered (ftrace)',
    )
    .option('--strict', 'fail on differences the records do not cover (devices without records)')
    .option(
      '--json',
      `${JSON_HELP}: the results.json document (with --list: the scenarios as a JSON array)`,
    )
    .addOption(
      new Option('--list', 'list the scenarios the filters select and exit').conflicts([
        'runtime',
        'report',
        'strict',
        'timeout',
        'kernel',
        'modules',
        'kernels',
        'cacheDir',
        'peerKernel',
        'peerSiw',
        'fixes',
      ]),
    )
    .addOption(
      new Option(
        '--peer <host>',
        "with one --device: run the link scenarios of its transport against 'rdma-interop peer serve' on <host> (a name or address; <host>:<port>, [<IPv6>]:<port>; default port 18515), for a device that cannot talk to itself (docs/nic.md)",
      )
        .argParser(parsePeerOption)
        .conflicts(['link', 'list', 'kernels']),
    )
    .option(
      '--link',
      'the wire scenarios across a link between two guests (RoCEv2 and iWARP frames captured and compared with the engine); --kernel and --siw set up guest A (the first requester)',
    )
    .addOption(
      new Option(
        '--peer-kernel <line|dir>',
        "with --link: guest B's kernel line (its own rdma-core) or guest assets directory (default: --kernel's); a pair that differs runs both ways round in one boot",
      ).argParser(kernelChoice),
    )
    .addOption(
      new Option(
        '--peer-siw <variant>',
        "with --link: which siw guest B's siw0 runs on (default: --siw's)",
      ).choices([...SIW_VARIANTS]),
    )
    .addOption(
      new Option(
        '--siw <variant>',
        "which siw siw0 runs on: stock; rfc7306 (the project's patched siw, docs/siw-rfc7306.md: siw0's scenarios that post atomics or immediate data, keyed siw+rfc7306); both (stock, then the patched pass into <report>/siw-rfc7306/)",
      )
        .choices([...SIW_CHOICES])
        .default('stock'),
    )
    .option(
      '--fixes',
      "rxe0 and siw0 on the project's fixed modules and providers (patches/*-fixes, repro/README.md; built by scripts/setup/fixes.sh), keyed rxe+fixes and siw+fixes: the defects they fix (findings/fixes.ts) turn match, every other record holds as on stock; with --siw rfc7306|both the patched pass runs on the RFC 7306 series with the fixes on top, keyed siw+rfc7306+fixes",
    )
    .addOption(
      new Option(
        '--faults <spec>',
        'with --link: a seeded fault relay between the guests, e.g. drop=0.02,dup=0.01,reorder=8,delay=1ms,jitter=2ms,corrupt=0.001,corrupt-payload=0.001,seed=7 (docs/faulty-wire.md); selects the faulty-wire scenarios unless --scenario says otherwise',
      ).argParser(faultsValue),
    )
    .addOption(timeoutOption('guest runtime limit (a run on this host has none)', 900))
    .addOption(kernelOption())
    .addOption(modulesOption().conflicts(['kernels']))
    .addOption(
      new Option(
        '--kernels <lines>',
        "run on several kernel lines, one guest each ('all' or e.g. 6.1,7.3); with --report: <dir>/<line>/ per kernel plus comparison.md and comparison.json",
      )
        .argParser(kernelLinesList)
        .conflicts(['kernel', 'link', 'json', 'peerKernel', 'peerSiw']),
    )
    .addOption(cacheDirOption())
    .addOption(shardOption('scenarios'))
    .action(async (options: RunOptions, command: Command) => {
      refuseIdleOptions(command, options);
      const [device] = options.device ?? [];
      if (options.peer !== undefined && device !== undefined) {
        process.exitCode = await runAgainstPeer({ ...options, device, peer: options.peer });
        return;
      }
      const scenarios = selectScenarios(options);
      if (scenarios.length === 0)
        usageError(
          command,
          `no scenario matches${options.scenario === undefined ? '' : ` '${options.scenario}'`}${options.device === undefined ? '' : ` on ${options.device.join(',')}`}${options.shard === undefined ? '' : ` in shard ${shardLabel(options.shard)} (fewer items than shards)`}${formerProbesHint(options.scenario)}`,
        );
      if (options.list) {
        const rows = scenarios.map((s) => ({
          id: s.id,
          device: s.device as string,
          post: s.postPath === 'ex' ? 'ibv_wr_*' : 'post_send',
          family: s.family as string,
          title: s.title,
        }));
        process.stdout.write(
          options.json === true
            ? `${JSON.stringify(rows, null, 2)}\n`
            : rows.map((r) => `${Object.values(r).join('\t')}\n`).join(''),
        );
        return;
      }
      if (options.link) {
        process.exitCode = await runLink(scenarios, {
          ...options,
          device: byTargetName(options.device) ? options.device : undefined,
          siw: options.siw === 'rfc7306' ? 'rfc7306' : 'stock',
        });
        return;
      }
      if (options.kernels !== undefined) {
        process.exitCode = await runOnKernels(command, options, options.kernels);
        return;
      }
      process.exitCode = await runOnce(
        command,
        options.kernel === undefined ? options : { ...options, runtime: 'guest' },
        options.kernel,
        options.report,
      );
    });
}

/**
 * Why `rdma-interop run <args>` would be refused as a usage error (a bad value, an unknown
 * option, an idle combination, or `--help`), or `undefined`: for commands that run the suite elsewhere
 * (`docker run`), so a mistake is refused here rather than after a guest has booted.
 */
export function runArgumentsError(args: readonly string[]): string | undefined {
  const probe = new Command('rdma-interop').exitOverride();
  registerRun(probe);
  let message: string | undefined;
  for (const command of [probe, ...probe.commands])
    command.exitOverride().configureOutput({
      writeOut: () => {},
      writeErr: () => {},
      outputError: (text) => {
        message = text.trim().replace(/^error: /, '');
      },
    });
  probe.commands[0]?.action((options: RunOptions, command: Command) =>
    refuseIdleOptions(command, options),
  );
  try {
    probe.parse(['run', ...args], { from: 'user' });
    return undefined;
  } catch (error) {
    if (!(error instanceof CommanderError)) throw error;
    // Help, asked for in the suite's arguments, is this host's to print, not a container's.
    if (error.exitCode === 0) return "the suite's options are in 'rdma-interop run --help'";
    return message ?? error.message;
  }
}
