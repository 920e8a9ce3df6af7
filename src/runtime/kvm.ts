import { accessSync, constants, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { release } from 'node:os';
import { join } from 'node:path';
import type { GuestAssets } from './assets.js';
import { cacheRoot } from './paths.js';

/** QEMU accelerator. */
export type Accelerator = 'kvm' | 'tcg';

interface ProbeRecord {
  readonly usable: boolean;
  readonly hostKernel: string;
  readonly guestKernel: string;
  readonly detail: string;
}

/**
 * Is KVM usable for this guest kernel? `/dev/kvm` existing is not enough: on this
 * machine kind it is a nested variant on which a stock Debian kernel hangs or stops
 * with a KVM internal error (kernel-runtime.md). So we really boot the guest's
 * initramfs once under KVM (it powers off at once, `rdma_interop.probe=1`) and cache
 * the verdict per host kernel and guest kernel.
 */
export async function chooseAccelerator(
  assets: GuestAssets,
  bootProbe: (accel: Accelerator) => Promise<{ ok: boolean; detail: string }>,
): Promise<{ accel: Accelerator; reason: string }> {
  try {
    accessSync('/dev/kvm', constants.R_OK | constants.W_OK);
  } catch {
    return { accel: 'tcg', reason: '/dev/kvm is not accessible' };
  }
  const dir = join(cacheRoot(), 'guest', 'kvm-probes');
  const file = join(dir, `${release()}--${assets.kernelRelease}.json`);
  if (existsSync(file)) {
    const record = JSON.parse(readFileSync(file, 'utf8')) as ProbeRecord;
    return {
      accel: record.usable ? 'kvm' : 'tcg',
      reason: `cached KVM probe: ${record.detail}`,
    };
  }
  const result = await bootProbe('kvm');
  const record: ProbeRecord = {
    usable: result.ok,
    hostKernel: release(),
    guestKernel: assets.kernelRelease,
    detail: result.detail,
  };
  mkdirSync(dir, { recursive: true });
  writeFileSync(file, `${JSON.stringify(record, null, 2)}\n`);
  return { accel: result.ok ? 'kvm' : 'tcg', reason: `KVM probe: ${result.detail}` };
}
