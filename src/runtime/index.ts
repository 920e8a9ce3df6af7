/**
 * `rdma-interop/runtime`: where real RDMA devices come from. In order: devices already
 * on this host; else a throwaway QEMU guest booting Debian's own kernel with rxe and siw.
 */
import { existsSync, readdirSync } from 'node:fs';
import {
  requireArray,
  requireBoolean,
  requireInteger,
  requireKnownOptions,
  requireName,
  requireObject,
  requireString,
} from '../arguments.js';
import { ArgumentError } from '../errors.js';
import { findGuestAssets, type GuestAssets, selectKernel } from './assets.js';
import { GuestRuntimeError } from './errors.js';
import { fixesEnv } from './fixes-env.js';
import { findKernelLine } from './kernel-lines.js';
import { type Accelerator, chooseAccelerator } from './kvm.js';
import { ownKernelOf, prepareOwnKernel } from './own-kernel.js';
import { cacheRoot } from './paths.js';
import { type BootResult, bootGuest } from './qemu.js';
import { cleanupStaleRuns } from './run-dir.js';
import { setupGuestAssets } from './setup.js';
import { SIW_VARIANTS, type SiwVariant, siwVariantEnv } from './siw-variant-env.js';
import { rdmaCoreEnv } from './userspace.js';

export { ArgumentError, UnknownNameError } from '../errors.js';
export { findGuestAssets, type GuestAssets, type KernelSelection, selectKernel } from './assets.js';
export {
  type ContainerStep,
  GuestRuntimeError,
  RuntimeError,
  type RuntimeFailure,
} from './errors.js';
export { DEFAULT_KERNEL_LINE, KERNEL_LINES, type KernelLine, kernelLine } from './kernel-lines.js';
export type { Accelerator } from './kvm.js';
export { cacheRoot, useCacheDir } from './paths.js';
export type { BootResult } from './qemu.js';
export { type SetupOptions, setupGuestAssets } from './setup.js';
export { abortOnSignals, type SignalAbort, signalExitCode } from './signals.js';
export { SIW_VARIANTS, type SiwVariant } from './siw-variant-env.js';

/** RDMA devices this host already has (`/sys/class/infiniband`), e.g. in a container. */
export function hostRdmaDevices(): string[] {
  const dir = '/sys/class/infiniband';
  return existsSync(dir) ? readdirSync(dir).sort() : [];
}

export interface GuestRunOptions {
  readonly command: readonly string[];
  readonly cwd?: string;
  /** Seconds for the whole run (boot + command). Default 600. */
  readonly timeoutSeconds?: number;
  /** A directory of guest assets (default: the cached current kernel). */
  readonly kernelDir?: string;
  /**
   * A kernel line (`6.1`, `6.12`, `7.3`: kernel-lines.ts) or a directory of guest assets;
   * wins over `kernelDir`. A line runs with its own rdma-core (kernel-lines.ts).
   */
  readonly kernel?: string;
  /**
   * With `kernel` naming a bzImage or a kernel build tree: a `make modules_install
   * INSTALL_MOD_PATH=<dir>` tree with that kernel's modules (own-kernel.ts).
   */
  readonly modules?: string;
  /**
   * `line` (default): the rdma-core the kernel line pairs with; `host`: the host's own; a
   * version: that one built by scripts/setup/rdma-core.sh.
   */
  readonly rdmaCore?: string;
  readonly accel?: Accelerator | 'auto';
  readonly memoryMiB?: number;
  readonly cpus?: number;
  /**
   * Writable directory mounted at the same path in the guest (`RDMA_INTEROP_SHARE` there).
   * Default: a fresh one of this run's own, removed after it. Runs sharing one directory
   * see each other's files in it, never each other's exit status or output.
   */
  readonly shareDir?: string;
  readonly env?: Readonly<Record<string, string>>;
  /**
   * Which siw siw0 runs on, with the matching libsiw on the command's library path
   * (siw-variant-env.ts). Default: as the forwarded `RDMA_INTEROP_SIW` says, else stock.
   */
  readonly siw?: SiwVariant;
  /**
   * rxe0 and siw0 on the fixed modules and the command on the fixed librxe/libsiw
   * (fixes-env.ts, issue 33). Not with `siw: 'rfc7306'` (one siw module at a time).
   */
  readonly fixes?: boolean;
  /** The command's stdout, byte for byte (default: this process's stdout). */
  readonly onOutput?: (chunk: Buffer) => void;
  /** The command's stderr, byte for byte (default: this process's stderr). */
  readonly onErrorOutput?: (chunk: Buffer) => void;
  /** Appended to the guest kernel's command line (diagnostics, failure tests). */
  readonly extraKernelArgs?: readonly string[];
  /**
   * The runtime's own lines (set-up, stale clean-up, boot, device creation in the guest,
   * result); never mixed into the command's output.
   */
  readonly onProgress?: (line: string) => void;
  /**
   * Aborting stops the guest: QEMU is killed, the run's directory removed, and the
   * promise rejects with a GuestRuntimeError whose failure is `aborted`.
   */
  readonly signal?: AbortSignal;
  /**
   * `if-missing`: build the guest assets first when there are none (what
   * `rdma-interop setup` does; minutes, with progress lines). Default `never`: a missing
   * asset is an `assets-missing` error.
   */
  readonly setup?: 'if-missing' | 'never';
  /** A raw disk image for the guest's /dev/vda, copy-on-write (BootOptions.dataDisk). */
  readonly dataDisk?: string;
  /**
   * Boot once more when the guest kernel hangs (`guest-hung`) while the command runs.
   * Only for commands that are environment, not the RDMA code under test, and that can
   * run twice (the container path: runc once hung a TCG guest). Default false: a hang is
   * the error, since a kernel under test that hangs is an outcome, not a reason to retry.
   */
  readonly retryHung?: boolean;
}

