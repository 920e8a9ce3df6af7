import { describe, expect, it } from 'vitest';
import { expectedOutcome } from '../../../src/interop/expected.js';
import type { KnownBehaviour } from '../../../src/interop/known-behaviour.js';
import { KNOWN_BEHAVIOUR } from '../../../src/interop/known-behaviour.js';
import { judge } from '../../../src/interop/runner.js';
import type { Outcome, Scenario } from '../../../src/interop/scenario.js';
import { SCENARIOS } from '../../../src/interop/scenarios.js';

function scenario(id: string): Scenario {
  const found = SCENARIOS.find((s) => s.id === id);
  if (found === undefined) throw new Error(`no scenario ${id}`);
  return found;
}

describe('the reference side of the scenarios (engine projection)', () => {
  it('FetchAdd on RoCE: old value fetched, exact sum in memory', () => {
    const outcome = expectedOutcome(scenario('rxe-fetch-add'));
    expect(outcome).toMatchObject({
      post: 'ok',
      requesterStatus: 'SUCCESS',
      requesterOpcode: 'FETCH_ADD',
      fetched: 0x0123456789abcdefn,
      memoryAfter: 0x0123456789abcdefn + 0x1111111122222222n,
      requesterQpState: 'RTS',
    });
  });

  it('FetchAdd wraps at 2^64 to exactly zero', () => {
    expect(expectedOutcome(scenario('rxe-fetch-add-wrap')).memoryAfter).toBe(0n);
  });

  it('CmpSwap swaps only when all 64 bits match', () => {
    expect(expectedOutcome(scenario('rxe-cmp-swap-match')).memoryAfter).toBe(0x0fedcba987654321n);
    expect(expectedOutcome(scenario('rxe-cmp-swap-mismatch')).memoryAfter).toBe(
      0x0123456789abcdefn,
    );
  });

  it('misaligned atomic on RoCE: NAK Invalid Request, memory untouched, QP in error', () => {
    expect(expectedOutcome(scenario('rxe-misaligned-ex'))).toMatchObject({
      requesterStatus: 'REM_INV_REQ_ERR',
      memoryAfter: 0x0123456789abcdefn,
      requesterQpState: 'ERR',
    });
  });

  it('MR without REMOTE_ATOMIC on RoCE: NAK Remote Access Error', () => {
    expect(expectedOutcome(scenario('rxe-no-remote-atomic')).requesterStatus).toBe(
      'REM_ACCESS_ERR',
    );
  });

  it('write with immediate: the responder sees the immediate in host order', () => {
    expect(expectedOutcome(scenario('rxe-write-imm'))).toMatchObject({
      responderOpcode: 'RECV_RDMA_WITH_IMM',
      responderImm: 0x12345678,
      memoryAfter: 0x8877665544332211n,
    });
  });

  it('Send with Immediate cannot be expressed in RFC 7306 (only in the V2 draft)', () => {
    expect(expectedOutcome(scenario('siw-send-imm')).post).toBe('not-expressible');
  });
});

describe('judging engine against kernel', () => {
  const fetchAdd = scenario('rxe-fetch-add');
  const engine = expectedOutcome(fetchAdd);

  it('equal outcomes match', () => {
    expect(judge(fetchAdd, engine, { ...engine }).verdict).toBe('match');
  });

  it('a byte-swapped fetched value is a divergence naming the field', () => {
    const swapped: Outcome = { ...engine, fetched: 0xefcdab8967452301n };
    const result = judge(fetchAdd, engine, swapped, []);
    expect(result.verdict).toBe('divergence');
    expect(result.differences).toEqual([
      { field: 'fetched', engine: '0x0123456789abcdef', kernel: '0xefcdab8967452301' },
    ]);
  });

  const refused: KnownBehaviour = {
    id: 'test-refusal',
    scenarios: [fetchAdd.id],
    field: 'post',
    kernel: 'EINVAL',
    why: 'test',
  };
  const refusedOutcome: Outcome = {
    post: 'EINVAL',
    memoryAfter: fetchAdd.initial,
    requesterQpState: engine.requesterQpState,
  };

  it('a recorded refusal explains its absent completion and untouched memory', () => {
    expect(judge(fetchAdd, engine, refusedOutcome, [refused]).verdict).toBe('known');
  });

  it('a refusal does not excuse memory that changed anyway', () => {
    const changed = { ...refusedOutcome, memoryAfter: 0x1n };
    expect(judge(fetchAdd, engine, changed, [refused]).verdict).toBe('divergence');
  });

  it('a recorded behaviour that did not happen is stale, and fails', () => {
    const result = judge(fetchAdd, engine, { ...engine }, [refused]);
    expect(result.verdict).toBe('divergence');
    expect(result.stale).toEqual([refused]);
  });
});

describe('the recorded provider behaviour', () => {
  it('names only scenarios that exist, under unique ids', () => {
    const ids = new Set(SCENARIOS.map((s) => s.id));
    for (const k of KNOWN_BEHAVIOUR) for (const s of k.scenarios) expect(ids).toContain(s);
    expect(new Set(KNOWN_BEHAVIOUR.map((k) => k.id)).size).toBe(KNOWN_BEHAVIOUR.length);
  });

  it('scenario ids are unique', () => {
    expect(new Set(SCENARIOS.map((s) => s.id)).size).toBe(SCENARIOS.length);
  });
});
