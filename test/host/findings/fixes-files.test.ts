import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFECT_FIXES } from '../../../src/findings/fixes.js';

// The files behind DEFECT_FIXES (issue 33): every reproducer and patch it names exists, every
// reproducer in repro/ is named by exactly one entry, and a kernel line's own variant of a
// patch (patches/<driver>-fixes/<line>/) replaces a patch of the series by the same name.

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

  it('lets a kernel line replace a patch only by one of the same name', () => {
    const strays: string[] = [];
    for (const dir of PATCH_DIRS) {
      const series = new Set(readdirSync(join(root, dir)).filter((f) => f.endsWith('.patch')));
      for (const entry of readdirSync(join(root, dir))) {
        const line = join(root, dir, entry);
        if (!statSync(line).isDirectory()) continue;
        for (const p of readdirSync(line)) if (!series.has(p)) strays.push(`${dir}/${entry}/${p}`);
      }
    }
    expect(strays).toEqual([]);
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
