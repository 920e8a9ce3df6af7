/**
 * Issue 31: one judge, with the stale rule in every runner. A record that holds and
 * scopes a result, whose explained values did not occur, fails that result: here in the
 * suite, the link, the RoCE tester and the iWARP tester (both roles), each with a record
 * whose behaviour stopped (the device answered as the engine).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LINK_SCENARIOS } from '../../../src/interop/link/scenarios.js';
import { judge } from '../../../src/interop/runner.js';
import { SCENARIOS } from '../../../src/interop/scenarios.js';
import { verdictOf } from '../../../src/judge/judge.js';
import type { BehaviourRecord, Environment } from '../../../src/judge/record.js';
import type { Assertion } from '../../../src/probe/assertion.js';
import { IWARP_ASSERTIONS } from '../../../src/probe/iwarp-assertions.js';
import { engineIwarpAnswer, judgeIwarp } from '../../../src/probe/iwarp-expect.js';
import { judgeResponder } from '../../../src/probe/iwarp-run.js';
import { judgeRoce, type RoceRunEnvironment } from '../../../src/probe/roce-responder-run.js';

const RXE_61: Environment = { provider: 'rxe', kernel: '6.1.0-56-amd64', rdmaCore: '44.0' };

describe('the one verdict rule (judge/judge.ts)', () => {
  it('match, known, finding, fail: a stale record fails even where nothing differs', () => {
    const v = (differences: number, unexplained: number, stale: number, recorded = true) =>
      verdictOf({ differences, unexplained, stale, recorded });
    expect([
      v(0, 0, 0),
      v(2, 0, 0),
      v(2, 1, 0),
      v(2, 1, 0, false),
      v(0, 0, 1),
      v(0, 0, 1, false),
    ]).toEqual(['match', 'known', 'fail', 'finding', 'fail', 'finding']);
  });
});

describe('a record that stopped happening fails the run, in every runner', () => {
  it('the suite', () => {
    const scenario = SCENARIOS.find((s) => s.id === 'rxe-fetch-add');
    if (scenario === undefined) throw new Error('no rxe-fetch-add');
    const record: BehaviourRecord = {
      id: 'test-stopped',
      class: 'allowed',
      rule: 'ibv_post_send(3)',
      provider: 'rxe',
      kernel: { from: '6.1' },
      scope: ['rxe-fetch-add'],
      observed: { 'requester.wc1.status': 'LOC_PROT_ERR' },
      why: 'test',
    };
    const engine = {
      fields: { 'requester.wc1.status': 'SUCCESS', 'mem[8]': '0x0123456789abcdef' },
    };
    const judged = judge(scenario, engine, engine, RXE_61, [record]);
    expect({ verdict: judged.verdict, stale: judged.stale.map((k) => k.id) }).toEqual({
      verdict: 'fail',
      stale: ['test-stopped'],
    });
    expect(judge(scenario, engine, engine, RXE_61, []).verdict).toBe('match');
  });

  it('the link: a recorded pair whose device answers as the engine', () => {
    interface Recorded {
      readonly id: string;
      readonly pair: { readonly requester: Environment; readonly responder: Environment };
      readonly engine: Record<string, string>;
    }
    const fixture = join(process.cwd(), 'test', 'fixtures', 'link', 'pairs-siw.json');
    const recorded = (JSON.parse(readFileSync(fixture, 'utf8')) as { scenarios: Recorded[] })
      .scenarios;
    const fetchAdd = recorded.find((r) => r.id === 'link-siw-fetch-add');
    const scenario = LINK_SCENARIOS.find((s) => s.id === 'link-siw-fetch-add');
    if (fetchAdd === undefined || scenario === undefined) throw new Error('no link-siw-fetch-add');
    const asEngine = { fields: fetchAdd.engine };
    const judged = judge(
      scenario,
      asEngine,
      asEngine,
      fetchAdd.pair.requester,
      undefined,
      fetchAdd.pair.responder,
    );
    expect(judged.verdict).toBe('fail');
    expect(judged.stale.map((k) => k.id)).toContain('siw-peer-terminate-flushes-requester');
  });

  it('the RoCE tester: equal JSON with a record in scope fails; outside its kernels it matches', () => {
    const assertion = {
      id: 'roce-requester-no-answer-retry-7',
      spec: 'IBTA',
      provider: 'rxe',
      testerRole: 'responder',
      title: 't',
      hostile: false,
    } satisfies Assertion;
    const env = (kernel: string) => ({ kernel }) as unknown as RoceRunEnvironment;
    const same = { transmissions: 8, completion: 'RETRY_EXC_ERR', qpState: 'ERR' };
    const stale = judgeRoce(assertion, env('7.3.4+deb13-amd64'), same, same, undefined);
    expect([stale.verdict, stale.note]).toEqual([
      'fail',
      'the device did what the engine predicts, but a record in scope did not happen (stale): rxe-retry-cnt-7-is-infinite',
    ]);
    // As recorded: retransmitted for ever, no completion, QP in RTS.
    const rxe = { transmissions: 40, completion: null, qpState: 'RTS' };
    expect(judgeRoce(assertion, env('7.3.4+deb13-amd64'), same, rxe, undefined)).toMatchObject({
      verdict: 'known',
      known: 'rxe-retry-cnt-7-is-infinite',
    });
    // rxe-no-atomic-write-before-6.2 holds before 6.2 only: from 6.2 equal JSON matches.
    const write = { ...assertion, id: 'roce-responder-atomic-write-zero-length' };
    const steps = { steps: [], qpState: 'RTS' };
    expect(judgeRoce(write, env('6.1.0-56-amd64'), steps, steps, undefined).verdict).toBe('fail');
    expect(judgeRoce(write, env('7.3.4+deb13-amd64'), steps, steps, undefined).verdict).toBe(
      'match',
    );
  });

  it('the iWARP tester, siw as Responder: the engine-derived answer did not occur', () => {
    const a = IWARP_ASSERTIONS.find((x) => x.id === 'siw-mpa-bad-crc');
    if (a === undefined) throw new Error('no siw-mpa-bad-crc');
    const engine = engineIwarpAnswer(
      a,
      { stag: 0x1a2b3c00, address: 0x00007f0012345600n },
      { crc: true, markers: false },
      'stock',
    );
    const judged = judgeIwarp(a, 'stock', engine.answer, engine.terminates, engine.answer);
    expect(judged).toEqual({ verdict: 'fail', known: [] });
  });

  it('the iWARP tester, siw as Requester: the recorded flush did not occur', () => {
    const request = ['requester> read-request'];
    const run = (status: string) => ({
      observed: { request, answer: [], status },
      expected: { request, answer: [], status: 'REM_OP_ERR' },
    });
    const id = 'siw-requester-terminate-on-read';
    expect(judgeResponder(id, 'stock', '7.3.4', run('REM_OP_ERR')).verdict).toBe('fail');
    const known = judgeResponder(id, 'rfc7306', '7.3.4', run('WR_FLUSH_ERR'));
    expect([known.verdict, known.known?.id]).toEqual(['known', 'siw-terminate-flushes-requester']);
    expect(judgeResponder(id, 'stock', '7.3.4', run('LOC_QP_OP_ERR')).verdict).toBe('fail');
  });
});
