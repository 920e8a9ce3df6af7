import { describe, expect, it } from 'vitest';
import { RoceRcResponder } from '../../../src/engine/roce/rc-responder.js';
import { ROCE_ANSWERED_ASSERTIONS } from '../../../src/probe/roce-answered-assertions.js';
import { predictAnswered } from '../../../src/probe/roce-answered-run.js';
import { ROCE_RESPONDER_ASSERTIONS } from '../../../src/probe/roce-responder-assertions.js';
import { roceRecordFor } from '../../../src/probe/roce-responder-run.js';

// The assertions that closed tester-roce.md's "Open" list (issue 21): the PSN far behind at
// the responder, and a Read response shorter than the Read. What the engine predicts for
// their packets, and which observations the rxe records accept. The packets go to rxe in
// the guest (test/host/interop/probe-kernels.test.ts).

const CONTEXT = { qpn: 0x000123, va: 0x00007f3a_12c45000n, rKey: 0x1a2b3c4d, psn: 0x00a5c3 };

/** The engine's rule and answers for every packet of a responder assertion. */
function responderRules(id: string): { rule: string; answers: string[] }[] {
  const assertion = ROCE_RESPONDER_ASSERTIONS.find((a) => a.id === id);
  if (assertion === undefined) throw new Error(`no assertion ${id}`);
  const model = new RoceRcResponder({
    qpn: CONTEXT.qpn,
    requesterQpn: 0x0c0ffe,
    expectedPsn: CONTEXT.psn,
    mtu: 1024,
    minRnrTimer: 14,
    maxDestRdAtomic: 16,
    region: { virtualAddress: CONTEXT.va, rKey: CONTEXT.rKey, contents: new Uint8Array(4096) },
    receives: [],
    atomicWrite: true,
    state: 'RTS',
  });
  return assertion.steps(CONTEXT).flatMap((packets) =>
    packets.map((p) => {
      const step = model.receive(p.decoded, p.icrcValid);
      return {
        rule: step.rule,
        answers: step.answers.map(
          (a) =>
            `${a.opcode} ${a.psn} ${a.syndrome.kind === 'NAK' ? a.syndrome.code : a.syndrome.kind}`,
        ),
      };
    }),
  );
}

describe('the PSN far behind at the responder (IBTA 9.7.1: two halves of 2^23 PSNs)', () => {
  it('2^23 behind is a duplicate, 2^23 - 1 ahead is out of sequence', () => {
    const next = CONTEXT.psn + 1;
    expect(responderRules('roce-responder-psn-far-behind')).toEqual([
      { rule: 'write', answers: [`RC_ACKNOWLEDGE ${CONTEXT.psn} ACK`] },
      // The duplicate Write is acknowledged at the last PSN executed, not placed.
      { rule: 'duplicate-acknowledged', answers: [`RC_ACKNOWLEDGE ${CONTEXT.psn} ACK`] },
      { rule: 'psn-ahead', answers: [`RC_ACKNOWLEDGE ${next} PSN_SEQUENCE_ERROR`] },
      // A duplicate FetchAdd with no saved result cannot be answered (C9-121).
      { rule: 'duplicate-atomic-not-saved', answers: [] },
    ]);
  });

  it('a Read far behind is executed again by the engine; rxe dropping it is the record', () => {
    const rules = responderRules('roce-responder-read-far-behind');
    expect(rules.map((r) => r.rule)).toEqual(['write', 'duplicate-read-executed-again']);
    const step = (answers: string[]) => ({
      sent: ['x'],
      rules: ['r'],
      answers,
      completions: [],
      memory: '1122',
    });
    const expected = { steps: [step(['ack']), step(['read response'])], qpState: 'RTS' };
    const dropped = { steps: [step(['ack']), step([])], qpState: 'RTS' };
    const id = 'roce-responder-read-far-behind';
    expect(roceRecordFor(id, '7.3.4+deb13-amd64', expected, dropped)?.id).toBe(
      'rxe-duplicate-read-without-resource-dropped',
    );
    // The Write before it answered differently, or memory changed: not this record.
    const otherWrite = { ...dropped, steps: [step([]), step([])] };
    expect(roceRecordFor(id, '6.1.0-56-amd64', expected, otherWrite)).toBeUndefined();
    const placed = { ...dropped, steps: [step(['ack']), { ...step([]), memory: 'ffff' }] };
    expect(roceRecordFor(id, '6.1.0-56-amd64', expected, placed)).toBeUndefined();
  });
});

