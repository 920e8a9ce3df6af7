import { execFileSync, spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFECT_FIXES, FIXED_RECORD_IDS } from '../../../src/findings/fixes.js';
import { RECORDS } from '../../../src/judge/records/index.js';
import { FIXES_ENV } from '../../../src/runtime/fixes-env.js';

// Issue 33: the suite on the fixed build (`run --fixes`), the scenarios in the fixed
// defects' record scopes only (about 40 s under TCG): rxe0 and siw0 on the fixed modules
// (scripts/guest/fixed-module.sh), the fixed librxe/libsiw first on LD_LIBRARY_PATH and
// RDMA_INTEROP_FIXES=1, as runtime/fixes-env.ts sets them up for a guest of its own. The
// devices are then keyed rxe+fixes and siw+fixes: every record holds as on stock but the
// fixed defects, so the run passes with no difference explained by a fixed defect.

const root = process.env.RDMA_INTEROP_ROOT ?? process.cwd();
const modulesRoot = process.env.MODULES_ROOT ?? '';
const FIXED = FIXED_RECORD_IDS;
// Each fix's suite scenarios: its suiteScope, else its record's scope (the tester's
// records of alsoFixes have no suite scenario).
const SCOPES = [
  ...new Set(
    DEFECT_FIXES.flatMap(
      (f) => f.suiteScope ?? RECORDS.filter((k) => k.id === f.recordId).flatMap((k) => k.scope),
    ),
  ),
];

interface Difference {
  readonly field: string;
  readonly explainedBy?: string;
}
interface ScenarioResult {
  readonly id: string;
  readonly verdict: string;
  readonly differences: readonly Difference[];
}
interface Results {
  readonly environment: { readonly devices: readonly { readonly provider: string }[] };
  readonly scenarios: readonly ScenarioResult[];
}

const switchTo = (kind: 'stock' | 'fixed') => {
  for (const driver of ['rxe', 'siw'])
    execFileSync('bash', [join(root, 'scripts/guest/fixed-module.sh'), driver, kind], {
      stdio: ['ignore', 'ignore', 'inherit'],
    });
};

describe('run --fixes: the fixed defects turn match, every other record still holds', () => {
  let status: number | null = null;
  let results: Results | undefined;
  let stderr = '';
  beforeAll(() => {
    switchTo('fixed');
    const run = spawnSync(
      process.execPath,
      [
        join(root, 'dist/cli/main.js'),
        'run',
        '--runtime',
        'host',
        '--fixes',
        '--json',
        '--scenario',
        `{${SCOPES.join(',')}}`,
      ],
      {
        encoding: 'utf8',
        env: {
          ...process.env,
          [FIXES_ENV]: '1',
          LD_LIBRARY_PATH: join(dirname(modulesRoot), 'fixes-rdma-core', 'lib'),
        },
        timeout: 240_000,
        maxBuffer: 64 * 1024 * 1024,
      },
    );
    status = run.status;
    stderr = run.stderr;
    try {
      results = JSON.parse(run.stdout) as Results;
    } catch {
      results = undefined;
    }
  }, 300_000);
  afterAll(() => switchTo('stock'), 120_000);

  it('runs on rxe+fixes and siw+fixes and passes (no unexplained or stale difference)', () => {
    expect(results, stderr).toBeDefined();
    expect(results?.environment.devices.map((d) => d.provider).sort()).toEqual([
      'rxe+fixes',
      'siw+fixes',
    ]);
    expect(status, stderr).toBe(0);
  });

  it('no difference is explained by a fixed defect; a scenario only it explained matches', () => {
    const scenarios = results?.scenarios ?? [];
    expect(scenarios.length).toBeGreaterThan(DEFECT_FIXES.length);
    const byFixed = scenarios.flatMap((s) =>
      s.differences
        .filter((d) => d.explainedBy !== undefined && FIXED.has(d.explainedBy))
        .map((d) => `${s.id} ${d.field}: ${d.explainedBy}`),
    );
    expect(byFixed).toEqual([]);
    for (const id of ['rxe-mw2-outside-window', 'siw-solicited-event', 'rxe-atomic-short-sge-ex'])
      expect(scenarios.find((s) => s.id === id)?.verdict, id).toBe('match');
  });
});
