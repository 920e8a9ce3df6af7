/**
 * The iWARP tester on the host (issue 21): the engine's MPA layer, the packet builder's
 * field setter, the judgement against recorded siw behaviour, the fuzz's determinism, and
 * the host side's reading of a crashed guest's results file and its reports. The
 * assertions themselves run against siw in the guest (`rdma-interop probe`).
 */
import { describe, expect, it } from 'vitest';
import { makeRdmaWrite, makeSend } from '../../../src/codec/iwarp/build.js';
import { DDP_UNTAGGED_LAYOUT, readHeader } from '../../../src/codec/iwarp/layouts.js';
import type { Terminate } from '../../../src/codec/iwarp/messages.js';
import { TaggedBufferTable } from '../../../src/engine/memory/tagged-buffer.js';
import { receiveMpaStream } from '../../../src/engine/responder/mpa-receiver.js';
import { Responder } from '../../../src/engine/responder/responder.js';
import type { AssertionResult } from '../../../src/probe/assertion.js';
import { seededRandom } from '../../../src/probe/fuzz-loop.js';
import { IWARP_ASSERTIONS, SIW_2026_FIXES } from '../../../src/probe/iwarp-assertions.js';
import { engineIwarpAnswer, judgeIwarp } from '../../../src/probe/iwarp-expect.js';
import { fuzzPacket } from '../../../src/probe/iwarp-fuzz.js';
import { fpduOf, segmentWith } from '../../../src/probe/iwarp-packets.js';
import { selectAssertions } from '../../../src/probe/probe-guest.js';
import { crashResult, parseResultLines } from '../../../src/probe/probe-host.js';
import {
  observeFixes,
  PROBE_SCHEMA,
  renderProbeJunit,
  renderProbeMarkdown,
} from '../../../src/probe/probe-report.js';

const TARGET = { stag: 0x1a2b3c00, address: 0x00007f0012345600n };
const PLAIN = { crc: false, markers: false };
const CRC = { crc: true, markers: false };
const PAYLOAD = Uint8Array.of(0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11);

function responder(): Responder {
  const r = new Responder({
    stream: { streamId: 1, protectionDomain: 1 },
    buffers: new TaggedBufferTable(),
    ird: 4,
    supportsAtomics: false,
    supportsImmediateData: false,
  });
  r.postReceive({ id: 1n, length: 64 });
  return r;
}

const send = makeSend({ messageSequenceNumber: 1, payload: PAYLOAD });
const assertion = (id: string) => {
  const a = IWARP_ASSERTIONS.find((x) => x.id === id);
  if (a === undefined) throw new Error(id);
  return a;
};

describe('the engine as an MPA receiver (RFC 5044)', () => {
  it('delivers a whole FPDU with a good CRC to the Responder', () => {
    const r = responder();
    const got = receiveMpaStream(r, fpduOf(segmentWith(send), CRC), CRC);
    expect(got.failure).toBeUndefined();
    expect(got.results[0]?.completions[0]?.data.subarray(0, 8)).toEqual(PAYLOAD);
  });

  it('answers a CRC mismatch with Terminate LLP / MPA / CRC Error and delivers nothing', () => {
    const r = responder();
    const got = receiveMpaStream(r, fpduOf(segmentWith(send), CRC, { crcXor: 0x00ff00ff }), CRC);
    expect(got.failure).toBe('mpa-crc-error');
    expect(got.results).toEqual([]);
    const t = got.terminate as Terminate;
    expect([t.layer, t.errorType, t.errorCode, t.ddpHeaderIncluded]).toEqual([2, 0, 0x02, false]);
  });

  it('waits, answering nothing, for an FPDU whose ULPDU Length runs past the bytes sent', () => {
    const got = receiveMpaStream(
      responder(),
      fpduOf(segmentWith(send), PLAIN, { ulpduLength: 0xffff }),
      PLAIN,
    );
    expect(got.results).toEqual([]);
    expect(got.terminate).toBeUndefined();
    // Length field, the 26-byte Send segment (no pad: 2 + 26 is a multiple of 4), CRC field.
    expect(got.waitingBytes).toBe(2 + 26 + 4);
  });

  it('hands a ULPDU shorter than its DDP header to DDP, which terminates it as malformed', () => {
    const write = makeRdmaWrite({
      stag: TARGET.stag,
      taggedOffset: TARGET.address,
      payload: PAYLOAD,
    });
    const got = receiveMpaStream(
      responder(),
      fpduOf(segmentWith(write), PLAIN, { ulpduLength: 4 }),
      PLAIN,
    );
    expect(got.results[0]?.failure).toBe('malformed-segment');
  });
});

