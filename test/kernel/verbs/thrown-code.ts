import { VerbsError } from '../../../src/verbs/index.js';

/**
 * What a call throws, as the misuse tests compare it: a VerbsError's errno name (EBADF,
 * EBUSY, ...), another error's class name (VerbsArgumentError, ...), or undefined when the
 * call returns.
 */
export function thrownCode(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (e) {
    return e instanceof VerbsError ? e.code : (e as Error).name;
  }
  return undefined;
}
