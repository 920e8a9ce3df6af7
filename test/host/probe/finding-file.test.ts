import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { GuidedSummary } from '../../../src/coverage/guided-roce.js';
import {
  FINDING_FORMAT,
  type FindingFile,
  FindingFileError,
  findingFileText,
  kernelLineOf,
  parseFindingFile,
  readFindingFile,
  replayableInput,
  toolVersion,
  writeFindingFile,
} from '../../../src/probe/finding-file.js';
import { findingFilesOf, writeFindingFiles } from '../../../src/probe/finding-files.js';
import type { FuzzSummary } from '../../../src/probe/fuzz-loop.js';

const dir = mkdtempSync(join(tmpdir(), 'finding-file-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const guided: FindingFile = {
  format: FINDING_FORMAT,
  kernelLine: '6.12',
  kernel: '6.12.74+deb13-amd64',
  device: 'rxe_t',
  oracle: 'guard-words',
  why: 'the guard region (no remote rights) changed',
  seed: 0x1f2e3d4c,
  originalLength: 6,
  sequence: {
    kind: 'guided',
    inputs: [
      {
        startPsn: 0xfffffe,
        steps: [
          {
            base: 0,
            psnOffset: 1,
            edits: [{ at: 16, bytes: [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xc1] }],
            cut: 40,
            icrcXor: 0x89abcdef,
          },
        ],
      },
    ],
  },
  minimize: { calls: 17, exhausted: false },
  toolVersion: toolVersion(),
};

const packets: FindingFile = {
  ...guided,
  kernelLine: '6.1',
  kernel: '6.1.158-1-amd64',
  device: 'siw0',
  oracle: 'kernel-log/kasan',
  originalLength: 25,
  sequence: { kind: 'packets', packets: ['0012a1b2', 'c3d4e5'] },
  minimize: { calls: 200, exhausted: true },
};

describe('finding files', () => {
  it('round-trips a guided finding and a packets finding through a file', () => {
    for (const [n, f] of [guided, packets].entries()) {
      const path = writeFindingFile(dir, f, n);
      expect(path).toBe(join(dir, 'findings', `${f.kernelLine}-${f.device}-${f.seed}-${n}.json`));
      expect(readFindingFile(path)).toEqual(f);
    }
  });

  it('reads back into a replayable input', () => {
    const g = replayableInput(guided);
    expect(g.kind).toBe('guided');
    if (g.kind === 'guided')
      expect(g.inputs).toEqual(guided.sequence.kind === 'guided' ? guided.sequence.inputs : []);
    const p = replayableInput(packets);
    expect(p).toEqual({
      kind: 'packets',
      packets: [Uint8Array.of(0x00, 0x12, 0xa1, 0xb2), Uint8Array.of(0xc3, 0xd4, 0xe5)],
    });
  });

  it('names the kernel line of a release', () => {
    expect(kernelLineOf('6.12.74+deb13-amd64')).toBe('6.12');
    expect(kernelLineOf('7.3.0-rc2')).toBe('7.3');
  });

  const broken = (patch: Record<string, unknown>): string =>
    JSON.stringify({ ...JSON.parse(findingFileText(guided)), ...patch });

  it.each([
    ['not JSON', '{', /not JSON/],
    ['not an object', '[1]', /not a JSON object/],
    ['another format', broken({ format: 'rdma-interop-finding/0' }), /format is/],
    ['no oracle', broken({ oracle: '' }), /oracle is missing/],
    ['a seed over 32 bits', broken({ seed: 2 ** 32 }), /seed/],
    ['a zero original length', broken({ originalLength: 0 }), /originalLength/],
    ['no minimize figures', broken({ minimize: { calls: 1 } }), /minimize needs/],
    ['an unknown sequence kind', broken({ sequence: { kind: 'frames' } }), /unknown sequence kind/],
    ['odd hex', broken({ sequence: { kind: 'packets', packets: ['abc'] } }), /hex/],
    ['no packets', broken({ sequence: { kind: 'packets', packets: [] } }), /empty/],
    [
      'an edit byte over 255',
      broken({
        sequence: {
          kind: 'guided',
          inputs: [
            {
              startPsn: 1,
              steps: [{ base: 0, psnOffset: 0, icrcXor: 0, edits: [{ at: 0, bytes: [256] }] }],
            },
          ],
        },
      }),
      /an edit needs/,
    ],
    [
      'a start PSN of 2^24',
      broken({ sequence: { kind: 'guided', inputs: [{ startPsn: 0x1000000, steps: [] }] } }),
      /startPsn/,
    ],
  ])('refuses %s with a FindingFileError', (_, text, message) => {
    expect(() => parseFindingFile(text, 'f.json')).toThrow(FindingFileError);
    expect(() => parseFindingFile(text, 'f.json')).toThrow(message);
    expect(() => parseFindingFile(text, 'f.json')).toThrow(/^f\.json: /);
  });

  it('reports a missing file as a FindingFileError', () => {
    expect(() => readFindingFile(join(dir, 'absent.json'))).toThrow(FindingFileError);
  });

  it('reports a malformed file on disk by its path', () => {
    const path = join(dir, 'bad.json');
    writeFileSync(path, '{"format": 1}');
    expect(() => readFindingFile(path)).toThrow(`${path}: format is 1`);
  });
});

describe('the finding files of a probe run', () => {
  const loop: FuzzSummary = {
    kernel: '6.1.158-1-amd64',
    device: 'siw0',
    seed: 7,
    packets: 50,
    batches: 2,
    findings: [
      {
        seed: 7,
        index: 24,
        mutation: 'batch 0-24',
        why: 'BUG: KASAN: slab-out-of-bounds',
        oracles: ['kernel-log/kasan'],
        bytes: 'aa01,bb02,cc03',
        minimized: 'bb02',
        minimization: {
          oracle: 'kernel-log/kasan',
          originalLength: 3,
          sequence: { kind: 'packets', packets: ['bb02'] },
          calls: 5,
          exhausted: false,
        },
      },
      // The sender failed before a byte went out: nothing to replay, no file.
      {
        seed: 7,
        index: 30,
        mutation: 'm',
        why: 'the peer failed',
        oracles: ['harness'],
        bytes: '',
        minimized: '',
      },
    ],
  };
  const input = { startPsn: 0xa5c3, steps: [{ base: 2, psnOffset: 0, edits: [], icrcXor: 1 }] };
  const guidedRun = {
    ...loop,
    kernel: '7.3.1-amd64',
    device: 'rxe_t',
    findings: [
      {
        seed: 7,
        index: 3,
        mutation: 'icrc',
        why: 'w',
        oracles: ['guard-words'],
        bytes: JSON.stringify(input),
        minimized: JSON.stringify(input),
      },
    ],
    guided: {
      feedback: 'none',
      inputs: 50,
      seeds: 13,
      corpus: 13,
      coverageStart: 0,
      coverageEnd: 0,
      kept: {},
      added: [],
    },
  } satisfies GuidedSummary;

  it('makes a file per finding with bytes: minimized, or as found with 0 calls', () => {
    const [minimized] = findingFilesOf(loop);
    expect(findingFilesOf(loop)).toHaveLength(1);
    expect(minimized).toMatchObject({
      kernelLine: '6.1',
      device: 'siw0',
      oracle: 'kernel-log/kasan',
      originalLength: 3,
      sequence: { kind: 'packets', packets: ['bb02'] },
      minimize: { calls: 5, exhausted: false },
    });
    expect(findingFilesOf(guidedRun)).toEqual([
      expect.objectContaining({
        kernelLine: '7.3',
        oracle: 'guard-words',
        originalLength: 1,
        sequence: { kind: 'guided', inputs: [input] },
        minimize: { calls: 0, exhausted: false },
      }),
    ]);
  });

  it('writes them where the report goes, each one readable back', () => {
    const out = join(dir, 'report');
    const paths = writeFindingFiles(out, [loop, guidedRun]);
    expect(readdirSync(join(out, 'findings')).sort()).toEqual([
      '6.1-siw0-7-0.json',
      '7.3-rxe_t-7-0.json',
    ]);
    for (const p of paths) expect(readFindingFile(p).toolVersion).toBe(toolVersion());
  });
});
