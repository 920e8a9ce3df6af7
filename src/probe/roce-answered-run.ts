/**
 * Runs one RoCE requester assertion where the tester answers (roce-answered-assertions.ts):
 * the verbs program on rxe_t posts, the tester answers each request packet as the
 * assertion says, and the request packets the device sent (retransmissions included), its
 * completions and its QP state are compared with what the engine's RC requester rules
 * predict for the same answers.
 */
import { decodeRocePacket } from '../codec/roce/packet.js';
import {
  RoceRcRequester,
  type RoceRequesterCompletion,
  type RoceRequesterResponse,
  type RoceRequestPacket,
} from '../engine/roce/rc-requester.js';
import type { Mr } from '../verbs/mr.js';
import type { SendWr } from '../verbs/qp.js';
import type { AssertionResult, JsonValue } from './assertion.js';
import type { RoceAnswerContext, RoceAnsweredAssertion } from './roce-answered-assertions.js';
import type { TesterPacket } from './roce-packets.js';
import {
  DEVICE_PSN,
  judgeRoce,
  ROCE_TESTER_MTU,
  type RoceRunEnvironment,
  TESTER_PSN,
} from './roce-responder-run.js';
import { requesterTesterQpn } from './roce-testbed.js';

/** The device QP's transport timeout code (4.096 us x 2^18 = 1.07 s: above TCG's latency). */
const TIMEOUT = 18;
const DEFAULT_CAP = 16;
const DEFAULT_RETRY_CNT = 3;
/** How long the tester watches at most, and for stray packets after the last completion. */
const WATCH_MS = 4000;
const SETTLE_MS = 300;
/** Where the posts point on the (absent) remote side, and their local slots. */
const REMOTE_VA = 0x7f00_0000_1000n;
const REMOTE_RKEY = 0x1234;
const SLOT = 64;

/** A tester packet as the engine's requester sees it (its decoded fields). */
function responseOf(p: TesterPacket): RoceRequesterResponse | undefined {
  const d = p.decoded;
  if (d === undefined || d.aethSyndrome === undefined) return undefined;
  const original = d.headers.AtomicAckETH?.originalRemoteData;
  return {
    opcode: d.opcode.name,
    psn: d.bth.psn,
    syndrome: d.aethSyndrome,
    payloadLength: d.payload.length,
    ...(original === undefined ? {} : { originalRemoteData: original }),
  };
}

function requestText(r: RoceRequestPacket | { opcode: string; psn: number }): string {
  return `${r.opcode} psn ${r.psn}`;
}

function completionJson(c: RoceRequesterCompletion): JsonValue {
  return {
    wrId: `0x${c.wrId.toString(16)}`,
    status: c.status,
    ...(c.fetched === undefined ? {} : { fetched: `0x${c.fetched.toString(16)}` }),
  };
}

/** The engine's prediction for an assertion: packets sent, completions, QP state, rules. */
export function predictAnswered(
  assertion: RoceAnsweredAssertion,
  c: RoceAnswerContext,
): { expected: JsonValue; rules: string[] } {
  const model = new RoceRcRequester({
    firstPsn: c.psn,
    retryCnt: assertion.retryCnt ?? DEFAULT_RETRY_CNT,
    rnrRetry: assertion.rnrRetry,
  });
  const cap = assertion.cap ?? DEFAULT_CAP;
  const sent = assertion.posts.map((p) => model.post(p));
  const completions: JsonValue[] = [];
  const rules: string[] = [];
  for (let n = 0; n < sent.length && n < cap; n++)
    for (const packet of assertion.answer(n, sent[n] as RoceRequestPacket, c)) {
      const response = responseOf(packet);
      if (response === undefined) continue;
      const step = model.receive(response);
      rules.push(step.rule);
      completions.push(...step.completions.map(completionJson));
      sent.push(...step.sent);
    }
  return {
    expected: {
      requests: sent.slice(0, cap).map(requestText),
      completions,
      qpState: model.state,
    },
    rules,
  };
}