describe('packets field by field', () => {
  it('sets one DDP field from the layout table and leaves its neighbours', () => {
    const segment = segmentWith(send, { queueNumber: 5, messageOffset: 0x01020304 });
    const header = readHeader(DDP_UNTAGGED_LAYOUT, segment);
    expect([header.queueNumber, header.messageSequenceNumber, header.messageOffset]).toEqual([
      5, 1, 0x01020304,
    ]);
    expect(header.opcode).toBe(3);
  });

  it('writes the ULPDU Length after a leading marker when markers are forced', () => {
    const fpdu = fpduOf(segmentWith(send), PLAIN, { markers: true });
    expect([...fpdu.subarray(0, 6)]).toEqual([0, 0, 0, 0, 0, 26]);
  });
});

describe('expectations and verdicts', () => {
  it('expects the Terminate for an invalid QN from the engine, with the DDP header copied', () => {
    const { answer } = engineIwarpAnswer(assertion('siw-ddp-invalid-qn'), TARGET, PLAIN, 'stock');
    expect(answer.wire).toEqual([
      'responder> terminate qn=2 msn=1 mo=0 L layer=1 type=2 code=0x01 hdrct=MD- seglen=26 ddp=414300000000000000050000000100000000',
    ]);
    // The Terminate ends the stream (RFC 5040 §7): the posted receive is flushed.
    expect(answer.receive).toBe('error WR_FLUSH_ERR');
  });

  it('places the Send of the control probe and completes the receive', () => {
    const { answer } = engineIwarpAnswer(assertion('siw-probe-send'), TARGET, PLAIN, 'stock');
    expect(answer.wire).toEqual([]);
    expect(answer.receive).toBe('ok bytes=8 imm=- data=8877665544332211');
  });

  it("judges siw's swapped Terminate nibbles as the recorded siw-terminate-layout, not as a pass", () => {
    const a = assertion('siw-rdmap-unknown-opcode-first');
    const engine = engineIwarpAnswer(a, TARGET, PLAIN, 'stock');
    const observed = {
      ...engine.answer,
      wire: ['responder> terminate qn=2 msn=1 mo=0 L layer=2 type=0 code=0x06 hdrct=---'],
    };
    const judged = judgeIwarp(a, 'stock', engine.answer, engine.terminates, observed);
    expect(judged.verdict).toBe('known');
    expect(judged.known.map((k) => k.id)).toEqual(['siw-terminate-layout']);
    // The record stops holding when siw answers as the engine: that fails, as in the suite.
    expect(judgeIwarp(a, 'stock', engine.answer, engine.terminates, engine.answer).verdict).toBe(
      'fail',
    );
    const qn = assertion('siw-ddp-invalid-stag');
    const plain = engineIwarpAnswer(qn, TARGET, PLAIN, 'rfc7306');
    expect(judgeIwarp(qn, 'rfc7306', plain.answer, plain.terminates, plain.answer).verdict).toBe(
      'match',
    );
    const other = {
      ...observed,
      wire: ['responder> terminate qn=2 msn=1 mo=0 L layer=2 type=0 code=0x07 hdrct=---'],
    };
    expect(judgeIwarp(a, 'stock', engine.answer, engine.terminates, other).verdict).toBe('fail');
  });

  it('composes the records of one assertion: a bad CRC on the stock siw', () => {
    const a = assertion('siw-mpa-bad-crc');
    const engine = engineIwarpAnswer(a, TARGET, CRC, 'stock');
    // The engine flushes the receive its Terminate left posted (RFC 5040 §7).
    expect(engine.answer.receive).toBe('error WR_FLUSH_ERR');
    const observed = {
      wire: ['responder> terminate qn=2 msn=1 mo=0 L layer=0 type=2 code=0x02 hdrct=---'],
      receive: 'error GENERAL_ERR',
      memory: `8877665544332211${'00'.repeat(56)}`,
    };
    const judged = judgeIwarp(a, 'stock', engine.answer, engine.terminates, observed);
    expect(judged.verdict).toBe('known');
    expect(judged.known.map((k) => k.id)).toEqual([
      'siw-terminate-layout',
      'siw-crc-checked-after-placement',
      'siw-failed-send-completes-receive',
    ]);
    // A record whose difference stops showing fails, as in the suite.
    expect(judgeIwarp(a, 'stock', engine.answer, engine.terminates, engine.answer).verdict).toBe(
      'fail',
    );
  });

  it("derives the stock siw's malformed DDP-error Terminate byte for byte", () => {
    const a = assertion('siw-ddp-invalid-qn');
    const engine = engineIwarpAnswer(a, TARGET, PLAIN, 'stock');
    // As siw 6.1.192 sent it: nibbles swapped (0x21), M and D in the low bits (0x03), the
    // copied segment length cut to the payload (0x0008).
    const observed = {
      wire: [
        'responder> undecodable ulpdu=414700000000000000020000000100000000210103000008414300000000000000050000000100000000 (rdmap.terminate at offset 22: bad-length: 20 bytes after the Terminate header that no Hdrct bit announces)',
      ],
      receive: 'error GENERAL_ERR',
      memory: '00'.repeat(64),
    };
    const judged = judgeIwarp(a, 'stock', engine.answer, engine.terminates, observed);
    expect(judged.known.map((k) => k.id)).toEqual([
      'siw-failed-send-completes-receive',
      'siw-ddp-terminate-layout',
    ]);
    expect(judged.verdict).toBe('known');
  });

  it('names the 2026 siw fixes on their regression assertions', () => {
    expect(assertion('siw-rdmap-unknown-opcode-first').regression?.cve).toBe('CVE-2026-23242');
    expect(assertion('siw-mpa-length-underflow').regression).toBe(
      SIW_2026_FIXES.mpaLengthUnderflow,
    );
  });

  it('runs the RFC 7306 probes on the patched siw only and the wire probes on the stock one', () => {
    const ids = (siw: 'stock' | 'rfc7306') =>
      selectAssertions({ siw, devices: ['siw0'] }).map((p) => p.assertion.id);
    expect(ids('rfc7306').filter((id) => id.startsWith('siw-rfc7306-'))).toHaveLength(11);
    expect(ids('stock').filter((id) => id.startsWith('siw-rfc7306-'))).toEqual([]);
    expect(ids('stock')).toContain('siw-probe-atomic-request');
    const rxe = selectAssertions({ siw: 'both', devices: ['rxe0'] });
    expect(rxe.length).toBeGreaterThan(10);
    expect(rxe.every((p) => p.variant === 'rxe' && p.assertion.provider === 'rxe')).toBe(true);
    // rxe's pass runs first: a crash in it resumes at `rxe/<id>` before siw's passes.
    expect(selectAssertions({ siw: 'both' }).map((p) => p.variant)).toEqual([
      ...rxe.map(() => 'rxe'),
      ...ids('stock').map(() => 'stock'),
      ...ids('rfc7306').map(() => 'rfc7306'),
    ]);
  });
});

