/**
 * The siw guided fuzz's inputs (src/coverage/guided-siw-input.ts): the seeds build the FPDUs the
 * codec decodes back into the messages named, with MSN, MO and offsets that follow from their
 * place; every mutation keeps an input that builds; the campaign's draws are the same for a seed;
 * an input is JSON a finding file holds and reads back.
 */
import { describe, expect, it } from 'vitest';
import { layoutField, MPA_FPDU_LAYOUT } from '../../../src/codec/iwarp/layouts.js';
import type { MpaNegotiated, RdmapMessage } from '../../../src/codec/iwarp/messages.js';
import { decodeMpaStream } from '../../../src/codec/iwarp/stream.js';
import type { SiwGuidedSummary } from '../../../src/coverage/guided-siw.js';
import {
  drawSiwInput,
  MAX_STEPS,
  mutateSiwOnce,
  SIW_GUIDED_BASES,
  SIW_MUTATIONS,
  type SiwGuidedInput,
  type SiwGuidedStep,
  siwGuidedSeeds,
  siwInputStream,
  siwStepReductions,
  stepMessages,
} from '../../../src/coverage/guided-siw-input.js';
import {
  FINDING_FORMAT,
  type FindingFile,
  FindingFileError,
  findingFileText,
  parseFindingFile,
  replayableInput,
} from '../../../src/probe/finding-file.js';
import { findingFilesOf } from '../../../src/probe/finding-files.js';
import { seededRandom } from '../../../src/probe/fuzz-loop.js';

const target = { stag: 0x5a3c2d01, address: 0x00007f3a12345678n };
const plain: MpaNegotiated = { crc: false, markers: false };
const withCrc: MpaNegotiated = { crc: true, markers: false };
const step = (base: number): SiwGuidedStep => ({ base, edits: [], ulpduDelta: 0, crcXor: 0 });
const inputOf = (bases: readonly number[]): SiwGuidedInput => ({
  mpaCrc: false,
  handshake: 'accept',
  postReceive: true,
  postRead: true,
  srq: false,
  steps: bases.map(step),
});
const baseOf = (name: (typeof SIW_GUIDED_BASES)[number]) => SIW_GUIDED_BASES.indexOf(name);

function decoded(stream: Uint8Array, n: MpaNegotiated): RdmapMessage[] {
  const r = decodeMpaStream(stream, { negotiated: n });
  if (!r.ok) throw r.error;
  expect(r.value.error).toBeUndefined();
  return r.value.fpdus.map((f) => {
    if (!f.message.ok) throw f.message.error;
    return f.message.value;
  });
}

/** The first `n` mutated inputs of `seed`, the corpus growing by every `keep`-th (feedback). */
function draws(seed: number, n: number, keep = 3): string[] {
  const random = seededRandom(seed);
  const corpus = siwGuidedSeeds();
  return Array.from({ length: n }, (_, i) => {
    const { input } = drawSiwInput(corpus, random);
    if (i % keep === 0) corpus.push(input);
    return JSON.stringify(input);
  });
}

