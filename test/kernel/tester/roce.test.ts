import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AssertionResult } from '../../../src/interop/tester/assertion.js';
import { runAssertions } from '../../../src/interop/tester/guest-runner.js';
import { openRoceTester, type RoceTester } from '../../../src/interop/tester/roce-tester.js';

// The RoCE packet tester against rxe (issue 21): the tester in its own network namespace
// plays the requester towards an rxe QP on a veth; every answer, completion, memory byte
// and QP state is compared with the engine's RC responder rules. A difference is a pass
// only when a known behaviour (src/interop/tester/roce-known.ts) explains it.
describe('RoCE tester: rxe as responder', () => {
  let tester: RoceTester;
  let results: AssertionResult[] = [];
  beforeAll(async () => {
    tester = await openRoceTester();
    const share = process.env.RDMA_INTEROP_SHARE;
    results = await runAssertions(tester.assertions, {
      ...(share === undefined ? {} : { resultsFile: `${share}/roce-tester.jsonl` }),
      ...(process.env.ROCE_ASSERTION === undefined ? {} : { select: [process.env.ROCE_ASSERTION] }),
    });
  }, 600_000);
  afterAll(() => tester?.close());

  it('runs every selected assertion and each passes or is explained', () => {
    expect(results.length).toBeGreaterThan(0);
    const unexplained = results
      .filter((r) => r.verdict !== 'pass' && r.verdict !== 'known')
      .map((r) => ({ id: r.id, note: r.note, expected: r.expected, observed: r.observed }));
    expect(unexplained).toEqual([]);
  });

  it('the kernel survived every hostile assertion', () => {
    const hostile = results.filter((r) => r.survival !== undefined);
    expect(hostile.length).toBeGreaterThan(0);
    for (const r of hostile)
      expect({ id: r.id, ...r.survival }).toEqual({
        id: r.id,
        dmesg: [],
        deviceWorks: true,
        guestUp: true,
      });
  });
});
