/**
 * `rdma-interop/runtime`: where real RDMA devices come from. In order: devices already
 * on this host; else a throwaway QEMU guest booting Debian's own kernel with rxe and siw.
 */
import { existsSync, readdirSync } from 'node:fs';
import { findGuestAssets } from './assets.js';
import { type Accelerator, chooseAccelerator } from './kvm.js';
import { type BootResult, bootGuest } from './qemu.js';

export { findGuestAssets, type GuestAssets } from './assets.js';
export { GuestRuntimeError, type RuntimeFailure } from './errors.js';
export type { Accelerator } from './kvm.js';
export type { BootResult } from './qemu.js';

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
  readonly accel?: Accelerator | 'auto';
  readonly memoryMiB?: number;
  readonly cpus?: number;
  readonly shareDir?: string;
  readonly env?: Readonly<Record<string, string>>;
  readonly onOutput?: (chunk: Buffer) => void;
  /** Appended to the guest kernel's command line (diagnostics, failure tests). */
  readonly extraKernelArgs?: readonly string[];
  /** Progress lines (boot, accelerator choice, result). */
  readonly onProgress?: (line: string) => void;
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
  const progress = options.onProgress ?? (() => {});
  const assets = findGuestAssets(options.kernelDir);
  const base = {
    assets,
    cwd: options.cwd ?? process.cwd(),
    memoryMiB: options.memoryMiB ?? 2048,
    cpus: options.cpus ?? 2,
    env: { ...forwardedEnv(), ...options.env },
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
  const result = await bootGuest({
    ...base,
    accel,
    command: options.command,
    timeoutMs: (options.timeoutSeconds ?? 600) * 1000,
    ...(options.shareDir === undefined ? {} : { shareDir: options.shareDir }),
    ...(options.onOutput === undefined ? {} : { onOutput: options.onOutput }),
    ...(options.extraKernelArgs === undefined ? {} : { extraKernelArgs: options.extraKernelArgs }),
  });
  const ready =
    result.devicesReadySeconds === undefined
      ? ''
      : `, devices ready ${result.devicesReadySeconds.toFixed(1)} s after boot`;
  progress(`guest exited ${result.exitCode} after ${result.wallSeconds.toFixed(1)} s${ready}`);
  return result;
}
