/**
 * Runs one RoCE responder assertion on rxe_t: the tester sends each step's packets from
 * its namespace, the engine's RC responder rules get the same packets, and the device's
 * answers, receive completions and memory are compared with the prediction after each
 * step, then the QP state.
 */

import { isDeepStrictEqual } from 'node:util';
import { RoceRcResponder } from '../engine/roce/rc-responder.js';
import { recordsInScope, testerVerdictOf } from '../judge/judge.js';
import type { BehaviourRecord, Environment } from '../judge/record.js';
import { ROCE_RECORDS } from '../judge/records/index.js';
import { connectPairByHand } from '../verbs/connect.js';
import type { Cq } from '../verbs/cq.js';
import type { Mr } from '../verbs/mr.js';
import type { Qp } from '../verbs/qp.js';
import type { Assertion, AssertionResult, JsonValue, Survival } from './assertion.js';
import { survivalFailed } from './assertion.js';
import { foreignWords } from './oracles/foreign-bytes.js';
import { oracleNote, survivalOracles } from './oracles/survival-oracles.js';
import { DEVICE_ADDRESS } from './roce-datagram.js';
import { answerJson, datagramJson } from './roce-packets.js';
import type { RoceResponderAssertion } from './roce-responder-assertions.js';
import { ROCE_TESTBED, type RoceDeviceSide, type RoceWire, TESTER_QPN } from './roce-testbed.js';
import { checkSurvival, type KernelLog } from './survival.js';
import { testerRxeProvider } from './tester-provider.js';

/** The tester's first PSN and the device's (24-bit, not palindromes). */
export const TESTER_PSN = 0x00a5c3;
export const DEVICE_PSN = 0x3c5a10;
/** The path MTU the device QP is given (the veth's 1500-byte MTU holds a 1200-byte payload). */
export const ROCE_TESTER_MTU = 1024;
/** The region the tester targets, and the part of it compared (receives land after it). */
const REGION_LENGTH = 4096;
const COMPARED_LENGTH = 2048;
const SHOWN_LENGTH = 48;
/** How long the tester waits for answers under TCG, and for stray extra ones. */
const ANSWER_TIMEOUT_MS = 3000;
const SETTLE_MS = 150;
const SILENCE_MS = 300;

export interface RoceRunEnvironment {
  readonly device: RoceDeviceSide;
  readonly wire: RoceWire;
  /** `uname -r` of the guest. */
  readonly kernel: string;
  readonly log: KernelLog;
}

/** rxe implements ATOMIC WRITE from 6.2 (IBTA 1.5 memory placement extensions). */
export function rxeHasAtomicWrite(kernel: string): boolean {
  const [major = 0, minor = 0] = kernel.split(/[.-]/).map(Number);
  return major > 6 || (major === 6 && minor >= 2);
}

function fillPattern(buffer: Uint8Array): void {
  for (let i = 0; i < buffer.length; i++) buffer[i] = (i * 37 + 11) & 0xff;
}

function hex(bytes: Uint8Array): string {
  return Buffer.from(bytes).toString('hex');
}

function memoryJson(bytes: Uint8Array, reference?: Uint8Array): JsonValue {
  const shown = hex(bytes.subarray(0, SHOWN_LENGTH));
  if (reference === undefined) return shown;
  const rest = isDeepStrictEqual(
    Buffer.from(bytes.subarray(SHOWN_LENGTH, COMPARED_LENGTH)),
    Buffer.from(reference.subarray(SHOWN_LENGTH, COMPARED_LENGTH)),
  );
  return rest ? shown : `${shown} (and bytes ${SHOWN_LENGTH}-${COMPARED_LENGTH - 1} differ)`;
}

/**
 * Completions of `qpNum`: until `want` of them arrived (or `waitMs` passed), then `settleMs`
 * more for any beyond them. The wait ends on what arrived, not on a clock: under TCG on a
 * loaded host a completion can take far longer than on hardware, and a fixed window would
 * judge the host's load (a too-short one read "no completion").
 */