describe('siw guided inputs: the seeds', () => {
  it('hold every base alone, then the multi-FPDU sequences, with and without CRCs', () => {
    const seeds = siwGuidedSeeds();
    expect(seeds.slice(0, SIW_GUIDED_BASES.length).map((s) => s.steps.map((x) => x.base))).toEqual(
      SIW_GUIDED_BASES.map((_, i) => [i]),
    );
    expect(seeds.filter((s) => s.mpaCrc)).toHaveLength(3);
    expect(seeds.filter((s) => s.srq).map((s) => s.steps)).toEqual([
      [step(baseOf('send')), step(baseOf('send'))],
    ]);
    expect(seeds.every((s) => s.postRead && s.postReceive)).toBe(true);
    expect(seeds.filter((s) => s.handshake !== 'accept').map((s) => s.handshake)).toEqual([
      'markers',
      'early-data',
      'reject',
    ]);
  });

  it('build FPDUs the codec decodes into the messages named, in both CRC modes', () => {
    for (const n of [plain, withCrc]) {
      for (const seed of siwGuidedSeeds()) {
        const { stream } = siwInputStream(seed, target, n);
        const kinds = decoded(stream, n).map((m) => m.kind);
        const names = seed.steps.map((s) => SIW_GUIDED_BASES[s.base] as string);
        expect(kinds).toHaveLength(names.length);
        kinds.forEach((k, i) => {
          const name = names[i] as string;
          const expected: Record<string, string> = {
            'send-not-last': 'send',
            'write-not-last': 'rdma-write',
            write: 'rdma-write',
            'read-response': 'rdma-read-response',
            'read-response-not-last': 'rdma-read-response',
            'read-request': 'rdma-read-request',
            'read-request-full': 'rdma-read-request',
            'terminate-bare': 'terminate',
            'terminate-siw-bits': 'terminate',
            'send-full': 'send',
            'atomic-fetch-add': 'atomic-request',
          };
          expect(k).toBe(expected[name] ?? name);
        });
      }
    }
  });

  it('give a two-segment Send one MSN and MO 0 then 8, and the next Send MSN 2', () => {
    const messages = stepMessages(
      inputOf([baseOf('send-not-last'), baseOf('send'), baseOf('send-se')]),
      target,
    );
    const ddp = messages.map((m) => m.ddp);
    expect(ddp).toEqual([
      expect.objectContaining({
        tagged: false,
        last: false,
        messageSequenceNumber: 1,
        messageOffset: 0,
      }),
      expect.objectContaining({
        tagged: false,
        last: true,
        messageSequenceNumber: 1,
        messageOffset: 8,
      }),
      expect.objectContaining({
        tagged: false,
        last: true,
        messageSequenceNumber: 2,
        messageOffset: 0,
      }),
    ]);
  });

  it('continue a two-segment Write and Read Response at the MR offset 8 further on', () => {
    const messages = stepMessages(
      inputOf([
        baseOf('write-not-last'),
        baseOf('write'),
        baseOf('read-response-not-last'),
        baseOf('read-response'),
      ]),
      target,
    );
    expect(messages.map((m) => m.ddp)).toEqual([
      { tagged: true, last: false, stag: target.stag, taggedOffset: target.address },
      { tagged: true, last: true, stag: target.stag, taggedOffset: target.address + 8n },
      { tagged: true, last: false, stag: target.stag, taggedOffset: target.address },
      { tagged: true, last: true, stag: target.stag, taggedOffset: target.address + 8n },
    ]);
  });
});

