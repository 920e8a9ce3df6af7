import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DeviceDescription } from '../../../src/interop/device-description.js';
import { collectEnvironment } from '../../../src/interop/environment.js';
import { probeDevice } from '../../../src/interop/kernel/device-target.js';
import { planRun } from '../../../src/interop/run-plan.js';
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

afterAll(async () => {
  // librdmacm keeps the contexts of the devices it used open until its process exits, and
  // rxe and siw cannot disassociate a user context: `rdma link delete` waits for them. The
  // scenarios therefore run in child processes (the CLI), which have exited by now.
  for (const args of [
    ['rdma', 'link', 'delete', 'lab_roce'],
    ['rdma', 'link', 'delete', 'lab_iw'],
  ])
    spawn(args[0] as string, args.slice(1), { detached: true, stdio: 'ignore' }).unref();
  const deadline = Date.now() + 30_000;
  while (
    Date.now() < deadline &&
    ['lab_roce', 'lab_iw'].some((d) => existsSync(`/sys/class/infiniband/${d}`))
  )
    await new Promise((r) => setTimeout(r, 200));
  for (const netdev of ['lab0', 'lab1'])
    try {
      sh('ip', 'link', 'del', netdev);
    } catch {
      // already gone
    }
  process.stderr.write(
    `any-device: ${((performance.now() - started) / 1000).toFixed(1)} s in this file\n`,
  );
  expect(existsSync('/sys/class/infiniband/lab_roce')).toBe(false);
  expect(existsSync('/sys/class/infiniband/lab_iw')).toBe(false);
});

interface ResultsScenario {
  readonly id: string;
  readonly device: string;
  readonly target?: string;
  readonly verdict: string;
  readonly differences: readonly { field: string; device: string; explainedBy: string | null }[];
  readonly stale: readonly string[];
}
interface ResultsDocument {
  readonly environment: { readonly devices: readonly Record<string, unknown>[] };
  readonly scenarios: readonly ResultsScenario[];
}

const CLI = join(process.env.RDMA_INTEROP_ROOT ?? process.cwd(), 'dist/cli/main.js');

/** `run --json` on `devices` (a child process: see afterAll), its results document. */
function runCli(devices: string, ids: readonly string[], ...more: string[]): ResultsDocument {
  const r = spawnSync(
    process.execPath,
    [
      CLI,
      'run',
      '--runtime',
      'host',
      '--json',
      '--device',
      devices,
      '--scenario',
      `{${ids.join(',')}}`,
      ...more,
    ],
    { encoding: 'utf8', timeout: 110_000 },
  );
  expect(r.status, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as ResultsDocument;
}

/** What a result says, device aside: its verdict and each difference with its reason. */
function judged(s: ResultsScenario) {
  return {
    id: s.id,
    verdict: s.verdict,
    differences: s.differences.map((d) => `${d.field}: ${d.device} (${d.explainedBy})`),
    stale: s.stale,
  };
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

  it('gives the same verdicts on lab_roce and lab_iw as on rxe0 and siw0', () => {
    const ids = [...SELECTION];
    const t0 = performance.now();
    const reference = runCli('rxe0,siw0', ids);
    const t1 = performance.now();
    const bound = runCli('lab_roce,lab_iw', ids);
    const t2 = performance.now();
    process.stderr.write(
      `any-device: ${ids.length} scenarios: rxe0/siw0 ${((t1 - t0) / 1000).toFixed(1)} s, lab_roce/lab_iw ${((t2 - t1) / 1000).toFixed(1)} s\n`,
    );
    expect(reference.scenarios).toHaveLength(ids.length);
    expect(bound.scenarios.map(judged)).toEqual(reference.scenarios.map(judged));
    expect(new Set(bound.scenarios.map((s) => s.device))).toEqual(new Set(['lab_roce', 'lab_iw']));
    for (const s of bound.scenarios)
      expect(s.target).toBe(s.id.startsWith('siw') ? 'siw0' : 'rxe0');
    expect(bound.environment.devices).toEqual([
      expect.objectContaining({
        name: 'lab_roce',
        provider: 'rxe',
        kernelDriver: 'rdma_rxe',
        netdev: 'lab0',
        address: '203.0.113.1',
      }),
      expect.objectContaining({
        name: 'lab_iw',
        provider: 'siw',
        kernelDriver: 'siw',
        netdev: 'lab1',
        address: '198.18.0.1',
      }),
    ]);
  });

  it('gives the same verdicts through an IPv6 GID and address', () => {
    const ids = [
      'rxe-write',
      'rxe-fetch-add',
      'rxe-cm-write',
      'rxe-concurrent-fetch-add-processes',
    ];
    const reference = runCli('rxe0', ids);
    const bound = runCli('lab_roce', ids, '--address', 'fd37::1');
    expect(bound.scenarios.map(judged)).toEqual(reference.scenarios.map(judged));
    expect(bound.environment.devices[0]).toMatchObject({
      address: 'fd37::1',
      gid: 'fd37:0:0:0:0:0:0:1',
    });
  });
});
