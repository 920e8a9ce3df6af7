/**
 * The coverage-guided wire fuzz of siw (issue 32), in the guest against siw0: a corpus of
 * FPDU sequences (guided-siw-input.ts), seeded with the iWARP assertions' well-formed
 * messages; each round takes a corpus entry (seeded draw), applies 1-4 mutations, sends the
 * sequence on one fresh siw connection (siw-peer.ts: TCP, MPA, then the FPDUs, cut into TCP
 * segments where the input says), and keeps it when the feedback grew (guided-roce.ts's
 * `coverageFeedback`: the trace-pc collector's block count, else the functions ftrace saw).
 * The oracles are iwarp-fuzz.ts's: the guard words around the MR after each sequence; after
 * each batch the kernel log and whether siw still places a well-formed Write. An input whose
 * handshake ends the connection (markers asked for, data before siw's MPA Reply, our reject)
 * gets siw's MPA Reply instead, compared with the answer defined for it (handshakeWrong).
 */
import { existsSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { release } from 'node:os';
import { decodeMpaFrame, encodeMpaFrame, makeMpaFrame } from '../codec/iwarp/mpa-frames.js';
import {
  type FindingMinimization,
  type FuzzLoopOptions,
  type FuzzSummary,
  seededRandom,
} from '../probe/fuzz-loop.js';
import { siwStillWorks } from '../probe/iwarp-run.js';
import { minimizeSequence } from '../probe/minimize.js';
import {
  listenOnSomePort,
  PEER_ENHANCED_PARAMETERS,
  probeSiwWith,
  SIW_ADDRESS,
  waitUntil,
} from '../probe/siw-peer.js';
import { KernelLog } from '../probe/survival.js';
import { EventChannel } from '../verbs/cm.js';
import { closeQuietly } from '../verbs/lifetime.js';
import { type GuidedRun, runGuidedCampaign } from './guided-campaign.js';
import {
  drawSiwInput,
  PEER_READ_OFFSET,
  PEER_READ_STAG,
  READ_BYTES,
  SIW_MUTATIONS,
  type SiwGuidedInput,
  siwGuidedSeeds,
  siwInputStream,
  siwStepReductions,
} from './guided-siw-input.js';

const DEVICE = 'siw0';
const ACCESS = ['LOCAL_WRITE', 'REMOTE_WRITE', 'REMOTE_READ'] as const;

const DYNAMIC_DEBUG = '/sys/kernel/debug/dynamic_debug/control';

/**
 * Turns siw's debug messages on or off (dynamic debug): with them on, the siw_dbg_qp() sites
 * of the receive path run (their blocks count, their format arguments are read) and go to the
 * kernel log only (the guest boots with loglevel=4). False when the guest has no control file.
 */
export function siwDebugMessages(on: boolean): boolean {
  if (!existsSync(DYNAMIC_DEBUG)) return false;
  try {
    writeFileSync(DYNAMIC_DEBUG, `module siw ${on ? '+p' : '-p'}\n`);
    return true;
  } catch {
    return false;
  }
}

/** What siw answered a handshake that ends the connection. */
export type HandshakeAnswer = 'rejected' | 'accepted' | 'no-reply' | 'undecodable';

/**
 * A handshake that ends the connection (SiwGuidedInput.handshake): the MPA Request (asking
 * for markers with `markers`; followed at once by the steps' bytes with `early-data`), and for
 * `reject` our listener's reject of the connect request; then siw's MPA Reply, read.
 */
async function handshakeAnswer(input: SiwGuidedInput): Promise<HandshakeAnswer> {
  const channel = new EventChannel();
  const listener = listenOnSomePort(channel);
  const socket = connect({ host: SIW_ADDRESS, port: listener.localPort });
  try {
    const chunks: Buffer[] = [];
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', () => {});
    await new Promise<void>((resolve, reject) => {
      socket.once('connect', resolve);
      socket.once('error', reject);
    });
    const request = makeMpaFrame('mpa-request', {
      markers: input.handshake === 'markers',
      crc: input.mpaCrc,
      enhancedParameters: PEER_ENHANCED_PARAMETERS,
    });
    const frame = encodeMpaFrame(request);
    if (input.handshake === 'early-data') {
      const target = { stag: 0, address: 0n };
      const { stream } = siwInputStream(input, target, { crc: input.mpaCrc, markers: false });
      socket.write(Buffer.concat([frame, stream]));
    } else socket.write(frame);
    if (input.handshake === 'reject') {
      const request_ = await listener.nextConnectRequest({ timeoutMs: 5000 });
      request_.id.reject();
    }
    let answer: HandshakeAnswer = 'no-reply';
    await waitUntil(() => {
      const bytes = Buffer.concat(chunks);
      if (bytes.length === 0) return false;
      const decoded = decodeMpaFrame(new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.length));
      if (!decoded.ok) {
        answer = 'undecodable';
        return bytes.length >= 20;
      }
      const f = decoded.value.frame;
      answer = f.kind !== 'mpa-reply' ? 'undecodable' : f.reject ? 'rejected' : 'accepted';
      return true;
    }, 1500);
    return answer;
  } finally {
    socket.destroy();
    closeQuietly(channel);
  }
}

