/**
 * What the reference engine answers to an iWARP assertion's bytes, and the judgement of
 * siw's answer against it. The engine is set up as siw was (the same STag, address,
 * access, IRD, posted receive and memory; with the RFC 7306 extensions only for the
 * patched siw) and reads the bytes through its MPA layer (engine/responder/mpa-receiver.ts)
 * and Responder, so every expectation comes from the engine's rules.
 */

import type { MpaNegotiated, RdmapMessage, Terminate } from '../codec/iwarp/messages.js';
import { TaggedBufferTable } from '../engine/memory/tagged-buffer.js';
import { receiveMpaStream } from '../engine/responder/mpa-receiver.js';
import { Responder } from '../engine/responder/responder.js';
import { answerLine, type IwarpAnswer, type IwarpExpectation } from '../judge/iwarp-answer.js';
import { recordsInScope, testerVerdictOf } from '../judge/judge.js';
import type { BehaviourRecord } from '../judge/record.js';
import { IWARP_RECORDS } from '../judge/records/index.js';
import { accessMaskOf } from '../verbs/mr.js';
import type { AssertionVerdict } from './assertion.js';
import type { IwarpAssertion } from './iwarp-assertions.js';
import { SIW_BUFFER_BYTES, type SiwTarget } from './siw-peer.js';
import { testerSiwProvider } from './tester-provider.js';

export type SiwVariant = 'stock' | 'rfc7306';

const hex = (bytes: Uint8Array): string => Buffer.from(bytes).toString('hex');

/** The MR's contents before the assertion: its word in host (little-endian) order. */
export function initialContents(word: bigint | undefined): Uint8Array {
  const memory = new Uint8Array(SIW_BUFFER_BYTES);
  new DataView(memory.buffer).setBigUint64(0, word ?? 0n, true);
  return memory;
}

/** The engine's answer to `assertion` sent to an MR at `target`, on siw `variant`. */
export function engineIwarpAnswer(
  assertion: IwarpAssertion,
  target: SiwTarget,
  negotiated: MpaNegotiated,
  variant: SiwVariant,
): { answer: IwarpAnswer; terminates: readonly Terminate[] } {
  const buffers = new TaggedBufferTable();
  const buffer = buffers.register({
    stag: target.stag,
    baseTaggedOffset: target.address,
    length: SIW_BUFFER_BYTES,
    access: accessMaskOf(assertion.setup.access),
    protectionDomain: 1,
    contents: initialContents(assertion.setup.initialWord),
  });
  const extensions = variant === 'rfc7306';
  const responder = new Responder({
    stream: { streamId: 1, protectionDomain: 1 },
    buffers,
    ird: assertion.setup.ird ?? 4,
    supportsAtomics: extensions,
    supportsImmediateData: extensions,
  });
  if (assertion.setup.postReceive) responder.postReceive({ id: 1n, length: SIW_BUFFER_BYTES });
  const received = receiveMpaStream(responder, assertion.stream(target, negotiated), negotiated);
  const sent: RdmapMessage[] = received.results.flatMap((r) => [...r.sent]);
  if (received.terminate !== undefined) sent.push(received.terminate);
  const done = received.results.flatMap((r) => [...r.completions])[0];
  const memory = new Uint8Array(buffer.memory);
  // siw's receive buffer is its MR: what a receive got lands in the same memory.
  if (done !== undefined) memory.set(done.data.subarray(0, SIW_BUFFER_BYTES));
  // RFC 5040 §7: a Terminate ends the stream and the QP leaves RTS; a receive still
  // posted then completes as flushed (the verbs model: IBV_WC_WR_FLUSH_ERR).
  const ended = responder.terminated || received.terminate !== undefined;
  const flushed = done === undefined && ended && responder.postedReceives > 0;
  return {
    answer: {
      wire: sent.map(answerLine),
      receive: flushed
        ? 'error WR_FLUSH_ERR'
        : receiveLine(
            done === undefined
              ? undefined
              : { bytes: done.byteLength, immediate: done.immediateData, data: done.data },
          ),
      memory: hex(memory),
    },
    terminates: sent.filter((m): m is Terminate => m.kind === 'terminate'),
  };
}

/** The receive completion as one line. */
export function receiveLine(
  completion: { bytes: number; immediate: bigint | undefined; data: Uint8Array } | undefined,
): string {
  if (completion === undefined) return 'none';
  // Verbs exposes the low 32 bits of the 8 bytes (imm_data; the engine's projection too).
  const imm =
    completion.immediate === undefined ? '-' : (completion.immediate & 0xffff_ffffn).toString(16);
  return `ok bytes=${completion.bytes} imm=${imm} data=${hex(completion.data.subarray(0, 8))}`;
}

/** The verdict for siw's answer, and the records that explain it when it differs. */
export function judgeIwarp(
  assertion: IwarpAssertion,
  variant: SiwVariant,
  expected: IwarpAnswer,
  expectedTerminates: readonly Terminate[],
  observed: IwarpAnswer,
  known: readonly BehaviourRecord[] = IWARP_RECORDS,
  kernel = '0',
): { verdict: AssertionVerdict; known: readonly BehaviourRecord[] } {
  const same = (a: IwarpAnswer, b: IwarpAnswer): boolean =>
    a.receive === b.receive && a.memory === b.memory && a.wire.join('\n') === b.wire.join('\n');
  const env = { provider: testerSiwProvider(variant), kernel, rdmaCore: 'unknown' };
  // Every record in scope applies, in table order: siw's answer is the engine's, derived.
  const records = recordsInScope(known, assertion.id, env).filter((k) => k.derive !== undefined);
  const derived = records.reduce((d, k) => k.derive?.(d) ?? d, {
    answer: expected,
    terminates: expectedTerminates,
  } as IwarpExpectation);
  const differs = !same(expected, observed);
  // Explained: siw's answer is the derived one. Stale: a record in scope whose change did
  // not occur (the answer is the engine's, or another).
  const explained = records.length > 0 && same(derived.answer, observed);
  const verdict = testerVerdictOf({
    differences: differs ? 1 : 0,
    unexplained: differs && !explained ? 1 : 0,
    stale: explained ? 0 : records.length,
  });
  return { verdict, known: verdict === 'known' ? records : [] };
}
