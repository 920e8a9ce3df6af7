import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import type { Socket } from 'node:net';
import { delimiter, join, resolve } from 'node:path';
import type { GuestAssets } from './assets.js';
import { GuestRuntimeError } from './errors.js';
import { LineSplitter, parseGuestMessage } from './guest-channel.js';
import type { Accelerator } from './kvm.js';
import { cacheRoot, packageRoot } from './paths.js';
import { createRunDir, type RunDir, removeRunDir } from './run-dir.js';
import { exportLines, shellQuote } from './shell.js';

/** One boot of the throwaway guest. */
export interface BootOptions {
  readonly assets: GuestAssets;
  readonly accel: Accelerator;
  /** The command to run as root inside the guest. Ignored for a probe. */
  readonly command: readonly string[];
  /** Working directory inside the guest (the host path; the host root is mounted at /). */
  readonly cwd: string;
  /** Whole-run limit: boot, command and power-off. */
  readonly timeoutMs: number;
  readonly memoryMiB: number;
  readonly cpus: number;
  /** Environment passed to the command (on top of a minimal root environment). */
  readonly env: Readonly<Record<string, string>>;
  /**
   * Writable share, mounted at the same path in the guest. Default: a fresh directory
   * inside this run's own directory, removed with it.
   */
  readonly shareDir?: string;
  /** Just check that the kernel reaches the initramfs (the KVM probe). */
  readonly probe?: boolean;
  /** The command's stdout, byte for byte (default: this process's stdout). */
  readonly onOutput?: (chunk: Buffer) => void;
  /** The command's stderr, byte for byte (default: this process's stderr). */
  readonly onErrorOutput?: (chunk: Buffer) => void;
  /** The guest runtime's own lines (device set-up, readiness). */
  readonly onGuestLog?: (line: string) => void;
  /** Appended to the kernel command line (later words win), for diagnostics and tests. */
  readonly extraKernelArgs?: readonly string[];
  /** Aborting stops the guest (QEMU killed, run directory removed) and rejects. */
  readonly signal?: AbortSignal;
  /**
   * A raw disk image attached as the guest's first virtio disk (/dev/vda), copy-on-write:
   * the guest's writes go to a temporary overlay (`snapshot=on`), the file stays as it
   * was. The container runtime hands its dockerd data root over this way.
   */
  readonly dataDisk?: string;
  /**
   * Appended to QEMU's command line: network devices and capture filters of a guest pair
   * (src/runtime/pair.ts). Default none (`-nic none`: the guest has no network).
   */
  readonly extraQemuArgs?: readonly string[];
}

export interface BootResult {
  /** The command's exit status inside the guest. */
  readonly exitCode: number;
  /** Wall-clock seconds from starting QEMU to its exit. */
  readonly wallSeconds: number;
  /** Guest uptime (s) when the devices were ready, if the guest got that far. */
  readonly devicesReadySeconds: number | undefined;
  /** The share the guest had (removed after the run when it was the run's own default). */
  readonly shareDir: string;
  /** Bytes the command wrote to stdout and stderr (all delivered). */
  readonly stdoutBytes: number;
  readonly stderrBytes: number;
}

const CONSOLE_TAIL_LINES = 30;
/** After the host's `ack`, the guest syncs and powers off; past this, QEMU is killed. */
const POWER_OFF_GRACE_MS = 15_000;
/** The guest's own deadline is the host's plus this, so the host's timer normally wins. */
const GUEST_DEADLINE_SLACK_S = 10;

/** The virtio-serial ports, in the order of their file descriptors in QEMU (3, 4, 5). */
const PORTS = ['control', 'stdout', 'stderr'] as const;
const FIRST_PORT_FD = 3;

function consoleTail(file: string): string {
  if (!existsSync(file)) return '(no console output)';
  const lines = readFileSync(file, 'utf8').replaceAll('\r', '').trimEnd().split('\n');
  return lines.slice(-CONSOLE_TAIL_LINES).join('\n');
}

/** Is `name` an executable on PATH? */
function onPath(name: string): boolean {
  return (process.env.PATH ?? '')
    .split(delimiter)
    .some((dir) => dir !== '' && existsSync(join(dir, name)));
}

/**
 * The command that starts QEMU so that it dies with this process however this process
 * dies, SIGKILL included: util-linux `setpriv --pdeathsig KILL` sets PR_SET_PDEATHSIG
 * (prctl(2)) and execs QEMU, which keeps it. The signal fires when the THREAD that forked
 * ends; Node spawns from the thread running its event loop (the main thread, or a
 * worker's), which ends only with that event loop. Without setpriv the run still works;
 * the next run's stale clean-up is then the only net (run-dir.ts).
 */
