/**
 * `rdma-interop ulp`: the kernel's own RDMA users (NVMe over Fabrics, NFS over RDMA, iSER;
 * SMB Direct reported as not run yet) on rxe0 and siw0 in the guest, per kernel line,
 * their data verified, dmesg checked and siw0's wire decoded and judged (issue 35;
 * docs/ulp.md). The Debian tools are unpacked first by scripts/setup/ulp-packages.sh.
 */
import { execFile } from 'node:child_process';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { type Command, InvalidArgumentError, Option } from 'commander';
import type { FaultSpec } from '../../runtime/faults/spec.js';
import {
  abortOnSignals,
  findGuestAssets,
  GuestRuntimeError,
  KERNEL_LINES,
} from '../../runtime/index.js';
import { cacheRoot, packageRoot } from '../../runtime/paths.js';
import { SIW_VARIANTS, type SiwVariant } from '../../runtime/siw-variant-env.js';
import { runUlpOnLink } from '../../ulp/link-run.js';
import { writeUlpReport } from '../../ulp/report.js';
import { runUlpInGuest, type UlpLineRun } from '../../ulp/run.js';
import {
  DEFAULT_SIZES,
  DEFAULT_ULP_DEVICES,
  ULP_DEVICE_NAMES,
  ULP_WORKLOAD_NAMES,
  type UlpDeviceName,
  type UlpWorkloadName,
} from '../../ulp/workloads.js';
import { reportGuestFailure } from '../devices-or-guest.js';
import { usageError } from '../errors.js';
import {
  cacheDirOption,
  deviceListParser,
  faultsValue,
  kernelChoice,
  kernelLineName,
  kernelLinesList,
  timeoutOption,
} from '../options.js';
import { linkKernel } from './run-link.js';

const run = promisify(execFile);

interface UlpOptions {
  readonly workload: string;
  readonly device: string[];
  readonly kernel?: string;
  readonly kernels?: string[];
  readonly report?: string;
  readonly mib: number;
  readonly files: number;
  readonly timeout: number;
  readonly cacheDir?: string;
  readonly link?: boolean;
  readonly peerKernel?: string;
  readonly siw?: SiwVariant;
  readonly peerSiw?: SiwVariant;
  readonly faults?: FaultSpec;
}

/** `--mib` and `--files`: a whole number 1-1024 (the guest's 2 GiB and tmpfs bound them). */
function sizeArgument(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || n < 1 || n > 1024)
    throw new InvalidArgumentError('Expected a whole number from 1 to 1024.');
  return n;
}

