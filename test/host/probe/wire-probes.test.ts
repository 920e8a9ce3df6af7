import { describe, expect, it } from 'vitest';
import type { Terminate } from '../../../src/codec/iwarp/messages.js';
import { wireLine } from '../../../src/judge/wire.js';
import { engineAnswer } from '../../../src/probe/engine-peer.js';
import { judgeProbe } from '../../../src/probe/run-probes.js';
import { WIRE_PROBES } from '../../../src/probe/wire-probes.js';

const probe = (id: string) => {
  const p = WIRE_PROBES.find((x) => x.id === id);
  if (p === undefined) throw new Error(id);
  return p;
};

describe('the engine as a peer without RFC 7306 (RFC 7306 §1.1)', () => {
  it('answers an Atomic Request with Terminate RDMAP / Remote Operation / Unexpected OpCode', () => {
    const { sent } = engineAnswer(probe('siw-probe-atomic-request').message);
    expect(sent).toHaveLength(1);
    expect(sent[0]).toMatchObject({ kind: 'terminate', layer: 0, errorType: 2, errorCode: 0x06 });
    expect(wireLine('responder', sent[0]!, [])).toMatch(
      /^responder> terminate qn=2 msn=1 mo=0 L layer=0 type=2 code=0x06 hdrct=MD- seglen=\d+ ddp=/,
    );
  });

  it('delivers a plain Send into the posted receive', () => {
    const answer = engineAnswer(probe('siw-probe-send').message);
    expect(answer.sent).toEqual([]);
    expect(Buffer.from(answer.delivered ?? []).toString('hex')).toBe('8877665544332211');
  });
});

describe('judging a probe', () => {
  const atomic = probe('siw-probe-atomic-request');
  const same = { engine: 'x', kernel: 'x', engineDelivered: '', kernelDelivered: '' };

  it('identical answers match', () => {
    expect(judgeProbe(atomic, same, []).verdict).toBe('match');
  });

  it("siw's recorded answer (the tester's siw-terminate-layout) is known; any other fails", () => {
    const sent = engineAnswer(atomic.message).sent;
    const engine = sent.map((m) => wireLine('responder', m, [])).join('\n');
    const terminates = sent.filter((m): m is Terminate => m.kind === 'terminate');
    const answers = { ...same, engine, engineTerminates: terminates };
    const siw = 'responder> terminate qn=2 msn=1 mo=0 L layer=2 type=0 code=0x06 hdrct=---';
    const judged = judgeProbe(atomic, { ...answers, kernel: siw });
    expect([judged.verdict, judged.finding?.id]).toEqual(['known', 'siw-terminate-layout']);
    expect(judgeProbe(atomic, { ...answers, kernel: 'other line' }).verdict).toBe('fail');
    // Recorded, but siw answered like the engine: the record is stale.
    expect(judgeProbe(atomic, { ...answers, kernel: engine }).verdict).toBe('fail');
  });

  it("the Immediate Data probe's recorded answer is the same Terminate line (one record for both)", () => {
    const immediate = probe('siw-probe-immediate-data');
    const sent = engineAnswer(immediate.message).sent;
    const engine = sent.map((m) => wireLine('responder', m, [])).join('\n');
    const terminates = sent.filter((m): m is Terminate => m.kind === 'terminate');
    const siw = 'responder> terminate qn=2 msn=1 mo=0 L layer=2 type=0 code=0x06 hdrct=---';
    expect(
      judgeProbe(immediate, { ...same, engine, kernel: siw, engineTerminates: terminates }).verdict,
    ).toBe('known');
  });

  it('different delivered bytes diverge even when nothing was sent back', () => {
    const send = probe('siw-probe-send');
    expect(
      judgeProbe(
        send,
        { ...same, engineDelivered: '8877665544332211', kernelDelivered: '1122334455667788' },
        [],
      ).verdict,
    ).toBe('fail');
  });
});
