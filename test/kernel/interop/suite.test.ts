import { describe, expect, it } from 'vitest';
import { collectEnvironment, environmentFor } from '../../../src/interop/environment.js';
import { runScenario } from '../../../src/interop/runner.js';
import { SCENARIOS } from '../../../src/interop/scenarios.js';

// The interop suite as tests: each scenario's program on its real device must match the
// engine field by field, or differ only in ways recorded (with their source) in
// src/interop/known-behaviour.ts for this provider and kernel.
const env = collectEnvironment([]);

describe('interop: engine vs kernel', () => {
  for (const scenario of SCENARIOS) {
    it(`${scenario.id} (${scenario.device}, ${scenario.title})`, async () => {
      const result = await runScenario(scenario, environmentFor(env, scenario.device));
      expect(result.error).toBeUndefined();
      expect({
        verdict: result.verdict,
        unexplained: result.differences.filter((d) => d.explainedBy === undefined),
        stale: result.stale.map((s) => s.id),
      }).toEqual({ verdict: expect.stringMatching(/^(match|known)$/), unexplained: [], stale: [] });
    });
  }
});
