import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { GuestAssets } from './assets.js';
import { GuestRuntimeError } from './errors.js';
import type { Accelerator } from './kvm.js';
import { cacheRoot, packageRoot } from './paths.js';
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
  /** Writable share, mounted at the same path in the guest. Default: a fresh temp dir. */
  readonly shareDir?: string;
  /** Just check that the kernel reaches the initramfs (the KVM probe). */
  readonly probe?: boolean;
  /** Where the command's output goes (default: this process's stdout). */
  readonly onOutput?: (chunk: Buffer) => void;
  /** Appended to the kernel command line (later words win), for diagnostics and tests. */
  readonly extraKernelArgs?: readonly string[];
}

export interface BootResult {
  /** The command's exit status inside the guest. */
  readonly exitCode: number;
  /** Wall-clock seconds from starting QEMU to its exit. */
  readonly wallSeconds: number;
  /** Guest uptime (s) when the devices were ready, if the guest got that far. */
  readonly devicesReadySeconds: number | undefined;
  readonly shareDir: string;
}

const CONSOLE_TAIL_LINES = 30;

function consoleTail(file: string): string {
  if (!existsSync(file)) return '(no console output)';
  const lines = readFileSync(file, 'utf8').replaceAll('\r', '').trimEnd().split('\n');
  return lines.slice(-CONSOLE_TAIL_LINES).join('\n');
}

function qemuArgs(options: BootOptions, shareDir: string, consoleLog: string): string[] {
  const stage2 = join(packageRoot(), 'scripts', 'guest', 'stage2.sh');
  const cmdline = [
    'console=ttyS0',
    'loglevel=4',
    // A panic reboots at once, and -no-reboot turns that into QEMU exiting.
    'panic=-1',
    'rdinit=/init',
    `rdma_interop.stage2=${stage2}`,
    `rdma_interop.share=${shareDir}`,
    ...(options.probe ? ['rdma_interop.probe=1'] : []),
    ...(options.extraKernelArgs ?? []),
  ].join(' ');
  const accel =
    options.accel === 'kvm'
      ? ['-accel', 'kvm', '-cpu', 'host']
      : ['-accel', 'tcg,thread=multi', '-cpu', 'max'];
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
    '-kernel',
    options.assets.kernel,
    '-initrd',
    options.assets.initramfs,
    '-append',
    cmdline,
    // ttyS0: the kernel console, kept in a file for diagnostics.
    '-chardev',
    `file,id=console,path=${consoleLog}`,
    '-serial',
    'chardev:console',
    // ttyS1: the command's output, streamed to our stdout.
    '-chardev',
    'stdio,id=output,signal=off',
    '-serial',
    'chardev:output',
    // The host's root, read-only; multidevs=remap because / spans several filesystems.
    '-fsdev',
    'local,id=hostroot,path=/,security_model=none,readonly=on,multidevs=remap',
    '-device',
    'virtio-9p-pci,fsdev=hostroot,mount_tag=hostroot',
    '-fsdev',
    `local,id=share,path=${shareDir},security_model=none`,
    '-device',
    'virtio-9p-pci,fsdev=share,mount_tag=share',
  ];
}

/**
 * Boots the guest, runs the command, streams its output and resolves with its exit
 * code. A boot that fails, hangs or panics rejects with a GuestRuntimeError quoting the
 * tail of the guest console, within the timeout.
 */
export async function bootGuest(options: BootOptions): Promise<BootResult> {
  const shareDir = resolve(
    options.shareDir ?? mkdtempSync(join(mkdirTmp(), options.probe ? 'probe-' : 'run-')),
  );
  mkdirSync(shareDir, { recursive: true });
  for (const stale of ['exit-code', 'timing', 'console.log']) {
    rmSync(join(shareDir, stale), { force: true });
  }
  const consoleLog = join(shareDir, 'console.log');
  writeFileSync(
    join(shareDir, 'env.sh'),
    exportLines({
      ...options.env,
      MODULES_ROOT: options.assets.modulesRoot,
      WORKDIR: options.cwd,
      RDMA_INTEROP_ROOT: packageRoot(),
    }),
  );
  writeFileSync(join(shareDir, 'run.sh'), `${options.command.map(shellQuote).join(' ')}\n`);

  const started = Date.now();
  const child = spawn('qemu-system-x86_64', qemuArgs(options, shareDir, consoleLog), {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const write = options.onOutput ?? ((chunk: Buffer) => process.stdout.write(chunk));
  child.stdout.on('data', (chunk: Buffer) => write(chunk));
  let qemuStderr = '';
  child.stderr.on('data', (chunk: Buffer) => {
    qemuStderr += chunk.toString();
  });

  const outcome = await new Promise<{ code: number | null; timedOut: boolean; spawnError?: Error }>(
    (resolveOutcome) => {
      const timer = setTimeout(() => {
        child.kill('SIGKILL');
        resolveOutcome({ code: null, timedOut: true });
      }, options.timeoutMs);
      child.on('error', (error) => {
        clearTimeout(timer);
        resolveOutcome({ code: null, timedOut: false, spawnError: error });
      });
      child.on('exit', (code) => {
        clearTimeout(timer);
        resolveOutcome({ code, timedOut: false });
      });
    },
  );
  const wallSeconds = (Date.now() - started) / 1000;

  if (outcome.spawnError) {
    throw new GuestRuntimeError(
      'qemu-missing',
      `cannot start qemu-system-x86_64 (${outcome.spawnError.message}): run 'npm run setup'`,
    );
  }
  if (outcome.timedOut) {
    throw new GuestRuntimeError(
      'timeout',
      `the guest did not finish within ${options.timeoutMs / 1000} s (killed)`,
      consoleTail(consoleLog),
    );
  }
  if (outcome.code !== 0) {
    throw new GuestRuntimeError(
      'boot-failed',
      `qemu exited with status ${outcome.code}: ${qemuStderr.trim()}`,
      consoleTail(consoleLog),
    );
  }
  const timingFile = join(shareDir, 'timing');
  const devicesReadySeconds = existsSync(timingFile)
    ? Number(readFileSync(timingFile, 'utf8').split(' ')[1])
    : undefined;
  if (options.probe) {
    const reached = readFileSync(consoleLog, 'utf8').includes('probe reached initramfs');
    return { exitCode: reached ? 0 : 1, wallSeconds, devicesReadySeconds, shareDir };
  }
  const exitFile = join(shareDir, 'exit-code');
  if (!existsSync(exitFile)) {
    throw new GuestRuntimeError(
      'no-exit-code',
      'the guest powered off without running the command to completion (panic or early failure)',
      consoleTail(consoleLog),
    );
  }
  return {
    exitCode: Number(readFileSync(exitFile, 'utf8').trim()),
    wallSeconds,
    devicesReadySeconds,
    shareDir,
  };
}

function mkdirTmp(): string {
  const dir = join(cacheRoot(), 'vm');
  mkdirSync(dir, { recursive: true });
  return dir;
}
