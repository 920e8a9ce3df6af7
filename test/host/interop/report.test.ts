import { describe, expect, it } from 'vitest';
import { ArgumentError } from '../../../src/errors.js';
import type { RunEnvironment } from '../../../src/interop/environment.js';
import { expectedOutcome } from '../../../src/interop/expected.js';
import { renderMarkdown, renderMatrix, renderReport } from '../../../src/interop/report.js';
import { junitXml, RESULTS_SCHEMA, resultsDocument } from '../../../src/interop/report-files.js';
import { judge, type ScenarioResult } from '../../../src/interop/runner.js';
import { SCENARIOS } from '../../../src/interop/scenarios.js';

const ENV: RunEnvironment = {
  host: 'rdma-guest',
  kernel: '6.1.0-56-amd64',
  rdmaCore: '44.0-2',
  node: 'v20.20.2',
  devices: [
    {
      name: 'rxe0',
      provider: 'rxe',
      transport: 'roce',
      firmware: '',
      atomicCap: 'HCA',
      maxQpRdAtom: 128,
      maxQpInitRdAtom: 128,
      maxQpWr: 1048576,
    },
  ],
};

/** Every scenario judged against its own engine outcome, one of them tampered with. */
function judgeAll(): ScenarioResult[] {
  return SCENARIOS.map((scenario) => {
    const engine = expectedOutcome(scenario);
    const kernel =
      scenario.id === 'rxe-fetch-add'
        ? { fields: { ...engine.fields, 'requester.wc1.fetched': '0xefcdab8967452301' } }
        : engine;
    const env = {
      provider: scenario.device === 'rxe0' ? 'rxe' : 'siw',
      kernel: ENV.kernel,
      rdmaCore: ENV.rdmaCore,
    };
    // No records: compare like a device the records do not know, except for rxe-fetch-add.
    const verdicts = judge(
      scenario,
      engine,
      kernel,
      env,
      scenario.id === 'rxe-fetch-add' ? undefined : [],
    );
    return { scenario, engine, kernel, ...verdicts, seconds: 0.25 };
  });
}

const RESULTS = judgeAll();
const results = () => RESULTS;

describe('the terminal report', () => {
  it('the scenario × device/API matrix fits a 100-column terminal', () => {
    const lines = renderMatrix(results()).split('\n');
    for (const line of lines) expect(line.length).toBeLessThanOrEqual(100);
    expect(lines[1]).toMatch(/scenario.*rxe0 post_send.*rxe0 ibv_wr_\*.*siw0 post_send/);
  });

  it('names the difference with both values and says it is unrecorded', () => {
    expect(renderReport(results())).toContain(
      'rxe-fetch-add: requester.wc1.fetched engine 0x0123456789abcdef, device 0xefcdab8967452301 UNRECORDED',
    );
  });
});

describe('the report files', () => {
  it('results.json: versioned schema, environment, totals that add up', () => {
    const doc = resultsDocument(results(), ENV, false) as {
      schema: string;
      environment: RunEnvironment;
      totals: Record<string, number>;
      scenarios: { id: string; verdict: string; differences: unknown[] }[];
    };
    expect(doc.schema).toBe(RESULTS_SCHEMA);
    expect(doc.environment.kernel).toBe('6.1.0-56-amd64');
    const t = doc.totals;
    expect(t.scenarios).toBe(SCENARIOS.length);
    expect(
      (t.match ?? 0) + (t.known ?? 0) + (t.finding ?? 0) + (t.fail ?? 0) + (t['not-run'] ?? 0),
    ).toBe(SCENARIOS.length);
    expect(t.fail).toBe(1);
    expect(doc.scenarios.find((s) => s.id === 'rxe-fetch-add')).toMatchObject({
      verdict: 'fail',
      differences: [
        {
          field: 'requester.wc1.fetched',
          engine: '0x0123456789abcdef',
          device: '0xefcdab8967452301',
          explainedBy: null,
        },
      ],
    });
    expect(() => JSON.stringify(doc)).not.toThrow();
    // Issue 31: run's wire probes are the tester's assertions; results.json has none.
    expect(Object.keys(doc)).toEqual([
      'schema',
      'environment',
      'strict',
      'totals',
      'scenarios',
      'findings',
    ]);
    // The former signature (a probes array second) is refused, not misread.
    expect(() => resultsDocument(results(), [] as unknown as RunEnvironment, false)).toThrow(
      ArgumentError,
    );
  });

  it('junit.xml: one test case per scenario and device/API, the difference in the failure', () => {
    const xml = junitXml(results(), false);
    expect(xml.match(/<testcase /g)?.length).toBe(SCENARIOS.length);
    expect(xml).toMatch(/<testsuite name="interop rxe0 ibv_wr_\*"/);
    const failure = /<testcase[^>]*name="rxe-fetch-add"[^>]*>\s*<failure message="([^"]*)"/.exec(
      xml,
    );
    expect(failure?.[1]).toContain(
      'requester.wc1.fetched engine 0x0123456789abcdef, device 0xefcdab8967452301',
    );
    expect(xml.match(/<failure /g)?.length).toBe(1);
  });

  it('--strict turns findings on devices without records into failures', () => {
    const tampered = results().map((r) =>
      r.scenario.id === 'rxe-write'
        ? judge(
            r.scenario,
            r.engine,
            { fields: { ...r.engine.fields, 'mem[8]': '0x0' } },
            { provider: 'mlx5', kernel: '6.1.0', rdmaCore: '44.0' },
          )
        : r,
    );
    const merged = results().map((r, i) => ({ ...r, ...tampered[i] }));
    expect(merged.find((r) => r.scenario.id === 'rxe-write')?.verdict).toBe('finding');
    expect(junitXml(merged, false).match(/<failure /g)?.length).toBe(1);
    expect(junitXml(merged, true).match(/<failure /g)?.length).toBe(2);
  });

  it('report.md: environment, the matrix, each difference with its reason', () => {
    const md = renderMarkdown(results(), ENV);
    expect(md).toContain('Kernel 6.1.0-56-amd64, rdma-core 44.0-2');
    expect(md).toContain('| rxe0 | rxe | roce | HCA | 128 | 128 |');
    expect(md).toMatch(/\| fetch-add \| FAIL \| match \| match \|/);
    expect(md).toContain(
      '| requester.wc1.fetched | 0x0123456789abcdef | 0xefcdab8967452301 | **unrecorded** |',
    );
  });

  it('report.md: what a device noted, with its result and device; no section when none did', () => {
    // (The engine's outcomes stand for the devices' here, and some of them carry a note.)
    const noted = (note: (id: string) => string | undefined) =>
      results().map((r) => {
        const text = note(r.scenario.id);
        const fields = r.kernel?.fields ?? {};
        return { ...r, kernel: text === undefined ? { fields } : { fields, note: text } };
      });
    expect(
      renderMarkdown(
        noted(() => undefined),
        ENV,
      ),
    ).not.toContain('Device notes');
    const md = renderMarkdown(
      noted((id) => (id === 'siw-read' ? '2 retransmitted packet(s) | counted once' : undefined)),
      ENV,
    );
    expect(md).toContain(
      '## Device notes\n\n| result | device | note |\n|---|---|---|\n| siw-read | siw0 | 2 retransmitted packet(s) \\| counted once |\n\n## Differences',
    );
  });
});
