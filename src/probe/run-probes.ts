/**
 * Runs the wire probes against siw (through our userspace iWARP peer) and against the
 * engine configured as an RNIC without RFC 7306, and judges the answers line by line.
 */

import { requireArray, requireObject, requireString } from '../arguments.js';
import { KNOWN_PROBE_ANSWERS, type KnownProbeAnswer } from '../judge/probe-answers.js';
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
  readonly finding: KnownProbeAnswer | undefined;
  readonly error?: string;
}

const lines = (messages: readonly Parameters<typeof wireLine>[1][]): string =>
  messages.map((m) => wireLine('responder', m, [])).join('\n');

const hex = (bytes: Uint8Array | undefined): string =>
  bytes === undefined ? '' : Buffer.from(bytes.subarray(0, 8)).toString('hex');

/** Judges one probe's two answers against the recorded siw behaviour. */
export function judgeProbe(
  probe: WireProbe,
  answers: Pick<ProbeResult, 'engine' | 'kernel' | 'engineDelivered' | 'kernelDelivered'>,
  known: readonly KnownProbeAnswer[] = KNOWN_PROBE_ANSWERS,
): Pick<ProbeResult, 'verdict' | 'finding'> {
  requireObject('interop', 'probe', probe);
  const a = requireObject('interop', 'answers', answers) as Readonly<Record<string, unknown>>;
  for (const key of ['engine', 'kernel', 'engineDelivered', 'kernelDelivered'] as const)
    requireString('interop', `answers.${key}`, a[key], true);
  requireArray('interop', 'known', known);
  const recorded = known.find((k) => k.probe === probe.id);
  // A Send delivers nothing on the engine side's wire; what it delivered is compared too.
  const delivered = answers.engineDelivered === answers.kernelDelivered;
  if (answers.engine === answers.kernel && delivered) {
    return { verdict: recorded === undefined ? 'match' : 'fail', finding: undefined };
  }
  if (recorded !== undefined && recorded.kernel === answers.kernel && delivered) {
    return { verdict: 'known', finding: recorded };
  }
  return { verdict: 'fail', finding: undefined };
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
    return { probe, ...answers, ...judgeProbe(probe, answers) };
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