/**
 * The answer each handshake has where it is defined: siw rejects markers (siw_proc_mpareq:
 * "MPA Markers: currently not supported"; RFC 5044 §7.1.2 lets a responder reject) and our
 * reject reaches the wire as an MPA Reply with the Reject bit (RFC 5044 §7.1.2). Early data
 * has none defined (RFC 5044 §7.1: the Initiator sends FPDUs only after the Reply; siw's
 * siw_recv_mpa_rr drops such a connection), so only an undecodable answer counts there.
 */
function handshakeWrong(input: SiwGuidedInput, answer: HandshakeAnswer): string | undefined {
  if (answer === 'undecodable')
    return `siw answered the ${input.handshake} handshake with no well-formed MPA Reply`;
  if ((input.handshake === 'markers' || input.handshake === 'reject') && answer === 'accepted')
    return `siw accepted the ${input.handshake} handshake (expected an MPA Reply with the Reject bit)`;
  return undefined;
}

/** Sends an input on a fresh siw connection; what looked wrong, if anything. */
async function sendInput(
  input: SiwGuidedInput,
  handshakes: Record<string, number>,
): Promise<string | undefined> {
  if (input.handshake !== 'accept') {
    const answer = await handshakeAnswer(input);
    const key = `${input.handshake} ${answer}`;
    handshakes[key] = (handshakes[key] ?? 0) + 1;
    return handshakeWrong(input, answer);
  }
  const answer = await probeSiwWith({
    access: ACCESS,
    postReceive: input.postReceive,
    // Two receives: a Send after a Send with Invalidate meets the invalidated region.
    receives: 2,
    srq: input.srq,
    mpaCrc: input.mpaCrc,
    answerWaitMs: 250,
    ...(input.postRead
      ? {
          postRead: {
            bytes: READ_BYTES,
            stag: PEER_READ_STAG,
            offset: PEER_READ_OFFSET,
            fencedSend: true,
            writeAndInvalidate: true,
          },
        }
      : {}),
    stream: (t, n) => siwInputStream(input, t, n).stream,
    splits: (t, n) => siwInputStream(input, t, n).splits,
  });
  return answer.guardsIntact ? undefined : 'guard words outside the MR changed';
}

/** The oracle a per-sequence check names. */
const sequenceOracle = (wrong: string): string =>
  wrong.startsWith('the tester failed')
    ? 'harness'
    : wrong.startsWith('siw answered the') || wrong.startsWith('siw accepted the')
      ? 'engine-expectation'
      : 'guard-words';

