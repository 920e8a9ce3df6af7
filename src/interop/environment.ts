/**
 * Where the suite runs, as the reports record it and as recorded provider behaviour is
 * keyed: the kernel release, rdma-core's version, each device's provider and attributes.
 */

import { execFileSync } from 'node:child_process';
import { hostname, release } from 'node:os';
import { requireArray, requireObject, requireString } from '../arguments.js';
import type { Environment } from '../judge/record.js';
import { openDevice } from '../verbs/device.js';
import { libibverbsVersion } from '../verbs/flush.js';
import { type DeviceDescription, deviceFactsOf } from './device-description.js';
import { providerKey } from './provider-key.js';
import { DEVICES, type DeviceName } from './scenario.js';

/** The device attributes a report shows (a subset of ibv_query_device). */
export interface DeviceFacts {
  readonly name: string;
  readonly provider: string;
  readonly transport: string;
  readonly firmware: string;
  readonly atomicCap: string;
  readonly maxQpRdAtom: number;
  readonly maxQpInitRdAtom: number;
  readonly maxQpWr: number;
  /**
   * The IBTA 1.5 capability bits of `device_cap_flags_ex` the device sets, by name
   * (`ATOMIC_WRITE|FLUSH_GLOBAL|FLUSH_PERSISTENT`), `none`, or `unknown` without
   * ibv_query_device_ex. rxe sets all three from kernel 6.2.
   */
  readonly placementCaps?: string;
  /** Issue 37, from a probed device (device-description.ts): the kernel driver bound to it. */
  readonly kernelDriver?: string;
  /** PCI vendor id (`0x15b3`) and part id, from ibv_query_device. */
  readonly vendorId?: string;
  readonly vendorPartId?: number;
  /** Port 1's active speed (`25.0 Gbps`) and MTU (bytes). */
  readonly portSpeed?: string;
  readonly activeMtu?: number;
  /** How it was addressed: its netdev, the address rdma_cm uses, the GID index and GID. */
  readonly netdev?: string;
  readonly address?: string;
  readonly gidIndex?: number;
  readonly gid?: string;
  /** What it offers (requirements.ts), comma-separated. */
  readonly capabilities?: string;
}

/**
 * The `device_cap_flags_ex` bits of the IBTA 1.5 memory placement operations, as the
 * kernel's uAPI names them (`IB_UVERBS_DEVICE_*`, include/uapi/rdma/ib_user_verbs.h,
 * which rdma-core copies to kernel-headers/rdma/ib_user_verbs.h): bit numbers.
 */
export const PLACEMENT_CAP_BITS = {
  FLUSH_GLOBAL: 38,
  FLUSH_PERSISTENT: 39,
  ATOMIC_WRITE: 40,
} as const;

/** The names of the {@link PLACEMENT_CAP_BITS} set in `flags`. */
export function placementCapsOf(flags: bigint | undefined): string {
  if (flags === undefined) return 'unknown';
  const names = (Object.keys(PLACEMENT_CAP_BITS) as (keyof typeof PLACEMENT_CAP_BITS)[])
    .filter((name) => ((flags >> BigInt(PLACEMENT_CAP_BITS[name])) & 1n) === 1n)
    .sort();
  return names.length === 0 ? 'none' : names.join('|');
}

export interface RunEnvironment {
  /** The machine (or guest, or container) the devices were on: `os.hostname()`. */
  readonly host: string;
  readonly kernel: string;
  readonly rdmaCore: string;
  readonly node: string;
  readonly devices: readonly DeviceFacts[];
}

/**
 * rdma-core's version: that of the libibverbs this process loaded (a guest run may load
 * one built from source, runtime/userspace.ts), else as the package manager knows it,
 * else `unknown`.
 */
