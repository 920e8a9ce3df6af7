import { execFileSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DeviceDescription } from '../../../src/interop/device-description.js';
import { collectEnvironment, environmentFor } from '../../../src/interop/environment.js';
import { probeDevice } from '../../../src/interop/kernel/device-target.js';
import { planRun } from '../../../src/interop/run-plan.js';
import { runScenario, type ScenarioResult } from '../../../src/interop/runner.js';
import { deviceOf, type Scenario } from '../../../src/interop/scenario.js';
import { SCENARIOS } from '../../../src/interop/scenarios.js';

// Issue 37: the suite on devices of other names, other netdevs and addresses (an IPv6 GID
// too), in the kernel stage's guest (no boot of its own). A small selection runs on rxe0
// and siw0 and again on lab_roce (rxe on its own netdev) and lab_iw (siw created as
// tmp_siw, renamed with `rdma dev set`): the verdicts and the differing fields must be
// the same. The devices are made here and removed afterwards.
const SELECTION = new Set([
  'rxe-write',
  'rxe-read',
  'rxe-fetch-add',
  'rxe-fetch-add-ex',
  'rxe-send-imm',
  'rxe-atomic-write-ex',
  'rxe-cm-write',
  'rxe-cm-fetch-add',
  'rxe-srq-two-qps',
  'rxe-concurrent-fetch-add-processes',
  'siw-write',
  'siw-send',
  'siw-read',
  'siw-fetch-add',
  'siw-write-imm',
  'siw-srq-two-qps',
  'siw-concurrent-fetch-add-processes',
]);
const selected = SCENARIOS.filter((s) => SELECTION.has(s.id));

const sh = (cmd: string, ...args: string[]) =>
  execFileSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });

const started = performance.now();
let roce: DeviceDescription;
let roce6: DeviceDescription;
let iwarp: DeviceDescription;

beforeAll(() => {
  sh('ip', 'link', 'add', 'lab0', 'type', 'dummy');
  sh('ip', 'addr', 'add', '203.0.113.1/24', 'dev', 'lab0');
  sh('ip', '-6', 'addr', 'add', 'fd37::1/64', 'dev', 'lab0', 'nodad');
  sh('ip', 'link', 'set', 'lab0', 'up');
  sh('ip', 'link', 'add', 'lab1', 'type', 'dummy');
  sh('ip', 'addr', 'add', '198.18.0.1/24', 'dev', 'lab1');
  sh('ip', 'link', 'set', 'lab1', 'up');
  sh('rdma', 'link', 'add', 'lab_roce', 'type', 'rxe', 'netdev', 'lab0');
  sh('rdma', 'link', 'add', 'tmp_siw', 'type', 'siw', 'netdev', 'lab1');
  sh('rdma', 'dev', 'set', 'tmp_siw', 'name', 'lab_iw');
  roce = probeDevice('lab_roce');
  roce6 = probeDevice('lab_roce', { address: 'fd37::1' });
  iwarp = probeDevice('lab_iw');
  process.stderr.write(
    `any-device: ${JSON.stringify({ roce, roce6: { address: roce6.address, gidIndex: roce6.gidIndex, gid: roce6.gid }, iwarp })}\n`,
  );
});

afterAll(() => {
  for (const args of [
    ['rdma', 'link', 'delete', 'lab_roce'],
    ['rdma', 'link', 'delete', 'lab_iw'],
    ['ip', 'link', 'del', 'lab0'],
    ['ip', 'link', 'del', 'lab1'],
  ])
    try {
      sh(args[0] as string, ...args.slice(1));
    } catch {
      // already gone
    }
  process.stderr.write(
    `any-device: ${((performance.now() - started) / 1000).toFixed(1)} s in this file\n`,
  );
});

/** What a result says, device aside: its verdict and each difference with its reason. */
function judged(r: ScenarioResult) {
  return {
    id: r.scenario.id,
    verdict: r.verdict,
    differences: r.differences.map(
      (d) =>
        `${d.field}: ${d.engine} -> ${d.kernel} (${typeof d.explainedBy === 'object' ? d.explainedBy.id : d.explainedBy})`,
    ),
    stale: r.stale.map((s) => s.id),
  };
}

