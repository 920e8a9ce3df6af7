/**
 * Issue 21, CI: `rdma-interop probe` on every kernel line (6.1, 6.12, 7.3; one guest
 * each), siw0 on the stock and the patched siw (the patched one is built for 6.1; the
 * other lines record it as not-run), plus a bounded fuzz of FUZZ_IN_CI packets per line
 * (seed 1). `npm run fuzz:wire` runs 10^5. Every result must pass or be a recorded
 * behaviour, no fuzz packet may hurt siw, and the report must say for each line whether it
 * has each 2026 siw fix.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ProbeDocument } from '../../../src/interop/tester/probe-report.js';

/** Packets per kernel line in CI (about a quarter of a second each under TCG). */
const FUZZ_IN_CI = 40;
// Kept after the run (git-ignored cache), as the kernel matrix's report is.
const report = join('.cache', 'results', 'probe');
rmSync(report, { recursive: true, force: true });
mkdirSync(report, { recursive: true });

describe('probe on every kernel line', () => {
  it(
    'passes on 6.1, 6.12 and 7.3, stock and patched siw0, with a bounded fuzz',
    () => {
      const run = spawnSync(
        process.execPath,
        [
          'dist/cli/main.js',
          'probe',
          '--kernels',
          'all',
          '--siw',
          'both',
          '--fuzz',
          String(FUZZ_IN_CI),
          '--seed',
          '1',
          '--report',
          report,
        ],
        { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 },
      );
      const tail = `${run.stdout.slice(-6000)}\n${run.stderr.slice(-4000)}`;
      expect(run.status, tail).toBe(0);
      const doc = JSON.parse(readFileSync(join(report, 'results.json'), 'utf8')) as ProbeDocument;
      expect(doc.kernels.map((k) => [k.line, k.release.split('.').slice(0, 2).join('.')])).toEqual([
        ['6.1', '6.1'],
        ['6.12', '6.12'],
        ['7.3', '7.3'],
      ]);
      for (const k of doc.kernels) {
        const here = doc.assertions.filter((r) => r.kernel === k.release);
        const stock = here.filter((r) => r.siwVariant === 'stock');
        expect(stock.length, k.line).toBeGreaterThan(10);
        expect(stock.every((r) => r.verdict === 'pass' || r.verdict === 'known')).toBe(true);
        const patched = here.filter((r) => r.siwVariant === 'rfc7306');
        expect(
          patched.every((r) => r.verdict === (k.line === '6.1' ? r.verdict : 'not-run')),
          k.line,
        ).toBe(true);
        if (k.line === '6.1')
          expect(patched.filter((r) => r.verdict === 'pass' || r.verdict === 'known').length).toBe(
            patched.length,
          );
        const fuzz = doc.fuzz.filter((f) => f.kernel === k.release);
        expect(
          fuzz.map((f) => [f.packets, f.findings.length]),
          k.line,
        ).toEqual([[FUZZ_IN_CI, 0]]);
      }
      for (const fix of doc.fixes)
        expect(Object.values(fix.kernels).every((v) => v !== 'not run')).toBe(true);
      expect(readFileSync(join(report, 'report.md'), 'utf8')).toMatch(/## 2026 fixes, as observed/);
    },
    30 * 60_000,
  );
});