export function registerUlp(program: Command): void {
  program
    .command('ulp')
    .description(
      "the kernel's own RDMA users (NVMe-oF, NFS over RDMA, iSER) on rxe0 and siw0 in the guest: data verified, dmesg checked, siw0's wire decoded and judged",
    )
    .addOption(
      new Option('--workload <name>', `a workload or 'all' (${ULP_WORKLOAD_NAMES.join(', ')})`)
        .choices([...ULP_WORKLOAD_NAMES, 'all'])
        .default('all'),
    )
    .addOption(
      new Option(
        '--device <names>',
        `the devices, comma-separated (${ULP_DEVICE_NAMES.join(', ')}; tcp: the same ULP over TCP, the speed reference)`,
      )
        .argParser(deviceListParser(ULP_DEVICE_NAMES, "the guest's"))
        .default([...DEFAULT_ULP_DEVICES], DEFAULT_ULP_DEVICES.join(',')),
    )
    .addOption(new Option('--kernel <line>', 'the guest kernel line').argParser(kernelLineName))
    .addOption(
      new Option('--kernels <lines>', "several kernel lines, a guest each ('all' or e.g. 6.1,7.3)")
        .argParser(kernelLinesList)
        .conflicts(['kernel']),
    )
    .option(
      '--report <dir>',
      'write results.json (a workloads array), junit.xml, report.md, report.html and the pcaps into <dir>',
    )
    .addOption(
      new Option('--mib <n>', 'MiB of the large transfer per workload')
        .argParser(sizeArgument)
        .default(DEFAULT_SIZES.mib),
    )
    .addOption(
      new Option(
        '--files <n>',
        'small files (NFS) per workload; 4 KiB blocks are fixed at 256 (NVMe)',
      )
        .argParser(sizeArgument)
        .default(DEFAULT_SIZES.files),
    )
    .option(
      '--link',
      "across the two-guest link: each workload's target in guest B, its initiator in guest A (nvme and nfs), rxe0's RoCEv2 and siw0's iWARP captured on the link and judged; --kernel and --siw set up A",
    )
    .addOption(
      new Option(
        '--peer-kernel <line|dir>',
        "with --link: guest B's (the targets') kernel line or assets directory (default: --kernel's)",
      ).argParser(kernelChoice),
    )
    .addOption(
      new Option('--siw <variant>', "with --link: guest A's siw (default stock)").choices([
        ...SIW_VARIANTS,
      ]),
    )
    .addOption(
      new Option('--peer-siw <variant>', "with --link: guest B's siw (default: --siw's)").choices([
        ...SIW_VARIANTS,
      ]),
    )
    .addOption(
      new Option(
        '--faults <spec>',
        'with --link: a seeded fault relay between the guests (drop=0.01,dup=0.01,reorder=8,seed=7; docs/faulty-wire.md)',
      ).argParser(faultsValue),
    )
    .addOption(timeoutOption('limit per guest (boot + workloads)', 1200))
    .addOption(cacheDirOption())
    .action(async (options: UlpOptions, command: Command) => {
      const workloads: UlpWorkloadName[] =
        options.workload === 'all'
          ? [...ULP_WORKLOAD_NAMES]
          : [options.workload as UlpWorkloadName];
      const devices = options.device as UlpDeviceName[];
      const lines = options.kernels ?? [options.kernel ?? KERNEL_LINES[0]?.line ?? '6.1'];
      if (!options.link)
        for (const [flag, value] of [
          ['--peer-kernel', options.peerKernel],
          ['--siw', options.siw],
          ['--peer-siw', options.peerSiw],
          ['--faults', options.faults],
        ] as const)
          if (value !== undefined) usageError(command, `${flag} sets up the guest pair of --link`);
      if (options.link && options.kernels !== undefined)
        usageError(
          command,
          '--link boots one pair: --kernel (A) and --peer-kernel (B), not --kernels',
        );
      if (options.link) lines.push(options.peerKernel ?? lines[0] ?? '6.1');
      // Every line's guest first (no set-up of the tools for a run that cannot boot), then
      // the tools.
      try {
        for (const line of lines) findGuestAssets(line);
      } catch (error) {
        if (!(error instanceof GuestRuntimeError)) throw error;
        process.exitCode = reportGuestFailure(error, undefined, 'rdma-interop ulp');
        return;
      }
      try {
        process.stderr.write('ulp: the Debian tools (scripts/setup/ulp-packages.sh)\n');
        await run('bash', [join(packageRoot(), 'scripts', 'setup', 'ulp-packages.sh')], {
          env: { ...process.env, RDMA_INTEROP_CACHE: cacheRoot() },
        });
      } catch (e) {
        usageError(
          command,
          `the ULP tools could not be set up: ${((e as { stderr?: string }).stderr ?? String(e)).trim().split('\n').at(-1) ?? ''}`,
        );
      }
      const interrupt = abortOnSignals();
      const runs: UlpLineRun[] = [];
      const report = options.report === undefined ? undefined : resolve(options.report);
      // What every guest run takes, one guest per line or one link pair.
      const common = {
        workloads,
        devices,
        sizes: { mib: options.mib, files: options.files },
        timeoutSeconds: options.timeout,
        signal: interrupt.signal,
        onProgress: (l: string) => process.stderr.write(`${l}\n`),
        ...(report === undefined ? {} : { pcapDir: report }),
      };
      try {
        if (options.link) {
          const a = linkKernel(lines[0], options.siw ?? 'stock');
          const b = linkKernel(lines[1], options.peerSiw ?? options.siw ?? 'stock');
          process.stderr.write(
            `ulp: link, initiators in A (${a.release}, siw ${a.siw}), targets in B (${b.release}, siw ${b.siw}): ${workloads.join(', ')} on ${devices.join(', ')}\n`,
          );
          runs.push(
            await runUlpOnLink({
              initiator: { kernelDir: a.kernelDir, siw: a.siw, env: a.env },
              target: { kernelDir: b.kernelDir, siw: b.siw, env: b.env },
              ...common,
              ...(options.faults === undefined ? {} : { faults: options.faults }),
            }),
          );
          if (report !== undefined) writeUlpReport(report, runs);
        } else {
          for (const line of lines) {
            process.stderr.write(
              `ulp: kernel line ${line}: ${workloads.join(', ')} on ${devices.join(', ')}\n`,
            );
            runs.push(await runUlpInGuest({ line, ...common }));
            if (report !== undefined) writeUlpReport(report, runs);
          }
        }
      } catch (error) {
        if (!(error instanceof GuestRuntimeError)) throw error;
        if (report !== undefined && runs.length > 0) writeUlpReport(report, runs);
        process.exitCode = reportGuestFailure(error, interrupt.received(), 'rdma-interop ulp');
        return;
      } finally {
        interrupt.dispose();
      }
      for (const r of runs) {
        if (r.failure !== undefined) process.stdout.write(`ulp: ${r.line}: ${r.failure}\n`);
        for (const w of r.results) {
          process.stdout.write(
            `ulp: ${r.line} ${w.workload} ${w.device}: ${w.outcome}${w.reason === undefined ? '' : ` (${w.reason})`}\n`,
          );
          // A failure's dmesg trouble (hung tasks, oopses), the first lines.
          if (w.outcome === 'failed')
            for (const l of w.dmesgTrouble.slice(0, 8)) process.stdout.write(`  dmesg: ${l}\n`);
        }
      }
      const bad = runs.some(
        (r) => r.failure !== undefined || r.results.some((w) => w.outcome === 'failed'),
      );
      process.exitCode = bad ? 1 : 0;
    });
}