async function pollFor(
  cq: Cq,
  qpNum: number,
  waitMs: number,
  want = Number.POSITIVE_INFINITY,
  settleMs = 0,
): Promise<JsonValue[]> {
  const out: JsonValue[] = [];
  let deadline = Date.now() + waitMs;
  let settling = false;
  for (;;) {
    for (const wc of cq.poll(16))
      if (wc.qpNum === qpNum)
        out.push({
          status: wc.status,
          opcode: wc.opcode ?? null,
          byteLen: wc.byteLen,
          immData: wc.immData === undefined ? null : `0x${wc.immData.toString(16)}`,
        });
    if (!settling && out.length >= want) {
      settling = true;
      deadline = Date.now() + settleMs;
    }
    if (Date.now() >= deadline) break;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return out;
}

/** How long the completions beyond the expected ones are waited for. */
const EXTRA_COMPLETIONS_MS = 50;

/** Runs one assertion; the caller owns the testbed. */
export async function runRoceResponderAssertion(
  assertion: RoceResponderAssertion,
  env: RoceRunEnvironment,
): Promise<AssertionResult> {
  const setup = assertion.setup ?? {};
  const minRnrTimer = setup.minRnrTimer ?? 14;
  const maxDestRdAtomic = setup.maxDestRdAtomic ?? 16;
  // FLUSH needs the FLUSH_GLOBAL right on the MR and the QP (rxe_resp.c check_op_valid and
  // check_rkey); rxe before 6.2 refuses the right (ibv_reg_mr EINVAL), so there it is not asked.
  const flush = setup.flush === true && rxeHasAtomicWrite(env.kernel);
  const rights = ['LOCAL_WRITE', 'REMOTE_WRITE', 'REMOTE_READ', 'REMOTE_ATOMIC'] as const;
  const qp = env.device.createQp();
  const mr = flush
    ? env.device.pd.allocMr(REGION_LENGTH, [...rights, 'FLUSH_GLOBAL'])
    : env.device.allocateMemory(REGION_LENGTH);
  try {
    fillPattern(mr.buffer);
    const state = setup.state ?? 'RTS';
    if (state === 'INIT')
      qp.modify({
        state: 'INIT',
        pkeyIndex: 0,
        port: 1,
        access: ['LOCAL_WRITE', 'REMOTE_WRITE', 'REMOTE_READ', 'REMOTE_ATOMIC'],
      });
    if (state === 'RTS' || state === 'ERR')
      env.device.connect(
        qp,
        { tester: TESTER_PSN, device: DEVICE_PSN },
        {
          mtu: ROCE_TESTER_MTU,
          minRnrTimer,
          maxDestRdAtomic,
          retryCnt: 1,
          rnrRetry: 0,
          timeout: 10,
          ...(flush ? { access: [...rights, 'FLUSH_GLOBAL'] as const } : {}),
        },
      );
    if (state === 'ERR') qp.modify({ state: 'ERR' });
    const receives = setup.receives ?? [];
    receives.forEach((length, i) => {
      qp.postRecv({ wrId: BigInt(i + 1), sgList: [mr.sge(COMPARED_LENGTH + i * 512, length)] });
    });
    const model = new RoceRcResponder({
      qpn: qp.qpNum,
      requesterQpn: TESTER_QPN,
      expectedPsn: TESTER_PSN,
      mtu: ROCE_TESTER_MTU,
      minRnrTimer,
      maxDestRdAtomic,
      region: {
        virtualAddress: mr.addr,
        rKey: mr.rkey,
        contents: Uint8Array.from(mr.buffer.subarray(0, REGION_LENGTH)),
      },
      receives,
      atomicWrite: rxeHasAtomicWrite(env.kernel),
      flush,
      state: state === 'RTS' ? 'RTS' : state,
    });
    const steps = assertion.steps({ qpn: qp.qpNum, va: mr.addr, rKey: mr.rkey, psn: TESTER_PSN });
    const expected: JsonValue[] = [];
    const observed: JsonValue[] = [];
    env.wire.clear();
    for (const packets of steps) {
      const answers: JsonValue[] = [];
      const completions: JsonValue[] = [];
      const rules: string[] = [];
      for (const p of packets) {
        const step = model.receive(p.decoded, p.icrcValid);
        rules.push(step.rule);
        for (const a of step.answers) answers.push(answerJson(a, TESTER_QPN));
        for (const c of step.completions)
          completions.push({
            status: 'SUCCESS',
            opcode: c.opcode,
            byteLen: c.byteLength,
            immData: c.immediateData === undefined ? null : `0x${c.immediateData.toString(16)}`,
          });
        env.wire.send(p.datagram);
      }
      const got = await env.wire.collect(
        answers.length,
        answers.length > 0 ? ANSWER_TIMEOUT_MS : 0,
        answers.length > 0 ? SETTLE_MS : SILENCE_MS,
      );
      const labels = packets.map((p) => p.label);
      const modelMemory = model.memory.subarray(0, COMPARED_LENGTH);
      const deviceMemory = mr.buffer.subarray(0, COMPARED_LENGTH);
      expected.push({ sent: labels, rules, answers, completions, memory: memoryJson(modelMemory) });
      observed.push({
        sent: labels,
        rules,
        answers: got.map(datagramJson),
        completions: await pollFor(
          env.device.cq,
          qp.qpNum,
          completions.length > 0 ? ANSWER_TIMEOUT_MS : 0,
          completions.length,
          EXTRA_COMPLETIONS_MS,
        ),
        memory: memoryJson(deviceMemory, modelMemory),
      });
    }
    const qpState = qp.query().state ?? 'unknown';
    const expectedJson: JsonValue = { steps: expected, qpState: model.state };
    const observedJson: JsonValue = { steps: observed, qpState };
    let survival: Survival | undefined;
    if (assertion.hostile)
      survival = await checkSurvival(env.log, () => loopbackFetchAdd(env.device));
    return judgeRoce(assertion, env, expectedJson, observedJson, survival);
  } finally {
    qp.close();
    mr.close();
  }
}

/** The verdict of a RoCE assertion: match, a known behaviour, or fail (also for survival). */
export function judgeRoce(
  assertion: Assertion,
  env: RoceRunEnvironment,
  expected: JsonValue,
  observed: JsonValue,
  survival: Survival | undefined,
): AssertionResult {
  const common = {
    id: assertion.id,
    spec: assertion.spec,
    device: ROCE_TESTBED.device,
    provider: 'rxe' as const,
    kernel: env.kernel,
    topology: assertion.testerRole,
    expected,
    observed,
    ...(survival === undefined ? {} : { survival }),
  };
  if (survival !== undefined && survivalFailed(survival))
    return {
      ...common,
      verdict: 'fail',
      note: oracleNote('the kernel did not survive', survivalOracles(survival)),
    };
  const differs = !isDeepStrictEqual(expected, observed);
  const recorded = recordsInScope(ROCE_RECORDS, assertion.id, roceEnvironment(env.kernel));
  const explaining = differs ? recorded.filter((k) => k.matches?.(expected, observed)) : [];
  const stale = recorded.filter((k) => !explaining.includes(k));
  const verdict = testerVerdictOf({
    differences: differs ? 1 : 0,
    unexplained: differs && explaining.length === 0 ? 1 : 0,
    stale: stale.length,
  });
  const known = explaining[0];
  if (verdict === 'match') return { ...common, verdict };
  if (verdict === 'known' && known !== undefined)
    return { ...common, verdict, known: known.id, note: known.why };
  return {
    ...common,
    verdict: 'fail',
    note: differs
      ? oracleNote('the device differs from the engine, and no known behaviour explains it', [
          'engine-expectation',
          ...(foreignWords(expected, observed).length > 0 ? ['kernel-memory'] : []),
        ])
      : `the device did what the engine predicts, but a record in scope did not happen (stale): ${stale.map((k) => k.id).join(', ')}`,
  };
}

/** Where the RoCE tester's records hold: rxe on the guest's kernel. */
export function roceEnvironment(kernel: string): Environment {
  return { provider: testerRxeProvider(), kernel, rdmaCore: 'unknown' };
}

/** The record that explains rxe's `observed` for this assertion where it differs, if any. */
export function roceRecordFor(
  assertion: string,
  kernel: string,
  expected: JsonValue,
  observed: JsonValue,
): BehaviourRecord | undefined {
  return recordsInScope(ROCE_RECORDS, assertion, roceEnvironment(kernel)).find(
    (k) => k.matches?.(expected, observed) === true,
  );
}

/**
 * Survival's "the device still works": a FetchAdd between two QPs of rxe_t connected to
 * each other (loopback through the device's own GID), with its value checked.
 */
export async function loopbackFetchAdd(device: RoceDeviceSide): Promise<boolean> {
  const cq = device.context.createCq({ cqe: 8 });
  let a: Qp | undefined;
  let b: Qp | undefined;
  let mr: Mr | undefined;
  try {
    a = device.pd.createQp({ sendCq: cq });
    b = device.pd.createQp({ sendCq: cq });
    const gid = device.context.findGid({ ipv4: DEVICE_ADDRESS });
    connectPairByHand(a, b, gid, { maxRdAtomic: 1, maxDestRdAtomic: 1 });
    mr = device.allocateMemory(16);
    const view = new DataView(mr.buffer.buffer, mr.buffer.byteOffset, 16);
    view.setBigUint64(8, 0x1122_3344_5566_7788n, true);
    a.postSend({
      opcode: 'ATOMIC_FETCH_AND_ADD',
      sgList: [mr.sge(0, 8)],
      remote: mr.remote(8),
      add: 0x10n,
    });
    const wcs = await pollFor(cq, a.qpNum, 5000, 1);
    const first = wcs[0] as { status?: string } | undefined;
    return (
      first?.status === 'SUCCESS' &&
      view.getBigUint64(0, true) === 0x1122_3344_5566_7788n &&
      view.getBigUint64(8, true) === 0x1122_3344_5566_7798n
    );
  } finally {
    a?.close();
    b?.close();
    mr?.close();
    cq.close();
  }
}
