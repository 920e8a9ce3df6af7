/**
 * The concurrency step on a device: several requester QPs, each connected to its own
 * responder QP in the pair's PD (so all reach the one responder MR), post FetchAdds to
 * one word at the same time, keeping a window of requests outstanding on each QP.
 */
import { connectRcByHand } from '../../verbs/connect.js';
import type { Mr } from '../../verbs/mr.js';
import type { Qp } from '../../verbs/qp.js';
import { DEFAULT_TARGET, type Scenario, type Step } from '../scenario.js';
import type { LoopbackPair } from './loopback.js';

/** Requests each QP keeps outstanding (below the default send queue depth of 64). */
const WINDOW = 16;
const HAMMER_TIMEOUT_MS = 120_000;

export interface HammerResult {
  readonly succeeded: number;
  readonly fetched: bigint[];
}

/** Runs a `hammer` step on `pair` (by-hand devices only: rxe). */
export async function hammer(
  scenario: Scenario,
  pair: LoopbackPair,
  remote: Mr,
  step: Extract<Step, { do: 'hammer' }>,
): Promise<HammerResult> {
  if (scenario.device !== 'rxe0')
    throw new RangeError('the concurrency step connects QPs by hand: rxe0 only');
  const total = step.qps * step.count;
  const cq = pair.context.createCq({ cqe: step.qps * WINDOW * 2 });
  const qps: Qp[] = [];
  const local = Buffer.alloc(total * 8);
  let localMr: Mr | undefined;
  try {
    localMr = pair.pd.regMr(local, ['LOCAL_WRITE']);
    const gid = pair.context.findGid();
    for (let i = 0; i < step.qps; i++) {
      const requester = pair.pd.createQp({ sendCq: cq, extended: scenario.postPath === 'ex' });
      qps.push(requester);
      const responder = pair.pd.createQp({ sendCq: cq });
      qps.push(responder);
      const psn = 0x100 * (i + 1);
      const common = { sgidIndex: gid.index, maxRdAtomic: 4, maxDestRdAtomic: 4 };
      connectRcByHand(requester, {
        ...common,
        remote: { qpNum: responder.qpNum, psn: psn + 1, gid: gid.gid },
        localPsn: psn,
      });
      connectRcByHand(responder, {
        ...common,
        remote: { qpNum: requester.qpNum, psn, gid: gid.gid },
        localPsn: psn + 1,
      });
    }
    const requesters = qps.filter((_, i) => i % 2 === 0);
    const posted = requesters.map(() => 0);
    const outstanding = requesters.map(() => 0);
    const sink = localMr;
    const post = (q: number): void => {
      const requester = requesters[q];
      if (requester === undefined) return;
      const room = Math.min(WINDOW - (outstanding[q] ?? 0), step.count - (posted[q] ?? 0));
      if (room <= 0) return;
      const wrs = Array.from({ length: room }, (_, k) => {
        const slot = q * step.count + (posted[q] ?? 0) + k;
        return {
          wrId: BigInt(slot),
          opcode: 'ATOMIC_FETCH_AND_ADD' as const,
          sgList: [sink.sge(slot * 8, 8)],
          remote: remote.remote(DEFAULT_TARGET),
          add: step.add,
        };
      });
      requester.postSend(wrs, scenario.postPath);
      posted[q] = (posted[q] ?? 0) + room;
      outstanding[q] = (outstanding[q] ?? 0) + room;
    };
    for (let q = 0; q < requesters.length; q++) post(q);
    let done = 0;
    let succeeded = 0;
    const deadline = Date.now() + HAMMER_TIMEOUT_MS;
    while (done < total && Date.now() < deadline) {
      const wcs = cq.poll(64);
      if (wcs.length === 0) {
        await new Promise((resolve) => setImmediate(resolve));
        continue;
      }
      for (const wc of wcs) {
        done += 1;
        if (wc.ok) succeeded += 1;
        const q = Math.floor(Number(wc.wrId) / step.count);
        outstanding[q] = (outstanding[q] ?? 1) - 1;
        post(q);
      }
    }
    const fetched = Array.from({ length: total }, (_, i) => local.readBigUInt64LE(i * 8));
    return { succeeded, fetched };
  } finally {
    for (const qp of qps) qp.close();
    localMr?.close();
    cq.close();
  }
}
