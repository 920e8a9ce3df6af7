/**
 * Recorded kernel defects that explain fuzz findings (src/judge/records/kernel-findings.ts):
 * the line KFENCE printed in the cold CI run of 2026-12-05 is explained on its kernel line
 * and device only, and each record is classed and cites its rule like every other record.
 */
import { describe, expect, it } from 'vitest';
import type { BehaviourRecord } from '../../../src/judge/record.js';
import { classProblems } from '../../../src/judge/records/classes.js';
import {
  explainFinding,
  findingRecordText,
  KERNEL_FINDING_RECORDS,
} from '../../../src/judge/records/kernel-findings.js';
import {
  PROBE_SCHEMA,
  type ProbeDocument,
  renderProbeJunit,
  renderProbeMarkdown,
} from '../../../src/probe/probe-report.js';

/** The finding as the siw guided campaign reported it on 6.12.95. */
const SEEN = {
  why: '[  107.126770] BUG: KFENCE: use-after-free write in siw_cm_work_handler+0x5b9/0xeb0 [siw]',
  oracles: ['kernel-log/kfence'],
};

describe('kernel findings explained by records', () => {
  it('explains the KFENCE use-after-free in siw_cm_work_handler on 6.12 siw0', () => {
    const r = explainFinding('6.12.95+deb12-amd64', 'siw0', SEEN);
    expect(r?.id).toBe('siw-cm-work-handler-use-after-free');
    expect(r === undefined ? '' : findingRecordText(r)).toBe(
      'siw-cm-work-handler-use-after-free (defect, siw 6.12 <= v < 6.13)',
    );
    // A read in the same function is the same defect.
    expect(
      explainFinding('6.12.95+deb12-amd64', 'siw0', {
        ...SEEN,
        why: 'BUG: KFENCE: use-after-free read in siw_cm_work_handler+0x12/0xeb0 [siw]',
      })?.id,
    ).toBe('siw-cm-work-handler-use-after-free');
  });

  it('explains nothing else: other lines, devices, oracles or functions', () => {
    expect(explainFinding('7.3.4+deb13-amd64', 'siw0', SEEN)).toBeUndefined();
    expect(explainFinding('6.1.0-57-amd64', 'siw0', SEEN)).toBeUndefined();
    expect(explainFinding('6.12.95+deb12-amd64', 'rxe_t', SEEN)).toBeUndefined();
    expect(
      explainFinding('6.12.95+deb12-amd64', 'siw0', { ...SEEN, oracles: ['guard-words'] }),
    ).toBeUndefined();
    expect(explainFinding('6.12.95+deb12-amd64', 'siw0', { why: SEEN.why })).toBeUndefined();
    expect(
      explainFinding('6.12.95+deb12-amd64', 'siw0', {
        ...SEEN,
        why: 'BUG: KFENCE: use-after-free write in siw_qp_llp_close+0x40/0x200 [siw]',
      }),
    ).toBeUndefined();
    expect(
      explainFinding('6.12.95+deb12-amd64', 'siw0', {
        ...SEEN,
        why: 'BUG: KFENCE: out-of-bounds write in siw_cm_work_handler+0x5b9/0xeb0 [siw]',
      }),
    ).toBeUndefined();
  });

  it('every record is classed, cites its rule and says why', () => {
    expect(classProblems(KERNEL_FINDING_RECORDS as unknown as BehaviourRecord[])).toEqual([]);
    for (const r of KERNEL_FINDING_RECORDS) {
      expect(r.why, r.id).toMatch(/\.c \d+/);
      expect(new Set(KERNEL_FINDING_RECORDS.map((x) => x.id)).size).toBe(
        KERNEL_FINDING_RECORDS.length,
      );
    }
  });

  it('the report shows an explained finding as recorded and fails only on unexplained ones', () => {
    const finding = { seed: 1, index: 99, mutation: 'batch 75-99', bytes: '', minimized: '' };
    const doc = (record: string | undefined): ProbeDocument => ({
      schema: PROBE_SCHEMA,
      kernels: [{ line: '6.12', release: '6.12.95+deb12-amd64' }],
      assertions: [],
      fixes: [],
      fuzz: [
        {
          kernel: '6.12.95+deb12-amd64',
          device: 'siw0',
          seed: 1,
          packets: 100,
          batches: 4,
          findings: [{ ...finding, ...SEEN, ...(record === undefined ? {} : { record }) }],
        },
      ],
    });
    const known = doc('siw-cm-work-handler-use-after-free');
    expect(renderProbeMarkdown(known)).toContain(
      `- 6.12 siw0: seed 1, 100 packets in 4 batches, 1 findings (1 explained by a record)\n  - recorded (siw-cm-work-handler-use-after-free): ${SEEN.why}`,
    );
    expect(renderProbeJunit(known)).not.toContain('<failure');
    expect(renderProbeJunit(doc(undefined))).toMatch(/<failure message="1 findings: /);
    expect(renderProbeMarkdown(doc(undefined))).toContain(`  - unexplained: ${SEEN.why}`);
  });
});
