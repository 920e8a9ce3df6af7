import { describe, expect, it } from 'vitest';
import { describeDevices, renderDevices } from '../../../src/cli/commands/devices.js';
import { listDevices, openDevice } from '../../../src/verbs/index.js';

describe('device queries on rxe0 and siw0', () => {
  it('lists rxe0 as InfiniBand transport and siw0 as iWARP', () => {
    const byName = Object.fromEntries(listDevices().map((d) => [d.name, d]));
    expect(byName.rxe0?.transport).toBe('InfiniBand');
    expect(byName.rxe0?.nodeType).toBe('CA');
    expect(byName.siw0?.transport).toBe('iWARP');
    expect(byName.siw0?.nodeType).toBe('RNIC');
    expect(byName.rxe0?.nodeGuid).toBeTypeOf('bigint');
    expect(byName.rxe0?.nodeGuidHex).toMatch(/^[0-9a-f]{4}(:[0-9a-f]{4}){3}$/);
  });

  it('reports atomic_cap HCA on rxe0 and NONE on siw0', () => {
    using rxe = openDevice('rxe0');
    using siw = openDevice('siw0');
    const r = rxe.queryDevice();
    const s = siw.queryDevice();
    expect(r.atomic).toBe('HCA');
    expect(r.atomicCap).toBe(1);
    expect(s.atomic).toBe('NONE');
    expect(s.atomicCap).toBe(0);
    expect(r.maxQpRdAtom).toBe(128);
    expect(s.maxQpRdAtom).toBe(128);
    expect(r.maxQpInitRdAtom).toBeGreaterThan(0);
    expect(r.maxSge).toBeGreaterThan(1);
    expect(s.maxSgeRd).toBe(1);
    expect(r.nodeGuid).toBe(listDevices().find((d) => d.name === 'rxe0')?.nodeGuid);
    expect(r.physPortCnt).toBe(1);
  });

  it('queries the port: active, Ethernet link layer on rxe0', () => {
    using rxe = openDevice('rxe0');
    const port = rxe.queryPort(1);
    expect(port.stateName).toBe('ACTIVE');
    expect(port.linkLayerName).toBe('Ethernet');
    expect(port.gidTblLen).toBeGreaterThan(1);
  });

  it('reads the GID table with types: RoCE v2 ::ffff:192.0.2.1 at index 1 on rxe0', () => {
    using rxe = openDevice('rxe0');
    const table = rxe.gidTable(1);
    const one = table.find((g) => g.index === 1);
    expect(one?.text).toBe('::ffff:192.0.2.1');
    expect(one?.type).toBe('RoCEv2');
    expect(one?.ipv4).toBe('192.0.2.1');
    expect(table.find((g) => g.index === 0)?.text).toMatch(/^fe80:/);
  });

  it('feeds `rdma-interop devices` with the queried attributes', () => {
    const rows = describeDevices();
    const rxe = rows.find((r) => r.name === 'rxe0');
    const siw = rows.find((r) => r.name === 'siw0');
    expect(rxe).toMatchObject({
      transport: 'InfiniBand',
      atomicCap: 'HCA',
      maxQpRdAtom: 128,
      error: undefined,
    });
    expect(siw).toMatchObject({
      transport: 'iWARP',
      atomicCap: 'NONE',
      maxQpRdAtom: 128,
      error: undefined,
    });
    expect(rxe?.gids).toContain('1: ::ffff:192.0.2.1 (RoCEv2)');
    const table = renderDevices(rows);
    expect(table).toContain('rxe0');
    expect(table).toContain('siw0');
  });
});

describe('capability probing', () => {
  it('tells rxe0 and siw0 apart by what they do', async () => {
    const { probeCapabilities } = await import('../../../src/verbs/index.js');
    expect(probeCapabilities('rxe0')).toMatchObject({
      transport: 'InfiniBand',
      atomics: true,
      connectByHand: true,
      extendedQp: true,
      ud: true,
    });
    expect(probeCapabilities('siw0')).toMatchObject({
      transport: 'iWARP',
      atomics: false,
      connectByHand: false,
      extendedQp: false,
      ud: false,
    });
  });
});
