/**
 * Issue 32: block coverage from the collector's dump to files and lines, by phase; and the
 * guided fuzz's inputs: seeds, mutations (deterministic by seed), and the bytes a step makes.
 */
import { describe, expect, it } from 'vitest';
import {
  type BlockSite,
  type BlockSnapshot,
  buildBlockCoverage,
  parseBlockDump,
  ranges,
  renderBlockCoverage,
} from '../../../src/coverage/blocks.js';
import {
  applyStep,
  beBytes,
  fieldSlots,
  GUIDED_BASES,
  type GuidedInput,
  guidedSeeds,
  MUTATIONS,
  mutate,
  mutateOnce,
  RESERVED_OPCODES,
} from '../../../src/coverage/guided-input.js';
import { seededRandom } from '../../../src/probe/fuzz-loop.js';

const DUMP = `section rdma_rxe .text 0xffffffffc0a01000
section rdma_rxe .text.unlikely 0xffffffffc0a20000
section siw .text 0xffffffffc0b01000
lost 0
ffffffffc0a01010
ffffffffc0b01020
`;

const SITES: Record<string, BlockSite[]> = {
  rdma_rxe: [
    { section: '.text', offset: 0x10, file: 'rxe_recv.c', line: 310, function: 'rxe_rcv' },
    { section: '.text', offset: 0x30, file: 'rxe_recv.c', line: 312, function: 'rxe_rcv' },
    { section: '.text', offset: 0x50, file: 'rxe_resp.c', line: 700, function: 'rxe_responder' },
    { section: '.text.unlikely', offset: 0x8, file: 'rxe_resp.c', line: 701, function: 'x' },
  ],
  siw: [
    {
      section: '.text',
      offset: 0x20,
      file: 'siw_qp_rx.c',
      line: 1380,
      function: 'siw_tcp_rx_data',
    },
  ],
};

describe('block coverage', () => {
  it("parses the guest script's dump", () => {
    expect(parseBlockDump(DUMP)).toEqual({
      sections: {
        rdma_rxe: { '.text': 'ffffffffc0a01000', '.text.unlikely': 'ffffffffc0a20000' },
        siw: { '.text': 'ffffffffc0b01000' },
      },
      pcs: ['ffffffffc0a01010', 'ffffffffc0b01020'],
      lost: 0,
    });
  });
  it('gives each block the phase that first reached it, per file and line', () => {
    const first = parseBlockDump(DUMP);
    const later = { ...first, pcs: [...first.pcs, 'ffffffffc0a01050', 'ffffffffc0a20008'] };
    const snapshots: BlockSnapshot[] = [
      { before: 'tester', blocks: first },
      { before: 'guided', blocks: first },
      { before: 'end', blocks: later },
    ];
    const c = buildBlockCoverage('6.1.0-57-amd64', snapshots, (m) => SITES[m] ?? []);
    expect(c.phases).toEqual(['setup', 'tester', 'guided']);
    const byFile = Object.fromEntries(c.files.map((f) => [f.file, f]));
    expect(byFile['rxe_recv.c']?.reached).toEqual({ all: 1, setup: 1 });
    expect(byFile['rxe_recv.c']?.lines).toEqual([
      { line: 310, first: 'setup' },
      { line: 312, first: null },
    ]);
    expect(byFile['rxe_resp.c']?.reached).toEqual({ all: 2, guided: 2 });
    expect(byFile['siw_qp_rx.c']?.reached).toEqual({ all: 1, setup: 1 });
    const md = renderBlockCoverage([c]);
    expect(md).toMatch(
      /\| rdma_rxe \| rxe_resp\.c \| 2 \| 0 \(0\.0 %\) \| 0 \(0\.0 %\) \| 2 \(100\.0 %\) \|/,
    );
    expect(md).toMatch(/### rxe_recv\.c: lines never reached \(1 of 2\)\n\n312/);
  });
  it('writes line ranges', () => {
    expect(ranges([3, 4, 5, 9, 11, 12])).toBe('3-5, 9, 11-12');
    expect(ranges([])).toBe('');
  });
});

describe('guided fuzz inputs', () => {
  it('seeds each base alone and the multi-packet sequences', () => {
    const seeds = guidedSeeds(0xa5c3);
    expect(seeds.length).toBeGreaterThan(GUIDED_BASES.length + 4);
    expect(seeds.slice(0, 9).map((s) => s.steps[0]?.base)).toEqual(
      GUIDED_BASES.slice(0, 9).map((_, i) => i),
    );
    expect(seeds[12]?.steps.map((s) => GUIDED_BASES[s.base])).toEqual([
      'RC_RDMA_WRITE_FIRST',
      'RC_RDMA_WRITE_MIDDLE',
      'RC_RDMA_WRITE_LAST',
    ]);
  });
  it('lays out the fields of a base by the codec: RETH after the BTH', () => {
    const slots = fieldSlots(GUIDED_BASES.indexOf('RC_RDMA_WRITE_ONLY'));
    expect(slots.find((s) => s.name === 'RETH.virtualAddress')).toEqual({
      name: 'RETH.virtualAddress',
      at: 12,
      width: 8,
    });
    expect(slots.find((s) => s.name === 'RETH.dmaLength')?.at).toBe(24);
    const atomic = fieldSlots(GUIDED_BASES.indexOf('RC_FETCH_ADD'));
    expect(atomic.find((s) => s.name === 'AtomicETH.compareData')?.at).toBe(32);
  });
  it('lists the reserved opcodes (none of them a known one)', () => {
    expect(RESERVED_OPCODES).not.toContain(0x0a);
    expect(RESERVED_OPCODES).toContain(0x1f);
  });
  it('is deterministic from the seed and reaches every mutation', () => {
    const seed = guidedSeeds(0xa5c3)[0] as GuidedInput;
    const run = (s: number) => {
      const random = seededRandom(s);
      return Array.from({ length: 50 }, () => mutate(seed, random));
    };
    expect(run(7)).toEqual(run(7));
    expect(run(7)).not.toEqual(run(8));
    const random = seededRandom(3);
    for (const kind of MUTATIONS) expect(() => mutateOnce(seed, random, kind)).not.toThrow();
  });
  it('puts an address near 2^64 into the RETH and a PSN near the wrap', () => {
    const seed = guidedSeeds(0xa5c3)[0] as GuidedInput;
    const random = seededRandom(11);
    const va = mutateOnce(seed, random, 'va-near-2^64');
    const edit = va.steps[0]?.edits[0];
    expect(edit?.at).toBe(12);
    expect(edit?.bytes.slice(0, 7)).toEqual([0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]);
    expect(mutateOnce(seed, random, 'psn-near-wrap').startPsn).toBeGreaterThanOrEqual(0xfffffd);
  });
  it('applies edits, the cut and the extension to the transport bytes', () => {
    const base = Uint8Array.from({ length: 28 }, (_, i) => i);
    const out = applyStep(base, {
      base: 0,
      psnOffset: 0,
      edits: [{ at: 12, bytes: beBytes(0xfffffffffffffff8n, 8) }],
      cut: 20,
      extra: [0xaa, 0xbb],
      icrcXor: 0,
    });
    expect([...out]).toEqual([
      ...Array.from({ length: 12 }, (_, i) => i),
      0xff,
      0xff,
      0xff,
      0xff,
      0xff,
      0xff,
      0xff,
      0xf8,
      0xaa,
      0xbb,
    ]);
  });
});