describe('siw guided inputs: the mutations', () => {
  it('are the same for a seed and the same feedback, and differ otherwise', () => {
    expect(draws(1, 60)).toEqual(draws(1, 60));
    expect(draws(1, 60)).not.toEqual(draws(2, 60));
    // Other feedback (another corpus growth) leaves the draws before it as they were.
    const other = draws(1, 60, 4);
    expect(other.slice(0, 2)).toEqual(draws(1, 60).slice(0, 2));
    expect(other).not.toEqual(draws(1, 60));
  });

  it('each keep an input that builds, with splits inside the stream and at most 8 steps', () => {
    const random = seededRandom(0x3c5a7e91);
    for (const kind of SIW_MUTATIONS) {
      let input: SiwGuidedInput = inputOf([
        baseOf('send-not-last'),
        baseOf('read-request'),
        baseOf('write'),
      ]);
      for (let k = 0; k < 12; k++) {
        input = mutateSiwOnce(input, random, kind);
        const n = input.mpaCrc ? withCrc : plain;
        const { stream, splits } = siwInputStream(input, target, n);
        expect(input.steps.length, kind).toBeGreaterThan(0);
        expect(input.steps.length, kind).toBeLessThanOrEqual(MAX_STEPS);
        for (const s of splits) {
          expect(s, kind).toBeGreaterThan(0);
          expect(s, kind).toBeLessThan(stream.length);
        }
      }
    }
  });

  it('split-header cuts inside the FPDU header (MPA length, DDP and RDMA headers)', () => {
    const random = seededRandom(7);
    const input = inputOf([baseOf('read-request')]);
    for (let k = 0; k < 30; k++) {
      const out = mutateSiwOnce(input, random, 'split-header');
      const at = out.steps[0]?.splits?.[0] ?? -1;
      expect(at).toBeGreaterThanOrEqual(1);
      // 2 (ULPDU Length) + 18 (untagged DDP) + 28 (Read Request header).
      expect(at).toBeLessThan(48);
    }
  });

  it('ulpdu-off sends the ULPDU Length the delta away from the segment length', () => {
    const input = inputOf([baseOf('write')]);
    const right = siwInputStream(input, target, plain).stream;
    const f = layoutField(MPA_FPDU_LAYOUT, 'ulpduLength');
    const lengthOf = (b: Uint8Array) => ((b[f.offset] ?? 0) << 8) | (b[f.offset + 1] ?? 0);
    const shifted = { ...input, steps: [{ ...(input.steps[0] as SiwGuidedStep), ulpduDelta: -3 }] };
    expect(lengthOf(siwInputStream(shifted, target, plain).stream)).toBe(lengthOf(right) - 3);
    // 14 (tagged DDP) + 8 payload bytes.
    expect(lengthOf(right)).toBe(22);
  });

  it('a CRC XOR changes exactly the FPDU CRC when CRCs are on', () => {
    const input = inputOf([baseOf('send')]);
    const right = siwInputStream(input, target, withCrc).stream;
    const wrong = siwInputStream(
      { ...input, steps: [{ ...(input.steps[0] as SiwGuidedStep), crcXor: 0x80400201 }] },
      target,
      withCrc,
    ).stream;
    const changed = [...right.keys()].filter((i) => right[i] !== wrong[i]);
    expect(changed).toEqual([
      right.length - 4,
      right.length - 3,
      right.length - 2,
      right.length - 1,
    ]);
  });

  it('msn-near-wrap and to-near-2^64 set the named field within 16 of its limit', () => {
    const random = seededRandom(11);
    const msn = mutateSiwOnce(inputOf([baseOf('send')]), random, 'msn-near-wrap');
    const e = msn.steps[0]?.edits[0];
    expect(e?.field).toBe('messageSequenceNumber');
    expect(BigInt(e?.value ?? '0')).toBeGreaterThanOrEqual(2n ** 32n - 16n);
    const to = mutateSiwOnce(inputOf([baseOf('write')]), random, 'to-near-2^64');
    const t = to.steps[0]?.edits[0];
    expect(t?.field).toBe('taggedOffset');
    expect(BigInt(t?.value ?? '0')).toBeGreaterThanOrEqual(2n ** 64n - 16n);
    const [m] = decoded(siwInputStream(to, target, plain).stream, plain);
    expect(m?.ddp).toMatchObject({ taggedOffset: BigInt(t?.value ?? '0') });
  });

  it('terminate-siw-bits sets the bits the stock siw reads as M, D and R beside the RFC ones', () => {
    const { stream } = siwInputStream(inputOf([baseOf('terminate-siw-bits')]), target, plain);
    // 2 (ULPDU Length) + 18 (untagged DDP) + 2: the Hdrct byte, RFC M D R (0xe0) and siw's (0x07).
    expect(stream[22]).toBe(0xe7);
    const edited: SiwGuidedInput = {
      ...inputOf([baseOf('terminate-bare')]),
      steps: [
        {
          ...step(baseOf('terminate-bare')),
          edits: [{ header: 'rdma', field: 'errorCode', value: '193' }],
        },
      ],
    };
    expect(siwInputStream(edited, target, plain).stream[21]).toBe(193);
  });

  it('reductions each change fewer things than the step they come from', () => {
    const s: SiwGuidedStep = {
      base: 0,
      edits: [
        { header: 'ddp', field: 'opcode', value: '12' },
        { header: 'ddp', field: 'messageOffset', value: '4294967295' },
      ],
      ulpduDelta: 4,
      crcXor: 1,
      cut: 9,
      extra: [1, 2],
      splits: [3],
    };
    const size = (x: SiwGuidedStep) =>
      x.edits.length +
      (x.ulpduDelta === 0 ? 0 : 1) +
      (x.crcXor === 0 ? 0 : 1) +
      (x.cut === undefined ? 0 : 1) +
      (x.extra === undefined ? 0 : 1) +
      (x.splits === undefined ? 0 : 1);
    const out = siwStepReductions(s);
    expect(out).toHaveLength(8);
    for (const r of out) expect(size(r)).toBeLessThan(size(s));
    expect(siwStepReductions(step(3))).toEqual([]);
  });
});

