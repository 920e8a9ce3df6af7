import { describe, expect, it } from 'vitest';
import { expectedOutcome } from '../../../src/interop/expected.js';
import { FAULT_LINK_SCENARIOS } from '../../../src/interop/link/fault-scenarios.js';
import { LINK_SCENARIOS } from '../../../src/interop/link/scenarios.js';
import { judge } from '../../../src/interop/runner.js';
import type { Outcome, Scenario } from '../../../src/interop/scenario.js';
import { SCENARIOS } from '../../../src/interop/scenarios.js';
import type { BehaviourRecord, Environment } from '../../../src/judge/record.js';
import { coversScenario } from '../../../src/judge/record.js';
import { KNOWN_BEHAVIOUR } from '../../../src/judge/records/index.js';

function scenario(id: string): Scenario {
  const found = SCENARIOS.find((s) => s.id === id);
  if (found === undefined) throw new Error(`no scenario ${id}`);
  return found;
}

const RXE_BOOKWORM: Environment = { provider: 'rxe', kernel: '6.1.0-56-amd64', rdmaCore: '44.0-2' };

describe('the reference side of the scenarios (engine projection of the program)', () => {
  it('FetchAdd on RoCE: old value fetched, exact sum in memory, guards untouched', () => {
    const { fields } = expectedOutcome(scenario('rxe-fetch-add'));
    expect(fields).toMatchObject({
      post1: 'ok',
      'requester.wc1.wr': 'wr1',
      'requester.wc1.status': 'SUCCESS',
      'requester.wc1.opcode': 'FETCH_ADD',
      'requester.wc1.byte_len': '8',
      'requester.wc1.fetched': '0x0123456789abcdef',
      'responder.wc1.status': 'none',
      'mem[8]': `0x${(0x0123456789abcdefn + 0x1111111122222222n).toString(16).padStart(16, '0')}`,
      'q1.requester.state': 'RTS',
      'q2.responder.state': 'RTS',
    });
    expect(fields['mem[-8]']).toBe('0x5a000000000000a5');
    expect(fields['mem[32]']).toBe('0x5a002800000000cd');
  });

  it('FetchAdd wraps at 2^64 to exactly zero; add 0 leaves the word', () => {
    expect(expectedOutcome(scenario('rxe-fetch-add-wrap')).fields['mem[8]']).toBe(
      '0x0000000000000000',
    );
    expect(expectedOutcome(scenario('rxe-fetch-add-zero')).fields['mem[8]']).toBe(
      '0x0123456789abcdef',
    );
  });

  it('CmpSwap swaps only when all 64 bits match', () => {
    expect(expectedOutcome(scenario('rxe-cmp-swap-match')).fields['mem[8]']).toBe(
      '0x0fedcba987654321',
    );
    expect(expectedOutcome(scenario('rxe-cmp-swap-mismatch')).fields['mem[8]']).toBe(
      '0x0123456789abcdef',
    );
  });

  it('a burst beyond initiator depth 1 completes in order with chained fetched values', () => {
    const { fields } = expectedOutcome(scenario('rxe-atomic-burst'));
    let value = 0x0123456789abcdefn;
    for (let i = 1; i <= 6; i++) {
      expect(fields[`requester.wc${i}.wr`]).toBe(`wr${i}`);
      expect(fields[`requester.wc${i}.fetched`]).toBe(`0x${value.toString(16).padStart(16, '0')}`);
      value = (value + 0x1111111122222222n * BigInt(i)) & 0xffff_ffff_ffff_ffffn;
    }
    expect(fields['mem[8]']).toBe(`0x${value.toString(16).padStart(16, '0')}`);
  });

  it('misaligned atomic on RoCE: NAK Invalid Request, both QPs in error, a later post flushed', () => {
    expect(expectedOutcome(scenario('rxe-misaligned-ex')).fields).toMatchObject({
      'requester.wc1.status': 'REM_INV_REQ_ERR',
      'mem[12]': '0x0123456789abcdef',
      'q1.requester.state': 'ERR',
      'q2.responder.state': 'ERR',
      'requester.wc2.status': 'WR_FLUSH_ERR',
    });
  });

  it('access errors: the MR right, the rkey, the bounds are Remote Access Errors', () => {
    for (const id of ['rxe-no-remote-atomic', 'rxe-atomic-invalid-rkey', 'rxe-atomic-past-end'])
      expect(expectedOutcome(scenario(id)).fields['requester.wc1.status'], id).toBe(
        'REM_ACCESS_ERR',
      );
  });

  it('the QP enable (at bring-up or removed at RTS, atomic or flush) is an Invalid Request, as rxe check_op_valid answers', () => {
    for (const id of [
      'rxe-qp-no-atomic',
      'rxe-qp-atomic-removed',
      'rxe-qp-no-atomic-ex',
      'rxe-flush-qp-no-enable-ex',
    ])
      expect(expectedOutcome(scenario(id)).fields, id).toMatchObject({
        'requester.wc1.status': 'REM_INV_REQ_ERR',
        'q1.requester.state': 'ERR',
        'q2.responder.state': 'ERR',
      });
  });

  it('an Atomic Response the iWARP requester cannot place ends the stream with its Terminate (RFC 7306 §8.1 item 1)', () => {
    const fields = expectedOutcome(scenario('siw-atomic-invalid-lkey')).fields;
    expect(fields['requester.wc1.status']).toBe('LOC_PROT_ERR');
    expect(fields.wire?.split('\n').at(-1)).toBe(
      'requester> terminate qn=2 msn=1 mo=0 L layer=0 type=0 code=0x00 hdrct=---',
    );
    expect(fields['q2.responder.state']).toBe('ERR');
    expect(fields['responder.wc2.status']).toBe('WR_FLUSH_ERR');
  });

  it('write with immediate: the responder sees the immediate in host and network order', () => {
    expect(expectedOutcome(scenario('rxe-write-imm')).fields).toMatchObject({
      'responder.wc1.opcode': 'RECV_RDMA_WITH_IMM',
      'responder.wc1.flags': 'WITH_IMM',
      'responder.wc1.imm': '0x12345678',
      'responder.wc1.imm_raw': '0x78563412',
      'mem[8]': '0x8877665544332211',
    });
    expect(expectedOutcome(scenario('rxe-write-imm-16')).fields).toMatchObject({
      'responder.wc1.byte_len': '16',
      'mem[16]': '0x778899aabbccddee',
    });
    expect(expectedOutcome(scenario('rxe-write-imm-0')).fields['responder.wc1.byte_len']).toBe('0');
  });

  it('no receive and rnr_retry 0: RNR retries exceeded, responder stays in RTS', () => {
    expect(expectedOutcome(scenario('rxe-send-imm-no-recv')).fields).toMatchObject({
      'requester.wc1.status': 'RNR_RETRY_EXC_ERR',
      'q1.requester.state': 'ERR',
      'q2.responder.state': 'RTS',
    });
  });

  it('Send with Immediate cannot be expressed in RFC 7306 (only in the V2 draft)', () => {
    expect(expectedOutcome(scenario('siw-send-imm')).fields.post1).toBe('not-expressible');
  });
});

