import { release } from 'node:os';
import { computeRoceIcrc } from '../codec/roce/icrc.js';
import { BthOpcode } from '../codec/roce/opcodes.js';
import { ICRC_LENGTH, type RocePacketFields } from '../codec/roce/packet.js';
import {
  type FindingMinimization,
  type FuzzLoopOptions,
  type FuzzSummary,
  seededRandom,
} from '../probe/fuzz-loop.js';
import { minimizeSequence } from '../probe/minimize.js';
import {
  buildTesterDatagram,
  type DatagramOptions,
  rawTesterDatagram,
  testerIpPacket,
} from '../probe/roce-datagram.js';
import { build, type RoceTarget } from '../probe/roce-packets.js';
import {
  loopbackFetchAdd,
  ROCE_TESTER_MTU,
  type RoceRunEnvironment,
} from '../probe/roce-responder-run.js';
import { ROCE_TESTBED, TESTER_QPN } from '../probe/roce-testbed.js';
import type { Mr } from '../verbs/mr.js';
import { type GuidedRun, runGuidedCampaign } from './guided-campaign.js';
import {
  applyStep,
  baseOpcode,
  GUIDED_BASES,
  type GuidedInput,
  type GuidedStep,
  MUTATIONS,
  mutate,
  seedsFor,
} from './guided-input.js';
import { guidedStepReductions } from './guided-minimize.js';
import { GUIDED_QKEY, type GuidedQp, openGuidedQp } from './guided-roce-qp.js';

// The feedback both campaigns read lives with their shared loop; kept importable from here.
export { coverageFeedback } from './guided-campaign.js';

const PAYLOAD = Uint8Array.of(0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11);
/** The immediate data of the UD and Send-Last bases (not a byte palindrome). */
const IMMEDIATE = 0x5e6f7a8b;
/** FETH (IBTA 1.5 FLUSH): selectivity level 1 (the whole region), placement type 1 (global). */
const FETH_WHOLE_REGION_GLOBAL = 0x11;

/** Where a sequence goes: the QP, its memory's address and R_Key, and a UD Q_Key. */
export interface GuidedTarget extends RoceTarget {
  /** The DETH's Q_Key (default GUIDED_QKEY). */
  readonly qkey?: number;
}

/** A payload of `length` bytes (the base's own when undefined). */
function payloadOf(length: number | undefined, own: Uint8Array): Uint8Array {
  return length === undefined ? own : new Uint8Array(length).fill(0x6b);
}

/**
 * A base request's transport bytes (no ICRC) for a target at `psn`: the request points at
 * `offset` into the target memory (the base's own offset when the step gives none) and
 * carries `payload` bytes (likewise).
 */