describe('the fuzz', () => {
  it('makes the same packets from the same seed and different ones from another', () => {
    const bytes = (seed: number, i: number) =>
      Buffer.from(fuzzPacket(seed, i).bytes(TARGET, PLAIN)).toString('hex');
    expect(bytes(7, 3)).toBe(bytes(7, 3));
    const a = Array.from({ length: 20 }, (_, i) => bytes(7, i));
    const b = Array.from({ length: 20 }, (_, i) => bytes(8, i));
    expect(a).not.toEqual(b);
    expect(new Set(a).size).toBeGreaterThan(15);
    expect(seededRandom(42)()).toBe(seededRandom(42)());
  });
});

describe('the host side of probe', () => {
  const result = (id: string, verdict: AssertionResult['verdict'], dmesg: string[] = []) =>
    ({
      id,
      spec: 's',
      device: 'siw0',
      provider: 'siw',
      siwVariant: 'stock',
      kernel: '6.1.0-56-amd64',
      topology: 'requester',
      verdict,
      expected: null,
      observed: null,
      survival: { dmesg, deviceWorks: true, guestUp: true },
    }) satisfies AssertionResult;

  it("reads a results file written before issue 31: its 'pass' is today's 'match'", () => {
    const line = JSON.stringify({
      kind: 'result',
      result: { ...result('siw-ddp-invalid-qn', 'match'), verdict: 'pass' },
    });
    expect(parseResultLines(line).results.map((r) => r.verdict)).toEqual(['match']);
  });

  it('names the assertion a crashed guest was running and ignores a torn last line', () => {
    const text = [
      JSON.stringify({ kind: 'starting', id: 'siw-ddp-invalid-qn', at: 't', variant: 'stock' }),
      JSON.stringify({ kind: 'result', result: result('siw-ddp-invalid-qn', 'match') }),
      JSON.stringify({
        kind: 'starting',
        id: 'siw-mpa-length-underflow',
        at: 't',
        variant: 'stock',
      }),
      '{"kind": "result", "result": {"id": "siw-mpa-le',
    ].join('\n');
    const parsed = parseResultLines(text);
    expect(parsed.results.map((r) => r.id)).toEqual(['siw-ddp-invalid-qn']);
    expect(parsed.unfinished).toEqual({ variant: 'stock', id: 'siw-mpa-length-underflow' });
    const crash = crashResult(
      'siw-mpa-length-underflow',
      'stock',
      '6.1.0-56-amd64',
      'Oops',
      'no-exit-code',
    );
    expect(crash.verdict).toBe('kernel-crash');
    expect(crash.observed).toEqual({ consoleTail: 'Oops' });
  });

  it('records a crash in the rxe pass as rxe_t, and resumes a RoCE runner line there', () => {
    const parsed = parseResultLines(
      JSON.stringify({ kind: 'starting', id: 'roce-responder-unknown-opcode-multicast', at: 't' }),
    );
    expect(parsed.unfinished).toEqual({
      variant: 'rxe',
      id: 'roce-responder-unknown-opcode-multicast',
    });
    const crash = crashResult('roce-responder-unknown-opcode-multicast', 'rxe', 'k', 'Oops', 'x');
    expect([crash.device, crash.provider, crash.siwVariant]).toEqual(['rxe_t', 'rxe', undefined]);
  });

  it('says a kernel without the code a fix is in is not affected', () => {
    const kernels = [
      { line: '6.1', release: '6.1.0-56-amd64' },
      { line: '7.3', release: '7.3.4+deb13-amd64' },
    ];
    const zero = 'roce-responder-atomic-write-zero-length';
    const row = (kernel: string, verdict: AssertionResult['verdict'], known?: string) =>
      ({
        ...result(zero, verdict),
        kernel,
        provider: 'rxe',
        ...(known === undefined ? {} : { known }),
      }) satisfies AssertionResult;
    const fixes = observeFixes(
      [{ id: zero, regression: { title: 't', cve: 'CVE-2026-46114' } }],
      [
        row('6.1.0-56-amd64', 'known', 'rxe-no-atomic-write-before-6.2'),
        row('7.3.4+deb13-amd64', 'match'),
      ],
      kernels,
      new Set(['rxe-no-atomic-write-before-6.2']),
    );
    expect(fixes[0]?.kernels).toEqual({ '6.1': 'not affected', '7.3': 'has the fix' });
  });

  it('says a kernel line lacks a fix when its assertion crashed or left dmesg lines', () => {
    const kernels = [
      { line: '6.1', release: '6.1.0-56-amd64' },
      { line: '7.3', release: '7.3.4+deb13-amd64' },
    ];
    const results = [
      result('siw-mpa-length-underflow', 'kernel-crash'),
      { ...result('siw-mpa-length-underflow', 'known'), kernel: '7.3.4+deb13-amd64' },
      result('siw-rdmap-unknown-opcode-first', 'fail', ['BUG: kernel NULL pointer dereference']),
    ];
    const fixes = observeFixes(
      IWARP_ASSERTIONS.flatMap((a) =>
        a.regression === undefined ? [] : [{ id: a.id, regression: a.regression }],
      ),
      results,
      kernels,
    );
    expect(fixes.map((f) => [f.assertion, f.kernels])).toEqual([
      ['siw-mpa-length-underflow', { '6.1': 'lacks the fix', '7.3': 'has the fix' }],
      ['siw-mpa-header-split', { '6.1': 'not run', '7.3': 'not run' }],
      ['siw-rdmap-unknown-opcode-first', { '6.1': 'lacks the fix', '7.3': 'not run' }],
    ]);
    const doc = { schema: PROBE_SCHEMA, kernels, assertions: results, fixes, fuzz: [] } as const;
    const md = renderProbeMarkdown(doc);
    expect(md).toContain('| siw-mpa-length-underflow | kernel-crash | known (?) |');
    expect(md).toContain('| 6.1 | 7.3 |');
    expect(renderProbeJunit(doc)).toContain('<failure');
  });
});
