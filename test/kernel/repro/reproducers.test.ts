import { execFileSync } from 'node:child_process';
import { release } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { DEFECT_FIXES } from '../../../src/findings/fixes.js';
import { RECORDS } from '../../../src/judge/records/index.js';
import { inRange } from '../../../src/judge/version-range.js';

// Issue 33: each defect's standalone reproducer (repro/) shows its defect on the stock build
// of this guest's kernel line (exit 1) and not on the fixed one (exit 0): the fixed rdma_rxe.ko
// and siw.ko (patches/rxe-fixes, patches/siw-fixes) loaded in place of the stock modules, the
// fixed librxe and libsiw (patches/rdma-core-fixes) first on LD_LIBRARY_PATH.
// scripts/guest/repro-all.sh does the switching and puts rxe0 and siw0 back on the stock
// modules afterwards; scripts/setup/fixes.sh builds what it needs. A defect upstream fixed
// before this line (its record's kernel range ends before it: siw-query-qp-state after 6.1)
// shows on neither build: stock exits 0 too.

const root = process.env.RDMA_INTEROP_ROOT ?? process.cwd();
const LINE = /^repro (\S+) (stock|fixed) exit=(\d+) (defect|fine|setup-failed)/;

interface Outcome {
  readonly exit: number;
  readonly verdict: string;
}

describe('defect reproducers: the defect on the stock build, none on the fixed build', () => {
  const outcomes = new Map<string, Outcome>();
  let output = '';
  beforeAll(() => {
    try {
      output = execFileSync('bash', [join(root, 'scripts/guest/repro-all.sh'), 'both'], {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'inherit'],
        timeout: 300_000,
      });
    } catch (error) {
      output = String((error as { stdout?: string }).stdout ?? '');
    }
    for (const line of output.split('\n')) {
      const m = LINE.exec(line);
      if (m?.[1] && m[2] && m[3] && m[4])
        outcomes.set(`${m[1]} ${m[2]}`, { exit: Number(m[3]), verdict: m[4] });
    }
  }, 320_000);

  for (const fix of DEFECT_FIXES) {
    const name = fix.reproducer.replace(/^repro\//, '').replace(/\.c$/, '');
    const present = RECORDS.some((k) => k.id === fix.recordId && inRange(release(), k.kernel));
    const stock = present ? { exit: 1, verdict: 'defect' } : { exit: 0, verdict: 'fine' };
    it(`${fix.recordId} (${fix.component}): ${name} exits ${stock.exit} on stock, 0 on fixed`, () => {
      expect({
        name,
        stock: outcomes.get(`${name} stock`),
        fixed: outcomes.get(`${name} fixed`),
      }).toEqual({
        name,
        stock,
        fixed: { exit: 0, verdict: 'fine' },
      });
    });
  }
});
