/**
 * The coverage-guided wire fuzz of rxe (issue 32), in the guest on the RoCE tester's testbed:
 * a corpus of packet sequences (guided-input.ts), seeded with the tester's own requests;
 * each round takes a corpus entry (seeded draw), applies 1-4 mutations, sends the sequence
 * to a fresh QP (connected at the sequence's start PSN), and keeps it in the corpus when the
 * feedback grew: the number of distinct blocks the trace-pc collector holds
 * (`/sys/kernel/debug/rdma_cov/count`, `--coverage blocks`), else the number of distinct
 * functions the ftrace reader wrote (`--coverage functions`); with neither, nothing is kept
 * and the campaign mutates the seeds only. The oracles are roce-fuzz.ts's: the guard MR
 * (no remote rights) unchanged after each sequence, and after each batch the kernel log and
 * a loopback FetchAdd on rxe_t.
 */
import { existsSync, readFileSync } from 'node:fs';
import { release } from 'node:os';
import { ICRC_LENGTH } from '../codec/roce/packet.js';
import {
  type FindingMinimization,
  type FuzzFinding,
  type FuzzLoopOptions,
  type FuzzSummary,
  seededRandom,
} from '../probe/fuzz-loop.js';
import { minimizeSequence } from '../probe/minimize.js';
import { kernelLogOracles } from '../probe/oracles/kernel-log.js';
import { rawTesterDatagram } from '../probe/roce-datagram.js';
import { build, type RoceTarget } from '../probe/roce-packets.js';
import {
  DEVICE_PSN,
  loopbackFetchAdd,
  ROCE_TESTER_MTU,
  type RoceRunEnvironment,
} from '../probe/roce-responder-run.js';
import { ROCE_TESTBED } from '../probe/roce-testbed.js';
import type { Mr } from '../verbs/mr.js';
import { FUNCTIONS_FILE_ENV, readOutput, syncFunctionFeedback } from './ftrace.js';
import {
  applyStep,
  GUIDED_BASES,
  type GuidedInput,
  guidedSeeds,
  MUTATIONS,
  type MutationName,
  mutate,
} from './guided-input.js';
import { guidedStepReductions } from './guided-minimize.js';

const COUNT_FILE = '/sys/kernel/debug/rdma_cov/count';

/** The feedback now: blocks, else functions, else undefined. */
export function coverageFeedback(): { kind: 'blocks' | 'functions'; value: number } | undefined {
  if (existsSync(COUNT_FILE))
    return { kind: 'blocks', value: Number(readFileSync(COUNT_FILE, 'utf8').trim()) };
  const file = process.env[FUNCTIONS_FILE_ENV];
  if (file === undefined || !existsSync(file)) return undefined;
  // The reader lags behind the trace under TCG: wait until it has written what came before.
  syncFunctionFeedback();
  return {
    kind: 'functions',
    value: readOutput(file)
      .split('\n')
      .filter((l) => l !== '' && !l.startsWith('#')).length,
  };
}

const PAYLOAD = Uint8Array.of(0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11);
const MR_LENGTH = 4 * 4096;

/** A base request's transport bytes (no ICRC) for a target at `psn`. */
function baseTransport(base: number, t: RoceTarget, psn: number): Uint8Array {
  const name = GUIDED_BASES[base] ?? GUIDED_BASES[0];
  const full = new Uint8Array(ROCE_TESTER_MTU).fill(0x5a);
  const total = 2 * ROCE_TESTER_MTU + PAYLOAD.length;
  let datagram: Uint8Array;
  switch (name) {
    case 'RC_RDMA_WRITE_ONLY':
    case 'RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE':
      datagram = build.write(t, psn, 0, PAYLOAD, { opcode: name }).datagram;
      break;
    case 'RC_RDMA_WRITE_FIRST':
      datagram = build.write(t, psn, 0, full, { opcode: name, dmaLength: total }).datagram;
      break;
    case 'RC_RDMA_WRITE_MIDDLE':
      datagram = build.write(t, psn, 0, full, { opcode: name }).datagram;
      break;
    case 'RC_RDMA_WRITE_LAST':
      datagram = build.write(t, psn, 0, PAYLOAD, { opcode: name }).datagram;
      break;
    case 'RC_RDMA_READ_REQUEST':
      datagram = build.read(t, psn, 0, 64).datagram;
      break;
    case 'RC_FETCH_ADD':
      datagram = build.fetchAdd(t, psn, 8, 0x0102030405060708n).datagram;
      break;
    case 'RC_COMPARE_SWAP': {
      // The same AtomicETH as FetchAdd (IBTA §9.3.4): only the opcode differs.
      const d = Uint8Array.from(build.fetchAdd(t, psn, 8, 0x0102030405060708n).datagram);
      d[0] = 0x13;
      datagram = d;
      break;
    }
    case 'RC_SEND_ONLY':
      datagram = build.send(t, psn, PAYLOAD).datagram;
      break;
  }
  return datagram.subarray(0, datagram.length - ICRC_LENGTH);
}

