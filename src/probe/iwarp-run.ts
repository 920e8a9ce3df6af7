/**
 * Runs iWARP assertions where the devices are (in the guest): each against siw0 through
 * our userspace peer, the engine's answer beside it, the verdict, and after a hostile one
 * the kernel's survival. Every result is appended to a JSON-lines file as soon as it is
 * known, preceded by a `starting` line, so that the host can name the assertion a crashed
 * guest was running (tester-framework.md, guest-runner).
 */

import { appendFileSync } from 'node:fs';
import { release } from 'node:os';
import { makeRdmaWrite } from '../codec/iwarp/build.js';
import type { BlockSnapshot } from '../coverage/blocks.js';
import type { RawFunctionCoverage } from '../coverage/ftrace.js';
import { answerLine, type IwarpAnswer, undecodableLine } from '../judge/iwarp-answer.js';
import { judgeFields, recordsInScope, testerVerdictOf } from '../judge/judge.js';
import { type BehaviourRecord, explainsField } from '../judge/record.js';
import { IWARP_RECORDS } from '../judge/records/index.js';
import {
  type Assertion,
  type AssertionResult,
  type ProbePass,
  type Survival,
  survivalFailed,
} from './assertion.js';
import type { FuzzSummary } from './fuzz-loop.js';
import type { IwarpAssertion } from './iwarp-assertions.js';
import {
  engineIwarpAnswer,
  initialContents,
  judgeIwarp,
  receiveLine,
  type SiwVariant,
} from './iwarp-expect.js';
import { type IwarpResponderAssertion, runResponderAssertion } from './iwarp-responder-peer.js';
import type { ResourceCheck } from './oracles/resource-count.js';
import { oracleNote, survivalOracles } from './oracles/survival-oracles.js';
import { probeSiwWith } from './siw-peer.js';
import { checkSurvival, KernelLog } from './survival.js';
import { testerSiwProvider } from './tester-provider.js';

/**
 * One line of the results file: guest-runner.ts's lines, the `starting` line also naming
 * the siw variant (the host resumes after a crash at `variant/id`), and the fuzz summary.
 */
export type ResultLine =
  | {
      readonly kind: 'starting';
      readonly id: string;
      readonly at: string;
      readonly variant: ProbePass;
    }
  | { readonly kind: 'result'; readonly result: AssertionResult }
  | { readonly kind: 'fuzz'; readonly summary: FuzzSummary }
  /** `probe --coverage`: the functions the pass entered (coverage/ftrace.ts). */
  | { readonly kind: 'coverage'; readonly coverage: RawFunctionCoverage }
  /** `probe --coverage blocks`: the collector's snapshots, one before each phase (blocks.ts). */
  | { readonly kind: 'blocks'; readonly kernel: string; readonly snapshots: BlockSnapshot[] }
  /** The resource-count oracle's counts around a pass (oracles/resource-count.ts). */
  | { readonly kind: 'resources'; readonly check: ResourceCheck };

const hex = (bytes: Uint8Array): string => Buffer.from(bytes).toString('hex');

/** A well-formed RDMA Write from our peer lands in siw's memory: the device still works. */
export async function siwStillWorks(): Promise<boolean> {
  const payload = Uint8Array.of(0x10, 0x32, 0x54, 0x76, 0x98, 0xba, 0xdc, 0xfe);
  try {
    const answer = await probeSiwWith({
      access: ['LOCAL_WRITE', 'REMOTE_WRITE'],
      postReceive: false,
      // Until the bytes are placed (TCG at load 1: tens of ms), not a fixed 300 ms that a
      // loaded host could exceed and so call a working siw hurt.
      answerWaitMs: 5000,
      doneWhen: (memory) => hex(memory.subarray(0, 8)) === hex(payload),
      messages: (t) => [makeRdmaWrite({ stag: t.stag, taggedOffset: t.address, payload })],
    });
    // siw places the Write without answering.
    return hex(answer.memory.subarray(0, 8)) === hex(payload) && answer.sent.length === 0;
  } catch {
    return false;
  }
}

/** Survival after a hostile assertion: the kernel log since `log`'s mark, a working device. */
function survival(log: KernelLog): Promise<Survival> {
  return checkSurvival(log, siwStillWorks);
}

