/**
 * RoCE requester assertions: a verbs program on rxe posts, the tester plays the responder
 * and answers (here: not at all). The expectation comes from the engine's requester rule
 * (src/engine/roce/rc-requester-retry.ts).
 */
import { decodeRocePacket } from '../codec/roce/packet.js';
import { noAnswerOutcome } from '../engine/roce/rc-requester-retry.js';
import type { Assertion, AssertionResult, JsonValue } from './assertion.js';
import {
  DEVICE_PSN,
  judgeRoce,
  ROCE_TESTER_MTU,
  type RoceRunEnvironment,
  TESTER_PSN,
} from './roce-responder-run.js';
import { requesterTesterQpn } from './roce-testbed.js';

/** A requester assertion where the tester never answers. */
export interface RoceNoAnswerAssertion extends Assertion {
  readonly testerRole: 'responder';
  /** The device QP's retry_cnt and transport timeout (4.096 us x 2^timeout). */
  readonly retryCnt: number;
  readonly timeout: number;
}

/**
 * How long the tester stays silent and watches at most: the watch ends at the Write's
 * completion (RETRY_EXC_ERR after 1 + retry_cnt transmissions, about 20 ms apart with
 * timeout 12: rxe retransmitted 136 times in 2.5 s under TCG), so the limit is only for a
 * device that never completes, and is wide enough for a loaded host's TCG.
 */
const WATCH_MS = 10_000;

export const ROCE_REQUESTER_ASSERTIONS: readonly RoceNoAnswerAssertion[] = [
  {
    id: 'roce-requester-no-answer-retry-1',
    spec: 'IBTA Vol. 1 §9.7.6.1.3 (transport timer, retry_cnt), §10.3.1',
    provider: 'rxe',
    testerRole: 'responder',
    title:
      'a Write never answered is sent 1 + retry_cnt (1) times, then RETRY_EXC_ERR and the QP in ERR',
    hostile: false,
    retryCnt: 1,
    timeout: 12,
  },
  {
    id: 'roce-requester-no-answer-retry-7',
    spec: 'IBTA Vol. 1 §9.7.6.1.3 (transport timer, retry_cnt), §10.3.1',
    provider: 'rxe',
    testerRole: 'responder',
    title: 'with retry_cnt 7 a Write never answered is sent 8 times, then RETRY_EXC_ERR',
    hostile: false,
    retryCnt: 7,
    timeout: 12,
  },
];

/** Runs one no-answer assertion: posts a Write on a fresh QP and stays silent. */
export async function runRoceNoAnswerAssertion(
  assertion: RoceNoAnswerAssertion,
  env: RoceRunEnvironment,
): Promise<AssertionResult> {
  const qp = env.device.createQp();
  const mr = env.device.allocateMemory(64);
  const testerQpn = requesterTesterQpn(qp.qpNum);
  try {
    env.device.connect(
      qp,
      { tester: TESTER_PSN, device: DEVICE_PSN },
      {
        mtu: ROCE_TESTER_MTU,
        retryCnt: assertion.retryCnt,
        timeout: assertion.timeout,
        rnrRetry: 0,
      },
      testerQpn,
    );
    env.wire.clear();
    qp.postSend({
      wrId: 0x51n,
      opcode: 'RDMA_WRITE',
      sgList: [mr.sge(0, 16)],
      remote: { addr: 0x1000n, rkey: 0x1234 },
    });
    const started = Date.now();
    let status: string | null = null;
    while (Date.now() - started < WATCH_MS && status === null) {
      for (const wc of env.device.cq.poll(4)) if (wc.qpNum === qp.qpNum) status = wc.status;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    // Only this QP's transmissions (a previous QP's late ones go to another QPN).
    const sent = (await env.wire.collect(0, 0, 200))
      .map((d) => decodeRocePacket(d))
      .flatMap((p) => (p.ok && p.value.bth.destinationQp === testerQpn ? [p.value] : []));
    const psns = sent.map((p) => p.bth.psn);
    const rule = noAnswerOutcome(assertion.retryCnt);
    const expected: JsonValue = {
      transmissions: rule.transmissions,
      allAtFirstPsn: true,
      completion: rule.status,
      qpState: rule.qpState,
    };
    const observed: JsonValue = {
      transmissions: sent.length,
      allAtFirstPsn: psns.every((p) => p === DEVICE_PSN),
      completion: status,
      qpState: qp.query().state ?? 'unknown',
    };
    return judgeRoce(assertion, env, expected, observed, undefined);
  } finally {
    qp.close();
    mr.close();
  }
}
