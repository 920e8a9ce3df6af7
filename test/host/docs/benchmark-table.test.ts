/**
 * Issue 32, generated docs: docs/probe.md's benchmark tables are the rendering
 * (src/probe/benchmark/table.ts) of the measured runs committed in
 * test/fixtures/probe/benchmark-measured.json (each a `probe --benchmark` benchmark.json).
 * `RDMA_INTEROP_UPDATE_DOCS=1 npx vitest run --project host test/host/docs/benchmark-table.test.ts`
 * rewrites them.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BENCHMARK_SCHEMA, type BenchmarkDocument } from '../../../src/probe/benchmark/run.js';
import { benchmarkDocs, CI_BUDGET } from '../../../src/probe/benchmark/table.js';
import { ROOT } from './examples.js';

const DOC = join(ROOT, 'docs', 'probe.md');
const BETWEEN = /(<!-- benchmark:table -->\n)([\s\S]*?)(\n<!-- benchmark:end -->)/;

interface Measured {
  readonly measured: string;
  readonly command: string;
  readonly runs: readonly BenchmarkDocument[];
}

const measured = JSON.parse(
  readFileSync(join(ROOT, 'test', 'fixtures', 'probe', 'benchmark-measured.json'), 'utf8'),
) as Measured;

describe("docs/probe.md's benchmark tables are generated from the measured runs", () => {
  it('the block equals what the generator makes of the data', () => {
    const table = benchmarkDocs(measured.runs);
    if (process.env.RDMA_INTEROP_UPDATE_DOCS === '1') {
      const text = readFileSync(DOC, 'utf8');
      writeFileSync(DOC, text.replace(BETWEEN, `$1${table}$3`));
    }
    const found = BETWEEN.exec(readFileSync(DOC, 'utf8'));
    expect(found, 'docs/probe.md has no <!-- benchmark:table --> block').not.toBeNull();
    expect(found?.[2]).toBe(table);
  });

  it('the data are benchmark documents, and a row left out is a different table', () => {
    expect(measured.runs.length).toBeGreaterThan(0);
    for (const run of measured.runs) expect(run.schema).toBe(BENCHMARK_SCHEMA);
    const fewer = measured.runs.map((r) => ({ ...r, rows: r.rows.slice(1) }));
    expect(benchmarkDocs(fewer)).not.toBe(benchmarkDocs(measured.runs));
  });

  it("CI's budget is the one the CI host test runs", () => {
    const ci = readFileSync(join(ROOT, 'test/host/interop/probe-kernels.test.ts'), 'utf8');
    expect(ci).toContain(`const FUZZ_IN_CI = ${CI_BUDGET.fuzz};`);
    expect(ci).toMatch(new RegExp(`'--seed',\\s*'${CI_BUDGET.seed}'`));
  });
});
