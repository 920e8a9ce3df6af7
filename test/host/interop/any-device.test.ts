import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { compareReports, readReports } from '../../../src/interop/comparison/index.js';
import {
  type DeviceDescription,
  deviceFactsOf,
  portSpeedText,
} from '../../../src/interop/device-description.js';
import { environmentFor, type RunEnvironment } from '../../../src/interop/environment.js';
import { expectedOutcome } from '../../../src/interop/expected.js';
import { kernelDriverOf } from '../../../src/interop/kernel/device-target.js';
import { renderMarkdown, summaryLine } from '../../../src/interop/report.js';
import { junitXml, writeReport } from '../../../src/interop/report-files.js';
import {
  CAPABILITIES,
  missingOf,
  PROFILES,
  requirementsOf,
} from '../../../src/interop/requirements.js';
import { planRun } from '../../../src/interop/run-plan.js';
import { runExitStatus, runScenarios } from '../../../src/interop/runner.js';
import { deviceOf, type Scenario } from '../../../src/interop/scenario.js';
import { SCENARIOS } from '../../../src/interop/scenarios.js';
import { usesRfc7306 } from '../../../src/interop/siw-variant.js';

const RUN = { kernel: '6.12.12-amd64', rdmaCore: '56.1' };

/** A ConnectX-6 Dx as a lab has it: RoCE, atomics, no IBTA 1.5 placement operations. */
const MLX5: DeviceDescription = {
  name: 'mlx5_0',
  transport: 'roce',
  capabilities: CAPABILITIES.filter((c) => !['immediate', 'atomic-write', 'flush'].includes(c)),
  kernelDriver: 'mlx5_core',
  provider: 'mlx5',
  vendorId: 0x15b3,
  vendorPartId: 4125,
  firmware: '22.39.1002',
  portSpeed: portSpeedText(32, 2),
  activeMtu: 4096,
  netdev: 'ens1f0np0',
  address: '192.0.2.10',
  gidIndex: 3,
  gid: '::ffff:192.0.2.10',
  atomicCap: 'HCA',
};

/** siw under another name (rdma link add lab_iw type siw ...), on another address. */
const LAB_IW: DeviceDescription = {
  ...MLX5,
  name: 'lab_iw',
  transport: 'iwarp',
  capabilities: ['srq'],
  kernelDriver: 'siw',
  provider: 'siw',
  vendorId: 0x626d74,
  vendorPartId: 0,
  firmware: '0.0.0',
  netdev: 'lab1',
  address: '203.0.113.1',
  gidIndex: 0,
  atomicCap: 'NONE',
};

const byId = (id: string): Scenario => {
  const s = SCENARIOS.find((x) => x.id === id);
  if (s === undefined) throw new Error(`no scenario ${id}`);
  return s;
};

