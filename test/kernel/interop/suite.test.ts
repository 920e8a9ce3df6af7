import { describe, expect, it } from 'vitest';
import { runScenario } from '../../../src/interop/runner.js';
import { SCENARIOS } from '../../../src/interop/scenarios.js';

// The interop suite as tests: each scenario on its real device must match the engine,
// or differ only in ways recorded (with their source) in src/interop/known-behaviour.ts.
describe('interop: engine vs kernel', () => {
  for (const scenario of SCENARIOS) {
    it(`${scenario.id} (${scenario.device}, ${scenario.title})`, async () => {
      const result = await runScenario(scenario);
      expect(result.error).toBeUndefined();
      expect({
        verdict: result.verdict,
        unexplained: result.verdict === 'divergence' ? result.differences : [],
      }).toEqual({ verdict: expect.stringMatching(/^(match|known)$/), unexplained: [] });
    });
  }
});