async function runAll(scenarios: readonly Scenario[]): Promise<ScenarioResult[]> {
  const devices = [...new Set(scenarios.map(deviceOf))];
  const env = collectEnvironment(devices, [roce, roce6, iwarp]);
  const out: ScenarioResult[] = [];
  for (const s of scenarios) out.push(await runScenario(s, environmentFor(env, deviceOf(s))));
  return out;
}

describe('the suite on devices of other names (issue 37)', () => {
  it('probes them by what they are: driver, provider, transport, address', () => {
    expect(roce).toMatchObject({
      transport: 'roce',
      kernelDriver: 'rdma_rxe',
      provider: 'rxe',
      netdev: 'lab0',
      address: '203.0.113.1',
      gid: '::ffff:203.0.113.1',
    });
    expect(roce.capabilities).toEqual(expect.arrayContaining(['atomics', 'ibv-wr', 'srq', 'ud']));
    expect(roce6.address).toBe('fd37::1');
    expect(roce6.gid).toBe('fd37:0:0:0:0:0:0:1');
    expect(iwarp).toMatchObject({
      transport: 'iwarp',
      kernelDriver: 'siw',
      provider: 'siw',
      netdev: 'lab1',
      address: '198.18.0.1',
    });
    // siw: no atomics (stock), no UD, no ibv_wr_* (libsiw has no create_qp_ex).
    for (const c of ['atomics', 'ud', 'ibv-wr', 'connect-by-hand'])
      expect(iwarp.capabilities).not.toContain(c);
  });

  it('the not-applicable lists: none on rxe, only record-covered refusals run on siw', () => {
    const plan = planRun(selected, [roce, iwarp], {
      kernel: collectEnvironment([]).kernel,
      rdmaCore: collectEnvironment([]).rdmaCore,
    });
    expect(plan.runs.length + plan.notApplicable.length).toBe(selected.length);
    // Without records (an unrecorded provider), siw's RFC 7306 scenarios are not applicable.
    const bare = planRun(
      selected,
      [{ ...iwarp, provider: 'unrecorded' }],
      {
        kernel: 'x',
        rdmaCore: 'x',
      },
      [],
    );
    expect(bare.notApplicable.map((r) => [r.scenario.id, r.notApplicable])).toEqual([
      ['siw-fetch-add', ['atomics']],
      ['siw-write-imm', ['immediate']],
      ['siw-concurrent-fetch-add-processes', ['atomics']],
    ]);
  });

  it('gives the same verdicts on lab_roce and lab_iw as on rxe0 and siw0', async () => {
    const env = collectEnvironment([]);
    const plan = planRun(selected, [roce, iwarp], env);
    expect(plan.notApplicable).toEqual([]);
    expect(new Set(plan.runs.map(deviceOf))).toEqual(new Set(['lab_roce', 'lab_iw']));
    const t0 = performance.now();
    const reference = await runAll(selected);
    const t1 = performance.now();
    const bound = await runAll(plan.runs);
    const t2 = performance.now();
    process.stderr.write(
      `any-device: ${selected.length} scenarios: reference ${((t1 - t0) / 1000).toFixed(1)} s, renamed ${((t2 - t1) / 1000).toFixed(1)} s\n`,
    );
    expect(bound.map(judged)).toEqual(reference.map(judged));
    for (const r of bound) expect(r.verdict).toMatch(/^(match|known)$/);
  });

  it('gives the same verdicts through an IPv6 GID and address', async () => {
    const env = collectEnvironment([]);
    const ids = new Set([
      'rxe-write',
      'rxe-fetch-add',
      'rxe-cm-write',
      'rxe-concurrent-fetch-add-processes',
    ]);
    const few = selected.filter((s) => ids.has(s.id));
    const plan = planRun(few, [roce6], env);
    expect(plan.runs.every((s) => s.on?.address === 'fd37::1')).toBe(true);
    const reference = await runAll(few);
    const bound = await runAll(plan.runs);
    expect(bound.map(judged)).toEqual(reference.map(judged));
  });
});
