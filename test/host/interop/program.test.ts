import { describe, expect, it } from 'vitest';
import {
  COMPLETION_TIMEOUT_MS,
  GRACE_MS,
  type ImmediateSide,
  type Polled,
  runProgram,
  runProgramNow,
} from '../../../src/interop/program.js';
import { initialBuffer, type Scenario, type Side } from '../../../src/interop/scenario.js';

// The interpreter on a scripted side: what it asks the side, and the fields it names.

const BASE: Omit<Scenario, 'program'> = {
  id: 'test-program',
  name: 'program',
  title: 'program',
  family: 'basic',
  device: 'rxe0',
  postPath: 'legacy',
  initial: 0x0123456789abcdefn,
  remoteAccess: ['LOCAL_WRITE', 'REMOTE_WRITE'],
  captureWire: false,
};

/** A side that accepts the first request of each post only and has one completion. */
function scriptedSide(calls: string[]): ImmediateSide {
  const completions: Record<Side, Polled[]> = {
    requester: [
      {
        completion: {
          wrId: 0x5701n,
          status: 'SUCCESS',
          opcode: 'RDMA_WRITE',
          byteLen: 0,
          flags: [],
          imm: undefined,
          immRaw: undefined,
          vendorErr: 0,
        },
        fetched: () => undefined,
      },
    ],
    responder: [],
  };
  return {
    postSend: (side, wrs, first) => {
      calls.push(`postSend ${side} ${wrs.length} from ${first}`);
      return wrs.length > 1 ? { result: 'EINVAL', badWr: 1 } : { result: 'ok' };
    },
    postRecv: (index, use, qp) => {
      calls.push(`postRecv ${index} ${use}${qp === 'first' ? '' : ` ${qp}`}`);
    },
    nextCompletion: (side, timeoutMs, qp) => {
      calls.push(`nextCompletion ${side} ${timeoutMs}${qp === 'first' ? '' : ` ${qp}`}`);
      return completions[side].shift();
    },
    timerOf: (side) => {
      calls.push(`timerOf ${side}`);
      return { timer: 'rnr-timer', evidence: 'rcvd_rnr_err +2' };
    },
    queryState: (side) => (side === 'requester' ? 'RTS' : 'ERR'),
    modify: () => 'EINVAL',
    sleep: (ms) => {
      calls.push(`sleep ${ms}`);
    },
    armSolicited: (side, timeoutMs) => {
      calls.push(`armSolicited ${side} ${timeoutMs}`);
    },
    // Woken on the requester's CQ only: the two answers name different fields.
    cqEvent: (side) => {
      calls.push(`cqEvent ${side}`);
      return side === 'requester';
    },
    hammer: () => ({ post: 'ok', succeeded: 2, fetched: [1n, 2n], before: 1n }),
    // The bind succeeds without a completion, the invalidation is refused.
    bindMw: ({ type, side }, index) => {
      calls.push(`bindMw ${type} ${side} ${index}`);
      return { result: 'ok' };
    },
    localInvalidate: (side, index) => {
      calls.push(`localInvalidate ${side} ${index}`);
      return { result: 'EINVAL' };
    },
    srqLimit: (limit) => {
      calls.push(`srqLimit ${limit}`);
      return 'ok';
    },
    // The first reregistration is refused, the second succeeds.
    reregMr: (access) => {
      calls.push(`reregMr ${access.join('|')}`);
      return calls.filter((c) => c.startsWith('reregMr')).length === 1 ? 'EOPNOTSUPP' : 'ok';
    },
    // Attaches succeed, detaches are refused.
    mcast: (step) => {
      calls.push(`${step.do} ${step.group} ${step.qp ?? 'first'}`);
      return step.do === 'attach-mcast' ? 'ok' : 'EINVAL';
    },
    // The event comes at the first wait only; the limit then reads 0 (disarmed).
    srqEvent: (timeoutMs) => {
      calls.push(`srqEvent ${timeoutMs}`);
      const reached = calls.filter((c) => c.startsWith('srqEvent')).length === 1;
      return { reached, limit: reached ? '0' : 'EOPNOTSUPP' };
    },
    memory: () => initialBuffer({ ...BASE, program: [] }),
    wire: () => undefined,
  };
}