function qemuCommand(args: readonly string[]): { file: string; args: string[] } {
  if (onPath('setpriv')) {
    return { file: 'setpriv', args: ['--pdeathsig', 'KILL', '--', 'qemu-system-x86_64', ...args] };
  }
  return { file: 'qemu-system-x86_64', args: [...args] };
}

function qemuArgs(options: BootOptions, run: RunDir, shareDir: string): string[] {
  const stage2 = join(packageRoot(), 'scripts', 'guest', 'stage2.sh');
  const deadline = Math.ceil(options.timeoutMs / 1000) + GUEST_DEADLINE_SLACK_S;
  const cmdline = [
    'console=ttyS0',
    'loglevel=4',
    // A panic reboots at once, and -no-reboot turns that into QEMU exiting.
    'panic=-1',
    'rdinit=/init',
    `rdma_interop.stage2=${stage2}`,
    `rdma_interop.run=${run.path}`,
    `rdma_interop.share=${shareDir}`,
    `rdma_interop.deadline=${deadline}`,
    ...(options.probe ? ['rdma_interop.probe=1'] : []),
    ...(options.extraKernelArgs ?? []),
  ].join(' ');
  const accel =
    options.accel === 'kvm'
      ? ['-accel', 'kvm', '-cpu', 'host']
      : // Plain `max`. Hiding ERMS/FSRM made guest output faster (the kernel copies with
        // `rep movsq`, which TCG runs faster than `rep movsb`: 38-54 MB/s against 9-15 MB/s
        // on a loaded host), but it also moves glibc's large copies onto other vector paths,
        // and in the first full CI runs with it vitest's own process (no addon in it)
        // died of SIGSEGV once in three. QEMU 7.2's TCG vector emulation has known bugs
        // fixed in later releases, so we keep the CPU model with the long green record.
        ['-accel', 'tcg,thread=multi', '-cpu', 'max'];
  // The command's stdout and stderr and the control channel are virtio-serial ports
  // (an ISA serial port moved about 89 KB/s under TCG). Each port's host side is one end
  // of a socket pair Node created for the child (fds 3..5), so nothing is on the file
  // system and nothing can be read before we are connected.
  const ports = PORTS.flatMap((name, index) => [
    '-chardev',
    `socket,id=${name},fd=${FIRST_PORT_FD + index}`,
    '-device',
    `virtserialport,bus=ports.0,chardev=${name},name=rdma-interop.${name}`,
  ]);
  return [
    ...accel,
    '-M',
    'pc',
    '-smp',
    String(options.cpus),
    '-m',
    `${options.memoryMiB}M`,
    '-no-reboot',
    '-display',
    'none',
    '-monitor',
    'none',
    '-nic',
    'none',
    // Its path in QEMU's command line is how a later run recognises a stale QEMU.
    '-pidfile',
    run.qemuPidFile,
    '-kernel',
    options.assets.kernel,
    '-initrd',
    options.assets.initramfs,
    '-append',
    cmdline,
    // ttyS0: the kernel console, kept in a file for diagnostics.
    '-chardev',
    `file,id=console,path=${run.consoleLog}`,
    '-serial',
    'chardev:console',
    '-device',
    'virtio-serial-pci,id=ports',
    ...ports,
    // The host's root, read-only; multidevs=remap because / spans several filesystems.
    '-fsdev',
    'local,id=hostroot,path=/,security_model=none,readonly=on,multidevs=remap',
    '-device',
    'virtio-9p-pci,fsdev=hostroot,mount_tag=hostroot',
    '-fsdev',
    `local,id=share,path=${shareDir},security_model=none`,
    '-device',
    'virtio-9p-pci,fsdev=share,mount_tag=share',
    ...(options.dataDisk === undefined
      ? []
      : ['-drive', `file=${options.dataDisk},if=virtio,format=raw,snapshot=on,cache=unsafe`]),
    ...(options.extraQemuArgs ?? []),
  ];
}

/** How QEMU's run ended, as seen from the host. */
interface Outcome {
  readonly code: number | null;
  readonly why: 'exited' | 'timeout' | 'aborted' | 'spawn-error' | 'hung';
  readonly spawnError?: Error;
  /** The console line that showed the guest hung (`why` = `hung`). */
  readonly hungLine?: string;
}

/**
 * A CPU the guest kernel's watchdog reports stuck this long means a hung guest: it does not
 * come back (a TCG guest seen in CI: both vCPUs stuck in runc for 924 s until killed,
 * where the run's time-out was 1800 s). The watchdog itself reports from 20 s on
 * (2 x watchdog_thresh), and a loaded TCG guest can stall that long and recover.
 */
export const HUNG_AFTER_SECONDS = 150;
/** How often the console is read for a lockup report. */
const HUNG_CHECK_MS = 5_000;