export function rdmaCoreVersion(): string {
  try {
    const loaded = libibverbsVersion();
    if (loaded !== 'unknown') return loaded;
  } catch {
    // no addon here: ask the package manager
  }
  for (const pkg of ['libibverbs1', 'rdma-core']) {
    try {
      // dpkg-query's own field syntax, not a template placeholder.
      const format = ['-f=$', '{Version}'].join('');
      const v = execFileSync('dpkg-query', ['-W', format, pkg], {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'ignore'],
      }).trim();
      if (v !== '') return v;
    } catch {
      // not a Debian system, or not installed: try the next name
    }
  }
  return 'unknown';
}

/**
 * The provider behind a device: the suite's own soft devices by name (siw0 on the patched
 * module: `siw+rfc7306`, siw-variant.ts; rxe0 and siw0 on the fixed build: `rxe+fixes`,
 * `siw+fixes`, provider-key.ts), else the name's stem.
 */
export function providerOf(device: string): string {
  if (device in DEVICES) return providerKey(DEVICES[device as DeviceName].provider);
  return device.replace(/_?\d+$/, '');
}

/** The device's attributes, or undefined when it cannot be opened. */
function deviceFacts(name: string): DeviceFacts | undefined {
  try {
    const context = openDevice(name);
    try {
      const a = context.queryDevice();
      return {
        name,
        provider: providerOf(name),
        transport: name in DEVICES ? DEVICES[name as DeviceName].transport : 'unknown',
        firmware: a.fwVer,
        atomicCap: a.atomic,
        maxQpRdAtom: a.maxQpRdAtom,
        maxQpInitRdAtom: a.maxQpInitRdAtom,
        maxQpWr: a.maxQpWr,
        placementCaps: placementCapsOf(a.ex?.deviceCapFlagsEx),
      };
    } finally {
      context.close();
    }
  } catch {
    return undefined;
  }
}

/** A probed device's facts (device-description.ts) with its ibv_query_device ones. */
export function describedFacts(d: DeviceDescription): DeviceFacts {
  const queried = deviceFacts(d.name);
  return {
    name: d.name,
    provider: d.provider,
    transport: d.transport,
    firmware: d.firmware,
    atomicCap: d.atomicCap,
    maxQpRdAtom: queried?.maxQpRdAtom ?? 0,
    maxQpInitRdAtom: queried?.maxQpInitRdAtom ?? 0,
    maxQpWr: queried?.maxQpWr ?? 0,
    placementCaps: queried?.placementCaps ?? 'unknown',
    ...deviceFactsOf(d),
  };
}

/**
 * Collects the environment for `devices` (run where the devices are); a device with a
 * description (probed, kernel/device-target.ts) reports its facts from it.
 */
export function collectEnvironment(
  devices: readonly string[],
  described: readonly DeviceDescription[] = [],
): RunEnvironment {
  requireArray('interop', 'devices', devices).forEach((d, i) => {
    requireString('interop', `devices[${i}]`, d);
  });
  return {
    host: hostname(),
    kernel: release(),
    rdmaCore: rdmaCoreVersion(),
    node: process.version,
    devices: devices.flatMap((name) => {
      const d = described.find((x) => x.name === name);
      return d === undefined ? (deviceFacts(name) ?? []) : [describedFacts(d)];
    }),
  };
}

/**
 * The key recorded behaviour is looked up with, for one device: its provider as the run's
 * facts say (probed from the device, not read from its name: issue 37), else by name.
 */
export function environmentFor(
  run: Pick<RunEnvironment, 'kernel' | 'rdmaCore'> & { readonly devices?: readonly DeviceFacts[] },
  device: string,
): Environment {
  requireObject('interop', 'run', run);
  requireString('interop', 'run.kernel', run.kernel);
  requireString('interop', 'run.rdmaCore', run.rdmaCore);
  requireString('interop', 'device', device);
  const facts = run.devices?.find((d) => d.name === device && d.kernelDriver !== undefined);
  return {
    provider: facts?.provider ?? providerOf(device),
    kernel: run.kernel,
    rdmaCore: run.rdmaCore,
  };
}
