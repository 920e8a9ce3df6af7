import { describe, expect, it } from 'vitest';
import { IWARP_ASSERTIONS } from '../../../src/probe/iwarp-assertions.js';
import { engineIwarpAnswer, initialContents, judgeIwarp } from '../../../src/probe/iwarp-expect.js';

// The engine half of the RFC 7306 probes, which the tester runs as assertions on the
// patched siw (the siw half runs in the guest: probe --device siw0 --siw rfc7306). A
// made-up registration stands in for siw's MR.
const target = { stag: 0x00abcd01, address: 0x7f00_1234_5600n };
const PLAIN = { crc: false, markers: false };
const probe = (id: string) => {
  const found = IWARP_ASSERTIONS.find((p) => p.id === id);
  if (found === undefined) throw new Error(`no assertion ${id}`);
  return found;
};
/** The engine's answer, its wire lines joined as the retired `run` probes printed them. */
const engineRfc7306Answer = (p: ReturnType<typeof probe>, t: typeof target) => {
  const { answer } = engineIwarpAnswer(p, t, PLAIN, 'rfc7306');
  return { ...answer, wire: answer.wire.join('\n') };
};
const word = (memoryHex: string): bigint => Buffer.from(memoryHex, 'hex').readBigUInt64LE(0);

describe('RFC 7306 wire probes: the engine side', () => {
  it('masked FetchAdd: two 32-bit fields, the low carry discarded; the original goes back', () => {
    const answer = engineRfc7306Answer(probe('siw-rfc7306-fetch-add-masked'), target);
    // 0x00000001_ffffffff + 0x00000003_00000002 per field: low 0x00000001, high 0x00000004.
    expect(word(answer.memory)).toBe(0x0000000400000001n);
    expect(answer.wire).toMatch(/^responder> atomic-response qn=3 msn=1 /);
    expect(answer.wire).toMatch(/ req=0xa0b0c01 orig=0x1ffffffff$/);
    expect(answer.receive).toBe('none');
  });

  it('misaligned FetchAdd: one Terminate (Remote Operation Error, catastrophic to the stream), memory untouched', () => {
    const answer = engineRfc7306Answer(probe('siw-rfc7306-atomic-misaligned'), target);
    expect(answer.wire.split('\n')).toHaveLength(1);
    expect(answer.wire).toMatch(/^responder> terminate qn=2 msn=1 .* layer=0 type=2 code=0x07 /);
    expect(word(answer.memory)).toBe(0x0123456789abcdefn);
  });

  it('Immediate Data with a receive: 8 bytes placed, the low 32 bits as verbs imm_data', () => {
    const answer = engineRfc7306Answer(probe('siw-rfc7306-immediate-with-receive'), target);
    expect(answer.receive).toBe('ok bytes=8 imm=89abcdef data=0123456789abcdef');
    expect(answer.wire).toBe('');
  });

  it('judges equal answers a match and any difference a failure when nothing is recorded', () => {
    const p = probe('siw-rfc7306-fetch-add');
    const { answer, terminates } = engineIwarpAnswer(p, target, PLAIN, 'rfc7306');
    expect(judgeIwarp(p, 'rfc7306', answer, terminates, answer).verdict).toBe('match');
    const other = { ...answer, memory: Buffer.from(initialContents(1n)).toString('hex') };
    expect(judgeIwarp(p, 'rfc7306', answer, terminates, other).verdict).toBe('fail');
  });
});