const SCENARIO: Scenario = {
  ...BASE,
  program: [
    { do: 'post-recv', for: 'send' },
    {
      do: 'post-send',
      wrs: [
        { kind: 'RDMA_WRITE', payload: 1n },
        { kind: 'RDMA_WRITE', payload: 2n },
      ],
    },
    { do: 'wait', side: 'requester', count: 3 },
    { do: 'sleep', ms: 5 },
    { do: 'query', side: 'responder' },
    { do: 'modify', side: 'responder', access: ['REMOTE_READ'] },
  ],
};

describe('the scenario interpreter', () => {
  it('names the refused request, and waits for what was accepted, then the grace time', () => {
    const calls: string[] = [];
    const outcome = runProgramNow(SCENARIO, scriptedSide(calls));
    expect(calls).toEqual([
      'postRecv 0 send',
      'postSend requester 2 from 0',
      // bad_wr = the second request: the first was posted, so one completion can come.
      `nextCompletion requester ${COMPLETION_TIMEOUT_MS}`,
      `nextCompletion requester ${GRACE_MS}`,
      'sleep 5',
    ]);
    expect(outcome.fields).toMatchObject({
      post1: 'EINVAL',
      'post1.bad_wr': 'wr2',
      'requester.wc1.wr': 'wr1',
      'requester.wc1.status': 'SUCCESS',
      'requester.wc2.status': 'none',
      'requester.wc3.status': 'none',
      'q1.responder.state': 'ERR',
      modify1: 'EINVAL',
      'mem[8]': '0x0123456789abcdef',
    });
    expect(outcome.fields).not.toHaveProperty('wire');
  });

  it("asks the side for the timer class of a timed wait's completion, and of none that did not come", () => {
    const calls: string[] = [];
    const timed: Scenario = {
      ...BASE,
      program: [
        { do: 'post-send', wrs: [{ kind: 'RDMA_WRITE', payload: 1n }] },
        { do: 'wait', side: 'requester', count: 2, timed: true },
      ],
    };
    const outcome = runProgramNow(timed, scriptedSide(calls));
    expect(calls).toEqual([
      'postSend requester 1 from 0',
      `nextCompletion requester ${COMPLETION_TIMEOUT_MS}`,
      'timerOf requester',
      `nextCompletion requester ${GRACE_MS}`,
    ]);
    expect(outcome.fields['requester.wc1.timer']).toBe('rnr-timer');
    expect(outcome.note).toBe('requester.wc1.timer: rcvd_rnr_err +2');
    expect(outcome.fields['requester.wc2.status']).toBe('none');
    expect(outcome.fields).not.toHaveProperty(['requester.wc2.timer']);
  });

  it('gives the same outcome through the asynchronous driver', async () => {
    const now = runProgramNow(SCENARIO, scriptedSide([]));
    await expect(runProgram(SCENARIO, scriptedSide([]))).resolves.toEqual(now);
  });

  it('arms before the post and names each event by its step and side', () => {
    const calls: string[] = [];
    const scenario: Scenario = {
      ...BASE,
      program: [
        { do: 'arm-solicited', side: 'responder', timeoutMs: 700 },
        { do: 'arm-solicited', side: 'requester', timeoutMs: 300 },
        { do: 'post-send', wrs: [{ kind: 'SEND', payload: 1n, solicited: true }] },
        { do: 'cq-event', side: 'responder' },
        { do: 'cq-event', side: 'requester' },
      ],
    };
    const outcome = runProgramNow(scenario, scriptedSide(calls));
    expect(calls).toEqual([
      'armSolicited responder 700',
      'armSolicited requester 300',
      'postSend requester 1 from 0',
      'cqEvent responder',
      'cqEvent requester',
    ]);
    expect(outcome.fields).toMatchObject({
      'event1.responder': 'none',
      'event2.requester': 'woken',
    });
  });

  it('numbers the window steps together and names their fields apart', () => {
    const calls: string[] = [];
    const scenario: Scenario = {
      ...BASE,
      program: [
        { do: 'bind-mw', type: 2, side: 'requester' },
        { do: 'local-invalidate', side: 'responder' },
        { do: 'bind-mw', type: 2, side: 'responder' },
      ],
    };
    const outcome = runProgramNow(scenario, scriptedSide(calls));
    expect(calls).toEqual([
      'bindMw 2 requester 0',
      'localInvalidate responder 1',
      'bindMw 2 responder 2',
    ]);
    expect(outcome.fields).toMatchObject({
      bind1: 'ok',
      'bind1.status': 'none',
      inv1: 'EINVAL',
      bind2: 'ok',
    });
    expect(outcome.fields).not.toHaveProperty('inv1.status');
  });

  it('posts on the QP a step names, and numbers the SRQ steps', () => {
    const calls: string[] = [];
    const posts: string[] = [];
    const side = scriptedSide(calls);
    const scenario: Scenario = {
      ...BASE,
      srq: true,
      program: [
        { do: 'srq-limit', limit: 3 },
        { do: 'post-send', wrs: [{ kind: 'SEND', payload: 1n }], qp: 'second' },
        { do: 'post-send', wrs: [{ kind: 'SEND', payload: 2n }] },
        { do: 'srq-event', timeoutMs: 300 },
        { do: 'srq-event', timeoutMs: 400 },
      ],
    };
    const outcome = runProgramNow(scenario, {
      ...side,
      postSend: (s, wrs, first, qp) => {
        posts.push(`${s} ${first} ${qp}`);
        return side.postSend(s, wrs, first, qp);
      },
    });
    expect(posts).toEqual(['requester 0 second', 'requester 1 first']);
    expect(calls.filter((c) => c.startsWith('srq'))).toEqual([
      'srqLimit 3',
      'srqEvent 300',
      'srqEvent 400',
    ]);
    expect(outcome.fields).toMatchObject({
      srqLimit1: 'ok',
      srqEvent1: 'limit-reached',
      'srqEvent1.limit': '0',
      srqEvent2: 'none',
      'srqEvent2.limit': 'EOPNOTSUPP',
    });
  });

  it('numbers the rereg-mr steps and reports what each reregistration answered', () => {
    const calls: string[] = [];
    const scenario: Scenario = {
      ...BASE,
      program: [
        { do: 'rereg-mr', access: ['LOCAL_WRITE', 'REMOTE_WRITE'] },
        { do: 'rereg-mr', access: ['LOCAL_WRITE'] },
      ],
    };
    const outcome = runProgramNow(scenario, scriptedSide(calls));
    expect(calls.filter((c) => c.startsWith('rereg'))).toEqual([
      'reregMr LOCAL_WRITE|REMOTE_WRITE',
      'reregMr LOCAL_WRITE',
    ]);
    expect(outcome.fields).toMatchObject({ rereg1: 'EOPNOTSUPP', rereg2: 'ok' });
  });

  it('numbers attaches and detaches apart, and a UD program receives and waits on the QP a step names', () => {
    const calls: string[] = [];
    const scenario: Scenario = {
      ...BASE,
      ud: true,
      program: [
        { do: 'attach-mcast', group: 'g1', qp: 'second' },
        { do: 'attach-mcast', group: 'unicast' },
        { do: 'detach-mcast', group: 'g2' },
        { do: 'post-recv', for: 'send', qp: 'second' },
        { do: 'post-recv', for: 'send' },
        { do: 'wait', side: 'responder', count: 1, qp: 'second' },
      ],
    };
    const outcome = runProgramNow(scenario, scriptedSide(calls));
    expect(calls).toEqual([
      'attach-mcast g1 second',
      'attach-mcast unicast first',
      'detach-mcast g2 first',
      'postRecv 0 send second',
      'postRecv 1 send',
      // No Send was posted, but a UD program counts every receive as one that may come.
      `nextCompletion responder ${COMPLETION_TIMEOUT_MS} second`,
    ]);
    expect(outcome.fields).toMatchObject({
      attach1: 'ok',
      attach2: 'ok',
      detach1: 'EINVAL',
      'responder.wc1.status': 'none',
    });
  });

  it('refuses a step kind it does not know, with a typed error', () => {
    const bad = { ...BASE, program: [{ do: 'teleport' }] } as unknown as Scenario;
    expect(() => runProgramNow(bad, scriptedSide([]))).toThrow(RangeError);
  });
});
