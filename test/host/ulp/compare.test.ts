/**
 * `compare` merges `ulp` reports: each kernel line (or link pair) of a ulp results.json is a
 * run, each workload a row `ulp:<workload>` on its device.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { compareReports, readReports } from '../../../src/interop/comparison/index.js';
import { writeUlpReport } from '../../../src/ulp/report.js';
import type { UlpLineRun } from '../../../src/ulp/run.js';
import type { WireJudgement } from '../../../src/ulp/wire-judge.js';
import type { WorkloadResult } from '../../../src/ulp/workloads.js';
import { makeTempDir } from '../../helpers/pcap.js';

const wire = (violations: WireJudgement['violations']): WireJudgement => ({
  frames: 5669,
  otherFrames: 1200,
  connections: 3,
  messages: 1912,
  mpaFrames: 6,
  undecodable: [],
  opcodes: { send: 851 },
  sizes: {},
  mpaCrc: { valid: 0, invalid: 0, notInUse: 1912 },
  icrc: { valid: 0, invalid: 0, unchecked: 0 },
  terminates: [],
  naks: 0,
  violations,
  notes: [],
});

function result(
  kernel: string,
  w: WorkloadResult['wire'],
  outcome: WorkloadResult['outcome'],
): WorkloadResult {
  return {
    workload: 'nvme',
    device: 'siw0',
    kernel,
    outcome,
    ...(outcome === 'passed' ? {} : { reason: 'the script exited 1' }),
    facts: outcome === 'passed' ? { verified: 'yes' } : {},
    dmesgTrouble: [],
    seconds: 14.2,
    wire: w,
  };
}

describe('compare with ulp reports', () => {
  it('makes a run per line and a row per workload and device, the differing values marked', () => {
    const dir = makeTempDir('rdma-interop-ulp-compare-');
    const runs: UlpLineRun[] = [
      { line: '6.1', guestSeconds: 80, results: [result('6.1.0-44-amd64', wire([]), 'passed')] },
      {
        line: '7.3',
        guestSeconds: 85,
        results: [
          result(
            '7.3.4-amd64',
            wire([{ rule: 'msn-order', frame: 812, detail: 'queue 0: MSN 9, expected 8' }]),
            'failed',
          ),
        ],
      },
    ];
    writeUlpReport(join(dir, 'matrix'), runs);
    mkdirSync(join(dir, 'one'));
    writeUlpReport(join(dir, 'one'), [runs[0] as UlpLineRun]);
    const read = readReports([join(dir, 'matrix'), join(dir, 'one')]);
    expect(read.map((r) => [r.label.split('/').slice(-2).join('/'), r.kernel])).toEqual([
      ['matrix/6.1', '6.1.0-44-amd64'],
      ['matrix/7.3', '7.3.4-amd64'],
      [expect.stringMatching(/one$/), '6.1.0-44-amd64'],
    ]);
    const c = compareReports(read);
    const row = (field: string) =>
      c.fields.find((f) => f.scenario === 'ulp:nvme' && f.device === 'siw0' && f.field === field);
    expect(Object.values(row('verdict')?.values ?? {})).toEqual(['passed', 'failed', 'passed']);
    expect(row('verdict')?.changed).toBe(true);
    expect(Object.values(row('violations')?.values ?? {})).toEqual(['none', 'msn-order', 'none']);
    expect(row('undecodable')).toMatchObject({ changed: false });
    expect(Object.values(row('verified')?.values ?? {})).toEqual(['yes', '—', 'yes']);
  });
});
