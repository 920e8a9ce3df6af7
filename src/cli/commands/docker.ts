import { type Command, Option } from 'commander';
import {
  buildImage,
  type ContainerMode,
  dockerRun,
  HANDOVERS,
  type Handover,
  handoverFromEnvironment,
  RuntimeError,
  withDaemon,
} from '../../runtime/docker/index.js';
import { abortOnSignals } from '../../runtime/index.js';
import { resolveRuntime } from '../devices-or-guest.js';
import { errorLine, usageError } from '../errors.js';
import {
  cacheDirOption,
  type Runtime,
  renamedOption,
  runtimeOption,
  timeoutOption,
} from '../options.js';
import { loadAverage, timingsTable } from './docker-timings.js';
import { runArgumentsError } from './run.js';

/** Exit status when the container runtime itself failed (as `vm` uses for the guest). */
const RUNTIME_FAILURE_STATUS = 125;

function report(
  command: string,
  error: unknown,
  interrupted: NodeJS.Signals | undefined,
  exit: () => number | undefined,
): number {
  if (!(error instanceof RuntimeError)) throw error;
  if (error.failure === 'aborted' && interrupted !== undefined) {
    process.stderr.write(
      `[docker] interrupted by ${interrupted}: dockerd stopped, nothing left running\n`,
    );
    return exit() ?? 130;
  }
  process.stderr.write(errorLine(`rdma-interop docker ${command}`, error.message, error.failure));
  return RUNTIME_FAILURE_STATUS;
}

/**
 * The suite arguments with `--report <dir>` taken out: the report comes back to <dir> on
 * this host whatever runs the suite (the container writes it to its own /report).
 */
export function splitReport(args: readonly string[]): { suiteArgs: string[]; reportDir?: string } {
  const suiteArgs: string[] = [];
  let reportDir: string | undefined;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] ?? '';
    if (arg === '--report' && i + 1 < args.length) {
      reportDir = args[++i];
    } else if (arg.startsWith('--report=')) {
      reportDir = arg.slice('--report='.length);
    } else {
      suiteArgs.push(arg);
    }
  }
  return reportDir === undefined ? { suiteArgs } : { suiteArgs, reportDir };
}

const progress = (line: string) => process.stderr.write(`[docker] ${line}\n`);

/** `rdma-interop docker build` / `docker run`: the suite in a container (docs/docker.md). */
export function registerDocker(program: Command): void {
  const docker = program
    .command('docker')
    .description(
      'the interop suite in a container: build the image, run it (on this host or in the guest)',
    );
  docker
    .command('build')
    .description("build the project's image from docker/Dockerfile on the project's own dockerd")
    .option(
      '--base <image>',
      'BASE_IMAGE build argument (default: a local Debian bookworm made by debootstrap; e.g. node:26-bookworm-slim where a registry is reachable)',
    )
    .addOption(cacheDirOption())
    .action(async (opts: { base?: string }) => {
      const interrupt = abortOnSignals();
      try {
        const built = await withDaemon(
          { onProgress: progress, signal: interrupt.signal },
          (daemon) =>
            buildImage(daemon, {
              ...(opts.base === undefined ? {} : { baseImage: opts.base }),
              onProgress: progress,
              signal: interrupt.signal,
            }),
        );
        progress(
          `times: base image ${built.baseSeconds.toFixed(1)} s (0: there already), image build ${built.buildSeconds.toFixed(1)} s; image size ${(built.sizeBytes / 1e6).toFixed(0)} MB; load average ${loadAverage()}; build log ${built.log}`,
        );
      } catch (error) {
        process.exitCode = report('build', error, interrupt.received(), interrupt.exitCode);
      } finally {
        interrupt.dispose();
      }
    });
  docker
    .command('run')
    .description(
      'run the suite in a container: here if this host has RDMA devices, else in the QEMU guest (reports come back with --report)',
    )
    .addOption(runtimeOption())
    // `--where` was this option's name; `run` always called it `--runtime` (options.ts).
    .addOption(renamedOption('--where <where>', "'--where' is now '--runtime <where>'"))
    .addOption(
      new Option(
        '--mode <mode>',
        'privileged: all capabilities; devices: only the uverbs and rdma_cm device nodes',
      )
        .choices(['privileged', 'devices'])
        .default('privileged'),
    )
    .addOption(
      new Option(
        '--handover <how>',
        'guest: how the image gets there: disk (a data disk of the data root) or load (docker save, docker load); default: $RDMA_INTEROP_DOCKER_HANDOVER, else the faster, measured',
      ).choices(HANDOVERS),
    )
    .option(
      '--base <image>',
      'BASE_IMAGE: build the image from it first (without: built only when there is none)',
    )
    .addOption(
      timeoutOption(
        'guest runtime limit (--runtime guest, or auto on a host without RDMA devices)',
        1800,
      ),
    )
    .addOption(cacheDirOption())
    .argument('[suite...]', "arguments for the suite, after -- (as for 'rdma-interop run')")
    .action(
      async (
        suite: string[],
        opts: {
          runtime: Runtime;
          mode: ContainerMode;
          handover?: Handover;
          base?: string;
          timeout: number;
        },
        command: Command,
      ) => {
        // A guest's options where no guest boots would do nothing: refused.
        if (resolveRuntime(opts.runtime) === 'host')
          for (const name of ['timeout', 'handover'] as const)
            if (command.getOptionValueSource(name) === 'cli')
              usageError(
                command,
                `--${name} is for the guest, and this run is on this host (--runtime ${opts.runtime}${opts.runtime === 'auto' ? ': it has RDMA devices' : ''}); use --runtime guest`,
              );
        const { suiteArgs, reportDir } = splitReport(suite);
        // The container runs `rdma-interop run --runtime host <suite>`: its usage errors
        // are refused here, before an image is built or a guest boots.
        const inner = ['--runtime', 'host', ...suiteArgs];
        const refused = runArgumentsError(inner);
        if (refused !== undefined)
          usageError(
            command,
            `the suite runs in the container as 'rdma-interop run ${inner.join(' ')}': ${refused}`,
          );
        const interrupt = abortOnSignals();
        try {
          const handover = opts.handover ?? handoverFromEnvironment();
          const result = await dockerRun({
            suiteArgs,
            ...(reportDir === undefined ? {} : { reportDir }),
            where: opts.runtime,
            mode: opts.mode,
            handover,
            ...(opts.base === undefined ? {} : { baseImage: opts.base }),
            timeoutSeconds: opts.timeout,
            onProgress: progress,
            signal: interrupt.signal,
          });
          process.stderr.write(`${timingsTable(result)}\n`);
          if (reportDir !== undefined) progress(`report in ${reportDir}`);
          if (result.exitCode === 0) {
            progress(`container exited 0 (${result.where})`);
          } else {
            // The suite's own status (1: a scenario did not match) or the container's:
            // passed through, with the step and the log that has its output.
            process.stderr.write(
              errorLine(
                'rdma-interop docker run',
                `the container exited ${result.exitCode} (${result.where}; its output: ${result.log})`,
                'container',
              ),
            );
          }
          process.exitCode = result.exitCode;
        } catch (error) {
          process.exitCode = report('run', error, interrupt.received(), interrupt.exitCode);
        } finally {
          interrupt.dispose();
        }
      },
    );
}
