/**
 * Runs iWARP assertions where the devices are (in the guest): each against siw0 through
 * our userspace peer, the engine's answer beside it, the verdict, and after a hostile one
 * the kernel's survival. Every result is appended to a JSON-lines file as soon as it is
 * known, preceded by a `starting` line, so that the host can name the assertion a crashed
 * guest was running (tester-framework.md, guest-runner).
 */
import { appendFileSync } from 'node:fs';
import { release } from 'node:os';
import { makeRdmaWrite } from '../../codec/iwarp/build.js';
import { probeSiwWith } from '../peer/siw-peer.js';
import type { AssertionResult, Survival } from './assertion-shape.js';
import type { IwarpAssertion } from './iwarp-assertions.js';
import {
  answerLine,
  engineIwarpAnswer,
  type IwarpAnswer,
  initialContents,
  judgeIwarp,
  receiveLine,
  type SiwVariant,
} from './iwarp-expect.js';
import { type IwarpResponderAssertion, runResponderAssertion } from './iwarp-responder-peer.js';
import { kernelLogSince, kernelProblems } from './kernel-log.js';

/** One line of the results file. */
export type ResultLine =
  | { readonly starting: string; readonly variant: SiwVariant }
  | { readonly result: AssertionResult };

const hex = (bytes: Uint8Array): string => Buffer.from(bytes).toString('hex');

/** A well-formed RDMA Write from our peer lands in siw's memory: the device still works. */
export async function siwStillWorks(): Promise<boolean> {
  const payload = Uint8Array.of(0x10, 0x32, 0x54, 0x76, 0x98, 0xba, 0xdc, 0xfe);
  try {
    const answer = await probeSiwWith({
      access: ['LOCAL_WRITE', 'REMOTE_WRITE'],
      postReceive: false,
      answerWaitMs: 300,
      messages: (t) => [makeRdmaWrite({ stag: t.stag, taggedOffset: t.address, payload })],
    });
    // siw places the Write without answering; wait until the bytes are there.
    return hex(answer.memory.subarray(0, 8)) === hex(payload) && answer.sent.length === 0;
  } catch {
    return false;
  }
}

/** Survival after a hostile assertion: kernel log since `mark`, a working device. */
async function survival(mark: number): Promise<Survival> {
  const deviceWorks = await siwStillWorks();
  return { dmesg: kernelProblems(kernelLogSince(mark)), deviceWorks, guestUp: true };
}

/** The part of a peer's answer the assertion compares. */
function observedAnswer(answer: Awaited<ReturnType<typeof probeSiwWith>>): IwarpAnswer {
  const c = answer.completion;
  return {
    wire: answer.sent.map(answerLine),
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

/** Runs one assertion where siw is the Responder. */
export async function runIwarpAssertion(
  assertion: IwarpAssertion,
  variant: SiwVariant,
  kernel = release(),
): Promise<AssertionResult> {
  const base = {
    id: assertion.id,
    spec: assertion.spec,
    device: 'siw0',
    provider: 'siw' as const,
    siwVariant: variant,
    kernel,
    topology: assertion.testerRole,
  };
  const mark = kernelLogSince(0).length;
  try {
    const siw = await probeSiwWith({
      access: assertion.setup.access,
      initial: initialContents(assertion.setup.initialWord),
      postReceive: assertion.setup.postReceive,
      ...(assertion.setup.ird === undefined ? {} : { ird: assertion.setup.ird }),
      ...(assertion.setup.mpaCrc === undefined ? {} : { mpaCrc: assertion.setup.mpaCrc }),
      stream: assertion.stream,
    });
    const engine = engineIwarpAnswer(assertion, siw.target, siw.negotiated, variant);
    const observed = observedAnswer(siw);
    const judged = judgeIwarp(assertion, variant, engine.answer, engine.terminates, observed);
    const alive = assertion.hostile ? await survival(mark) : undefined;
    // Memory outside the MR changed, or the kernel complained: a failure whatever the answer.
    const hurt =
      !siw.guardsIntact || (alive !== undefined && (alive.dmesg.length > 0 || !alive.deviceWorks));
    const notes = [
      siw.closedBySiw ? 'siw closed the connection' : 'siw kept the connection open',
      ...(siw.guardsIntact ? [] : ['GUARD WORDS OUTSIDE THE MR CHANGED']),
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
    const alive = assertion.hostile ? await survival(mark) : undefined;
    return {
      ...base,
      verdict: 'fail',
      expected: null,
      observed: null,
      ...(alive === undefined ? {} : { survival: alive }),
      note: errorText(error),
    };
  }
}

/** Runs one assertion where the tester is the Responder (siw the Requester). */
export async function runIwarpResponderAssertion(
  assertion: IwarpResponderAssertion,
  variant: SiwVariant,
  kernel = release(),
): Promise<AssertionResult> {
  const base = {
    id: assertion.id,
    spec: assertion.spec,
    device: 'siw0',
    provider: 'siw' as const,
    siwVariant: variant,
    kernel,
    topology: assertion.testerRole,
  };
  const mark = kernelLogSince(0).length;
  try {
    const run = await runResponderAssertion(assertion);
    const alive = await survival(mark);
    const same = JSON.stringify(run.observed) === JSON.stringify(run.expected);
    const known = !same && run.observed.status === run.siwModelStatus;
    const hurt = alive.dmesg.length > 0 || !alive.deviceWorks;
    return {
      ...base,
      verdict: hurt ? 'fail' : same ? 'pass' : known ? 'known' : 'fail',
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
      ...(known ? { known: 'siw-terminate-flushes-requester' } : {}),
      ...(known
        ? {
            note: 'siw_proc_terminate only logs the Terminate and returns -ECONNRESET; siw_sq_flush completes the ORQ entry with SIW_WC_WR_FLUSH_ERR (terminate-status.ts, siw model)',
          }
        : {}),
    };
  } catch (error) {
    const alive = await survival(mark);
    return {
      ...base,
      verdict: 'fail',
      expected: null,
      observed: null,
      survival: alive,
      note: errorText(error),
    };
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
): Promise<AssertionResult[]> {
  const write = (line: ResultLine) => {
    if (file !== undefined) appendFileSync(file, `${JSON.stringify(line)}\n`);
  };
  const results: AssertionResult[] = [];
  for (const assertion of assertions) {
    write({ starting: assertion.id, variant });
    const result =
      assertion.testerRole === 'requester'
        ? await runIwarpAssertion(assertion, variant)
        : await runIwarpResponderAssertion(assertion, variant);
    write({ result });
    results.push(result);
    onResult(result);
  }
  return results;
}