/** The part of a peer's answer the assertion compares. */
function observedAnswer(answer: Awaited<ReturnType<typeof probeSiwWith>>): IwarpAnswer {
  const c = answer.completion;
  return {
    wire: answer.fpdus.map((f) =>
      'message' in f ? answerLine(f.message) : undecodableLine(f.ulpdu, f.error),
    ),
    receive:
      c === undefined
        ? 'none'
        : c.ok
          ? receiveLine({
              bytes: c.byteLen,
              immediate: c.immData === undefined ? undefined : BigInt(c.immData),
              data: answer.memory,
            })
          : `error ${c.status}`,
    memory: hex(answer.memory),
  };
}

function errorText(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}

/** The fields every siw0 result starts with. */
function siwResultBase(
  assertion: Pick<Assertion, 'id' | 'spec' | 'testerRole'>,
  variant: SiwVariant,
  kernel: string,
) {
  return {
    id: assertion.id,
    spec: assertion.spec,
    device: 'siw0',
    provider: 'siw' as const,
    siwVariant: variant,
    kernel,
    topology: assertion.testerRole,
  };
}

/** A siw0 result's first fields, and the kernel log marked before the assertion runs. */
function startSiwResult(
  assertion: Pick<Assertion, 'id' | 'spec' | 'testerRole'>,
  variant: SiwVariant,
  kernel: string,
) {
  const log = new KernelLog();
  log.mark();
  return { base: siwResultBase(assertion, variant, kernel), log };
}

/** The `fail` of an assertion whose run threw, with the survival checked after it. */
function threw(
  base: ReturnType<typeof siwResultBase>,
  alive: Survival | undefined,
  error: unknown,
): AssertionResult {
  return {
    ...base,
    verdict: 'fail',
    expected: null,
    observed: null,
    ...(alive === undefined ? {} : { survival: alive }),
    note: errorText(error),
  };
}

/** Runs one assertion where siw is the Responder. */
export async function runIwarpAssertion(
  assertion: IwarpAssertion,
  variant: SiwVariant,
  kernel = release(),
): Promise<AssertionResult> {
  const { base, log } = startSiwResult(assertion, variant, kernel);
  try {
    const siw = await probeSiwWith({
      access: assertion.setup.access,
      initial: initialContents(assertion.setup.initialWord),
      postReceive: assertion.setup.postReceive,
      ...(assertion.setup.ird === undefined ? {} : { ird: assertion.setup.ird }),
      ...(assertion.setup.mpaCrc === undefined ? {} : { mpaCrc: assertion.setup.mpaCrc }),
      stream: assertion.stream,
      ...(assertion.splits === undefined ? {} : { splits: assertion.splits }),
    });
    const engine = engineIwarpAnswer(assertion, siw.target, siw.negotiated, variant);
    const observed = observedAnswer(siw);
    const judged = judgeIwarp(
      assertion,
      variant,
      engine.answer,
      engine.terminates,
      observed,
      IWARP_RECORDS,
      kernel,
    );
    const alive = assertion.hostile ? await survival(log) : undefined;
    // Memory outside the MR changed, or the kernel complained: a failure whatever the answer.
    const hurt = !siw.guardsIntact || (alive !== undefined && survivalFailed(alive));
    const notes = [
      siw.closedBySiw ? 'siw closed the connection' : 'siw kept the connection open',
      ...(siw.guardsIntact ? [] : ['GUARD WORDS OUTSIDE THE MR CHANGED (oracle: guard-words)']),
      ...(alive !== undefined && survivalFailed(alive)
        ? [oracleNote('the kernel did not survive', survivalOracles(alive))]
        : []),
      ...(judged.verdict === 'fail' ? ['oracle: engine-expectation'] : []),
      ...(siw.decodeError === undefined ? [] : [`siw's answer stops decoding: ${siw.decodeError}`]),
      ...judged.known.map((k) => `${k.id}: ${k.why}`),
    ];
    return {
      ...base,
      verdict: hurt ? 'fail' : judged.verdict,
      expected: { ...engine.answer, wire: [...engine.answer.wire] },
      observed: { ...observed, wire: [...observed.wire], guardsIntact: siw.guardsIntact },
      ...(alive === undefined ? {} : { survival: alive }),
      ...(judged.known.length === 0
        ? {}
        : { known: [...new Set(judged.known.map((k) => k.id))].join('+') }),
      note: notes.join('; '),
    };
  } catch (error) {
    return threw(base, assertion.hostile ? await survival(log) : undefined, error);
  }
}