describe('what a scenario needs (read from its program)', () => {
  it('names transport, bring-up, post API and capabilities', () => {
    expect(requirementsOf(byId('rxe-fetch-add-ex'))).toEqual({
      transport: 'roce',
      capabilities: ['connect-by-hand', 'ibv-wr', 'atomics'],
    });
    expect(requirementsOf(byId('siw-fetch-add'))).toEqual({
      transport: 'iwarp',
      capabilities: ['atomics'],
    });
    expect(requirementsOf(byId('rxe-atomic-write-ex')).capabilities).toContain('atomic-write');
    expect(requirementsOf(byId('rxe-flush-global-mr-ex')).capabilities).toContain('flush');
    const windows = SCENARIOS.filter((s) => s.family === 'memory-windows');
    expect(windows.length).toBeGreaterThan(0);
    for (const s of windows)
      expect(requirementsOf(s).capabilities.some((c) => c.startsWith('mw-type'))).toBe(true);
    for (const s of SCENARIOS.filter((x) => x.srq === true))
      expect(requirementsOf(s).capabilities).toContain('srq');
  });

  it('on iWARP, the RFC 7306 scenarios are exactly those needing atomics or immediate data', () => {
    const iwarp = SCENARIOS.filter((s) => requirementsOf(s).transport === 'iwarp');
    const rfc7306 = iwarp.filter((s) =>
      requirementsOf(s).capabilities.some((c) => c === 'atomics' || c === 'immediate'),
    );
    expect(rfc7306.map((s) => s.id)).toEqual(iwarp.filter(usesRfc7306).map((s) => s.id));
  });

  it('counts the scenarios each capability profile runs (the closing note of issue 37)', () => {
    const counts = Object.fromEntries(
      Object.entries(PROFILES).map(([name, offer]) => [
        name,
        SCENARIOS.filter((s) => missingOf(requirementsOf(s), offer).length === 0).length,
      ]),
    );
    const roce = SCENARIOS.filter((s) => requirementsOf(s).transport === 'roce').length;
    const iwarp = SCENARIOS.length - roce;
    console.log(`scenarios per profile: ${JSON.stringify(counts)} (RoCE ${roce}, iWARP ${iwarp})`);
    // iWARP has no datagram service: the UD multicast programs need 'ud' there too (siw0
    // runs them only through its records).
    const iwarpUd = SCENARIOS.filter(
      (s) => s.device === 'siw0' && requirementsOf(s).capabilities.includes('ud'),
    ).length;
    expect(iwarpUd).toBe(4);
    expect(counts['roce-atomics']).toBe(roce);
    expect(counts['iwarp-rfc7306']).toBe(iwarp - iwarpUd);
    expect(counts['roce-no-atomics']).toBeLessThan(roce);
    expect(counts.iwarp).toBe(
      iwarp - iwarpUd - SCENARIOS.filter(usesRfc7306).filter((s) => s.device === 'siw0').length,
    );
  });
});

describe('a device by what it is, not by its name', () => {
  const root = mkdtempSync(join(tmpdir(), 'sysfs-ib-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('takes the kernel driver from the parent device, a soft device by its own marks', () => {
    mkdirSync(join(root, 'mlx5_0', 'device'), { recursive: true });
    symlinkSync('../../../bus/auxiliary/drivers/mlx5_ib', join(root, 'mlx5_0', 'device', 'driver'));
    // rxe on a ConnectX netdev: its parent device is the NIC's, its `parent` file says rxe.
    mkdirSync(join(root, 'lab_roce', 'device'), { recursive: true });
    symlinkSync('../../../bus/pci/drivers/mlx5_core', join(root, 'lab_roce', 'device', 'driver'));
    writeFileSync(join(root, 'lab_roce', 'parent'), 'ens1f0np0\n');
    mkdirSync(join(root, 'lab_iw'));
    expect(kernelDriverOf('mlx5_0', 0x15b3, root)).toBe('mlx5_ib');
    expect(kernelDriverOf('lab_roce', 0x15b3, root)).toBe('rdma_rxe');
    expect(kernelDriverOf('lab_iw', 0x626d74, root)).toBe('siw');
    expect(kernelDriverOf('gone0', 0x8086, root)).toBe('unknown');
  });

  it('prints port speed as lanes times lane rate', () => {
    expect(portSpeedText(32, 2)).toBe('103.1 Gbps');
    expect(portSpeedText(1, 1)).toBe('2.5 Gbps');
    expect(portSpeedText(3, 1)).toBe('unknown');
  });

  it('binds siw scenarios to a renamed siw, its records keep them running', () => {
    const plan = planRun(SCENARIOS, [LAB_IW], RUN);
    const siw = SCENARIOS.filter((s) => s.device === 'siw0');
    expect(plan.runs.map((s) => s.id)).toEqual(siw.map((s) => s.id));
    expect(new Set(plan.runs.map(deviceOf))).toEqual(new Set(['lab_iw']));
    expect(plan.runs.every((s) => s.on?.address === '203.0.113.1')).toBe(true);
    expect(plan.notApplicable).toEqual([]);
    expect(plan.otherTransport).toBe(SCENARIOS.length - siw.length);
  });

  it("siw's records make its UD programs run (the refusal checked), without 'ud' offered", () => {
    const ud = SCENARIOS.filter(
      (s) => s.device === 'siw0' && requirementsOf(s).capabilities.includes('ud'),
    );
    const plan = planRun(ud, [LAB_IW], RUN);
    expect(plan.notApplicable).toEqual([]);
    expect(plan.runs.map((s) => s.id)).toEqual(ud.map((s) => s.id));
  });

  it('an unrecorded iWARP device without RFC 7306: those scenarios and UD are not applicable', () => {
    const plan = planRun(SCENARIOS, [{ ...LAB_IW, provider: 'irdma' }], RUN, []);
    const ud = (s: (typeof SCENARIOS)[number]) => requirementsOf(s).capabilities.includes('ud');
    const lacking = SCENARIOS.filter((s) => s.device === 'siw0' && (usesRfc7306(s) || ud(s)));
    expect(plan.notApplicable.map((r) => r.scenario.id)).toEqual(lacking.map((s) => s.id));
    for (const r of plan.notApplicable) {
      expect(r.verdict).toBe('not-applicable');
      expect(r.notApplicable).toEqual(ud(r.scenario) ? ['ud'] : expect.arrayContaining([]));
      expect(
        r.notApplicable?.every((m) => m === 'atomics' || m === 'immediate' || m === 'ud'),
      ).toBe(true);
    }
  });
});

