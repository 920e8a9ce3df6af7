/** The hammer's completion loop, shared by the in-process hammer and its child process. */
import type { WorkCompletion } from '../../verbs/completion.js';

/**
 * Polls `cq` until `total` completions have come or the clock passes `deadline`
 * (`Date.now()` milliseconds), giving the event loop a turn whenever the CQ is empty so
 * the timers and the other end keep running; `onBatch` sees each non-empty batch (the
 * hammers post again from there). Returns how many completions came.
 */
export async function pollCompletions(
  cq: { poll(max: number): WorkCompletion[] },
  total: number,
  deadline: number,
  onBatch: (wcs: readonly WorkCompletion[]) => void,
): Promise<number> {
  let done = 0;
  while (done < total && Date.now() < deadline) {
    const wcs = cq.poll(64);
    if (wcs.length === 0) {
      await new Promise((resolve) => setImmediate(resolve));
      continue;
    }
    done += wcs.length;
    onBatch(wcs);
  }
  return done;
}
