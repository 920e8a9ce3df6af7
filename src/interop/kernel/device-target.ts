/**
 * Probes a device where it is (issue 37): its kernel driver and provider from sysfs, its
 * attributes from ibv_query_device/ibv_query_port, its capabilities from
 * verbs/probe.ts (what it does when asked: an extended QP, a UD QP), its address from
 * its GID table and netdev, or from the user's `--gid-index` / `--address`.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { networkInterfaces } from 'node:os';
import { basename, join } from 'node:path';
import { ArgumentError } from '../../errors.js';
import { openDevice } from '../../verbs/device.js';
import { probeCapabilities } from '../../verbs/probe.js';
import {
  type DeviceDescription,
  PROVIDER_OF_DRIVER,
  portSpeedText,
} from '../device-description.js';
import { PLACEMENT_CAP_BITS } from '../environment.js';
import { providerKey } from '../provider-key.js';
import type { Capability, TransportFamily } from '../requirements.js';

const SYSFS = '/sys/class/infiniband';

/** How the user picks a device's address when its GID table offers several. */
export interface AddressChoice {
  /** An IPv4 or IPv6 address of the device's netdev (`--address`). */
  readonly address?: string;
  /** A GID index of port 1 (`--gid-index`). */
  readonly gidIndex?: number;
}

function readSysfs(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8').trim();
  } catch {
    return undefined;
  }
}

/**
 * The vendor ids the kernel's two soft drivers report (ibv_query_device): rxe's
 * RXE_VENDOR_ID (drivers/infiniband/sw/rxe/rxe_param.h), siw's SIW_VENDOR_ID ("bmt",
 * drivers/infiniband/sw/siw/siw.h). Either may sit on a NIC's netdev, whose parent device
 * is then the NIC's: the vendor id, not the device link, says which driver it is.
 */
const SOFT_VENDOR_IDS: Readonly<Record<number, string>> = { 16777215: 'rdma_rxe', 6450548: 'siw' };

/**
 * The kernel driver behind `name`: rxe (its `parent` attribute, rxe_verbs.c) or siw by
 * vendor id, else the driver of its parent device (a PCI function or an auxiliary device:
 * mlx5_ib, irdma, bnxt_re...), else `unknown`.
 */
export function kernelDriverOf(name: string, vendorId: number, root = SYSFS): string {
  if (existsSync(join(root, name, 'parent'))) return 'rdma_rxe';
  const soft = SOFT_VENDOR_IDS[vendorId];
  if (soft !== undefined) return soft;
  try {
    return basename(readlinkSync(join(root, name, 'device', 'driver')));
  } catch {
    // no parent device
  }
  return 'unknown';
}

/**
 * The provider records key on, for `driver` (siw on the patched module: `siw+rfc7306`; rxe
 * and siw on the fixed build: `rxe+fixes`, `siw+fixes`; provider-key.ts).
 */
export function providerOfDriver(driver: string): string {
  return providerKey(PROVIDER_OF_DRIVER[driver] ?? driver);
}

/** The netdev of port 1: sysfs's GID attributes, else `rdma link show`. */
function netdevOf(name: string): string {
  const ndevs = join(SYSFS, name, 'ports', '1', 'gid_attrs', 'ndevs');
  if (existsSync(ndevs))
    for (const entry of readdirSync(ndevs)) {
      const netdev = readSysfs(join(ndevs, entry));
      if (netdev !== undefined && netdev !== '') return netdev;
    }
  try {
    const links = JSON.parse(
      execFileSync('rdma', ['-j', 'link', 'show', `${name}/1`], {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'ignore'],
      }),
    ) as { netdev?: string }[];
    return links[0]?.netdev ?? '';
  } catch {
    return '';
  }
}

/** The netdev's addresses, IPv4 first (link-local IPv6 left out: rdma_cm needs a scope). */
function addressesOf(netdev: string): string[] {
  const all = networkInterfaces()[netdev] ?? [];
  return [
    ...all.filter((a) => a.family === 'IPv4').map((a) => a.address),
    ...all
      .filter((a) => a.family === 'IPv6' && !a.address.startsWith('fe80'))
      .map((a) => a.address),
  ];
}

/** An IPv6 address in one canonical text (WHATWG URL host serialisation), others as given. */
function ipv6Text(address: string): string {
  if (!address.includes(':')) return address;
  try {
    return new URL(`http://[${address}]/`).hostname.slice(1, -1);
  } catch {
    return address;
  }
}

