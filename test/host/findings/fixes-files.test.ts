import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFECT_FIXES } from '../../../src/findings/fixes.js';

// The files behind DEFECT_FIXES (issue 33): every reproducer and patch it names exists, every
// reproducer in repro/ is named by exactly one entry, and a kernel line's own variant of a
// patch (patches/<driver>-fixes/<line>/) replaces a patch of the series by the same name, or
// leaves it out (<same name>.upstream: the line has the fix upstream, the file says where), or
// is a fix of that line alone that DEFECT_FIXES names (code only that line has: rxe ODP, 7.3).

const root = join(import.meta.dirname, '..', '..', '..');
const PATCH_DIRS = ['patches/rxe-fixes', 'patches/siw-fixes', 'patches/rdma-core-fixes'];

describe('DEFECT_FIXES and the files it names', () => {
  it('names reproducers and patches that exist', () => {
    const missing = DEFECT_FIXES.flatMap((f) => [f.reproducer, ...f.patches]).filter(
      (p) => !existsSync(join(root, p)),
    );
    expect(missing).toEqual([]);
  });

  it('has one entry per reproducer in repro/, each exiting 1 on the defect (says so in its header)', () => {
    const sources = readdirSync(join(root, 'repro'))
      .filter((f) => f.endsWith('.c'))
      .map((f) => `repro/${f}`)
      .sort();
    expect(DEFECT_FIXES.map((f) => f.reproducer).sort()).toEqual(sources);
    for (const source of sources)
      expect(readFileSync(join(root, source), 'utf8'), source).toMatch(/Exit 1: /);
  });

  it('lets a kernel line replace a patch only by one of the same name, or add one DEFECT_FIXES names', () => {
    const named = new Set(DEFECT_FIXES.flatMap((f) => f.patches));
    const strays: string[] = [];
    for (const dir of PATCH_DIRS) {
      const series = new Set(readdirSync(join(root, dir)).filter((f) => f.endsWith('.patch')));
      for (const entry of readdirSync(join(root, dir))) {
        const line = join(root, dir, entry);
        if (!statSync(line).isDirectory()) continue;
        for (const p of readdirSync(line))
          if (!series.has(p.replace(/\.upstream$/, '')) && !named.has(`${dir}/${entry}/${p}`))
            strays.push(`${dir}/${entry}/${p}`);
      }
    }
    expect(strays).toEqual([]);
  });

  it('leaves a patch out of a line only with a reason, where a record ends before that line', () => {
    const markers = PATCH_DIRS.flatMap((dir) =>
      readdirSync(join(root, dir))
        .filter((e) => statSync(join(root, dir, e)).isDirectory())
        .flatMap((line) =>
          readdirSync(join(root, dir, line))
            .filter((p) => p.endsWith('.upstream'))
            .map((p) => ({
              path: `${dir}/${line}/${p}`,
              line,
              patch: `${dir}/${p.replace(/\.upstream$/, '')}`,
            })),
        ),
    );
    expect(markers.length).toBeGreaterThan(0);
    for (const m of markers) {
      expect(readFileSync(join(root, m.path), 'utf8').trim(), m.path).toMatch(/upstream/);
      const fix = DEFECT_FIXES.find((f) => f.patches.includes(m.patch));
      expect(fix?.fixedUpstream, m.path).toBeDefined();
    }
  });

  it('carries a Signed-off-by in every patch, and the kernel ones a subsystem prefix', () => {
    for (const dir of PATCH_DIRS)
      for (const p of readdirSync(join(root, dir)).filter(
        (f) => f.endsWith('.patch') && f !== '0000-cover-letter.patch',
      )) {
        const text = readFileSync(join(root, dir, p), 'utf8');
        expect(text, p).toMatch(/^Signed-off-by: /m);
        if (dir !== 'patches/rdma-core-fixes')
          expect(text, p).toMatch(/^Subject: \[PATCH[^\]]*\] RDMA\/(rxe|siw): /m);
      }
    expect(DEFECT_FIXES.every((f) => f.patches.every((p) => basename(p).endsWith('.patch')))).toBe(
      true,
    );
  });
});