/**
 * Every option of GuestRunOptions, as a record so that the compiler checks it is complete:
 * a new option must be added here or runInGuest refuses it as unknown.
 */
const GUEST_RUN_OPTIONS: readonly string[] = Object.keys({
  command: true,
  cwd: true,
  timeoutSeconds: true,
  kernelDir: true,
  kernel: true,
  rdmaCore: true,
  accel: true,
  memoryMiB: true,
  cpus: true,
  shareDir: true,
  env: true,
  onOutput: true,
  onErrorOutput: true,
  extraKernelArgs: true,
  onProgress: true,
  signal: true,
  setup: true,
  dataDisk: true,
  modules: true,
  siw: true,
  fixes: true,
  retryHung: true,
} satisfies Record<keyof GuestRunOptions, true>);

/**
 * The options of runInGuest, checked before anything runs (no stale clean-up, no set-up,
 * no boot for a call that is wrong): known keys, a command of strings, numbers in range,
 * names known.
 */
function checkGuestRunOptions(options: GuestRunOptions): void {
  requireKnownOptions('runtime', 'options', options, GUEST_RUN_OPTIONS);
  if (options === undefined) throw new ArgumentError('runtime', 'options', 'missing');
  const command = requireArray('runtime', 'options.command', options.command);
  command.forEach((c, i) => {
    requireString('runtime', `options.command[${i}]`, c, true);
  });
  for (const key of [
    'cwd',
    'kernelDir',
    'kernel',
    'modules',
    'rdmaCore',
    'shareDir',
    'dataDisk',
  ] as const) {
    if (options[key] !== undefined) requireString('runtime', `options.${key}`, options[key]);
  }
  const { timeoutSeconds, memoryMiB, cpus, accel, setup, env, extraKernelArgs, signal } = options;
  if (
    timeoutSeconds !== undefined &&
    !(typeof timeoutSeconds === 'number' && Number.isFinite(timeoutSeconds) && timeoutSeconds > 0)
  )
    throw new ArgumentError(
      'runtime',
      'options.timeoutSeconds',
      'not a positive number of seconds',
    );
  if (memoryMiB !== undefined)
    requireInteger('runtime', 'options.memoryMiB', memoryMiB, 256, 1 << 20);
  if (cpus !== undefined) requireInteger('runtime', 'options.cpus', cpus, 1, 256);
  if (accel !== undefined)
    requireName('runtime', 'accelerator', { auto: 0, kvm: 0, tcg: 0 }, accel, 'options.accel');
  if (setup !== undefined)
    requireName('runtime', 'set-up mode', { 'if-missing': 0, never: 0 }, setup, 'options.setup');
  if (options.retryHung !== undefined)
    requireBoolean('runtime', 'options.retryHung', options.retryHung);
  if (options.siw !== undefined)
    requireName(
      'runtime',
      'siw variant',
      Object.fromEntries(SIW_VARIANTS.map((v) => [v, 0])),
      options.siw,
      'options.siw',
    );
  if (options.fixes !== undefined) {
    requireBoolean('runtime', 'options.fixes', options.fixes);
    if (options.fixes && options.siw === 'rfc7306')
      throw new ArgumentError(
        'runtime',
        'options.fixes',
        "not with siw 'rfc7306': siw0 runs on one module at a time",
      );
  }
  if (env !== undefined) {
    requireObject('runtime', 'options.env', env);
    for (const [name, value] of Object.entries(env))
      requireString('runtime', `options.env.${name}`, value, true);
  }
  if (extraKernelArgs !== undefined)
    requireArray('runtime', 'options.extraKernelArgs', extraKernelArgs).forEach((a, i) => {
      requireString('runtime', `options.extraKernelArgs[${i}]`, a);
    });
  for (const key of ['onOutput', 'onErrorOutput', 'onProgress'] as const) {
    if (options[key] !== undefined && typeof options[key] !== 'function')
      throw new ArgumentError('runtime', `options.${key}`, 'not a function');
  }
  if (signal !== undefined && !(signal instanceof AbortSignal))
    throw new ArgumentError('runtime', 'options.signal', 'not an AbortSignal');
}