describe('siw guided inputs: in a finding file', () => {
  const input: SiwGuidedInput = {
    mpaCrc: true,
    handshake: 'accept',
    postReceive: false,
    postRead: true,
    srq: true,
    steps: [
      {
        base: baseOf('read-response-not-last'),
        edits: [{ header: 'ddp', field: 'taggedOffset', value: '18446744073709551609' }],
        ulpduDelta: -2,
        crcXor: 0x01020304,
        splits: [5],
      },
    ],
  };
  const file: FindingFile = {
    format: FINDING_FORMAT,
    kernelLine: '6.1',
    kernel: '6.1.0-57-amd64',
    device: 'siw0',
    oracle: 'guard-words',
    why: 'guard words outside the MR changed',
    seed: 0x2b4d6f81,
    originalLength: 3,
    sequence: { kind: 'guided-siw', inputs: [input] },
    minimize: { calls: 9, exhausted: false },
    toolVersion: '0.1.0',
  };

  it('is what the findings of a siw campaign summary become (findingFilesOf)', () => {
    const summary: SiwGuidedSummary = {
      kernel: '6.1.0-57-amd64',
      device: 'siw0',
      seed: 0x2b4d6f81,
      packets: 30,
      batches: 2,
      findings: [
        {
          seed: 0x2b4d6f81,
          index: 23,
          mutation: 'split-header+crc',
          why: 'guard words outside the MR changed',
          oracles: ['guard-words'],
          bytes: JSON.stringify(input),
          minimized: JSON.stringify(input),
        },
      ],
      guided: {
        inputKind: 'siw',
        feedback: 'blocks',
        inputs: 30,
        seeds: 23,
        corpus: 24,
        coverageStart: 1331,
        coverageEnd: 1504,
        kept: {},
        added: [],
        handshakes: { 'markers rejected': 1 },
        debugMessages: true,
      },
    };
    const [f] = findingFilesOf(summary);
    expect(f?.sequence).toEqual({ kind: 'guided-siw', inputs: [input] });
    expect(f?.kernelLine).toBe('6.1');
    expect(parseFindingFile(findingFileText(f as FindingFile)).sequence.kind).toBe('guided-siw');
  });

  it('reads back as the same replayable input', () => {
    const back = parseFindingFile(findingFileText(file), 'f.json');
    expect(back).toEqual(file);
    const r = replayableInput(back);
    expect(r).toEqual({ kind: 'guided-siw', inputs: [input] });
  });

  it('refuses a siw input without its connection flags or with a non-decimal value', () => {
    const broken = (patch: object) =>
      findingFileText({
        ...file,
        sequence: { kind: 'guided-siw', inputs: [{ ...input, ...patch }] },
      });
    expect(() => parseFindingFile(broken({ postRead: 'yes' }), 'a.json')).toThrow(
      new FindingFileError('a.json', 'a siw input needs postRead (true or false)'),
    );
    const badEdit = {
      steps: [{ ...input.steps[0], edits: [{ header: 'ddp', field: 'stag', value: '0x10' }] }],
    };
    expect(() => parseFindingFile(broken(badEdit), 'b.json')).toThrow(/decimal value/);
  });
});