function baseTransport(
  base: number,
  t: GuidedTarget,
  psn: number,
  step: Pick<GuidedStep, 'offset' | 'payload'> = {},
): Uint8Array {
  const name = GUIDED_BASES[base] ?? GUIDED_BASES[0];
  const full = new Uint8Array(ROCE_TESTER_MTU).fill(0x5a);
  const total = 2 * ROCE_TESTER_MTU + PAYLOAD.length;
  const at = (own: number) => step.offset ?? own;
  const fields = (headers: RocePacketFields['headers'], payload: Uint8Array): RocePacketFields => ({
    bth: { opcode: baseOpcode(base), destinationQp: t.qpn, psn, ackRequest: true },
    headers,
    payload,
  });
  let datagram: Uint8Array;
  switch (name) {
    case 'RC_RDMA_WRITE_ONLY':
    case 'RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE':
    case 'RC_RDMA_WRITE_LAST':
      datagram = build.write(t, psn, at(0), payloadOf(step.payload, PAYLOAD), {
        opcode: name,
      }).datagram;
      break;
    case 'UC_RDMA_WRITE_ONLY':
    case 'UC_SEND_ONLY': {
      // The RC request with the UC opcode (IBTA Table 38: the same headers, 0x20 | the RC
      // operation).
      const rc = name === 'UC_SEND_ONLY' ? 'RC_SEND_ONLY' : 'RC_RDMA_WRITE_ONLY';
      const d = Uint8Array.from(
        rc === 'RC_SEND_ONLY'
          ? build.send(t, psn, payloadOf(step.payload, PAYLOAD), rc).datagram
          : build.write(t, psn, at(0), payloadOf(step.payload, PAYLOAD), { opcode: rc }).datagram,
      );
      d[0] = baseOpcode(base);
      datagram = d;
      break;
    }
    case 'RC_RDMA_WRITE_FIRST':
      datagram = build.write(t, psn, at(0), payloadOf(step.payload, full), {
        opcode: name,
        dmaLength: total,
      }).datagram;
      break;
    case 'RC_RDMA_WRITE_MIDDLE':
      datagram = build.write(t, psn, at(0), payloadOf(step.payload, full), {
        opcode: name,
      }).datagram;
      break;
    case 'RC_RDMA_READ_REQUEST':
      datagram = build.read(t, psn, at(0), step.payload ?? 64).datagram;
      break;
    case 'RC_FETCH_ADD':
      datagram = build.fetchAdd(t, psn, at(8), 0x0102030405060708n).datagram;
      break;
    case 'RC_COMPARE_SWAP': {
      // The same AtomicETH as FetchAdd (IBTA §9.3.4): only the opcode differs.
      const d = Uint8Array.from(build.fetchAdd(t, psn, at(8), 0x0102030405060708n).datagram);
      d[0] = BthOpcode.RC_COMPARE_SWAP;
      datagram = d;
      break;
    }
    case 'RC_ATOMIC_WRITE':
      datagram = build.atomicWrite(t, psn, at(8), payloadOf(step.payload, PAYLOAD), 8).datagram;
      break;
    case 'RC_SEND_ONLY':
      datagram = build.send(t, psn, payloadOf(step.payload, PAYLOAD), name).datagram;
      break;
    case 'RC_SEND_FIRST':
      datagram = build.send(t, psn, payloadOf(step.payload, full), name).datagram;
      break;
    case 'RC_SEND_LAST_WITH_IMMEDIATE':
      datagram = buildTesterDatagram(
        fields({ ImmDt: { immediateData: IMMEDIATE } }, payloadOf(step.payload, PAYLOAD)),
      );
      break;
    case 'RC_SEND_ONLY_WITH_INVALIDATE':
      // Invalidates the target memory's own R_Key (IBTA §9.3.8; rxe_resp.c invalidate_rkey()).
      datagram = buildTesterDatagram(
        fields({ IETH: { rKey: t.rKey } }, payloadOf(step.payload, PAYLOAD)),
      );
      break;
    case 'RC_FLUSH':
      datagram = buildTesterDatagram(
        fields(
          {
            FETH: { value: FETH_WHOLE_REGION_GLOBAL },
            RETH: { virtualAddress: t.va + BigInt(at(0)), rKey: t.rKey, dmaLength: 64 },
          },
          new Uint8Array(0),
        ),
      );
      break;
    case 'RC_ACKNOWLEDGE':
      datagram = build.ack(t, psn, { kind: 'ACK', creditCount: 31 }).datagram;
      break;
    case 'UD_SEND_ONLY':
    case 'UD_SEND_ONLY_WITH_IMMEDIATE':
      datagram = buildTesterDatagram(
        fields(
          {
            DETH: { qKey: t.qkey ?? GUIDED_QKEY, reserved: 0, sourceQp: TESTER_QPN },
            ...(name === 'UD_SEND_ONLY' ? {} : { ImmDt: { immediateData: IMMEDIATE } }),
          },
          payloadOf(step.payload, PAYLOAD),
        ),
      );
      break;
  }
  return datagram.subarray(0, datagram.length - ICRC_LENGTH);
}

