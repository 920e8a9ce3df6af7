/**
 * The concurrency step across the link (guest A): FetchAdds from every requester QP of
 * the scenario to the responder's target word in guest B, each QP keeping a window of
 * requests outstanding, all on one CQ. Under the fault relay the wire loses and repeats
 * frames: exactly-once shows as every fetched value distinct and the final word exact.
 */

import type { Cq } from '../../verbs/cq.js';
import { VerbsError } from '../../verbs/errors.js';
import type { Mr } from '../../verbs/mr.js';
import type { Qp } from '../../verbs/qp.js';
import { HammerWindows } from '../kernel/hammer-windows.js';
import type { HammerObservation, HammerStep } from '../program.js';
import { DEFAULT_TARGET, type Scenario } from '../scenario.js';

/** Requests each QP keeps outstanding (below the send queue depth, at most 4 atomics in flight). */
export const LINK_HAMMER_WINDOW = 16;
/** Long enough for 1000 FetchAdds per QP under 2 % loss at a 1 s ACK timeout. */
const HAMMER_TIMEOUT_MS = 300_000;

/** CQ entries a hammer over `qps` QPs needs (every QP's window, twice). */
export function hammerCqe(qps: number): number {
  return Math.max(16, qps * LINK_HAMMER_WINDOW * 2);
}

/** The hammer step of a program, if it has one. */
export function hammerStepOf(scenario: Scenario): HammerStep | undefined {
  return scenario.program.find((s): s is HammerStep => s.do === 'hammer');
}

export async function linkHammer(
  scenario: Scenario,
  step: HammerStep,
  qps: readonly Qp[],
  cq: Cq,
  allocate: (length: number) => Mr,
  remote: { readonly addr: bigint; readonly rkey: number },
): Promise<HammerObservation> {
  const total = qps.length * step.count;
  const sink = allocate(total * 8);
  const target = { addr: remote.addr + BigInt(DEFAULT_TARGET), rkey: remote.rkey };
  const windows = new HammerWindows(qps, step, LINK_HAMMER_WINDOW, sink, target, scenario.postPath);
  try {
    windows.postAll();
  } catch (error) {
    if (!(error instanceof VerbsError)) throw error;
    return { post: error.code, succeeded: 0, fetched: [], before: scenario.initial };
  }
  let done = 0;
  const failed: boolean[] = qps.map(() => false);
  const deadline = Date.now() + HAMMER_TIMEOUT_MS;
  while (done < total && Date.now() < deadline) {
    const wcs = cq.poll(64);
    if (wcs.length === 0) {
      await new Promise((resolve) => setTimeout(resolve, 1));
      continue;
    }
    for (const wc of wcs) {
      done += 1;
      const q = windows.complete(wc);
      // A QP in error flushes what it has; posting more only adds flushes.
      if (!wc.ok) failed[q] = true;
      // The requests never posted will not complete: count them as done.
      if (failed[q] !== true) windows.post(q);
      else done += windows.abandon(q);
    }
  }
  const fetched = windows.fetched();
  return { post: 'ok', succeeded: fetched.length, fetched, before: scenario.initial };
}
