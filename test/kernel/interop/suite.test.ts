import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { collectEnvironment, environmentFor } from '../../../src/interop/environment.js';
import { writeReport } from '../../../src/interop/report-files.js';
import { runScenario, type ScenarioResult } from '../../../src/interop/runner.js';
import { SCENARIOS } from '../../../src/interop/scenarios.js';

// The interop suite as tests: each scenario's program on its real device must match the
// engine field by field, or differ only in ways recorded (with their source) in
// src/interop/known-behaviour.ts for this provider and kernel.
const env = collectEnvironment([]);

// The run's report (results.json, report.md, report.html, pcaps) goes into the directory
// the guest shares with the host, where scripts/test.sh's browser test opens report.html.
const share = process.env.RDMA_INTEROP_SHARE;
const results: ScenarioResult[] = [];
afterAll(() => {
  if (share === undefined || results.length === 0) return;
  const devices = [...new Set(results.map((r) => r.scenario.device))];
  writeReport(join(share, 'interop-report'), results, [], collectEnvironment(devices), false);
});

describe('interop: engine vs kernel', () => {
  for (const scenario of SCENARIOS) {
    it(`${scenario.id} (${scenario.device}, ${scenario.title})`, async () => {
      const result = await runScenario(scenario, environmentFor(env, scenario.device));
      results.push(result);
      expect(result.error).toBeUndefined();
      expect({
        verdict: result.verdict,
        unexplained: result.differences.filter((d) => d.explainedBy === undefined),
        stale: result.stale.map((s) => s.id),
      }).toEqual({ verdict: expect.stringMatching(/^(match|known)$/), unexplained: [], stale: [] });
    });
  }
});