describe('judging engine against device', () => {
  const fetchAdd = scenario('rxe-fetch-add');
  const engine = expectedOutcome(fetchAdd);
  const withFields = (extra: Record<string, string>): Outcome => ({
    fields: { ...engine.fields, ...extra },
  });

  it('equal outcomes match', () => {
    expect(judge(fetchAdd, engine, withFields({}), RXE_BOOKWORM).verdict).toBe('match');
  });

  it('a byte-swapped fetched value fails, naming the field', () => {
    const result = judge(
      fetchAdd,
      engine,
      withFields({ 'requester.wc1.fetched': '0xefcdab8967452301' }),
      RXE_BOOKWORM,
      [],
    );
    expect(result.verdict).toBe('finding'); // no records at all: an unrecorded finding
    const recorded = judge(
      fetchAdd,
      engine,
      withFields({ 'requester.wc1.fetched': '0xefcdab8967452301' }),
      RXE_BOOKWORM,
    );
    expect(recorded.verdict).toBe('fail');
    expect(recorded.differences).toEqual([
      {
        field: 'requester.wc1.fetched',
        engine: '0x0123456789abcdef',
        kernel: '0xefcdab8967452301',
        explainedBy: undefined,
      },
    ]);
  });

  const refused: BehaviourRecord = {
    id: 'test-refusal',
    class: 'allowed',
    rule: 'ibv_post_send(3)',
    provider: 'rxe',
    kernel: { from: '6.1', before: '6.2' },
    scope: ['rxe-fetch-add'],
    observed: { post1: 'EINVAL' },
    nothingHappened: true,
    why: 'test',
  };
  const refusedOutcome: Outcome = {
    fields: {
      post1: 'EINVAL',
      'requester.wc1.status': 'none',
      'responder.wc1.status': 'none',
      'q1.requester.state': 'RTS',
      'q2.responder.state': 'RTS',
      ...Object.fromEntries(Object.entries(engine.fields).filter(([k]) => k.startsWith('mem['))),
      'mem[8]': '0x0123456789abcdef',
    },
  };

  it('a recorded refusal explains its missing completion and untouched memory', () => {
    const result = judge(fetchAdd, engine, refusedOutcome, RXE_BOOKWORM, [refused]);
    expect(result.verdict).toBe('known');
    expect(result.differences.find((d) => d.field === 'mem[8]')?.explainedBy).toBe('consequence');
  });

  it('a refusal does not excuse memory that changed anyway', () => {
    const changed = { fields: { ...refusedOutcome.fields, 'mem[8]': '0x0000000000000001' } };
    expect(judge(fetchAdd, engine, changed, RXE_BOOKWORM, [refused]).verdict).toBe('fail');
  });

  it('a recorded behaviour whose field shows another value is stale, and fails', () => {
    const result = judge(fetchAdd, engine, withFields({}), RXE_BOOKWORM, [refused]);
    expect(result.verdict).toBe('fail');
    expect(result.stale).toEqual([refused]);
  });

  it('a record whose pattern names the engine value too is not stale when the engine value shows', () => {
    const timing: BehaviourRecord = {
      id: 'test-timing',
      class: 'allowed',
      rule: 'ibv_post_send(3)',
      provider: 'rxe',
      kernel: { from: '6.1' },
      scope: ['rxe-fetch-add'],
      observed: { 'requester.wc1.status': /^(SUCCESS|LOC_QP_OP_ERR)$/ },
      why: 'test',
    };
    const asEngine = judge(fetchAdd, engine, withFields({}), RXE_BOOKWORM, [timing]);
    expect({ verdict: asEngine.verdict, stale: asEngine.stale }).toEqual({
      verdict: 'match',
      stale: [],
    });
    const shown = judge(
      fetchAdd,
      engine,
      withFields({ 'requester.wc1.status': 'LOC_QP_OP_ERR' }),
      RXE_BOOKWORM,
      [timing],
    );
    expect(shown.verdict).toBe('known');
    // A third value is neither: the record is stale and the difference unexplained.
    const other = judge(
      fetchAdd,
      engine,
      withFields({ 'requester.wc1.status': 'WR_FLUSH_ERR' }),
      RXE_BOOKWORM,
      [timing],
    );
    expect({ verdict: other.verdict, stale: other.stale.map((k) => k.id) }).toEqual({
      verdict: 'fail',
      stale: ['test-timing'],
    });
  });

  it('records apply only to their provider and kernel line', () => {
    const newer: Environment = { ...RXE_BOOKWORM, kernel: '6.12.48-amd64' };
    const result = judge(fetchAdd, engine, refusedOutcome, newer, [refused]);
    expect(result.findings).toEqual([]);
    expect(result.verdict).toBe('finding');
  });
});

describe('the recorded provider behaviour', () => {
  it('every record names at least one scenario that exists, on its provider', () => {
    for (const k of KNOWN_BEHAVIOUR) {
      // The two-guest wire scenarios (src/interop/link/) are named `link-<provider>-...`.
      // Matched as the judge matches them (picomatch globs, extglobs included).
      const covered = [...SCENARIOS, ...LINK_SCENARIOS, ...FAULT_LINK_SCENARIOS].filter((s) =>
        coversScenario(k, s.id),
      );
      expect(covered.length, k.id).toBeGreaterThan(0);
      // A variant (`siw+rfc7306`) runs its base provider's scenarios.
      for (const s of covered)
        expect(s.id.replace(/^link-/, '').startsWith(k.provider.split('+')[0] ?? ''), k.id).toBe(
          true,
        );
    }
  });

  it('ids are unique, and so are scenario ids', () => {
    expect(new Set(KNOWN_BEHAVIOUR.map((k) => k.id)).size).toBe(KNOWN_BEHAVIOUR.length);
    expect(new Set(SCENARIOS.map((s) => s.id)).size).toBe(SCENARIOS.length);
  });
});