/** Environment variables forwarded into the guest by default. */
function forwardedEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (value === undefined) continue;
    if (name === 'CI' || name.startsWith('RDMA_INTEROP_') || name === 'NODE_OPTIONS') {
      env[name] = value;
    }
  }
  return env;
}

/** Boots the guest, runs `command` as root with rxe0 and siw0 up, returns its exit code. */
export async function runInGuest(options: GuestRunOptions): Promise<BootResult> {
  checkGuestRunOptions(options);
  const progress = options.onProgress ?? (() => {});
  const stale = await cleanupStaleRuns(cacheRoot());
  for (const dir of stale.removed) progress(`removed the directory of a dead run: ${dir}`);
  if (stale.killed.length > 0) {
    progress(`killed QEMU left by a dead run: pid ${stale.killed.join(', ')}`);
  }
  const assets = await guestAssets(options, progress);
  const userspace = guestRdmaCore(options);
  if (userspace !== undefined) progress(`rdma-core ${userspace} (built from source)`);
  const base = {
    ...(options.signal === undefined ? {} : { signal: options.signal }),
    assets,
    cwd: options.cwd ?? process.cwd(),
    memoryMiB: options.memoryMiB ?? 2048,
    cpus: options.cpus ?? 2,
    env: {
      ...forwardedEnv(),
      ...(userspace === undefined ? {} : rdmaCoreEnv(userspace)),
      // After rdma-core's: the patched libsiw's own rdma-core build wins the library path.
      ...(options.siw === undefined ? {} : siwVariantEnv(options.siw, assets)),
      ...(options.fixes === true ? fixesEnv(assets) : {}),
      ...options.env,
    },
  };
  let accel: Accelerator;
  if (options.accel === undefined || options.accel === 'auto') {
    const choice = await chooseAccelerator(assets, async (candidate) => {
      progress(`probing ${candidate} with a short boot (cached afterwards)`);
      try {
        const probe = await bootGuest({
          ...base,
          accel: candidate,
          command: [],
          timeoutMs: 25_000,
          probe: true,
        });
        return probe.exitCode === 0
          ? { ok: true, detail: `${candidate} boots the guest kernel` }
          : { ok: false, detail: `${candidate} did not reach the initramfs` };
      } catch (error) {
        const first = error instanceof Error ? (error.message.split('\n')[0] ?? '') : '';
        return { ok: false, detail: `${candidate} failed: ${first}` };
      }
    });
    accel = choice.accel;
    progress(`accelerator ${accel} (${choice.reason})`);
  } else {
    accel = options.accel;
  }
  progress(
    `booting Debian kernel ${assets.kernelRelease} (${assets.packageVersion}) under ${accel}`,
  );
  const boot = () =>
    bootGuest({
      ...base,
      accel,
      command: options.command,
      timeoutMs: (options.timeoutSeconds ?? 600) * 1000,
      ...(options.shareDir === undefined ? {} : { shareDir: options.shareDir }),
      ...(options.onOutput === undefined ? {} : { onOutput: options.onOutput }),
      ...(options.onErrorOutput === undefined ? {} : { onErrorOutput: options.onErrorOutput }),
      onGuestLog: progress,
      ...(options.extraKernelArgs === undefined
        ? {}
        : { extraKernelArgs: options.extraKernelArgs }),
      ...(options.dataDisk === undefined ? {} : { dataDisk: options.dataDisk }),
    });
  // A kernel that panics while booting, before the command started, is booted once more:
  // under TCG the 7.3 kernel panicked once in early boot (sched_clock_cpu, a fatal
  // exception in interrupt, 1.7 s in) where every other boot of it ran; the command had
  // not run, so nothing is repeated. A second panic is the error.
  let result: BootResult;
  try {
    result = await boot();
  } catch (error) {
    const why = error instanceof GuestRuntimeError ? bootAgainBecause(error, options) : undefined;
    if (why === undefined) throw error;
    progress(`${why}: booting it once more`);
    result = await boot();
  }
  const ready =
    result.devicesReadySeconds === undefined
      ? ''
      : `, devices ready ${result.devicesReadySeconds.toFixed(1)} s after boot`;
  progress(`guest exited ${result.exitCode} after ${result.wallSeconds.toFixed(1)} s${ready}`);
  return result;
}