/** Probes `name` (opened, queried, closed) into a description the runner binds scenarios to. */
export function probeDevice(name: string, choice: AddressChoice = {}): DeviceDescription {
  const caps = probeCapabilities(name);
  using context = openDevice(name);
  const attr = context.queryDevice();
  const port = context.queryPort(1);
  const transport: TransportFamily =
    caps.transport === 'iWARP' ? 'iwarp' : port.linkLayerName === 'InfiniBand' ? 'ib' : 'roce';
  const kernelDriver = kernelDriverOf(name, attr.vendorId);
  // An iWARP device's table may be empty or refused (its address is its netdev's).
  let gids: ReturnType<typeof context.gidTable> = [];
  try {
    gids = context.gidTable(1);
  } catch {
    gids = [];
  }
  const netdev = netdevOf(name);
  const addresses = addressesOf(netdev);
  // The GID: the one asked for, else the one whose address was asked for, else the first
  // RoCE v2 GID of an IPv4 address, else the first RoCE v2 one, else index 0.
  const wanted = choice.address;
  const same = (g: { ipv4: string | undefined; text: string }) =>
    wanted !== undefined && (g.ipv4 === wanted || ipv6Text(g.text) === ipv6Text(wanted));
  const gid =
    (choice.gidIndex === undefined ? undefined : gids.find((g) => g.index === choice.gidIndex)) ??
    gids.find((g) => g.type === 'RoCEv2' && same(g)) ??
    gids.find(same) ??
    gids.find((g) => g.type === 'RoCEv2' && g.ipv4 !== undefined) ??
    gids.find((g) => g.type === 'RoCEv2') ??
    gids[0];
  if (choice.gidIndex !== undefined && gid?.index !== choice.gidIndex)
    throw new ArgumentError(
      'interop',
      '--gid-index',
      `${name} has no GID at index ${choice.gidIndex}`,
    );
  const address = wanted ?? gid?.ipv4 ?? (transport === 'iwarp' ? addresses[0] : gid?.text) ?? '';
  if (
    wanted !== undefined &&
    transport !== 'ib' &&
    !addresses.map(ipv6Text).includes(ipv6Text(wanted))
  )
    throw new ArgumentError(
      'interop',
      '--address',
      `${wanted} is not an address of ${name}'s netdev ${netdev || '(none)'}`,
    );
  const flags = attr.ex?.deviceCapFlagsEx ?? 0n;
  const bit = (n: number) => ((flags >> BigInt(n)) & 1n) === 1n;
  const has: Record<Capability, boolean> = {
    'connect-by-hand': transport !== 'iwarp',
    'ibv-wr': caps.extendedQp,
    atomics: caps.atomics,
    // Native on IB and RoCE; on iWARP RFC 7306 §6, which a device has with its atomics
    // (the patched siw implements both, stock siw neither: docs/siw-rfc7306.md).
    immediate: transport !== 'iwarp' || caps.atomics,
    'atomic-write': bit(PLACEMENT_CAP_BITS.ATOMIC_WRITE),
    flush: bit(PLACEMENT_CAP_BITS.FLUSH_GLOBAL) || bit(PLACEMENT_CAP_BITS.FLUSH_PERSISTENT),
    srq: attr.maxSrq > 0,
    'mw-type1': attr.maxMw > 0,
    'mw-type2':
      attr.maxMw > 0 &&
      (attr.capabilities.includes('MEM_WINDOW_TYPE_2A') ||
        attr.capabilities.includes('MEM_WINDOW_TYPE_2B')),
    ud: caps.ud,
  };
  return {
    name,
    transport,
    capabilities: (Object.keys(has) as Capability[]).filter((c) => has[c]),
    kernelDriver,
    provider: providerOfDriver(kernelDriver),
    vendorId: attr.vendorId,
    vendorPartId: attr.vendorPartId,
    firmware: attr.fwVer,
    portSpeed: portSpeedText(port.activeSpeed, port.activeWidth),
    // Number(): the MTU name comes from an object key at run time (a string).
    activeMtu: Number(port.activeMtuBytes ?? 0),
    netdev,
    address,
    gidIndex: gid?.index ?? 0,
    gid: gid?.text ?? '',
    atomicCap: attr.atomic,
  };
}
