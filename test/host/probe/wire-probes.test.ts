/**
 * The three wire probes (RFC 7306 §1.1 capability probes and a control Send to the stock
 * siw). `run` ran and judged them until issue 31; they are the tester's assertions of the
 * same ids now (`rdma-interop probe --assertion 'siw-probe-*'`), judged by the tester's
 * records (judge/records/siw-wire.ts) as every iWARP assertion.
 */
import { describe, expect, it } from 'vitest';
import { wireLine } from '../../../src/judge/wire.js';
import { engineAnswer } from '../../../src/probe/engine-peer.js';
import { IWARP_ASSERTIONS } from '../../../src/probe/iwarp-assertions.js';
import { engineIwarpAnswer, judgeIwarp } from '../../../src/probe/iwarp-expect.js';
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

describe("judging a probe: the tester's assertion of the same id", () => {
  const TARGET = { stag: 0x1a2b3c00, address: 0x00007f0012345600n };
  const PLAIN = { crc: false, markers: false };
  const assertion = (id: string) => {
    const a = IWARP_ASSERTIONS.find((x) => x.id === id);
    if (a === undefined) throw new Error(id);
    return a;
  };
  // What the stock siw answers (kernels 6.1 to 7.3, `rdma-interop probe`).
  const SIW_TERMINATE = 'responder> terminate qn=2 msn=1 mo=0 L layer=2 type=0 code=0x06 hdrct=---';

  it('every wire probe is a stock-siw assertion of the same id, sending the same message', () => {
    for (const p of WIRE_PROBES) {
      const a = assertion(p.id);
      expect([a.provider, a.siwVariants, a.title]).toEqual(['siw', ['stock'], p.title]);
    }
  });

  it('identical answers match (the control Send)', () => {
    const a = assertion('siw-probe-send');
    const engine = engineIwarpAnswer(a, TARGET, PLAIN, 'stock');
    expect(engine.answer.receive).toBe('ok bytes=8 imm=- data=8877665544332211');
    expect(judgeIwarp(a, 'stock', engine.answer, engine.terminates, engine.answer).verdict).toBe(
      'match',
    );
  });

  it("siw's recorded answer (siw-terminate-layout) is known; any other fails, as does a stale record", () => {
    for (const id of ['siw-probe-atomic-request', 'siw-probe-immediate-data']) {
      const a = assertion(id);
      const engine = engineIwarpAnswer(a, TARGET, PLAIN, 'stock');
      const siw = { ...engine.answer, wire: [SIW_TERMINATE] };
      const judged = judgeIwarp(a, 'stock', engine.answer, engine.terminates, siw);
      expect([judged.verdict, judged.known.map((k) => k.id)], id).toEqual([
        'known',
        ['siw-terminate-layout'],
      ]);
      const other = { ...siw, wire: ['other line'] };
      expect(judgeIwarp(a, 'stock', engine.answer, engine.terminates, other).verdict).toBe('fail');
      // Recorded, but siw answered like the engine: the record is stale.
      expect(judgeIwarp(a, 'stock', engine.answer, engine.terminates, engine.answer).verdict).toBe(
        'fail',
      );
    }
  });

  it('different delivered bytes fail even when nothing was sent back', () => {
    const a = assertion('siw-probe-send');
    const engine = engineIwarpAnswer(a, TARGET, PLAIN, 'stock');
    const swapped = {
      ...engine.answer,
      receive: 'ok bytes=8 imm=- data=1122334455667788',
      memory: `1122334455667788${'00'.repeat(56)}`,
    };
    expect(judgeIwarp(a, 'stock', engine.answer, engine.terminates, swapped).verdict).toBe('fail');
  });
});
