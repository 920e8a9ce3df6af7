/**
 * One seed for every fast-check property of a run (issue 38: a failure must be replayable
 * from the log). vitest.config.ts loads this in each test file (setupFiles) and prints the
 * seed once per run (test/helpers/fast-check-global.ts). The default is fixed, so two runs
 * check the same inputs; `FC_SEED=<n> npm test` (or `FC_SEED=<n> npx vitest run <file>`)
 * runs another or repeats a logged one. fast-check's own failure message adds the seed
 * and the counterexample's path.
 */
import fc from 'fast-check';

/** The default seed: fixed, so that runs repeat. */
export const DEFAULT_FC_SEED = 0x38_5eed;

/** The seed of this run: FC_SEED when set (an integer), else the default. */
export function fastCheckSeed(env: NodeJS.ProcessEnv = process.env): number {
  const text = env.FC_SEED;
  if (text === undefined || text === '') return DEFAULT_FC_SEED;
  const seed = Number(text);
  if (!Number.isSafeInteger(seed)) throw new Error(`FC_SEED=${text}: not an integer`);
  return seed | 0;
}

fc.configureGlobal({ ...fc.readConfigureGlobal(), seed: fastCheckSeed() });
