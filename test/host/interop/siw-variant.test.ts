import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { compareOutcomes } from '../../../src/interop/compare.js';
import { expectedOutcome } from '../../../src/interop/expected.js';
import { SCENARIOS } from '../../../src/interop/scenarios.js';
import { usesRfc7306 } from '../../../src/interop/siw-variant.js';
import { appliesIn, PATCHED_SIW_PROVIDER, siwProvider } from '../../../src/judge/record.js';
import { KNOWN_BEHAVIOUR } from '../../../src/judge/records/index.js';
import { loadedSiwVariant } from '../../../src/runtime/siw-module.js';

const CLI = join(process.cwd(), 'dist', 'cli', 'main.js');

describe('siw variants: stock and the patched siw (siw+rfc7306)', () => {
  it('reads the loaded module from its sysfs directory: none, stock, rfc7306=Y, rfc7306=N', () => {
    const dir = mkdtempSync(join(tmpdir(), 'siw-variant-'));
    try {
      const siw = join(dir, 'siw');
      expect(loadedSiwVariant(siw)).toBeUndefined();
      mkdirSync(join(siw, 'parameters'), { recursive: true });
      expect(loadedSiwVariant(siw)).toBe('stock');
      writeFileSync(join(siw, 'parameters', 'rfc7306'), 'Y\n');
      expect(loadedSiwVariant(siw)).toBe('rfc7306');
      writeFileSync(join(siw, 'parameters', 'rfc7306'), 'N\n');
      expect(loadedSiwVariant(siw)).toBe('stock');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    expect([siwProvider('rfc7306'), siwProvider('stock'), siwProvider(undefined)]).toEqual([
      'siw+rfc7306',
      'siw',
      'siw',
    ]);
  });

  it('the patched pass selects the siw0 scenarios that post atomics, immediates or hammer', () => {
    const ids = SCENARIOS.filter((s) => s.device === 'siw0' && usesRfc7306(s)).map((s) => s.id);
    expect(ids).toContain('siw-fetch-add');
    expect(ids).toContain('siw-write-imm-0');
    expect(ids).toContain('siw-concurrent-fetch-add');
    expect(ids).not.toContain('siw-write');
    expect(ids).not.toContain('siw-send');
    const listed = execFileSync(process.execPath, [CLI, 'run', '--list', '--siw', 'rfc7306'], {
      encoding: 'utf8',
    })
      .trimEnd()
      .split('\n')
      .map((line) => line.split('\t')[0]);
    expect(listed).toEqual(ids);
  });

  it("stock siw's refusals do not apply to siw+rfc7306; rows marked alsoFor do", () => {
    const env = { provider: PATCHED_SIW_PROVIDER, kernel: '6.1.0-56-amd64', rdmaCore: '56.1' };
    const applying = KNOWN_BEHAVIOUR.filter((k) => appliesIn(k, env)).map((k) => k.id);
    expect(applying).toContain('siw-query-qp-state');
    expect(applying).toContain('libsiw-no-send-imm');
    expect(applying).not.toContain('libsiw-no-atomics');
    expect(applying).not.toContain('libsiw-no-write-imm');
    // Every other row that applies is the patched siw's own.
    for (const k of KNOWN_BEHAVIOUR.filter((r) => appliesIn(r, env)))
      expect([k.provider, ...(k.alsoFor ?? [])]).toContain(PATCHED_SIW_PROVIDER);
    expect(
      KNOWN_BEHAVIOUR.filter((k) => appliesIn(k, { ...env, provider: 'siw' })).map((k) => k.id),
    ).toContain('libsiw-no-atomics');
  });

  it('iWARP write-with-immediate: the Immediate Data bytes land in the receive at offset 24 (RFC 7306 §6.3)', () => {
    const memory = (id: string): Record<string, string> => {
      const scenario = SCENARIOS.find((s) => s.id === id);
      if (scenario === undefined) throw new Error(`no scenario ${id}`);
      const { fields } = expectedOutcome(scenario);
      return { 'mem[8]': fields['mem[8]'] ?? '', 'mem[24]': fields['mem[24]'] ?? '' };
    };
    // imm_data 0x12345678 zero-extended, 00 00 00 00 12 34 56 78 in memory, read as a
    // little-endian word; the Write's payload at offset 8 (0x8877665544332211).
    for (const id of ['siw-write-imm', 'siw-write-imm-16', 'siw-write-imm-solicited'])
      expect(memory(id)).toEqual({
        'mem[8]': '0x8877665544332211',
        'mem[24]': '0x7856341200000000',
      });
    // RoCE's ImmDt rides in the header: its receive has no bytes and the word keeps the
    // initial pattern (0x0123456789abcdef is put at offset 8 only).
    expect(memory('rxe-write-imm')['mem[24]']).not.toBe('0x7856341200000000');
  });

  it('the wire compares each direction in order, not how a capture interleaves the two', () => {
    const engine = 'requester> a1\nresponder> r1\nrequester> a2\nresponder> r2';
    const pipelined = 'requester> a1\nrequester> a2\nresponder> r1\nresponder> r2';
    const reordered = 'requester> a2\nrequester> a1\nresponder> r1\nresponder> r2';
    const diff = (kernel: string) =>
      compareOutcomes({ fields: { wire: engine } }, { fields: { wire: kernel } });
    expect(diff(pipelined)).toEqual([]);
    expect(diff(reordered)).toEqual([{ field: 'wire', engine, kernel: reordered }]);
  });
});