/** The datagrams of an input for a target. */
export function inputDatagrams(input: GuidedInput, t: RoceTarget): Uint8Array[] {
  return input.steps.map((s) => {
    const psn = (input.startPsn + s.psnOffset) & 0xffffff;
    return rawTesterDatagram(applyStep(baseTransport(s.base, t, psn), s), { icrcXor: s.icrcXor });
  });
}

const guardByte = (i: number): number => (i * 29 + 7) & 0xff;
function fillGuard(guard: Mr): void {
  guard.buffer.forEach((_, i) => {
    guard.buffer[i] = guardByte(i);
  });
}

/** Sends an input to a fresh QP; what looked wrong, if anything. */
async function sendInput(
  env: RoceRunEnvironment,
  guard: Mr,
  input: GuidedInput,
): Promise<string | undefined> {
  const qp = env.device.createQp();
  const mr = env.device.allocateMemory(MR_LENGTH);
  try {
    env.device.connect(
      qp,
      { tester: input.startPsn, device: DEVICE_PSN },
      { mtu: ROCE_TESTER_MTU, maxDestRdAtomic: 16, retryCnt: 1, rnrRetry: 0, timeout: 10 },
    );
    for (let i = 0; i < 4; i++)
      qp.postRecv({ wrId: BigInt(i + 1), sgList: [mr.sge(i * 256, 256)] });
    env.wire.clear();
    for (const d of inputDatagrams(input, { qpn: qp.qpNum, va: mr.addr, rKey: mr.rkey }))
      env.wire.send(d);
    await env.wire.collect(input.steps.length, 40, 10);
    while (env.device.cq.poll(16).length > 0);
    if (guard.buffer.every((b, i) => b === guardByte(i))) return undefined;
    fillGuard(guard);
    return 'the guard region (no remote rights) changed';
  } finally {
    qp.close();
    mr.close();
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
        wrong = await sendInput(env, guard, { startPsn: input.startPsn, steps });
      } catch (error) {
        wrong = `the tester failed: ${error instanceof Error ? error.message : String(error)}`;
      }
      return wrong !== undefined && sequenceOracle(wrong) === oracle;
    },
    { budget, reduceItem: guidedStepReductions },
  );
  return {
    oracle,
    originalLength: input.steps.length,
    sequence: { kind: 'guided', inputs: [{ startPsn: input.startPsn, steps: r.minimal }] },
    calls: r.calls,
    exhausted: r.exhausted,
  };
}

/**
 * A batch that fired a kernel-log oracle reduced to the sequences that still fire it: the
 * predicate replays them (sendInput each) and reads the kernel log for the same oracle.
 */
