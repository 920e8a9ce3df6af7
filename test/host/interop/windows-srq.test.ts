/**
 * What the engine predicts for the memory-window and SRQ scenarios (issue 23), value by
 * value: these are the fields the devices are compared against.
 */
import { describe, expect, it } from 'vitest';
import { ArgumentError } from '../../../src/errors.js';
import { expectedOutcome } from '../../../src/interop/expected.js';
import { judge } from '../../../src/interop/runner.js';
import type { Scenario } from '../../../src/interop/scenario.js';
import { SCENARIOS } from '../../../src/interop/scenarios.js';

function scenario(id: string): Scenario {
  const found = SCENARIOS.find((s) => s.id === id);
  if (found === undefined) throw new Error(`no scenario ${id}`);
  return found;
}

const fields = (id: string) => expectedOutcome(scenario(id)).fields;

/** The responder MR's target word before the program (scenarios.ts WORD). */
const WORD = '0x0123456789abcdef';
const PAYLOAD = '0x8877665544332211';

describe('memory-window scenarios on the engine', () => {
  it('windows are rxe rows only, through both post APIs (siw has no windows)', () => {
    const ids = SCENARIOS.filter((s) => s.family === 'memory-windows').map((s) => s.id);
    expect(ids).toHaveLength(14);
    expect(ids.filter((id) => id.endsWith('-ex'))).toHaveLength(7);
    expect(ids.every((id) => id.startsWith('rxe-mw'))).toBe(true);
  });

  for (const id of ['rxe-mw1-write-read', 'rxe-mw2-write-read', 'rxe-mw1-other-qp']) {
    it(`${id}: the Write lands through the window, the Read brings it back`, () => {
      expect(fields(id)).toMatchObject({
        bind1: 'ok',
        'bind1.status': 'SUCCESS',
        post1: 'ok',
        'requester.wc1.status': 'SUCCESS',
        'requester.wc1.opcode': 'RDMA_WRITE',
        'requester.wc2.status': 'SUCCESS',
        'requester.wc2.opcode': 'RDMA_READ',
        'requester.wc2.fetched': PAYLOAD,
        'q1.requester.state': 'RTS',
        'q2.responder.state': 'RTS',
        'mem[8]': PAYLOAD,
      });
    });
  }

  it('a Write inside the MR but outside the window is a remote access error', () => {
    expect(fields('rxe-mw2-outside-window')).toEqual({
      bind1: 'ok',
      'bind1.status': 'SUCCESS',
      post1: 'ok',
      'requester.wc1.wr': 'wr1',
      'requester.wc1.status': 'REM_ACCESS_ERR',
      'requester.wc1.vendor_err': '0',
      'q1.requester.state': 'ERR',
      'q2.responder.state': 'ERR',
      'mem[-8]': '0x5a000000000000a5',
      'mem[0]': '0x5a000800000000ad',
      'mem[8]': WORD,
      'mem[16]': '0x5a001800000000bd',
      'mem[24]': '0x5a002000000000c5',
      'mem[32]': '0x5a002800000000cd',
    });
  });

  it('a type 2 window bound on the requester QP is refused on the responder QP (REM_ACCESS_ERR)', () => {
    expect(fields('rxe-mw2-other-qp')).toMatchObject({
      bind1: 'ok',
      'bind1.status': 'SUCCESS',
      'requester.wc1.status': 'REM_ACCESS_ERR',
      'responder.wc1.status': 'none',
      'q1.requester.state': 'ERR',
      'q2.responder.state': 'ERR',
      'requester.wc2.status': 'WR_FLUSH_ERR',
      'responder.wc2.status': 'WR_FLUSH_ERR',
      'mem[8]': WORD,
    });
  });

  it('after LOCAL_INV the window rkey is a remote access error and the word keeps the first Write', () => {
    expect(fields('rxe-mw2-invalidated')).toMatchObject({
      'requester.wc1.status': 'SUCCESS',
      inv1: 'ok',
      'inv1.status': 'SUCCESS',
      'requester.wc2.status': 'REM_ACCESS_ERR',
      'q1.requester.state': 'ERR',
      'q2.responder.state': 'ERR',
      'mem[8]': PAYLOAD,
    });
  });

  it('Send with Invalidate: the receive says WITH_INV and names the window, a later Write fails', () => {
    const f = fields('rxe-mw2-send-with-inv-ex');
    expect(f).toMatchObject({
      'requester.wc1.opcode': 'SEND',
      'responder.wc1.wr': 'recv1',
      'responder.wc1.opcode': 'RECV',
      'responder.wc1.byte_len': '8',
      'responder.wc1.flags': 'WITH_INV',
      'responder.wc1.inv_rkey': 'window',
      'requester.wc2.status': 'REM_ACCESS_ERR',
      'q1.requester.state': 'ERR',
      'q2.responder.state': 'ERR',
      'mem[8]': PAYLOAD,
    });
    // Only a program that invalidates remotely reports the rkey.
    expect(fields('rxe-send')).not.toHaveProperty('responder.wc1.inv_rkey');
  });

  it('refuses a local invalidation without a type 2 window (IBTA 1.5 o10-37.2.26)', () => {
    const bad: Scenario = {
      ...scenario('rxe-mw2-invalidated'),
      program: [
        { do: 'bind-mw', type: 1, side: 'responder' },
        { do: 'local-invalidate', side: 'responder' },
      ],
    };
    expect(() => expectedOutcome(bad)).toThrow(ArgumentError);
  });
});

