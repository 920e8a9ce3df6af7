import Table from 'cli-table3';
import type { Command } from 'commander';
import {
  type DeviceAttr,
  type DeviceInfo,
  type GidEntry,
  listDevices,
  type MemoryPathInfo,
  memoryPath,
  openDevice,
  type PortAttr,
  VerbsError,
} from '../../verbs/index.js';
import { errorLine } from '../errors.js';

/**
 * One device of `rdma-interop devices --json`: the verbs layer's own types, as
 * `listDevices()`, `queryDevice()`, `queryPort(1)` and `gidTable(1)` return them, so the
 * JSON and the library never disagree. JSON encoding (toJson): bigint as a 0x-prefixed
 * hex string, Buffer (a GID) as a hex string.
 */
export interface DeviceReport {
  readonly device: DeviceInfo;
  /** Undefined when the device could not be opened or queried (see `error`). */
  readonly attributes: DeviceAttr | undefined;
  readonly port: PortAttr | undefined;
  readonly gids: readonly GidEntry[];
  /** The VerbsError that stopped the queries, if one did. */
  readonly error:
    | { readonly code: string; readonly call: string; readonly message: string }
    | undefined;
}

/** Opens each device and queries it; a device that refuses is reported, not fatal. */
export function reportDevices(devices: readonly DeviceInfo[] = listDevices()): DeviceReport[] {
  return devices.map((device) => {
    try {
      using ctx = openDevice(device.name);
      return {
        device,
        attributes: ctx.queryDevice(),
        port: ctx.queryPort(1),
        gids: ctx.gidTable(1),
        error: undefined,
      };
    } catch (e) {
      if (!(e instanceof VerbsError)) throw e;
      const error = { code: e.code, call: e.call, message: e.message };
      return { device, attributes: undefined, port: undefined, gids: [], error };
    }
  });
}

/** The reports as JSON: bigint as 0x-prefixed hex, Buffers as hex strings. */
export function toJson(reports: readonly DeviceReport[]): string {
  return JSON.stringify(
    reports,
    function (this: Record<string, unknown>, key: string, value: unknown) {
      const raw = this[key];
      if (Buffer.isBuffer(raw)) return raw.toString('hex');
      return typeof value === 'bigint' ? `0x${value.toString(16)}` : value;
    },
    2,
  );
}

/** One row of `rdma-interop devices`: the listing plus the queried attributes. */
export interface DeviceRow {
  readonly name: string;
  readonly transport: string;
  readonly nodeGuid: string;
  readonly atomicCap: string | undefined;
  readonly maxQpRdAtom: number | undefined;
  readonly maxQpInitRdAtom: number | undefined;
  readonly maxSge: number | undefined;
  readonly portState: string | undefined;
  readonly linkLayer: string | undefined;
  readonly gids: string[];
  /** Why the device could not be queried, if it could not. */
  readonly error: string | undefined;
}

/** Opens each device and queries it; a device that refuses is reported, not fatal. */
export function describeDevices(devices: readonly DeviceInfo[] = listDevices()): DeviceRow[] {
  return devices.map((d) => {
    const base = { name: d.name, transport: d.transport, nodeGuid: d.nodeGuidHex };
    try {
      using ctx = openDevice(d.name);
      const attr = ctx.queryDevice();
      const port = ctx.queryPort(1);
      return {
        ...base,
        atomicCap: attr.atomic,
        maxQpRdAtom: attr.maxQpRdAtom,
        maxQpInitRdAtom: attr.maxQpInitRdAtom,
        maxSge: attr.maxSge,
        portState: port.stateName,
        linkLayer: port.linkLayerName,
        gids: ctx.gidTable(1).map((g) => `${g.index}: ${g.text} (${g.type ?? '?'})`),
        error: undefined,
      };
    } catch (e) {
      if (!(e instanceof VerbsError)) throw e;
      return {
        ...base,
        atomicCap: undefined,
        maxQpRdAtom: undefined,
        maxQpInitRdAtom: undefined,
        maxSge: undefined,
        portState: undefined,
        linkLayer: undefined,
        gids: [],
        error: e.message,
      };
    }
  });
}

/** The rows as a cli-table3 table. */
export function renderDevices(rows: readonly DeviceRow[]): string {
  if (rows.length === 0) return 'no RDMA devices on this machine\n';
  const table = new Table({
    head: [
      'device',
      'transport',
      'node GUID',
      'atomic_cap',
      'max_qp_rd_atom',
      'max_qp_init_rd_atom',
      'max_sge',
      'port 1',
      'GIDs',
    ],
  });
  for (const r of rows)
    table.push([
      r.name,
      r.transport,
      r.nodeGuid,
      r.atomicCap ?? '-',
      r.maxQpRdAtom ?? '-',
      r.maxQpInitRdAtom ?? '-',
      r.maxSge ?? '-',
      r.error ?? `${r.portState ?? '?'} ${r.linkLayer ?? ''}`,
      r.gids.join('\n'),
    ]);
  return `${table.toString()}\n`;
}

/**
 * The line after the table: how the addon allocates the memory it shares with JS
 * (issue 36: external buffers, or V8's memory where they are refused; docs/verbs.md).
 */
export function memoryPathLine(info: MemoryPathInfo): string {
  const why =
    info.path === 'v8' && info.externalAvailable
      ? `${info.reason}; external available`
      : info.reason;
  return `addon memory: ${info.path === 'v8' ? 'V8-allocated (no external buffers)' : 'external buffers'} (${why})\n`;
}

/** What `devices` says on stderr (and exits 1) when there is no device to list. */
export function noDevicesMessage(cliPath: string): string {
  return `no RDMA devices on this machine (the QEMU guest has rxe0 and siw0: rdma-interop vm -- node ${cliPath} devices)`;
}

/** Registers `rdma-interop devices [--json]`: exits 1 when there are no devices. */
export function registerDevices(program: Command): void {
  program
    .command('devices')
    .description('list RDMA devices with their queried attributes (atomic_cap, GIDs, ...)')
    .option('--json', 'print JSON on stdout instead of a table (DeviceReport[], the verbs types)')
    .action((opts: { json?: boolean }) => {
      const devices = listDevices();
      if (devices.length === 0) {
        // --json still prints valid JSON (an empty list); the exit code says it failed.
        if (opts.json) process.stdout.write('[]\n');
        process.stderr.write(
          errorLine('rdma-interop devices', noDevicesMessage(process.argv[1] ?? 'main.js')),
        );
        process.exitCode = 1;
        return;
      }
      process.stdout.write(
        opts.json
          ? `${toJson(reportDevices(devices))}\n`
          : renderDevices(describeDevices(devices)) + memoryPathLine(memoryPath()),
      );
    });
}
