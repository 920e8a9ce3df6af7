/**
 * `rdma-interop devices --json` prints the verbs layer's own types (DeviceReport: the
 * DeviceInfo, DeviceAttr, PortAttr and GidEntry that the library returns), with bigint as
 * 0x-prefixed hex and GID bytes as hex: the shape README.md documents.
 */
import { describe, expect, it } from 'vitest';
import { type DeviceReport, reportDevices, toJson } from '../../../src/cli/commands/devices.js';
import type { DeviceInfo } from '../../../src/verbs/index.js';

const ghost: DeviceInfo = {
  name: 'ghost0',
  nodeGuid: 0x0123456789abcdefn,
  nodeGuidHex: '0123:4567:89ab:cdef',
  transport: 'iWARP',
  nodeType: 'RNIC',
};

describe('devices --json', () => {
  it('a device that cannot be opened: its DeviceInfo and the VerbsError fields', () => {
    const [report] = reportDevices([ghost]);
    expect(report?.device).toBe(ghost);
    expect(report?.attributes).toBeUndefined();
    expect(report?.error?.call).toMatch(/^ibv_(get_device_list|open_device)$/);
    expect(report?.error?.code).toMatch(/^E(NODEV|NOSYS)$/);
    const json = JSON.parse(toJson(reportDevices([ghost]))) as Record<string, unknown>[];
    expect(json[0]).toMatchObject({
      device: { name: 'ghost0', nodeGuid: '0x123456789abcdef', nodeGuidHex: '0123:4567:89ab:cdef' },
      gids: [],
    });
  });

  it('bigint fields become 0x hex strings and GID bytes hex, keys as the library names them', () => {
    const gid = Buffer.from('00000000000000000000ffffc0000201', 'hex');
    const report = {
      device: ghost,
      attributes: { maxMrSize: 0xfedcba9876543210n, atomic: 'HCA' },
      port: { stateName: 'ACTIVE', linkLayerName: 'Ethernet' },
      gids: [
        { index: 1, gid, text: '::ffff:192.0.2.1', type: 'RoCEv2', ipv4: '192.0.2.1', ifindex: 3 },
      ],
      error: undefined,
    } as unknown as DeviceReport;
    const [json] = JSON.parse(toJson([report])) as [Record<string, Record<string, unknown>>];
    expect(json.attributes).toEqual({ maxMrSize: '0xfedcba9876543210', atomic: 'HCA' });
    expect(json.gids).toEqual([
      {
        index: 1,
        gid: '00000000000000000000ffffc0000201',
        text: '::ffff:192.0.2.1',
        type: 'RoCEv2',
        ipv4: '192.0.2.1',
        ifindex: 3,
      },
    ]);
    expect(Object.keys(json)).toEqual(['device', 'attributes', 'port', 'gids']);
  });
});