describe('an mlx5-like RoCE device no record covers', () => {
  const plan = planRun(SCENARIOS, [MLX5], RUN);
  const dir = mkdtempSync(join(tmpdir(), 'any-device-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('runs the RoCE scenarios it can, the placement ones not applicable', () => {
    const roce = SCENARIOS.filter((s) => s.device === 'rxe0');
    expect(plan.runs.length + plan.notApplicable.length).toBe(roce.length);
    expect(plan.notApplicable.map((r) => r.scenario.id).sort()).toEqual(
      roce
        .filter((s) => /atomic-write|flush/.test(s.id))
        .map((s) => s.id)
        .sort(),
    );
    expect(
      plan.notApplicable.find((r) => r.scenario.id === 'rxe-atomic-write-ex')?.notApplicable,
    ).toEqual(['atomic-write']);
  });

  it('reports a difference as a finding; --strict fails it; the facts and n/a list are in every report', async () => {
    const picked = plan.runs.filter((s) => /^rxe-fetch-add(-ex)?$|^rxe-write$/.test(s.id));
    expect(picked.map((s) => s.id).sort()).toEqual([
      'rxe-fetch-add',
      'rxe-fetch-add-ex',
      'rxe-write',
    ]);
    // The device answers as the engine predicts, except one field of one scenario.
    const execute = async (s: Scenario) => {
      const engine = expectedOutcome(s);
      return s.id === 'rxe-fetch-add-ex'
        ? { fields: { ...engine.fields, 'requester.wc1.byte_len': '0' } }
        : engine;
    };
    const env: RunEnvironment = {
      host: 'lab',
      ...RUN,
      node: process.version,
      devices: [
        {
          name: 'mlx5_0',
          provider: 'mlx5',
          transport: 'roce',
          firmware: MLX5.firmware,
          atomicCap: 'HCA',
          maxQpRdAtom: 16,
          maxQpInitRdAtom: 16,
          maxQpWr: 32768,
          placementCaps: 'none',
          ...deviceFactsOf(MLX5),
        },
      ],
    };
    expect(environmentFor(env, 'mlx5_0').provider).toBe('mlx5');
    const ran = await runScenarios(
      picked,
      (s) => environmentFor(env, deviceOf(s)),
      () => {},
      () => {},
      execute,
    );
    const results = [...ran, ...plan.notApplicable];
    expect(ran.map((r) => [r.scenario.id, r.verdict])).toEqual([
      ['rxe-write', 'match'],
      ['rxe-fetch-add', 'match'],
      ['rxe-fetch-add-ex', 'finding'],
    ]);
    expect(runExitStatus(results, false)).toBe(0);
    expect(runExitStatus(results, true)).toBe(1);
    expect(
      summaryLine(
        results.map((r) => r.verdict),
        true,
      ),
    ).toBe(`${results.length - 1} passed, 1 failed`);

    writeReport(dir, results, env, true);
    const doc = JSON.parse(readFileSync(join(dir, 'results.json'), 'utf8'));
    expect(doc.environment.devices[0]).toMatchObject({
      name: 'mlx5_0',
      provider: 'mlx5',
      kernelDriver: 'mlx5_core',
      vendorId: '0x15b3',
      vendorPartId: 4125,
      firmware: '22.39.1002',
      portSpeed: '103.1 Gbps',
      activeMtu: 4096,
      gidIndex: 3,
    });
    expect(doc.totals).toMatchObject({ finding: 1, 'not-applicable': plan.notApplicable.length });
    const finding = doc.scenarios.find((s: { verdict: string }) => s.verdict === 'finding');
    expect(finding).toMatchObject({ id: 'rxe-fetch-add-ex', device: 'mlx5_0', target: 'rxe0' });
    expect(finding.differences).toEqual([
      { field: 'requester.wc1.byte_len', engine: '8', device: '0', explainedBy: null },
    ]);
    const na = doc.scenarios.find((s: { id: string }) => s.id === 'rxe-flush-global-mr-ex');
    expect(na).toMatchObject({ verdict: 'not-applicable', notApplicable: ['flush'] });

    const md = renderMarkdown(results, env, true);
    expect(md).toContain(
      '| mlx5_0 | mlx5_core | mlx5 | 0x15b3:4125 | 22.39.1002 | 103.1 Gbps | 4096 |',
    );
    expect(md).toContain('## Not applicable');
    expect(md).toContain('| rxe-atomic-write-ex | mlx5_0 | atomic-write |');
    expect(md).toContain('| requester.wc1.byte_len | 8 | 0 | **unrecorded** |');
    const junit = junitXml(results, true);
    expect(junit).toContain('<skipped');
    expect(junit).toMatch(/<failure[^>]*type="finding"/);
    // compare: the mlx5_0 run lines up with an rxe0 run under the target rxe0.
    const reference = await runScenarios(
      picked.map((s) => ({ ...s, on: undefined })),
      () => ({ provider: 'rxe', ...RUN }),
      () => {},
      () => {},
      async (s) => expectedOutcome(s),
    );
    writeReport(join(dir, 'rxe0'), reference, { ...env, devices: [] }, false);
    const comparison = compareReports(
      readReports([join(dir, 'rxe0', 'results.json'), join(dir, 'results.json')]),
    );
    const verdicts = comparison.fields.filter(
      (f) => f.field === 'verdict' && picked.some((s) => s.id === f.scenario),
    );
    expect(verdicts.map((f) => [f.scenario, f.device, Object.values(f.values)])).toEqual([
      ['rxe-write', 'rxe0', ['match', 'match']],
      ['rxe-fetch-add', 'rxe0', ['match', 'match']],
      ['rxe-fetch-add-ex', 'rxe0', ['match', 'finding']],
    ]);
    const html = readFileSync(join(dir, 'report.html'), 'utf8');
    expect(html).toContain('v-not-applicable');
    expect(html).toContain(
      '<td>mlx5_0</td><td>mlx5_core</td><td>mlx5</td><td>0x15b3</td><td>4125</td><td>22.39.1002</td><td>103.1 Gbps</td><td>4096</td>',
    );
    expect(html).toContain('Not applicable on mlx5_0: it lacks atomic-write.');
  });
});