async function minimizeGuidedBatch(
  env: RoceRunEnvironment,
  guard: Mr,
  inputs: readonly GuidedInput[],
  oracle: string,
  budget: number,
): Promise<FindingMinimization> {
  const r = await minimizeSequence(
    inputs,
    async (candidate) => {
      env.log.mark();
      for (const input of candidate) await sendInput(env, guard, input).catch(() => undefined);
      return kernelLogOracles(env.log.troubleSinceLastCheck()).includes(oracle);
    },
    { budget },
  );
  return {
    oracle,
    originalLength: inputs.length,
    sequence: { kind: 'guided', inputs: r.minimal },
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
  const seeds = guidedSeeds(0x00a5c3);
  const corpus: GuidedInput[] = [...seeds];
  const added: GuidedInput[] = [];
  const kept: Record<string, number> = Object.fromEntries(MUTATIONS.map((m) => [m, 0]));
  const findings: FuzzFinding[] = [];
  const start = coverageFeedback();
  let last = start?.value ?? 0;
  let batches = 0;
  const guard = env.device.pd.allocMr(4096, ['LOCAL_WRITE']);
  try {
    fillGuard(guard);
    for (let from = 0; from < count; from += batch) {
      env.log.mark();
      const to = Math.min(count, from + batch);
      const inBatch: GuidedInput[] = [];
      for (let index = from; index < to; index++) {
        let input: GuidedInput;
        let applied: MutationName[] = [];
        if (index < seeds.length) input = seeds[index] as GuidedInput;
        else {
          const parent = corpus[Math.floor(random() * corpus.length)] as GuidedInput;
          ({ input, applied } = mutate(parent, random));
        }
        inBatch.push(input);
        let wrong: string | undefined;
        try {
          wrong = await sendInput(env, guard, input);
        } catch (error) {
          wrong = `the tester failed: ${error instanceof Error ? error.message : String(error)}`;
        }
        // The feedback of this input alone, read before any minimizing replays add to it.
        const now = coverageFeedback()?.value ?? last;
        const grew = now > last && index >= seeds.length;
        last = Math.max(last, now);
        if (wrong !== undefined) {
          const oracle = sequenceOracle(wrong);
          const minimization =
            options.minimizeBudget === undefined
              ? undefined
              : await minimizeGuidedInput(env, guard, input, oracle, options.minimizeBudget);
          const smallest =
            minimization?.sequence.kind === 'guided' ? minimization.sequence.inputs[0] : undefined;
          findings.push({
            seed,
            index,
            mutation: applied.join('+') || 'seed',
            why: wrong,
            oracles: [oracle],
            bytes: JSON.stringify(input),
            minimized: JSON.stringify(smallest ?? input),
            ...(minimization === undefined ? {} : { minimization }),
          });
          // What the replays reached is no later input's gain.
          last = Math.max(last, coverageFeedback()?.value ?? last);
        }
        if (grew) {
          corpus.push(input);
          added.push(input);
          for (const m of new Set(applied)) kept[m] = (kept[m] ?? 0) + 1;
        }
      }
      batches++;
      const problems = env.log.troubleSinceLastCheck();
      const works = await loopbackFetchAdd(env.device).catch(() => false);
      if (problems.length > 0 || !works) {
        const oracles = [...kernelLogOracles(problems), ...(works ? [] : ['device-works'])];
        const oracle = oracles[0];
        // A broken device cannot replay; a kernel-log oracle can.
        const minimization =
          options.minimizeBudget !== undefined && works && oracle?.startsWith('kernel-log/')
            ? await minimizeGuidedBatch(env, guard, inBatch, oracle, options.minimizeBudget)
            : undefined;
        findings.push({
          seed,
          index: to - 1,
          mutation: `batch ${from}-${to - 1}`,
          why: [...problems, ...(works ? [] : ['rxe_t no longer completes a FetchAdd'])].join(
            ' | ',
          ),
          oracles,
          bytes: JSON.stringify(inBatch),
          minimized: JSON.stringify(
            minimization?.sequence.kind === 'guided' ? minimization.sequence.inputs : inBatch,
          ),
          ...(minimization === undefined ? {} : { minimization }),
        });
        last = Math.max(last, coverageFeedback()?.value ?? last);
        if (!works) break;
      }
      onProgress(
        `guided fuzz ${ROCE_TESTBED.device}: ${to}/${count} inputs, corpus ${corpus.length}, coverage ${last}, ${findings.length} findings`,
      );
    }
  } finally {
    guard.close();
  }
  return {
    kernel: release(),
    device: ROCE_TESTBED.device,
    seed,
    packets: count,
    batches,
    findings,
    guided: {
      feedback: start?.kind ?? 'none',
      inputs: count,
      seeds: seeds.length,
      corpus: corpus.length,
      coverageStart: start?.value ?? 0,
      coverageEnd: last,
      kept,
      added,
    },
  };
}
