/**
 * rdma-core-tests: the runner's JSON lines parsed (and refused when they are not its), and
 * the judgement with the one record model: a failure a record explains is `known`, one no
 * record explains a `finding`, a record whose test passed `stale`.
 */
import { describe, expect, it } from 'vitest';
import type { BehaviourRecord } from '../../../src/judge/record.js';
import {
  judgeTests,
  parseRunnerOutput,
  RDMA_CORE_TEST_RECORDS,
  type RdmaCoreTestResult,
  RdmaCoreTestsError,
  testPassed,
} from '../../../src/rdma-core-tests/index.js';

const HEAD = JSON.stringify({
  environment: { kernel: '6.12.95+deb12-amd64', device: 'rxe0', python: '3.11.2', tests: 3 },
});
const LINES = [
  HEAD,
  '{"id": "tests.test_pd.PDTest.test_alloc_pd", "outcome": "pass", "seconds": 0.003}',
  '{"id": "tests.test_cq.CQTest.test_resize_cq", "outcome": "error", "seconds": 10.742, "message": "pyverbs.pyverbs_error.PyverbsError: Got timeout on polling (1 CQEs remaining)"}',
  '{"id": "tests.test_odp.OdpTestCase.test_odp_rc_traffic", "outcome": "skip", "seconds": 0.1, "reason": "ODP is not supported - No ODP caps"}',
];

describe('parseRunnerOutput', () => {
  it('reads the environment line and one result per test', () => {
    const out = parseRunnerOutput('rxe0.jsonl', `${LINES.join('\n')}\n`);
    expect(out.environment).toEqual({
      kernel: '6.12.95+deb12-amd64',
      device: 'rxe0',
      python: '3.11.2',
      tests: 3,
    });
    expect(out.truncated).toBe(false);
    expect(out.results.map((r) => [r.id, r.device, r.outcome])).toEqual([
      ['tests.test_pd.PDTest.test_alloc_pd', 'rxe0', 'pass'],
      ['tests.test_cq.CQTest.test_resize_cq', 'rxe0', 'error'],
      ['tests.test_odp.OdpTestCase.test_odp_rc_traffic', 'rxe0', 'skip'],
    ]);
    expect(out.results[2]?.reason).toBe('ODP is not supported - No ODP caps');
    expect(out.results[1]?.message).toMatch(/1 CQEs remaining/);
  });

  it('says when the runner stopped before its last test', () => {
    expect(parseRunnerOutput('f', LINES.slice(0, 2).join('\n')).truncated).toBe(true);
  });

  it.each([
    ['not JSON', `${HEAD}\n{oops`, /f: line 2 is not JSON/],
    ['no environment line', LINES.slice(1).join('\n'), /the first line is not the runner's/],
    [
      'an unknown outcome',
      `${HEAD}\n{"id":"a","outcome":"ok","seconds":1}`,
      /outcome "ok" is not one of pass, fail, error, skip/,
    ],
    ['no id', `${HEAD}\n{"outcome":"pass","seconds":1}`, /line 2 has no test id/],
    ['no seconds', `${HEAD}\n{"id":"a","outcome":"pass"}`, /line 2 has no seconds/],
    ['an array line', `${HEAD}\n[]`, /line 2 is not an object/],
  ])('refuses %s with a typed error', (_what, text, message) => {
    let error: unknown;
    try {
      parseRunnerOutput('f', text);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(RdmaCoreTestsError);
    expect((error as Error).message).toMatch(message);
  });

  it('refuses arguments that are not strings with a typed error', () => {
    expect(() => parseRunnerOutput(1 as unknown as string, '')).toThrow(RdmaCoreTestsError);
  });
});

const RXE_612 = { provider: 'rxe', kernel: '6.12.95+deb12-amd64', rdmaCore: '56.1' };
const result = (over: Partial<RdmaCoreTestResult>): RdmaCoreTestResult => ({
  id: 'tests.test_cq.CQTest.test_resize_cq',
  device: 'rxe0',
  outcome: 'error',
  message: 'PyverbsError: Got timeout on polling (1 CQEs remaining)',
  seconds: 1,
  ...over,
});

describe('judgeTests', () => {
  it('explains the recorded failure on rxe and leaves passes and skips as they are', () => {
    const [resize, pass, skip] = judgeTests(
      [
        result({}),
        result({ id: 'tests.test_pd.PDTest.test_alloc_pd', outcome: 'pass' }),
        result({ id: 'tests.test_odp.X.y', outcome: 'skip', reason: 'no ODP' }),
      ],
      RXE_612,
    );
    expect(resize?.verdict).toBe('known');
    expect(resize?.explainedBy).toBe('rxe-resize-cq-completions-late');
    expect(pass?.verdict).toBe('pass');
    expect(skip?.verdict).toBe('skip');
    expect(skip?.reason).toBe('no ODP');
  });

  it('a failure no record explains is a finding: other provider, other message, other test', () => {
    const verdicts = [
      judgeTests([result({ device: 'siw0' })], { ...RXE_612, provider: 'siw' }),
      judgeTests([result({ message: 'AssertionError: 3 != 4' })], RXE_612),
      judgeTests([result({ id: 'tests.test_qp.QPTest.test_create_rc_qp' })], RXE_612),
      judgeTests([result({})], { ...RXE_612, rdmaCore: '44.0' }),
    ].map((r) => r[0]?.verdict);
    expect(verdicts).toEqual(['finding', 'finding', 'finding', 'finding']);
    expect(testPassed('finding')).toBe(false);
  });

  it('a record in scope whose test passed is stale and fails', () => {
    const [t] = judgeTests([result({ outcome: 'pass', message: undefined })], RXE_612);
    expect(t?.verdict).toBe('stale');
    expect(t?.explainedBy).toBe('rxe-resize-cq-completions-late');
    expect(testPassed('stale')).toBe(false);
  });

  it('tries records in table order and honours the kernel range', () => {
    const records: BehaviourRecord[] = [
      {
        id: 'before-7',
        provider: 'rxe',
        kernel: { from: '6.1', before: '7' },
        scope: ['tests.a.*'],
        observed: { outcome: 'fail' },
        why: 'test',
        class: 'allowed',
        rule: 'ibv_poll_cq(3)',
      },
      {
        id: 'any',
        provider: 'rxe',
        kernel: { from: '6.1' },
        scope: ['tests.a.*'],
        observed: { outcome: 'fail' },
        why: 'test',
        class: 'allowed',
        rule: 'ibv_poll_cq(3)',
      },
    ];
    const judge = (kernel: string) =>
      judgeTests(
        [result({ id: 'tests.a.B.c', outcome: 'fail' })],
        { ...RXE_612, kernel },
        records,
      )[0]?.explainedBy;
    expect(judge('6.12.95+deb12-amd64')).toBe('before-7');
    expect(judge('7.3.4+deb13-amd64')).toBe('any');
  });

  it('every record names its source and scopes rdma-core test ids', () => {
    for (const k of RDMA_CORE_TEST_RECORDS) {
      expect(
        k.scope.every((s) => s.startsWith('tests.test_')),
        k.id,
      ).toBe(true);
      expect(k.why, k.id).toMatch(/\.(c|py):\d+/);
      expect(Object.keys(k.observed ?? {}), k.id).toContain('outcome');
    }
  });
});
