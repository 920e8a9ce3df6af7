import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { appliesIn, KNOWN_BEHAVIOUR } from '../../../src/interop/known-behaviour.js';
import { SCENARIOS } from '../../../src/interop/scenarios.js';
import {
  loadedSiwVariant,
  PATCHED_SIW_PROVIDER,
  siwProvider,
  usesRfc7306,
} from '../../../src/interop/siw-variant.js';

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
    expect(applying).toEqual(['siw-query-qp-state']);
    expect(
      KNOWN_BEHAVIOUR.filter((k) => appliesIn(k, { ...env, provider: 'siw' })).map((k) => k.id),
    ).toContain('libsiw-no-atomics');
  });
});
