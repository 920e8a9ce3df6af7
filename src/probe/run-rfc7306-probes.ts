/**
 * Runs the RFC 7306 wire probes (rfc7306-probes.ts) against a siw with rfc7306=1 and
 * against the reference engine as an RNIC with the extensions, holding the same memory,
 * and judges the answers: wire lines, target memory afterwards, receive completion.
 */

import type { RdmapMessage } from '../codec/iwarp/messages.js';
import { encodeRdmapMessage } from '../codec/iwarp/rdmap.js';
import { TaggedBufferTable } from '../engine/memory/tagged-buffer.js';
import { Responder } from '../engine/responder/responder.js';
import type { Verdict } from '../judge/verdict.js';
import { wireLine } from '../judge/wire.js';
import { accessMaskOf } from '../verbs/mr.js';
import type { Rfc7306Answer, Rfc7306Probe } from './rfc7306-probes.js';
import { probeSiwWith, SIW_BUFFER_BYTES, type SiwTarget } from './siw-peer.js';

export interface Rfc7306ProbeResult {
  readonly probe: Rfc7306Probe;
  readonly verdict: Verdict;
  readonly engine: Rfc7306Answer | undefined;
  readonly kernel: Rfc7306Answer | undefined;
  readonly finding: KnownRfc7306ProbeAnswer | undefined;
  readonly error?: string;
}

const hex = (bytes: Uint8Array): string => Buffer.from(bytes).toString('hex');

/**
 * One wire line per message, plus what the shared wire line leaves out of an Atomic
 * Response: the Original Request Identifier and the Original Remote Data Value.
 */
function line(message: RdmapMessage): string {
  const base = wireLine('responder', message, []);
  if (message.kind !== 'atomic-response') return base;
  return `${base} req=0x${message.originalRequestIdentifier.toString(16)} orig=0x${message.originalRemoteDataValue.toString(16)}`;
}

/** The MR's first bytes: `word` in host (little-endian) order, the rest zero. */
export function initialMemory(word: bigint): Uint8Array {
  const memory = new Uint8Array(SIW_BUFFER_BYTES);
  new DataView(memory.buffer).setBigUint64(0, word, true);
  return memory;
}

function receiveLine(
  completion: { bytes: number; immediate: bigint | undefined; data: Uint8Array } | undefined,
): string {
  if (completion === undefined) return 'none';
  // Verbs exposes the low 32 bits of the 8 bytes (imm_data; the engine's projection too).
  const imm =
    completion.immediate === undefined ? '-' : (completion.immediate & 0xffff_ffffn).toString(16);
  return `ok bytes=${completion.bytes} imm=${imm} data=${hex(completion.data.subarray(0, 8))}`;
}

/** The engine's answer to `probe`, its memory registered as siw registered its MR. */
export function engineRfc7306Answer(probe: Rfc7306Probe, target: SiwTarget): Rfc7306Answer {
  const buffers = new TaggedBufferTable();
  const buffer = buffers.register({
    stag: target.stag,
    baseTaggedOffset: target.address,
    length: SIW_BUFFER_BYTES,
    access: accessMaskOf(probe.access),
    protectionDomain: 1,
    contents: initialMemory(probe.initialWord),
  });
  const responder = new Responder({
    stream: { streamId: 1, protectionDomain: 1 },
    buffers,
    ird: probe.ird,
    supportsAtomics: true,
    supportsImmediateData: true,
  });
  if (probe.postReceive) responder.postReceive({ id: 1n, length: SIW_BUFFER_BYTES });
  const sent: string[] = [];
  let completion: Parameters<typeof receiveLine>[0];
  for (const message of probe.messages(target)) {
    const result = responder.receive(message, encodeRdmapMessage(message));
    sent.push(...result.sent.map(line));
    const done = result.completions[0];
    if (done !== undefined)
      completion = { bytes: done.byteLength, immediate: done.immediateData, data: done.data };
  }
  // siw's receive buffer is its MR: what the receive got lands in the same memory.
  const memory = new Uint8Array(buffer.memory);
  if (completion !== undefined) memory.set(completion.data.subarray(0, SIW_BUFFER_BYTES));
  return { wire: sent.join('\n'), memory: hex(memory), receive: receiveLine(completion) };
}

/** A recorded patched-siw answer: siw's answer derived from the engine's (none recorded). */
export interface KnownRfc7306ProbeAnswer {
  readonly probe: string;
  readonly finding: string;
  readonly explanation: string;
  readonly kernel: (engine: Rfc7306Answer) => Rfc7306Answer;
}

/** Judges one probe's two answers against the recorded patched-siw behaviour. */
export function judgeRfc7306Probe(
  probe: Rfc7306Probe,
  engine: Rfc7306Answer,
  kernel: Rfc7306Answer,
  // No record explains a patched-siw probe answer (the table was empty; the tester's
  // records, judge/records/siw-wire.ts, hold for these assertions).
  known: readonly KnownRfc7306ProbeAnswer[] = [],
): Pick<Rfc7306ProbeResult, 'verdict' | 'finding'> {
  const recorded = known.find((k) => k.probe === probe.id);
  const same = (a: Rfc7306Answer, b: Rfc7306Answer): boolean =>
    a.wire === b.wire && a.memory === b.memory && a.receive === b.receive;
  if (same(engine, kernel))
    return { verdict: recorded === undefined ? 'match' : 'fail', finding: undefined };
  if (recorded !== undefined && same(recorded.kernel(engine), kernel))
    return { verdict: 'known', finding: recorded };
  return { verdict: 'fail', finding: undefined };
}

/** Runs `probe` against siw0 (which must run the patched siw.ko with rfc7306=1). */
export async function runRfc7306Probe(probe: Rfc7306Probe): Promise<Rfc7306ProbeResult> {
  try {
    const siw = await probeSiwWith({
      access: probe.access,
      initial: initialMemory(probe.initialWord),
      postReceive: probe.postReceive,
      ird: probe.ird,
      messages: probe.messages,
    });
    const engine = engineRfc7306Answer(probe, siw.target);
    const received = siw.completion;
    const kernel: Rfc7306Answer = {
      wire: siw.sent.map(line).join('\n'),
      memory: hex(siw.memory),
      receive: receiveLine(
        received === undefined
          ? undefined
          : received.ok
            ? {
                bytes: received.byteLen,
                immediate: received.immData === undefined ? undefined : BigInt(received.immData),
                data: siw.memory,
              }
            : { bytes: -1, immediate: undefined, data: new Uint8Array(0) },
      ),
    };
    return { probe, engine, kernel, ...judgeRfc7306Probe(probe, engine, kernel) };
  } catch (error) {
    return {
      probe,
      verdict: 'not-run',
      engine: undefined,
      kernel: undefined,
      finding: undefined,
      error: error instanceof Error ? `${error.name}: ${error.message}` : String(error),
    };
  }
}