/**
 * A datagram whose ICRC covers the transport twice (the second time unmasked), as
 * rxe_icrc_check() computes it for an opcode with no payload offset in rxe_opcode.c (the
 * FLUSH of 6.12 and 7.3; guided-input.ts's `rxeFlushIcrc`).
 */
export function headersTwiceDatagram(
  transport: Uint8Array,
  options: DatagramOptions = {},
): Uint8Array {
  const datagram = new Uint8Array(transport.length + ICRC_LENGTH);
  datagram.set(transport, 0);
  const packet = testerIpPacket(datagram, options);
  const headers = packet.length - datagram.length;
  const covered = new Uint8Array(headers + 2 * transport.length);
  covered.set(packet.subarray(0, headers + transport.length), 0);
  covered.set(transport, headers + transport.length);
  const icrc = (computeRoceIcrc(covered, IPV4_HEADER_LENGTH) ^ (options.icrcXor ?? 0)) >>> 0;
  new DataView(datagram.buffer).setUint32(transport.length, icrc, true);
  return datagram;
}

/** Bytes of the tester's IPv4 header (no options). */
const IPV4_HEADER_LENGTH = 20;

/**
 * The datagrams of an input for a target; `options` are the IPv4 addresses they are sent
 * with (the set-up's: another source, a multicast destination), which the ICRC covers.
 */
export function inputDatagrams(
  input: GuidedInput,
  t: GuidedTarget,
  options: DatagramOptions = {},
): Uint8Array[] {
  return input.steps.map((s) => {
    const psn = (input.startPsn + s.psnOffset) & 0xffffff;
    const transport = applyStep(baseTransport(s.base, t, psn, s), s);
    return s.rxeFlushIcrc === true
      ? headersTwiceDatagram(transport, { ...options, icrcXor: s.icrcXor })
      : rawTesterDatagram(transport, { ...options, icrcXor: s.icrcXor });
  });
}

const guardByte = (i: number): number => (i * 29 + 7) & 0xff;
function fillGuard(guard: Mr): void {
  guard.buffer.forEach((_, i) => {
    guard.buffer[i] = guardByte(i);
  });
}

/** A set-up the device refused (ibv_modify_qp, ibv_create_srq ...): no input was sent. */
class SetupRefused extends Error {}

/** Sends an input to a fresh QP of its set-up; what looked wrong, if anything. */
async function sendInput(
  env: RoceRunEnvironment,
  guard: Mr,
  input: GuidedInput,
): Promise<string | undefined> {
  let made: GuidedQp;
  try {
    made = openGuidedQp(env, input.setup ?? {}, input.startPsn);
  } catch (error) {
    throw new SetupRefused(error instanceof Error ? error.message : String(error));
  }
  try {
    env.wire.clear();
    const target = { qpn: made.qpn, va: made.mr.addr, rKey: made.rKey, qkey: made.qkey };
    for (const d of inputDatagrams(input, target, made.datagram)) env.wire.send(d, made.datagram);
    await env.wire.collect(input.steps.length, 40, 10);
    made.after();
    while (env.device.cq.poll(16).length > 0);
    if (guard.buffer.every((b, i) => b === guardByte(i))) return undefined;
    fillGuard(guard);
    return 'the guard region (no remote rights) changed';
  } finally {
    made.close();
    while (env.device.cq.poll(16).length > 0);
  }
}

/** The oracle a per-sequence check names: the guard region, or the tester itself. */
const sequenceOracle = (wrong: string): string =>
  wrong.startsWith('the tester failed') ? 'harness' : 'guard-words';

/**
 * A sequence that fired a per-sequence oracle reduced (probe/minimize.ts): steps dropped, then
 * each step's changes; the predicate replays the candidate through `sendInput` (a fresh QP,
 * the same send path as the campaign) and asks for the same oracle.
 */
