import { describe, expect, it } from 'vitest';
import {
  describeDevices,
  memoryPathLine,
  renderDevices,
} from '../../../src/cli/commands/devices.js';

describe('rdma-interop devices', () => {
  it('says so when there are no devices', () => {
    expect(renderDevices([])).toBe('no RDMA devices on this machine\n');
  });

  it('reports a device that cannot be opened as a row with the VerbsError message', () => {
    const rows = describeDevices([
      {
        name: 'ghost0',
        nodeGuid: 0x0123456789abcdefn,
        nodeGuidHex: '0123:4567:89ab:cdef',
        transport: 'iWARP',
        nodeType: 'RNIC',
      },
    ]);
    expect(rows).toHaveLength(1);
    expect(rows[0]?.name).toBe('ghost0');
    expect(rows[0]?.atomicCap).toBeUndefined();
    expect(rows[0]?.error).toMatch(/ibv_(get_device_list|open_device) failed: E(NODEV|NOSYS)/);
    const text = renderDevices(rows);
    expect(text).toContain('ghost0');
    expect(text).toContain('0123:4567:89ab:cdef');
  });

  it('renders queried attributes in the table', () => {
    const text = renderDevices([
      {
        name: 'rxe0',
        transport: 'InfiniBand',
        nodeGuid: 'ccd2:6bff:fead:9b2a',
        atomicCap: 'HCA',
        maxQpRdAtom: 128,
        maxQpInitRdAtom: 128,
        maxSge: 32,
        portState: 'ACTIVE',
        linkLayer: 'Ethernet',
        gids: ['1: ::ffff:192.0.2.1 (RoCEv2)'],
        error: undefined,
      },
    ]);
    for (const s of ['rxe0', 'InfiniBand', 'HCA', '128', 'ACTIVE Ethernet', '::ffff:192.0.2.1'])
      expect(text).toContain(s);
  });

  it('says after the table which memory the addon shares with JS (issue 36)', () => {
    expect(memoryPathLine({ path: 'external', reason: 'default', externalAvailable: true })).toBe(
      'addon memory: external buffers (default)\n',
    );
    expect(memoryPathLine({ path: 'v8', reason: 'refused', externalAvailable: false })).toBe(
      'addon memory: V8-allocated (no external buffers) (refused)\n',
    );
    expect(memoryPathLine({ path: 'v8', reason: 'environment', externalAvailable: true })).toBe(
      'addon memory: V8-allocated (no external buffers) (environment; external available)\n',
    );
  });
});
