/**
 * Issue 33: every record, in every table the runners judge by (the suite, the link and
 * the faulty wire: rxe.ts, siw.ts; the testers: rxe-wire.ts, siw-wire.ts; rdma-core's own
 * tests: rdma-core-tests/records.ts), has a class
 * and a rule that cites a source; a record without one fails here (and is a type error).
 */
import { describe, expect, it } from 'vitest';
import { DEFECT_FIXES } from '../../../src/findings/fixes.js';
import { type BehaviourRecord, RECORD_CLASSES } from '../../../src/judge/record.js';
import { classProblems } from '../../../src/judge/records/classes.js';
import {
  IWARP_RECORDS,
  KNOWN_BEHAVIOUR,
  RECORDS,
  ROCE_RECORDS,
} from '../../../src/judge/records/index.js';
import { MULTICAST_SIW_RECORDS } from '../../../src/judge/records/multicast.js';
import { REREG_RXE_RECORDS, REREG_SIW_RECORDS } from '../../../src/judge/records/rereg.js';
import { RXE_RECORDS } from '../../../src/judge/records/rxe.js';
import { RXE_WIRE_RECORDS } from '../../../src/judge/records/rxe-wire.js';
import { SIW_RECORDS } from '../../../src/judge/records/siw.js';
import { SIW_WIRE_RECORDS } from '../../../src/judge/records/siw-wire.js';
import { RDMA_CORE_TEST_RECORDS } from '../../../src/rdma-core-tests/records.js';

const TABLES: Readonly<Record<string, readonly BehaviourRecord[]>> = {
  RXE_RECORDS,
  SIW_RECORDS,
  REREG_RXE_RECORDS,
  REREG_SIW_RECORDS,
  MULTICAST_SIW_RECORDS,
  RXE_WIRE_RECORDS,
  SIW_WIRE_RECORDS,
  RECORDS,
  KNOWN_BEHAVIOUR,
  ROCE_RECORDS,
  IWARP_RECORDS,
  RDMA_CORE_TEST_RECORDS,
};

describe('every record is classed and cites its rule', () => {
  it.each(Object.keys(TABLES))('%s', (name) => {
    const records = TABLES[name] ?? [];
    expect(records.length).toBeGreaterThan(0);
    expect(classProblems(records)).toEqual([]);
  });

  it('RECORDS holds every table, so the check above saw every record', () => {
    expect(RECORDS.length).toBe(
      RXE_RECORDS.length +
        SIW_RECORDS.length +
        REREG_RXE_RECORDS.length +
        REREG_SIW_RECORDS.length +
        MULTICAST_SIW_RECORDS.length +
        RXE_WIRE_RECORDS.length +
        SIW_WIRE_RECORDS.length,
    );
  });

  const good = RXE_RECORDS[0] as BehaviourRecord;
  it.each([
    ['no class', { ...good, class: undefined }, 'class undefined is none of'],
    ['an unknown class', { ...good, class: 'bug' }, 'class bug is none of'],
    ['no rule', { ...good, rule: ' ' }, 'no rule'],
    ['a rule citing nothing', { ...good, rule: 'the spec says so' }, 'cites no RFC section'],
    ['the old side field', { ...good, side: 'engine' }, 'side is folded into class'],
    ['an empty unclear', { ...good, unclear: '' }, 'unclear is set but says nothing'],
  ])('a record with %s is refused', (_what, record, problem) => {
    const problems = classProblems([record as unknown as BehaviourRecord]);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toContain(problem);
  });

  it('one id has one class across the tables', () => {
    const twice = [good, { ...good, class: 'engine' } as BehaviourRecord];
    expect(classProblems(twice)).toEqual([
      `${good.id}: classed ${good.class} and engine in two tables`,
    ]);
  });

  it('every class but engine is used, and the defects include the ones issue 33 names', () => {
    const used = new Set(RECORDS.map((k) => k.class));
    // `engine` records are bugs of ours, fixed in the engine (issue 33): none is the goal.
    expect([...RECORD_CLASSES].filter((c) => c !== 'engine' && !used.has(c))).toEqual([]);
    const defects = new Set(RECORDS.filter((k) => k.class === 'defect').map((k) => k.id));
    for (const id of [
      'rxe-with-inv-reads-ip-csum-ok',
      'rxe-mw-range-is-the-mr',
      'rxe-no-retry-exhaustion-towards-err-qp',
      'libsiw-list-refusal-lost',
      'siw-no-solicited-event',
      'siw-send-without-receive-no-terminate',
      'siw-crc-failed-write-placed',
      'siw-terminate-layout',
    ])
      expect(defects.has(id), id).toBe(true);
  });

  it('every fix names a defect record (findings/fixes.ts)', () => {
    const defects = new Set(RECORDS.filter((k) => k.class === 'defect').map((k) => k.id));
    expect(DEFECT_FIXES.filter((f) => !defects.has(f.recordId)).map((f) => f.recordId)).toEqual([]);
    const also = DEFECT_FIXES.flatMap((f) => f.alsoFixes ?? []);
    expect(also.length).toBeGreaterThan(0);
    expect(also.filter((id) => !defects.has(id))).toEqual([]);
  });
});