/** The kernel's soft lockup report with the longest stall, if any reaches `seconds`. */
export function hungLineOf(console: string, seconds = HUNG_AFTER_SECONDS): string | undefined {
  let found: string | undefined;
  for (const match of console.matchAll(/^.*soft lockup - CPU#\d+ stuck for (\d+)s!.*$/gm))
    if (Number(match[1]) >= seconds) found = match[0];
  return found?.trim();
}

function consoleHung(file: string): string | undefined {
  try {
    return existsSync(file) ? hungLineOf(readFileSync(file, 'utf8')) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Boots the guest, runs the command, streams its stdout and stderr separately and
 * resolves with its exit code. A boot that fails, hangs or panics rejects with a
 * GuestRuntimeError quoting the tail of the guest console, within the timeout. The run's
 * directory (and its default share) is removed on every path.
 */
export async function bootGuest(options: BootOptions): Promise<BootResult> {
  const run = createRunDir(cacheRoot());
  try {
    return await bootInRunDir(options, run);
  } finally {
    // RDMA_INTEROP_KEEP_RUN_DIR=1 keeps it (console log, run description) for a post-mortem;
    // the next run's stale clean-up removes it.
    if (process.env.RDMA_INTEROP_KEEP_RUN_DIR !== '1') removeRunDir(run);
  }
}

function abortReason(signal: AbortSignal | undefined): string {
  const reason: unknown = signal?.reason;
  if (reason instanceof Error) return reason.message;
  return typeof reason === 'string' ? reason : 'aborted';
}

async function bootInRunDir(options: BootOptions, run: RunDir): Promise<BootResult> {
  const shareDir = resolve(options.shareDir ?? run.defaultShare);
  mkdirSync(shareDir, { recursive: true });
  writeFileSync(
    join(run.path, 'env.sh'),
    exportLines({
      ...options.env,
      MODULES_ROOT: options.assets.modulesRoot,
      WORKDIR: options.cwd,
      RDMA_INTEROP_ROOT: packageRoot(),
    }),
  );
  writeFileSync(join(run.path, 'run.sh'), `${options.command.map(shellQuote).join(' ')}\n`);
  if (options.signal?.aborted) {
    throw new GuestRuntimeError('aborted', `stopped before boot: ${abortReason(options.signal)}`);
  }

  const started = Date.now();
  const qemu = qemuCommand(qemuArgs(options, run, shareDir));
  const child = spawn(qemu.file, qemu.args, {
    // fds 3..5: socket pairs, one per virtio-serial port (PORTS).
    stdio: ['ignore', 'ignore', 'pipe', 'pipe', 'pipe', 'pipe'],
    // Its own process group: a terminal's Ctrl-C reaches us, and we stop QEMU in order.
    detached: true,
  });
  const [control, stdoutPort, stderrPort] = PORTS.map(
    (_, index) => child.stdio[FIRST_PORT_FD + index] as Socket,
  ) as [Socket, Socket, Socket];

  let qemuStderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    qemuStderr += chunk.toString();
  });

  const writeOut = options.onOutput ?? ((chunk: Buffer) => process.stdout.write(chunk));
  const writeErr = options.onErrorOutput ?? ((chunk: Buffer) => process.stderr.write(chunk));
  let stdoutBytes = 0;
  let stderrBytes = 0;
  let devicesReadySeconds: number | undefined;
  let exit: { status: number; stdoutBytes: number; stderrBytes: number } | undefined;
  let acked = false;
  let graceTimer: NodeJS.Timeout | undefined;

  const complete = () =>
    exit !== undefined && stdoutBytes >= exit.stdoutBytes && stderrBytes >= exit.stderrBytes;
  const ackIfComplete = () => {
    if (acked || !complete()) return;
    acked = true;
    control.write('ack\n');
    // The guest powers off on `ack`; should it not, we have everything and QEMU can go.
    graceTimer = setTimeout(() => child.kill('SIGKILL'), POWER_OFF_GRACE_MS);
  };

  stdoutPort.on('data', (chunk: Buffer) => {
    stdoutBytes += chunk.length;
    writeOut(chunk);
    ackIfComplete();
  });
  stderrPort.on('data', (chunk: Buffer) => {
    stderrBytes += chunk.length;
    writeErr(chunk);
    ackIfComplete();
  });
  const lines = new LineSplitter((line) => {
    const message = parseGuestMessage(line);
    switch (message.kind) {
      case 'log':
        options.onGuestLog?.(message.text);
        break;
      case 'devices-ready':
        devicesReadySeconds = message.uptimeSeconds;
        options.onGuestLog?.(
          `devices ready ${message.uptimeSeconds.toFixed(1)} s after boot; command started`,
        );
        break;
      case 'exit':
        exit = message;
        ackIfComplete();
        break;
      case 'unknown':
        options.onGuestLog?.(`(unexpected control line) ${message.line}`);
        break;
    }
  });
  control.on('data', (chunk: Buffer) => lines.push(chunk));
  // A write to a port whose guest side is gone must not crash the process.
  for (const port of [control, stdoutPort, stderrPort]) port.on('error', () => {});

  const outcome = await waitForQemu(child, options.timeoutMs, options.signal, () =>
    consoleHung(run.consoleLog),
  );
  clearTimeout(graceTimer);
  const wallSeconds = (Date.now() - started) / 1000;

  if (outcome.why === 'spawn-error') {
    throw new GuestRuntimeError(
      'qemu-missing',
      `cannot start ${qemu.file} (${outcome.spawnError?.message}): run 'rdma-interop setup'`,
    );
  }
  if (outcome.why === 'aborted') {
    throw new GuestRuntimeError(
      'aborted',
      `guest stopped after ${wallSeconds.toFixed(1)} s: ${abortReason(options.signal)}`,
    );
  }
  if (outcome.why === 'hung') {
    throw new GuestRuntimeError(
      'guest-hung',
      `the guest kernel hung after ${wallSeconds.toFixed(1)} s (${outcome.hungLine ?? 'soft lockup'}): stopped`,
      consoleTail(run.consoleLog),
    );
  }
  if (outcome.why === 'timeout') {
    throw new GuestRuntimeError(
      'timeout',
      `the guest did not finish within ${options.timeoutMs / 1000} s (killed)`,
      consoleTail(run.consoleLog),
    );
  }
  if (options.probe) {
    const reached =
      existsSync(run.consoleLog) &&
      readFileSync(run.consoleLog, 'utf8').includes('probe reached initramfs');
    return {
      exitCode: reached ? 0 : 1,
      wallSeconds,
      devicesReadySeconds,
      shareDir,
      stdoutBytes,
      stderrBytes,
    };
  }
  if (exit !== undefined && !complete()) {
    throw new GuestRuntimeError(
      'output-incomplete',
      `the command exited ${exit.status} but only ${stdoutBytes} of ${exit.stdoutBytes} stdout bytes and ${stderrBytes} of ${exit.stderrBytes} stderr bytes arrived`,
      consoleTail(run.consoleLog),
    );
  }
  if (exit === undefined) {
    if (outcome.code !== 0) {
      throw new GuestRuntimeError(
        'boot-failed',
        `qemu exited with status ${outcome.code}: ${qemuStderr.trim()}`,
        consoleTail(run.consoleLog),
      );
    }
    const tail = consoleTail(run.consoleLog);
    // A panic before the command started had no effect the command could see.
    if (devicesReadySeconds === undefined && tail.includes('Kernel panic'))
      throw new GuestRuntimeError(
        'boot-panic',
        'the guest kernel panicked before the command started',
        tail,
      );
    throw new GuestRuntimeError(
      'no-exit-code',
      'the guest powered off without running the command to completion (panic or early failure)',
      tail,
    );
  }
  return {
    exitCode: exit.status,
    wallSeconds,
    devicesReadySeconds,
    shareDir,
    stdoutBytes,
    stderrBytes,
  };
}

/**
 * Waits for QEMU to be gone: exited on its own, killed at the timeout, or killed because
 * `signal` aborted. Resolves only after the process has been reaped and its streams are
 * closed, so no QEMU of this run outlives the promise.
 */
function waitForQemu(
  child: ChildProcess,
  timeoutMs: number,
  signal: AbortSignal | undefined,
  hung: () => string | undefined = () => undefined,
): Promise<Outcome> {
  return new Promise<Outcome>((resolveOutcome) => {
    let why: Outcome['why'] = 'exited';
    let hungLine: string | undefined;
    const stop = (reason: 'timeout' | 'aborted' | 'hung') => {
      if (why !== 'exited') return;
      why = reason;
      child.kill('SIGKILL');
    };
    const timer = setTimeout(() => stop('timeout'), timeoutMs);
    const watchdog = setInterval(() => {
      hungLine = hung();
      if (hungLine !== undefined) stop('hung');
    }, HUNG_CHECK_MS);
    const onAbort = () => stop('aborted');
    signal?.addEventListener('abort', onAbort, { once: true });
    const finish = (outcome: Outcome) => {
      clearTimeout(timer);
      clearInterval(watchdog);
      signal?.removeEventListener('abort', onAbort);
      resolveOutcome(outcome);
    };
    child.on('error', (error) => finish({ code: null, why: 'spawn-error', spawnError: error }));
    // 'close': the process is reaped AND every stdio stream has delivered its last byte.
    child.on('close', (code) =>
      finish({ code, why, ...(hungLine === undefined ? {} : { hungLine }) }),
    );
  });
}
