import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DEFAULT_FC_SEED, fastCheckSeed } from '../../helpers/fast-check-seed.js';

// Issue 38: every property check runs from one printed seed that FC_SEED overrides.
describe('the fast-check seed of a run', () => {
  it('is fixed by default, FC_SEED overrides it, and a non-integer is refused', () => {
    expect(fastCheckSeed({})).toBe(DEFAULT_FC_SEED);
    expect(fastCheckSeed({ FC_SEED: '-1234567' })).toBe(-1234567);
    expect(() => fastCheckSeed({ FC_SEED: '12ab' })).toThrow(/FC_SEED=12ab: not an integer/);
  });

  it('is what every property of this file runs from (setupFiles), so two runs draw the same values', () => {
    expect(fc.readConfigureGlobal().seed).toBe(fastCheckSeed());
    const draw = () => fc.sample(fc.integer(), { numRuns: 5 });
    expect(draw()).toEqual(draw());
  });
});