describe('a Read response shorter than the Read', () => {
  const id = 'roce-requester-read-response-too-short';
  const assertion = ROCE_ANSWERED_ASSERTIONS.find((a) => a.id === id);
  if (assertion === undefined) throw new Error(`no assertion ${id}`);
  const { expected, rules } = predictAnswered(assertion, {
    qpn: 1,
    va: 0n,
    rKey: 0,
    psn: 0x3c5a10,
  });

  it('is a local length error for the engine, at once', () => {
    expect(rules).toEqual(['read-response-length']);
    expect(expected).toEqual({
      requests: [`RC_RDMA_READ_REQUEST psn ${0x3c5a10}`],
      completions: [{ wrId: '0xe2', status: 'LOC_LEN_ERR' }],
      qpState: 'ERR',
    });
  });

  it('the record accepts the Read left outstanding (measured on 6.1, 6.12, 7.3), nothing else', () => {
    const read = `RC_RDMA_READ_REQUEST psn ${0x3c5a10}`;
    const waiting = { requests: [read], completions: [], qpState: 'RTS' };
    expect(roceRecordFor(id, '6.1.0-56-amd64', expected, waiting)?.id).toBe(
      'rxe-short-read-response-waits-for-the-rest',
    );
    const success = { ...waiting, completions: [{ wrId: '0xe2', status: 'SUCCESS' }] };
    expect(roceRecordFor(id, '6.1.0-56-amd64', expected, success)).toBeUndefined();
    const resent = { ...waiting, requests: [read, read] };
    expect(roceRecordFor(id, '6.1.0-56-amd64', expected, resent)).toBeUndefined();
  });
});

describe('a FLUSH with the standard ICRC (IBTA 1.5 Annex A19)', () => {
  const id = 'roce-responder-flush-acknowledged';
  const step = (answers: { opcode: string; syndrome: string }[]) => ({
    sent: ['x'],
    rules: ['r'],
    answers,
    completions: [],
    memory: '1122',
  });
  const flushAck = { opcode: 'RC_RDMA_READ_RESPONSE_ONLY', syndrome: 'ACK credits 31' };
  const invalid = { opcode: 'RC_ACKNOWLEDGE', syndrome: 'NAK INVALID_REQUEST' };
  const dropped = { steps: [step([])], qpState: 'RTS' };

  it('is acknowledged by an empty Read Response where the MR and QP grant FLUSH_GLOBAL', () => {
    const assertion = ROCE_RESPONDER_ASSERTIONS.find((a) => a.id === id);
    if (assertion === undefined) throw new Error(`no assertion ${id}`);
    expect(assertion.setup?.flush).toBe(true);
    const responder = (flush: boolean) =>
      new RoceRcResponder({
        qpn: CONTEXT.qpn,
        requesterQpn: 0x0c0ffe,
        expectedPsn: CONTEXT.psn,
        mtu: 1024,
        minRnrTimer: 14,
        maxDestRdAtomic: 16,
        region: { virtualAddress: CONTEXT.va, rKey: CONTEXT.rKey, contents: new Uint8Array(64) },
        atomicWrite: flush,
        flush,
      });
    const [packet] = assertion.steps(CONTEXT).flat();
    expect(packet?.decoded?.headers.FETH).toEqual({ value: 0x01 });
    const granted = responder(true).receive(packet?.decoded, true);
    expect([granted.rule, granted.answers.map((a) => `${a.opcode} ${a.syndrome.kind}`)]).toEqual([
      'flush',
      ['RC_RDMA_READ_RESPONSE_ONLY ACK'],
    ]);
    const refused = responder(false).receive(packet?.decoded, true);
    expect(refused.answers.map((a) => a.syndrome)).toEqual([
      { kind: 'NAK', code: 'INVALID_REQUEST' },
    ]);
  });

  it('rxe from 6.2 dropping it is the ICRC defect; nothing else is', () => {
    const expected = { steps: [step([flushAck])], qpState: 'RTS' };
    for (const kernel of ['6.12.95+deb12-amd64', '7.3.4+deb13-amd64'])
      expect(roceRecordFor(id, kernel, expected, dropped)?.id).toBe(
        'rxe-flush-icrc-hashes-headers-twice',
      );
    // A NAK, a changed memory or a QP in ERR is not this record.
    const nak = { steps: [step([invalid])], qpState: 'RTS' };
    expect(roceRecordFor(id, '6.12.95+deb12-amd64', expected, nak)).toBeUndefined();
    const placed = { steps: [{ ...step([]), memory: 'ffff' }], qpState: 'RTS' };
    expect(roceRecordFor(id, '6.12.95+deb12-amd64', expected, placed)).toBeUndefined();
    expect(
      roceRecordFor(id, '6.12.95+deb12-amd64', expected, { ...dropped, qpState: 'ERR' }),
    ).toBeUndefined();
    // Not on 6.1, whose engine expectation is a NAK (no FLUSH right there).
    expect(roceRecordFor(id, '6.1.0-56-amd64', expected, dropped)).toBeUndefined();
  });

  it('rxe 6.1 dropping the unknown opcode is its own record (measured 2026-12-05)', () => {
    // The engine's NAK Invalid Request leaves its QP in ERR; rxe 6.1's stays in RTS.
    const expected = { steps: [step([invalid])], qpState: 'ERR' };
    expect(roceRecordFor(id, '6.1.0-56-amd64', expected, dropped)?.id).toBe(
      'rxe-no-flush-opcode-before-6.2',
    );
    expect(roceRecordFor(id, '6.12.95+deb12-amd64', expected, dropped)).toBeUndefined();
    const answered = { steps: [step([flushAck])], qpState: 'RTS' };
    expect(roceRecordFor(id, '6.1.0-56-amd64', expected, answered)).toBeUndefined();
    const inErr = { ...dropped, qpState: 'ERR' };
    expect(roceRecordFor(id, '6.1.0-56-amd64', expected, inErr)).toBeUndefined();
  });
});
