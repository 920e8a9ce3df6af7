/**
 * Issue 21, CI: `rdma-interop probe` on every kernel line (6.1, 6.12, 7.3; one guest
 * each): the RoCE tester against rxe, and siw0 on the stock and the patched siw (the
 * set-up builds the patched one for every line), plus a bounded fuzz of FUZZ_IN_CI packets
 * per line (seed 1), to rxe and to siw0. `npm run fuzz:wire` runs 10^5. Every result must pass or be a
 * recorded behaviour, no fuzz packet may hurt siw, the report must say for each line
 * whether it has each 2026 fix (rxe's two and siw's two), and it keeps the RoCE pcaps.
 * This run replaces the kernel test of the RoCE tester (it ran the same 6.1 assertions).
 * Measured on 2026-11-25: 257 s at load 1-2 (docs/figures.md).
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
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
    'passes on 6.1, 6.12 and 7.3, rxe and stock and patched siw0, with a bounded fuzz',
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
        const passed = (r: { verdict: string }) => r.verdict === 'pass' || r.verdict === 'known';
        const columns = {
          rxe: here.filter((r) => r.provider === 'rxe'),
          stock: here.filter((r) => r.siwVariant === 'stock'),
          rfc7306: here.filter((r) => r.siwVariant === 'rfc7306'),
        };
        for (const [column, rows] of Object.entries(columns)) {
          expect(rows.length, `${k.line} ${column}`).toBeGreaterThan(10);
          expect(
            rows.filter((r) => !passed(r)).map((r) => `${r.id}: ${r.verdict}`),
            `${k.line} ${column}`,
          ).toEqual([]);
        }
        const fuzz = doc.fuzz.filter((f) => f.kernel === k.release);
        expect(
          fuzz.map((f) => [f.device, f.packets, f.findings.length]),
          k.line,
        ).toEqual([
          ['rxe_t', FUZZ_IN_CI, 0],
          ['siw0', FUZZ_IN_CI, 0],
        ]);
      }
      expect(doc.fixes.map((f) => f.assertion.split('-')[0]).sort()).toEqual([
        'roce',
        'roce',
        'siw',
        'siw',
      ]);
      for (const fix of doc.fixes)
        expect(Object.values(fix.kernels).every((v) => v !== 'not run')).toBe(true);
      expect(readdirSync(join(report, 'pcaps')).sort()).toEqual(
        ['6.1', '6.12', '7.3'].map((line) => `${line}-rxe_t.pcap`),
      );
      expect(readFileSync(join(report, 'report.md'), 'utf8')).toMatch(/## 2026 fixes, as observed/);
    },
    30 * 60_000,
  );
});
