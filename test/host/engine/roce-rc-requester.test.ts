import { describe, expect, it } from 'vitest';
import { RoceRcRequester } from '../../../src/engine/roce/rc-requester.js';
import { ROCE_ANSWERED_ASSERTIONS } from '../../../src/probe/roce-answered-assertions.js';
import { predictAnswered } from '../../../src/probe/roce-answered-run.js';
import { roceRecordFor } from '../../../src/probe/roce-responder-run.js';

const PSN = 0xfffffe; // wraps: PSN arithmetic is modulo 2^24
const ACK = { kind: 'ACK', creditCount: 31 } as const;
const context = { qpn: 0x000123, va: 0n, rKey: 0, psn: PSN };

function requester(rnrRetry = 0, retryCnt = 3) {
  return new RoceRcRequester({ firstPsn: PSN, retryCnt, rnrRetry });
}

function prediction(id: string) {
  const assertion = ROCE_ANSWERED_ASSERTIONS.find((a) => a.id === id);
  if (assertion === undefined) throw new Error(`no assertion ${id}`);
  return predictAnswered(assertion, context);
}

describe('the engine RoCE RC requester rules', () => {
  it('a coalesced ACK completes every Write up to its PSN, across the PSN wrap', () => {
    const r = requester();
    const sent = [1n, 2n, 3n].map((wrId) => r.post({ wrId, kind: 'write', length: 16 }));
    expect(sent.map((s) => s.psn)).toEqual([0xfffffe, 0xffffff, 0]);
    const step = r.receive({ opcode: 'RC_ACKNOWLEDGE', psn: 0xffffff, syndrome: ACK });
    expect(step.rule).toBe('coalesced-ack');
    expect(step.completions.map((c) => c.wrId)).toEqual([1n, 2n]);
  });

  it('an ACK does not complete a Read or Atomic that has no response yet', () => {
    const r = requester();
    r.post({ wrId: 1n, kind: 'write', length: 16 });
    r.post({ wrId: 2n, kind: 'read', length: 16 });
    r.post({ wrId: 3n, kind: 'write', length: 16 });
    const step = r.receive({ opcode: 'RC_ACKNOWLEDGE', psn: 0, syndrome: ACK });
    expect(step.completions.map((c) => c.wrId)).toEqual([1n]);
  });

  it('RNR NAKs: rnr_retry n sends n more times, then RNR_RETRY_EXC_ERR; 7 never ends', () => {
    const rnr = { opcode: 'RC_ACKNOWLEDGE', psn: PSN, syndrome: { kind: 'RNR_NAK', timer: 1 } };
    const one = requester(1);
    one.post({ wrId: 9n, kind: 'write', length: 16 });
    expect(one.receive(rnr as never).sent).toEqual([{ opcode: 'RC_RDMA_WRITE_ONLY', psn: PSN }]);
    expect(one.receive(rnr as never).completions).toEqual([
      { wrId: 9n, status: 'RNR_RETRY_EXC_ERR' },
    ]);
    expect(one.state).toBe('ERR');
    const forever = requester(7);
    forever.post({ wrId: 9n, kind: 'write', length: 16 });
    for (let i = 0; i < 20; i++) expect(forever.receive(rnr as never).sent).toHaveLength(1);
    expect(forever.state).toBe('RTS');
  });

  it('refuses a retry count outside 0..7 with a RangeError', () => {
    expect(() => requester(8)).toThrow(RangeError);
  });

  it('duplicate and ghost responses are dropped, the value of an Atomic ACK is returned', () => {
    const r = requester();
    r.post({ wrId: 1n, kind: 'fetch-add', length: 8 });
    expect(r.receive({ opcode: 'RC_ACKNOWLEDGE', psn: 5, syndrome: ACK }).rule).toBe(
      'ghost-response',
    );
    const done = r.receive({
      opcode: 'RC_ATOMIC_ACKNOWLEDGE',
      psn: PSN,
      syndrome: ACK,
      originalRemoteData: 0x0123_4567_89ab_cdefn,
    });
    expect(done.completions).toEqual([
      { wrId: 1n, status: 'SUCCESS', fetched: 0x0123_4567_89ab_cdefn },
    ]);
    expect(r.receive({ opcode: 'RC_ACKNOWLEDGE', psn: PSN, syndrome: ACK }).rule).toBe(
      'no-request-outstanding',
    );
  });
});

describe('the RoCE requester assertions, as the engine predicts them', () => {
  it('a PSN Sequence Error NAK rewinds to its PSN: the last two Writes are sent again', () => {
    const { expected, rules } = prediction('roce-requester-psn-sequence-rewind');
    const psns = (expected as { requests: string[] }).requests.map((r) => Number(r.split(' ')[2]));
    expect(psns).toEqual([0xfffffe, 0xffffff, 0, 0xffffff, 0]);
    expect(rules).toEqual(['psn-sequence-error-rewind', 'coalesced-ack']);
  });

  it('a Remote Access NAK fails the first Write and flushes the second', () => {
    expect(prediction('roce-requester-nak-remote-access').expected).toMatchObject({
      completions: [
        { wrId: '0x81', status: 'REM_ACCESS_ERR' },
        { wrId: '0x82', status: 'WR_FLUSH_ERR' },
      ],
      qpState: 'ERR',
    });
  });

  it('rnr_retry 7 is watched up to its cap with no completion', () => {
    expect(prediction('roce-requester-rnr-retry-7').expected).toMatchObject({
      completions: [],
      qpState: 'RTS',
    });
    expect(
      (prediction('roce-requester-rnr-retry-7').expected as { requests: string[] }).requests,
    ).toHaveLength(12);
  });

  it('the known rxe behaviours match only the observation they record', () => {
    const { expected } = prediction('roce-requester-read-response-too-long');
    const asRxe = JSON.parse(JSON.stringify(expected).replace('LOC_LEN_ERR', 'LOC_PROT_ERR'));
    const id = 'roce-requester-read-response-too-long';
    expect(roceRecordFor(id, '6.1.0-56-amd64', expected, asRxe)?.id).toBe(
      'rxe-read-response-too-long-is-loc-prot-err',
    );
    const other = { ...asRxe, qpState: 'RTS' };
    expect(roceRecordFor(id, '6.1.0-56-amd64', expected, other)).toBeUndefined();
    const ghost = prediction('roce-requester-ghost-ack-outstanding').expected as {
      requests: string[];
    };
    const resent = { ...ghost, requests: [...ghost.requests, ghost.requests[0] ?? ''] };
    expect(roceRecordFor('roce-requester-ghost-ack-outstanding', '7.3.4', ghost, resent)?.id).toBe(
      'rxe-ghost-response-retries-read-or-atomic',
    );
  });

  it('rnr_retry 0: a Write sent twice is no known behaviour on any line', () => {
    // The record rxe-answer-before-wqe-pending-dropped is gone: the extra Writes were another
    // QP's late retransmissions (roce-testbed.ts requesterTesterQpn), not a race in rxe.
    const id = 'roce-requester-rnr-retry-0';
    const { expected } = prediction(id);
    const e = expected as { requests: string[] };
    expect(e.requests.length).toBe(1);
    const twice = { ...e, requests: [e.requests[0] ?? '', e.requests[0] ?? ''] };
    for (const kernel of ['6.1.0-56-amd64', '6.12.95+deb12-amd64', '7.3.4+deb13-amd64'])
      expect(roceRecordFor(id, kernel, expected, twice)).toBeUndefined();
  });
});