/**
 * The judgement of siw as the Requester: its observation (request and answer lines, the
 * completion status), flattened to fields, against the engine's, by the records' field
 * globs (the one judge, judge/judge.ts).
 */
export function judgeResponder(
  id: string,
  variant: SiwVariant,
  kernel: string,
  run: { readonly observed: object; readonly expected: object },
  records: readonly BehaviourRecord[] = IWARP_RECORDS,
): { verdict: 'match' | 'known' | 'fail'; known: BehaviourRecord | undefined } {
  const flat = (o: object): Record<string, string> =>
    Object.fromEntries(
      Object.entries(o).map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)]),
    );
  const observed = flat(run.observed);
  const expected = flat(run.expected);
  const differences = Object.keys({ ...expected, ...observed })
    .filter((field) => observed[field] !== expected[field])
    .map((field) => ({ field, device: observed[field] ?? '' }));
  const env = { provider: testerSiwProvider(variant), kernel, rdmaCore: 'unknown' };
  const recorded = recordsInScope(records, id, env).filter((k) => k.observed !== undefined);
  const { explaining, stale } = judgeFields(recorded, differences, observed);
  const unexplained = differences.filter(
    (d) => !explaining.some((k) => explainsField(k, d.field, d.device)),
  );
  const verdict = testerVerdictOf({
    differences: differences.length,
    unexplained: unexplained.length,
    stale: stale.length,
  });
  return { verdict, known: verdict === 'known' ? explaining[0] : undefined };
}

/** Runs one assertion where the tester is the Responder (siw the Requester). */
export async function runIwarpResponderAssertion(
  assertion: IwarpResponderAssertion,
  variant: SiwVariant,
  kernel = release(),
): Promise<AssertionResult> {
  const { base, log } = startSiwResult(assertion, variant, kernel);
  try {
    const run = await runResponderAssertion(assertion);
    const alive = await survival(log);
    const judged = judgeResponder(assertion.id, variant, kernel, run);
    const hurt = survivalFailed(alive);
    const oracles = hurt ? oracleNote('the kernel did not survive', survivalOracles(alive)) : '';
    return {
      ...base,
      verdict: hurt ? 'fail' : judged.verdict,
      expected: {
        ...run.expected,
        request: [...run.expected.request],
        answer: [...run.expected.answer],
      },
      observed: {
        ...run.observed,
        request: [...run.observed.request],
        answer: [...run.observed.answer],
      },
      survival: alive,
      ...(judged.known === undefined ? {} : { known: judged.known.id, note: judged.known.why }),
      ...(hurt ? { note: oracles } : {}),
    };
  } catch (error) {
    return threw(base, await survival(log), error);
  }
}

/** Either kind of iWARP assertion. */
export type AnyIwarpAssertion = IwarpAssertion | IwarpResponderAssertion;

/** Runs `assertions` in order, appending a `starting` and a `result` line for each to `file`. */
export async function runIwarpAssertions(
  assertions: readonly AnyIwarpAssertion[],
  variant: SiwVariant,
  file: string | undefined,
  onResult: (result: AssertionResult) => void = () => {},
  stopWhen: (result: AssertionResult) => boolean = () => false,
): Promise<AssertionResult[]> {
  const write = (line: ResultLine) => {
    if (file !== undefined) appendFileSync(file, `${JSON.stringify(line)}\n`);
  };
  const results: AssertionResult[] = [];
  for (const assertion of assertions) {
    write({ kind: 'starting', id: assertion.id, at: new Date().toISOString(), variant });
    const result =
      assertion.testerRole === 'requester'
        ? await runIwarpAssertion(assertion, variant)
        : await runIwarpResponderAssertion(assertion, variant);
    write({ kind: 'result', result });
    results.push(result);
    onResult(result);
    if (stopWhen(result)) break;
  }
  return results;
}