/** Why a failed boot is worth one more (runInGuest), or undefined when it is the error. */
function bootAgainBecause(error: GuestRuntimeError, options: GuestRunOptions): string | undefined {
  if (error.failure === 'guest-hung' && options.retryHung === true)
    return error.message.split('\n')[0];
  if (error.failure !== 'boot-panic') return undefined;
  const panic = error.consoleTail.split('\n').find((l) => l.includes('Kernel panic')) ?? '';
  return `the guest kernel panicked before the command started (${panic.trim()})`;
}

/** The rdma-core version built from source this run uses, `undefined` for the host's. */
function guestRdmaCore(options: GuestRunOptions): string | undefined {
  const choice = options.rdmaCore ?? 'line';
  if (choice === 'host') return undefined;
  if (choice !== 'line') return choice;
  const selected = selectKernel(options.kernel ?? options.kernelDir);
  return selected.kind === 'line' ? findKernelLine(selected.line)?.rdmaCore : undefined;
}

/** The assets to boot; with `setup: 'if-missing'`, built first when there are none. */
async function guestAssets(
  options: GuestRunOptions,
  progress: (line: string) => void,
): Promise<GuestAssets> {
  // A kernel of one's own (a bzImage with --modules, or a build tree): own-kernel.ts.
  const own =
    options.kernel === undefined ? undefined : ownKernelOf(options.kernel, options.modules);
  if (own !== undefined) return findGuestAssets(prepareOwnKernel(own, progress));
  if (options.modules !== undefined)
    throw new GuestRuntimeError(
      'assets-missing',
      `--modules goes with --kernel <bzImage or kernel build tree> (here: ${options.kernel ?? 'the default line'})`,
    );
  const selected = selectKernel(options.kernel ?? options.kernelDir);
  const rdmaCore = guestRdmaCore(options);
  try {
    const assets = findGuestAssets(options.kernel ?? options.kernelDir);
    if (rdmaCore !== undefined) rdmaCoreEnv(rdmaCore);
    return assets;
  } catch (error) {
    const missing = error instanceof GuestRuntimeError && error.failure === 'assets-missing';
    if (!missing || selected.kind !== 'line' || options.setup !== 'if-missing') {
      throw error;
    }
  }
  progress(
    `no guest assets for kernel line ${selected.line} in ${cacheRoot()} yet: setting them up (a few minutes, once)`,
  );
  return setupGuestAssets({
    onProgress: progress,
    kernelLine: selected.line,
    ...(options.signal === undefined ? {} : { signal: options.signal }),
  });
}