describe('SRQ scenarios on the engine', () => {
  it('run on rxe (both APIs) and siw', () => {
    expect(SCENARIOS.filter((s) => s.family === 'srq').map((s) => s.id)).toEqual([
      'rxe-srq-two-qps',
      'rxe-srq-limit',
      'rxe-srq-two-qps-ex',
      'rxe-srq-limit-ex',
      'siw-srq-two-qps',
      'siw-srq-limit',
    ]);
  });

  it('two QPs take the SRQ receives in posting order, each completion naming its QP', () => {
    const f = fields('siw-srq-two-qps');
    const receives = [1, 2, 3, 4].map((n) => [
      f[`responder.wc${n}.wr`],
      f[`responder.wc${n}.qp`],
      f[`responder.wc${n}.status`],
    ]);
    expect(receives).toEqual([
      ['recv1', 'first', 'SUCCESS'],
      ['recv2', 'second', 'SUCCESS'],
      ['recv3', 'second', 'SUCCESS'],
      ['recv4', 'first', 'SUCCESS'],
    ]);
    // The four receives sit over the same word: the last Send's payload stays.
    expect(f['mem[8]']).toBe('0xf1d3456789abc2e0');
    expect(f).not.toHaveProperty('wire');
  });

  it('refuses SRQ steps and the second QP in a scenario without an SRQ', () => {
    const { srq: _, ...base } = scenario('rxe-srq-limit');
    for (const step of [
      { do: 'srq-limit', limit: 2 },
      { do: 'srq-event', timeoutMs: 300 },
      { do: 'post-send', wrs: [{ kind: 'SEND', payload: 1n }], qp: 'second' },
    ] as const)
      expect(() => expectedOutcome({ ...base, program: [step] })).toThrow(ArgumentError);
  });

  it('the limit event comes when fewer than the limit remain, once, and disarms it', () => {
    expect(fields('rxe-srq-limit')).toMatchObject({
      srqLimit1: 'ok',
      srqEvent1: 'none',
      'srqEvent1.limit': '2',
      srqEvent2: 'limit-reached',
      'srqEvent2.limit': '0',
      'responder.wc3.wr': 'recv3',
      'responder.wc3.qp': 'first',
    });
  });
});

/** The id of the record that explains a difference. */
function recordOf(explainedBy: unknown): unknown {
  return typeof explainedBy === 'object' && explainedBy !== null && 'id' in explainedBy
    ? explainedBy.id
    : explainedBy;
}

describe('the records of these scenarios, judged as the suite judges them', () => {
  const rxe61 = { provider: 'rxe', kernel: '6.1.0-56-amd64', rdmaCore: '44.0' };

  it('every SRQ receive on rxe carries GRH: known, and no record goes stale', () => {
    const s = scenario('rxe-srq-two-qps-ex');
    const engine = expectedOutcome(s);
    const device = { ...engine.fields };
    for (const n of [1, 2, 3, 4]) device[`responder.wc${n}.flags`] = 'GRH';
    const judged = judge(s, engine, { fields: device }, rxe61);
    expect(judged.verdict).toBe('known');
    expect(judged.stale).toEqual([]);
    expect(judged.differences.map((d) => [d.field, recordOf(d.explainedBy)])).toEqual([
      ['responder.wc1.flags', 'rxe-grh-on-rc-receive'],
      ['responder.wc2.flags', 'rxe-grh-on-srq-receive'],
      ['responder.wc3.flags', 'rxe-grh-on-srq-receive'],
      ['responder.wc4.flags', 'rxe-grh-on-srq-receive'],
    ]);
  });

  it("Send with Invalidate's flags are their own record's, not GRH's", () => {
    const s = scenario('rxe-mw2-send-with-inv');
    const engine = expectedOutcome(s);
    const device = { ...engine.fields, 'responder.wc1.flags': 'GRH|IP_CSUM_OK' };
    const judged = judge(s, engine, { fields: device }, rxe61);
    expect([judged.verdict, judged.stale]).toEqual(['known', []]);
    expect(recordOf(judged.differences[0]?.explainedBy)).toBe('rxe-with-inv-reads-ip-csum-ok');
    // WITH_INV read as it should be is no difference at all; a GRH flag alone is not
    // what this program's receive shows, and no record explains it.
    const grhOnly = judge(
      s,
      engine,
      { fields: { ...device, 'responder.wc1.flags': 'GRH' } },
      rxe61,
    );
    expect(grhOnly.verdict).toBe('fail');
  });
});
