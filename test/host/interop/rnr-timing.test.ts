import { describe, expect, it } from 'vitest';
import { servedByRetry } from '../../../src/engine/session/rnr.js';
import { expectedOutcome } from '../../../src/interop/expected.js';
import { RNR_TIMER_MS, timerClass, transportTimeoutMs } from '../../../src/interop/rnr-timing.js';
import type { Scenario } from '../../../src/interop/scenario.js';
import { SCENARIOS } from '../../../src/interop/scenarios.js';

const byId = (id: string): Scenario => {
  const s = SCENARIOS.find((x) => x.id === id);
  if (s === undefined) throw new Error(`no scenario ${id}`);
  return s;
};

describe('RNR timing', () => {
  it('IBTA Table 45 and the transport timer', () => {
    expect(RNR_TIMER_MS).toHaveLength(32);
    expect(RNR_TIMER_MS[0]).toBe(655.36);
    expect(RNR_TIMER_MS[12]).toBe(0.64);
    expect(RNR_TIMER_MS[27]).toBe(122.88);
    expect(transportTimeoutMs(14)).toBeCloseTo(67.108864, 6);
    expect(transportTimeoutMs(20)).toBeCloseTo(4294.967296, 6);
  });

  it('classes a completion time against the scenario timers (655.36 ms RNR, 4.3 s transport)', () => {
    const s = byId('rxe-rnr-retry-3-late-recv');
    expect([5, 655.35, 655.36, 1300, 4294, 4295].map((ms) => timerClass(s, ms))).toEqual([
      'no-timer',
      'no-timer',
      'rnr-timer',
      'rnr-timer',
      'rnr-timer',
      'transport-timer',
    ]);
  });

  it('a late receive is found by the retry after it, if rnr_retry allows that many', () => {
    // The scenarios' timer: code 0, 655.36 ms; rnr_retry 3, 1 and 7 (without limit).
    const rnr = RNR_TIMER_MS[0] ?? 0;
    expect(byId('rxe-rnr-retry-3-late-recv')).toMatchObject({ minRnrTimer: 0, rnrRetry: 3 });
    expect(servedByRetry(300, rnr, 3)).toEqual({ served: true, atRetry: 1 });
    expect(servedByRetry(1900, rnr, 3)).toEqual({ served: true, atRetry: 3 });
    expect(servedByRetry(2000, rnr, 3)).toEqual({ served: false, atRetry: 4 });
    expect(servedByRetry(1000, rnr, 1)).toEqual({ served: false, atRetry: 2 });
    expect(servedByRetry(10_000, rnr, 7)).toEqual({ served: true, atRetry: 16 });
  });

  it('the engine side predicts status and timer class of each RNR program', () => {
    const fields = (id: string) => expectedOutcome(byId(id)).fields;
    expect(fields('rxe-rnr-retry-3-late-recv')).toMatchObject({
      'requester.wc1.status': 'SUCCESS',
      'requester.wc1.timer': 'rnr-timer',
      'responder.wc1.wr': 'recv1',
    });
    expect(fields('rxe-rnr-retry-1-too-late')).toMatchObject({
      'requester.wc1.status': 'RNR_RETRY_EXC_ERR',
      'requester.wc1.timer': 'rnr-timer',
      'responder.wc1.status': 'none',
      'q1.requester.state': 'ERR',
      'q2.responder.state': 'RTS',
    });
    expect(fields('rxe-send-no-recv')).toMatchObject({
      'requester.wc1.status': 'RNR_RETRY_EXC_ERR',
      'requester.wc1.timer': 'no-timer',
    });
    // iWARP has no RNR: the Send completes locally, the Terminate ends the stream.
    expect(fields('siw-send-no-recv')).toMatchObject({
      'requester.wc1.status': 'SUCCESS',
      'requester.wc1.timer': 'no-timer',
    });
  });

  it('concurrency across processes is predicted like concurrency across QPs', () => {
    expect(expectedOutcome(byId('rxe-concurrent-fetch-add-processes')).fields).toMatchObject({
      'hammer1.post': 'ok',
      'hammer1.succeeded': '3000',
      'hammer1.distinct': '3000',
      'hammer1.sequence': 'every intermediate sum once',
      'mem[8]': '0x0123456789abd9a7',
    });
  });
});
