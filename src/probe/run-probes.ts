/**
 * Runs the wire probes against siw (through our userspace iWARP peer) and against the
 * engine configured as an RNIC without RFC 7306, and judges the answers line by line.
 */

import { requireArray, requireObject, requireString } from '../arguments.js';
import type { Terminate } from '../codec/iwarp/messages.js';
import type { IwarpExpectation } from '../judge/iwarp-answer.js';
import { recordsInScope, testerVerdictOf } from '../judge/judge.js';
import type { BehaviourRecord } from '../judge/record.js';
import { IWARP_RECORDS } from '../judge/records/index.js';
import type { Verdict } from '../judge/verdict.js';
import { wireLine } from '../judge/wire.js';
import { engineAnswer } from './engine-peer.js';
import { probeSiw } from './siw-peer.js';
import type { WireProbe } from './wire-probes.js';

export interface ProbeResult {
  readonly probe: WireProbe;
  readonly verdict: Verdict;
  /** The engine's answer, one wire line per message. */
  readonly engine: string;
  /** siw's answer, one wire line per message. */
  readonly kernel: string;
  /** Hex of the first 8 bytes each side delivered to the receive buffer (Send probes). */
  readonly engineDelivered: string;
  readonly kernelDelivered: string;
  /** The record (judge/records/siw-wire.ts, the tester's) that explains siw's answer. */
  readonly finding: BehaviourRecord | undefined;
  readonly error?: string;
}

const lines = (messages: readonly Parameters<typeof wireLine>[1][]): string =>
  messages.map((m) => wireLine('responder', m, [])).join('\n');

const hex = (bytes: Uint8Array | undefined): string =>
  bytes === undefined ? '' : Buffer.from(bytes.subarray(0, 8)).toString('hex');

/**
 * Judges one probe's two answers by the tester's records for the assertion of the same
 * id (judge/records/siw-wire.ts, stock siw): siw's answer is the engine's as the records
 * derive it from the engine's Terminates (`engineTerminates`), else it fails.
 */
export function judgeProbe(
  probe: WireProbe,
  answers: Pick<ProbeResult, 'engine' | 'kernel' | 'engineDelivered' | 'kernelDelivered'> & {
    readonly engineTerminates?: readonly Terminate[];
  },
  known: readonly BehaviourRecord[] = IWARP_RECORDS,
): Pick<ProbeResult, 'verdict' | 'finding'> {
  requireObject('interop', 'probe', probe);
  const a = requireObject('interop', 'answers', answers) as Readonly<Record<string, unknown>>;
  for (const key of ['engine', 'kernel', 'engineDelivered', 'kernelDelivered'] as const)
    requireString('interop', `answers.${key}`, a[key], true);
  requireArray('interop', 'known', known);
  if (a.engineTerminates !== undefined)
    requireArray('interop', 'answers.engineTerminates', a.engineTerminates);
  const env = { provider: 'siw', kernel: '0', rdmaCore: 'unknown' };
  const records = recordsInScope(known, probe.id, env).filter((k) => k.derive !== undefined);
  const engine: IwarpExpectation = {
    answer: {
      wire: answers.engine === '' ? [] : answers.engine.split('\n'),
      receive: '',
      memory: '',
    },
    terminates: answers.engineTerminates ?? [],
  };
  const derived = records.reduce((d, k) => k.derive?.(d) ?? d, engine).answer.wire.join('\n');
  // A Send delivers nothing on the engine side's wire; what it delivered is compared too.
  const delivered = answers.engineDelivered === answers.kernelDelivered;
  const differs = answers.engine !== answers.kernel || !delivered;
  const explained = records.length > 0 && delivered && derived === answers.kernel;
  const verdict = testerVerdictOf({
    differences: differs ? 1 : 0,
    unexplained: differs && !explained ? 1 : 0,
    stale: explained ? 0 : records.length,
  });
  return { verdict, finding: verdict === 'known' ? records[0] : undefined };
}

export async function runProbe(probe: WireProbe): Promise<ProbeResult> {
  const p = requireObject('interop', 'probe', probe) as Readonly<Record<string, unknown>>;
  requireString('interop', 'probe.id', p.id);
  requireObject('interop', 'probe.message', p.message);
  const expected = engineAnswer(probe.message);
  const engine = lines(expected.sent);
  const engineDelivered = hex(expected.delivered);
  try {
    const siw = await probeSiw(probe.message);
    const kernel = lines(siw.sent);
    const kernelDelivered = siw.completion?.ok ? hex(siw.received) : '';
    const answers = { engine, kernel, engineDelivered, kernelDelivered };
    const terminates = expected.sent.filter((m): m is Terminate => m.kind === 'terminate');
    return {
      probe,
      ...answers,
      ...judgeProbe(probe, { ...answers, engineTerminates: terminates }),
    };
  } catch (error) {
    return {
      probe,
      verdict: 'not-run',
      engine,
      kernel: '',
      engineDelivered,
      kernelDelivered: '',
      finding: undefined,
      error: error instanceof Error ? `${error.name}: ${error.message}` : String(error),
    };
  }
}