async function tryInput(
  input: SiwGuidedInput,
  handshakes: Record<string, number>,
): Promise<string | undefined> {
  try {
    return await sendInput(input, handshakes);
  } catch (error) {
    return `the tester failed: ${error instanceof Error ? error.message : String(error)}`;
  }
}

/** An input that fired a per-sequence oracle, reduced (steps dropped, then each step's changes). */
async function minimizeSiwInput(
  input: SiwGuidedInput,
  oracle: string,
  budget: number,
  handshakes: Record<string, number>,
): Promise<FindingMinimization> {
  const r = await minimizeSequence(
    input.steps,
    async (steps) => {
      const wrong = await tryInput({ ...input, steps }, handshakes);
      return wrong !== undefined && sequenceOracle(wrong) === oracle;
    },
    { budget, reduceItem: siwStepReductions },
  );
  return {
    oracle,
    originalLength: input.steps.length,
    sequence: { kind: 'guided-siw', inputs: [{ ...input, steps: r.minimal }] },
    calls: r.calls,
    exhausted: r.exhausted,
  };
}

/** What a siw guided campaign did, beside the fuzz summary's fields. */
export interface SiwGuidedSummary extends FuzzSummary {
  readonly guided: {
    /** Which campaign: the finding files' sequence kind follows from it. */
    readonly inputKind: 'siw';
    readonly feedback: 'blocks' | 'functions' | 'none';
    readonly inputs: number;
    readonly seeds: number;
    readonly corpus: number;
    readonly coverageStart: number;
    readonly coverageEnd: number;
    readonly kept: Readonly<Record<string, number>>;
    readonly added: readonly SiwGuidedInput[];
    /** `<handshake> <answer>` -> inputs (the handshakes that end the connection). */
    readonly handshakes: Readonly<Record<string, number>>;
    /** Whether siw's debug messages were on (dynamic debug) during the campaign. */
    readonly debugMessages: boolean;
  };
}

/**
 * Runs `count` guided inputs of `seed` against siw0: the seeds first (each once), then
 * mutated corpus entries; `onProgress` gets a line per batch; `options.minimizeBudget`
 * minimizes each finding (predicate calls per finding, each a fresh connection to siw0).
 */
export async function guidedFuzzSiw(
  count: number,
  seed: number,
  batch = 25,
  onProgress: (line: string) => void = () => {},
  options: FuzzLoopOptions = {},
): Promise<SiwGuidedSummary> {
  const random = seededRandom(seed ^ 0x27d4eb2f);
  const seeds = siwGuidedSeeds();
  const handshakes: Record<string, number> = {};
  const log = new KernelLog();
  const debugMessages = siwDebugMessages(true);
  let run: GuidedRun<SiwGuidedInput>;
  try {
    run = await runGuidedCampaign<SiwGuidedInput>(
      {
        device: DEVICE,
        sequence: (inputs) => ({ kind: 'guided-siw', inputs }),
        seeds,
        mutations: SIW_MUTATIONS,
        log,
        draw: (corpus) => drawSiwInput(corpus, random),
        send: (input) => sendInput(input, handshakes),
        oracle: sequenceOracle,
        minimizeInput: async (input, oracle, budget) =>
          input.steps.length === 0
            ? undefined
            : minimizeSiwInput(input, oracle, budget, handshakes),
        works: siwStillWorks,
        broken: 'siw no longer places a well-formed Write',
      },
      count,
      seed,
      batch,
      onProgress,
      options,
    );
  } finally {
    if (debugMessages) siwDebugMessages(false);
  }
  return {
    kernel: release(),
    device: DEVICE,
    seed,
    packets: count,
    batches: run.batches,
    findings: run.findings,
    guided: {
      inputKind: 'siw',
      feedback: run.feedback,
      inputs: count,
      seeds: seeds.length,
      corpus: run.corpus,
      coverageStart: run.coverageStart,
      coverageEnd: run.coverageEnd,
      kept: run.kept,
      added: run.added,
      handshakes,
      debugMessages,
    },
  };
}