function sendWr(post: RoceAnsweredAssertion['posts'][number], slot: number, mr: Mr): SendWr {
  const remote = { addr: REMOTE_VA + BigInt(slot * SLOT), rkey: REMOTE_RKEY };
  const sge = mr.sge(slot * SLOT, post.length);
  switch (post.kind) {
    case 'write':
      return { wrId: post.wrId, opcode: 'RDMA_WRITE', sgList: [sge], remote };
    case 'read':
      return { wrId: post.wrId, opcode: 'RDMA_READ', sgList: [sge], remote };
    case 'fetch-add':
      return { wrId: post.wrId, opcode: 'ATOMIC_FETCH_AND_ADD', sgList: [sge], remote, add: 1n };
  }
}

/** Runs one assertion on rxe_t; the caller owns the testbed. */
export async function runRoceAnsweredAssertion(
  assertion: RoceAnsweredAssertion,
  env: RoceRunEnvironment,
): Promise<AssertionResult> {
  const qp = env.device.createQp();
  const mr = env.device.allocateMemory(SLOT * 8);
  const testerQpn = requesterTesterQpn(qp.qpNum);
  try {
    mr.buffer.fill(0x5a);
    env.device.connect(
      qp,
      { tester: TESTER_PSN, device: DEVICE_PSN },
      {
        mtu: ROCE_TESTER_MTU,
        retryCnt: assertion.retryCnt ?? DEFAULT_RETRY_CNT,
        rnrRetry: assertion.rnrRetry,
        timeout: TIMEOUT,
        maxRdAtomic: 4,
      },
      testerQpn,
    );
    const context: RoceAnswerContext = { qpn: qp.qpNum, va: 0n, rKey: 0, psn: DEVICE_PSN };
    const { expected, rules } = predictAnswered(assertion, context);
    const cap = assertion.cap ?? DEFAULT_CAP;
    env.wire.clear();
    assertion.posts.forEach((post, slot) => {
      qp.postSend(sendWr(post, slot, mr));
    });
    const requests: string[] = [];
    const completions: JsonValue[] = [];
    const started = Date.now();
    let doneAt: number | undefined;
    while (requests.length < cap && Date.now() - started < WATCH_MS) {
      for (const datagram of await env.wire.collect(1, 50, 0)) {
        const decoded = decodeRocePacket(datagram);
        // Only this QP's requests (another QP's late retransmissions go to another QPN).
        if (!decoded.ok || decoded.value.bth.destinationQp !== testerQpn) continue;
        if (requests.length >= cap) continue;
        const request = { opcode: decoded.value.opcode.name, psn: decoded.value.bth.psn };
        const n = requests.push(requestText(request)) - 1;
        const known = request as RoceRequestPacket;
        for (const p of assertion.answer(n, known, context)) env.wire.send(p.datagram);
      }
      for (const wc of env.device.cq.poll(8)) {
        if (wc.qpNum !== qp.qpNum) continue;
        const slot = assertion.posts.findIndex((p) => p.wrId === wc.wrId);
        const post = assertion.posts[slot];
        const fetched =
          wc.status === 'SUCCESS' && post?.kind === 'fetch-add'
            ? Buffer.from(mr.buffer).readBigUInt64LE(slot * SLOT)
            : undefined;
        completions.push({
          wrId: `0x${wc.wrId.toString(16)}`,
          status: wc.status,
          ...(fetched === undefined ? {} : { fetched: `0x${fetched.toString(16)}` }),
        });
      }
      if (doneAt === undefined && completions.length >= assertion.posts.length) doneAt = Date.now();
      if (doneAt !== undefined && Date.now() - doneAt >= SETTLE_MS) break;
    }
    const observed: JsonValue = { requests, completions, qpState: qp.query().state ?? 'unknown' };
    const result = judgeRoce(assertion, env, expected, observed, undefined);
    return { ...result, note: result.note ?? `engine rules: ${rules.join(', ')}` };
  } finally {
    qp.close();
    mr.close();
  }
}