async function minimizeGuidedInput(
  env: RoceRunEnvironment,
  guard: Mr,
  input: GuidedInput,
  oracle: string,
  budget: number,
): Promise<FindingMinimization> {
  const r = await minimizeSequence(
    input.steps,
    async (steps) => {
      let wrong: string | undefined;
      try {
        wrong = await sendInput(env, guard, { ...input, steps });
      } catch (error) {
        if (error instanceof SetupRefused) return false;
        wrong = `the tester failed: ${error instanceof Error ? error.message : String(error)}`;
      }
      return wrong !== undefined && sequenceOracle(wrong) === oracle;
    },
    { budget, reduceItem: guidedStepReductions },
  );
  return {
    oracle,
    originalLength: input.steps.length,
    sequence: { kind: 'guided', inputs: [{ ...input, steps: r.minimal }] },
    calls: r.calls,
    exhausted: r.exhausted,
  };
}

/** What a guided campaign did, beside the fuzz summary's fields. */
export interface GuidedSummary extends FuzzSummary {
  readonly guided: {
    readonly feedback: 'blocks' | 'functions' | 'none';
    readonly inputs: number;
    readonly seeds: number;
    readonly corpus: number;
    readonly coverageStart: number;
    readonly coverageEnd: number;
    /** Mutation name -> inputs with it that the corpus kept. */
    readonly kept: Readonly<Record<string, number>>;
    /** The corpus entries the campaign added, as data (replayable). */
    readonly added: readonly GuidedInput[];
    /** Inputs not sent because the device refused their QP set-up (ibv_modify_qp ...). */
    readonly setupRefused?: number;
    /** The first such refusal's message. */
    readonly firstRefusal?: string;
  };
}

/**
 * Runs `count` guided inputs of `seed` against rxe_t: the seeds first (each once), then
 * mutated corpus entries; `onProgress` gets a line per batch; `options.minimizeBudget`
 * minimizes each finding (predicate calls per finding; the calls send to rxe_t too).
 */
export async function guidedFuzzRxe(
  env: RoceRunEnvironment,
  count: number,
  seed: number,
  batch = 25,
  onProgress: (line: string) => void = () => {},
  options: FuzzLoopOptions = {},
): Promise<GuidedSummary> {
  const random = seededRandom(seed ^ 0x5bd1e995);
  const seeds = seedsFor(count, 0x00a5c3);
  const guard = env.device.pd.allocMr(4096, ['LOCAL_WRITE']);
  let run: GuidedRun<GuidedInput>;
  try {
    fillGuard(guard);
    run = await runGuidedCampaign<GuidedInput>(
      {
        device: ROCE_TESTBED.device,
        sequence: (inputs) => ({ kind: 'guided', inputs }),
        seeds,
        mutations: MUTATIONS,
        log: env.log,
        draw: (corpus) =>
          mutate(corpus[Math.floor(random() * corpus.length)] as GuidedInput, random),
        send: (input) => sendInput(env, guard, input),
        refusal: (error) => (error instanceof SetupRefused ? error.message : undefined),
        oracle: sequenceOracle,
        minimizeInput: (input, oracle, budget) =>
          minimizeGuidedInput(env, guard, input, oracle, budget),
        works: () => loopbackFetchAdd(env.device),
        broken: 'rxe_t no longer completes a FetchAdd',
      },
      count,
      seed,
      batch,
      onProgress,
      options,
    );
  } finally {
    guard.close();
  }
  return {
    kernel: release(),
    device: ROCE_TESTBED.device,
    seed,
    packets: count,
    batches: run.batches,
    findings: run.findings,
    guided: {
      feedback: run.feedback,
      inputs: count,
      seeds: seeds.length,
      corpus: run.corpus,
      coverageStart: run.coverageStart,
      coverageEnd: run.coverageEnd,
      kept: run.kept,
      added: run.added,
      setupRefused: run.refused,
      ...(run.firstRefusal === undefined ? {} : { firstRefusal: run.firstRefusal }),
    },
  };
}
