/**
 * Issue 32: function coverage (ftrace) of one suite pass and one tester pass, in the kernel
 * project's guest. The suite's scenarios must enter rxe's and siw's receive paths in the
 * `suite` phase; the tester's assertions must enter rxe's responder and siw's FPDU receive
 * path in the `tester` phase; each record maps the drivers' functions to their source files.
 * Measured on 7.3 (2026-12-05, with 6 scenarios and 4 assertions): 86.6 s, the suite pass
 * 35 s and the tester pass 49 s; trimmed since to 3 scenarios and 2 assertions.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { RawFunctionCoverage } from '../../../src/coverage/ftrace.js';
import type { FunctionCoverage, ModuleCoverage } from '../../../src/coverage/functions.js';

const CLI = join(process.env.RDMA_INTEROP_ROOT ?? process.cwd(), 'dist/cli/main.js');
const dir = mkdtempSync(join(tmpdir(), 'coverage-test-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Functions of a module entered in `phase`. */
function entered(m: ModuleCoverage | undefined, phase: string): string[] {
  return (m?.files ?? []).flatMap((f) =>
    f.functions.filter((fn) => fn.phases.includes(phase)).map((fn) => fn.name),
  );
}

/** The file a module's function is listed under. */
function fileOf(m: ModuleCoverage | undefined, fn: string): string | undefined {
  return m?.files.find((f) => f.functions.some((x) => x.name === fn))?.file;
}

describe('function coverage on the stock kernel (ftrace)', () => {
  it('records the functions one suite pass entered, per module and file', () => {
    const report = join(dir, 'run');
    const r = spawnSync(
      process.execPath,
      [
        CLI,
        'run',
        '--runtime',
        'host',
        '--coverage',
        '--scenario',
        '{rxe-write,rxe-fetch-add,siw-write}',
        '--report',
        report,
      ],
      { encoding: 'utf8', timeout: 150_000 },
    );
    expect(r.status, r.stderr.slice(-3000)).toBe(0);
    const doc = JSON.parse(readFileSync(join(report, 'results.json'), 'utf8')) as {
      coverage: FunctionCoverage[];
    };
    expect(doc.coverage).toHaveLength(1);
    const c = doc.coverage[0] as FunctionCoverage;
    expect(c.lost).toBe(0);
    const rxe = c.modules.find((m) => m.module === 'rdma_rxe');
    const siw = c.modules.find((m) => m.module === 'siw');
    // rxe's receive entry and its responder (rxe_responder to 6.1, rxe_receiver from 6.12);
    // siw's TCP receive upcall.
    expect(entered(rxe, 'suite')).toContain('rxe_rcv');
    expect(entered(rxe, 'suite').filter((fn) => fileOf(rxe, fn) === 'rxe_resp.c')).not.toEqual([]);
    expect(entered(siw, 'suite')).toContain('siw_tcp_rx_data');
    expect(fileOf(rxe, 'rxe_rcv')).toBe('rxe_recv.c');
    expect(fileOf(siw, 'siw_tcp_rx_data')).toBe('siw_qp_rx.c');
    expect(readFileSync(join(report, 'report.md'), 'utf8')).toMatch(/## Function coverage/);
  }, 180_000);

  it('records the functions one tester pass entered, by phase', () => {
    const results = join(dir, 'probe.jsonl');
    const r = spawnSync(
      process.execPath,
      [
        CLI,
        'probe',
        '--runtime',
        'host',
        '--coverage',
        '--assertion',
        '{roce-responder-write-acknowledged,siw-ddp-invalid-stag}',
      ],
      {
        encoding: 'utf8',
        timeout: 150_000,
        env: { ...process.env, RDMA_INTEROP_PROBE_RESULTS: results },
      },
    );
    expect(r.status, r.stderr.slice(-3000)).toBe(0);
    const raw = readFileSync(results, 'utf8')
      .split('\n')
      .filter((l) => l.includes('"kind":"coverage"'))
      .map((l) => (JSON.parse(l) as { coverage: RawFunctionCoverage }).coverage);
    expect(raw).toHaveLength(1);
    const cov = raw[0] as RawFunctionCoverage;
    expect(cov.lost).toBe(0);
    expect(cov.entered.tester).toEqual(expect.arrayContaining(['rxe_rcv', 'siw_tcp_rx_data']));
    expect(cov.traceable.rdma_rxe).toEqual(expect.arrayContaining(['rxe_rcv']));
    expect(cov.traceable.siw).toEqual(expect.arrayContaining(['siw_tcp_rx_data']));
  }, 180_000);
});
