/**
 * `rdma-interop compare`: any number of --report runs merged into one comparison, keyed
 * by host, device, provider, kernel and rdma-core (issue 24). The kernel matrix's own
 * comparison is the same code (test/host/interop/kernel-matrix.test.ts runs it on three
 * real kernel lines).
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  type Comparison,
  compareReports,
  ReportInputError,
  readReports,
  renderComparisonMarkdown,
  reportRunOf,
} from '../../../src/interop/comparison/index.js';

interface Doc {
  schema: string;
  environment: Record<string, unknown>;
  scenarios: Record<string, unknown>[];
  probes: unknown[];
}

function results(
  host: string,
  kernel: string,
  rdmaCore: string,
  state: string,
  verdict: string,
): Doc {
  return {
    schema: 'rdma-interop/results@2',
    environment: {
      host,
      kernel,
      rdmaCore,
      node: 'v24.11.0',
      devices: [
        { name: 'siw0', provider: 'siw', atomicCap: 'NONE', maxQpRdAtom: 128 },
        { name: 'rxe0', provider: 'rxe', atomicCap: 'HCA', maxQpRdAtom: 128 },
      ],
    },
    scenarios: [
      {
        id: 'siw-write',
        device: 'siw0',
        verdict,
        device_fields: { 'q1.requester.state': state, 'mem[8]': '0x0123456789abcdef' },
        differences:
          state === 'RESET'
            ? [
                {
                  field: 'q1.requester.state',
                  engine: 'RTS',
                  device: 'RESET',
                  explainedBy: 'siw-query-qp-state',
                },
              ]
            : [],
      },
    ],
    probes: [],
  };
}

const old = reportRunOf(
  '6.1',
  '/r/6.1/results.json',
  results('rdma-guest', '6.1.0-56-amd64', '44.0', 'RESET', 'known'),
);
const mid = reportRunOf(
  '6.12',
  '/r/6.12/results.json',
  results('rdma-guest', '6.12.95+deb12-amd64', '56.1', 'RTS', 'match'),
);
const container = reportRunOf(
  'lab-a',
  '/r/lab-a/results.json',
  results('lab-a', '6.1.0-56-amd64', '44.0', 'RESET', 'known'),
);

describe('compareReports', () => {
  const c: Comparison = compareReports([old, mid, container]);

  it('keys each run by host, kernel and rdma-core, and each device by its provider', () => {
    expect(c.runs.map((r) => `${r.label} ${r.host} ${r.kernel} ${r.rdmaCore}`)).toEqual([
      '6.1 rdma-guest 6.1.0-56-amd64 44.0',
      '6.12 rdma-guest 6.12.95+deb12-amd64 56.1',
      'lab-a lab-a 6.1.0-56-amd64 44.0',
    ]);
    expect(c.runs[0]?.devices).toEqual([
      { name: 'siw0', provider: 'siw' },
      { name: 'rxe0', provider: 'rxe' },
    ]);
  });

  it('shows every value per run, the record that explains it, and marks the ones that differ', () => {
    const state = c.fields.find((f) => f.field === 'q1.requester.state');
    expect(state).toEqual({
      scenario: 'siw-write',
      device: 'siw0',
      field: 'q1.requester.state',
      values: { '6.1': 'RESET', '6.12': 'RTS', 'lab-a': 'RESET' },
      reasons: { '6.1': 'siw-query-qp-state', 'lab-a': 'siw-query-qp-state' },
      changed: true,
    });
    expect(c.fields.find((f) => f.field === 'mem[8]')?.changed).toBe(false);
    // the state and the verdict differ; mem[8] and the six device facts do not.
    expect(c.changedCount).toBe(2);
    expect(c.fields).toHaveLength(9);
  });

  it('compares a value only between the runs that have its device', () => {
    const siwOnly = results('lab-b', '7.3.4+deb13-amd64', '56.1', 'RTS', 'match');
    siwOnly.environment.devices = [{ name: 'siw0', provider: 'siw+rfc7306' }];
    const withRxe = results('lab-c', '7.3.4+deb13-amd64', '56.1', 'RTS', 'match');
    withRxe.scenarios.push({
      id: 'rxe-flush',
      device: 'rxe0',
      verdict: 'match',
      device_fields: {},
    });
    const two = compareReports([
      old,
      reportRunOf('b', '/b', siwOnly),
      reportRunOf('c', '/c', withRxe),
    ]);
    const flush = two.fields.find((f) => f.scenario === 'rxe-flush' && f.field === 'verdict');
    // 6.1 has rxe0 but did not run the scenario: absent there, so changed; b has no rxe0.
    expect(flush?.values).toEqual({ '6.1': '—', c: 'match' });
    expect(flush?.changed).toBe(true);
  });

  it('the Markdown has a section per device, the differing values in bold with their record', () => {
    const md = renderComparisonMarkdown(c);
    expect(md).toContain(
      '| 6.12 | rdma-guest | 6.12.95+deb12-amd64 | 56.1 | v24.11.0 | 1 | siw0 (siw), rxe0 (rxe) |',
    );
    expect(md).toContain(
      '| siw-write | q1.requester.state | RESET (siw-query-qp-state) | **RTS** | RESET (siw-query-qp-state) |',
    );
    expect(md).toContain('| siw-write | **known** | **match** | **known** |');
    expect(md).toContain('2 of 9 observed values differ between the runs.');
    expect(md).toContain('## rxe0');
  });

  it("reads the verdict names of a results.json written before issue 31 as today's", () => {
    const former = (verdict: string) =>
      reportRunOf('x', '/x', {
        ...results('h', '6.1.0-56-amd64', '44.0', 'RTS', verdict),
        probes: [{ id: 'siw-probe-atomic-request', verdict, device: 'x' }],
      });
    for (const [was, is] of [
      ['divergence', 'fail'],
      ['error', 'not-run'],
      ['known', 'known'],
    ]) {
      const run = former(was as string);
      expect([run.scenarios[0]?.verdict, run.probes[0]?.verdict]).toEqual([is, is]);
    }
    // An old run and a new one compare equal where only the name changed.
    const diff = compareReports([former('divergence'), former('fail')]);
    expect(JSON.stringify(diff)).not.toContain('divergence');
  });

  it('refuses what is not a results.json, with a typed error naming the source', () => {
    expect(() => reportRunOf('x', '/x', { schema: 'other' })).toThrow(ReportInputError);
    expect(() => reportRunOf('7.3', '/x', null)).toThrow(/^7.3: results.json is not an object$/);
    expect(() => readReports([])).toThrow(ReportInputError);
    expect(() => readReports(['/nonexistent/report'])).toThrow(/no such file or directory/);
  });
});

describe('rdma-interop compare', () => {
  const root = mkdtempSync(join(tmpdir(), 'compare-'));
  const put = (dir: string, doc: Doc) => {
    mkdirSync(join(root, dir), { recursive: true });
    writeFileSync(join(root, dir, 'results.json'), JSON.stringify(doc));
  };
  // A run --kernels directory (one subdirectory per line) and a container run's report.
  put('matrix/6.1', results('rdma-guest', '6.1.0-56-amd64', '44.0', 'RESET', 'known'));
  put('matrix/7.3', results('rdma-guest', '7.3.4+deb13-amd64', '56.1', 'RTS', 'match'));
  put('container', results('4f1c2b', '6.1.0-56-amd64', '44.0', 'RESET', 'known'));
  const cli = (...args: string[]) =>
    spawnSync(process.execPath, ['dist/cli/main.js', 'compare', ...args], { encoding: 'utf8' });

  it('merges three reports from two directories into Markdown, JSON and --out files', () => {
    const md = cli(join(root, 'matrix'), join(root, 'container'));
    expect(md.status, md.stderr).toBe(0);
    expect(md.stdout).toContain('2 of 9 observed values differ between the runs.');
    const json = cli('--json', join(root, 'matrix'), join(root, 'container'));
    const parsed = JSON.parse(json.stdout) as Comparison;
    expect(parsed.runs.map((r) => [r.label, r.host])).toEqual([
      ['6.1', 'rdma-guest'],
      ['7.3', 'rdma-guest'],
      ['container', '4f1c2b'],
    ]);
    const out = join(root, 'out');
    const written = cli('--out', out, join(root, 'matrix'), join(root, 'container'));
    expect(written.status).toBe(0);
    expect(written.stderr).toMatch(
      /^compare: 2 of 9 values differ across 3 runs \(.*comparison\.md\)\n(compare: comparison\.html leaves out 3 of 3 runs: .*lacks environment, scenarios or findings\n)$/,
    );
    // These hand-made reports lack what comparison.html draws: the page has the comparison.
    expect(readFileSync(join(out, 'comparison.html'), 'utf8')).toContain('<h2>Matrix</h2>');
    expect(JSON.parse(readFileSync(join(out, 'comparison.json'), 'utf8'))).toEqual(parsed);
  });

  it('a path without a report is one line on stderr, exit 1, no stack', () => {
    mkdirSync(join(root, 'empty'));
    const r = cli(join(root, 'empty'));
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/^rdma-interop compare: error: .*holds no results\.json.*\n$/);
    const none = cli();
    expect(none.status).toBe(2);
  });
});
