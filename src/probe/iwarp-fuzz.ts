/**
 * Seeded, field-aware packet fuzzing of siw with the tester's own packets (issue 21): the
 * well-formed messages the assertions send are mutated one field at a time, using the
 * codec's header layouts (a DDP/RDMAP field set to 0, to its limit or to a random value,
 * the opcode set to another opcode, the MPA ULPDU Length set to a limit or off by a few),
 * or truncated, or extended with random bytes. Each packet goes to a fresh siw QP as the
 * first FPDU after the MPA exchange (siw terminates a stream at its first error). After
 * each packet the guard words around the MR are checked; after each batch, the kernel log
 * and whether siw still places a well-formed Write. A finding is minimized (bytes cut
 * from the end while it still reproduces) and kept as data.
 */
import {
  makeAtomicRequest,
  makeImmediateData,
  makeRdmaWrite,
  makeReadRequest,
  makeReadResponse,
  makeSend,
} from '../codec/iwarp/build.js';
import { layoutField, MPA_FPDU_LAYOUT } from '../codec/iwarp/layouts.js';
import type { MpaNegotiated, RdmapMessage } from '../codec/iwarp/messages.js';
import {
  type FuzzLoopOptions,
  type FuzzOutcome,
  type FuzzSummary,
  fieldValue,
  minimizeTail,
  mutationDraws,
  runFuzzBatches,
} from './fuzz-loop.js';
import { fieldLimit, fpduOf, segmentLayout, segmentWith, setField } from './iwarp-packets.js';
import { siwStillWorks } from './iwarp-run.js';
import { probeSiwWith, type SiwTarget } from './siw-peer.js';
import { KernelLog } from './survival.js';

const PAYLOAD = Uint8Array.of(0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11);

/** The well-formed messages the mutations start from (those of the assertions). */
const BASES: readonly ((t: SiwTarget) => RdmapMessage)[] = [
  () => makeSend({ messageSequenceNumber: 1, payload: PAYLOAD }),
  (t) => makeRdmaWrite({ stag: t.stag, taggedOffset: t.address, payload: PAYLOAD }),
  (t) => makeReadResponse({ stag: t.stag, taggedOffset: t.address, payload: PAYLOAD }),
  (t) =>
    makeReadRequest({
      messageSequenceNumber: 1,
      sinkSTag: 0x4d3c2b1a,
      sinkTaggedOffset: 0x0123456789abcde8n,
      readSize: 8,
      sourceSTag: t.stag,
      sourceTaggedOffset: t.address,
    }),
  () => makeImmediateData({ messageSequenceNumber: 1, immediateData: 0x0123456789abcdefn }),
  (t) =>
    makeAtomicRequest({
      operation: 'fetch-add',
      messageSequenceNumber: 1,
      requestIdentifier: 0x0a0b0c0d,
      remoteSTag: t.stag,
      remoteTaggedOffset: t.address,
      addOrSwapData: 0x1111111122222222n,
    }),
];

/** One mutated packet: how it was made (for the report) and its bytes. */
export interface FuzzPacket {
  readonly mutation: string;
  readonly bytes: (t: SiwTarget, n: MpaNegotiated) => Uint8Array;
}

/** The `index`-th packet of `seed`'s sequence (each packet draws from its own generator). */
export function fuzzPacket(seed: number, index: number): FuzzPacket {
  const { random, base, kind, choice, value, extra, mutation } = mutationDraws(
    seed,
    index,
    0x9e3779b1,
    BASES.length,
    ['field', 'opcode', 'ulpdu-length', 'truncate', 'extend'] as const,
  );
  return {
    mutation,
    bytes: (t, n) => {
      const segment = segmentWith(BASES[base]!(t));
      switch (kind) {
        case 'field': {
          const fields = segmentLayout(segment).fields;
          const f = fields[Math.floor(choice * fields.length)]!;
          const limit = fieldLimit(f);
          const v = fieldValue(limit, value);
          setField(segment, 0, f, f.bits === 64 ? v : Number(v));
          return fpduOf(segment, n);
        }
        case 'opcode':
          // Another opcode on the same buffer model: the wrong message for the stream.
          setField(
            segment,
            0,
            layoutField(segmentLayout(segment), 'opcode'),
            Math.floor(choice * 16),
          );
          return fpduOf(segment, n);
        case 'ulpdu-length': {
          const limit = Number(fieldLimit(layoutField(MPA_FPDU_LAYOUT, 'ulpduLength')));
          const length =
            choice < 0.25
              ? 0
              : choice < 0.5
                ? limit
                : choice < 0.75
                  ? Math.max(0, segment.length + Math.floor(value * 9) - 4)
                  : Math.floor(value * 32);
          return fpduOf(segment, n, { ulpduLength: length });
        }
        case 'truncate': {
          const fpdu = fpduOf(segment, n);
          return fpdu.subarray(0, Math.max(1, Math.floor(choice * fpdu.length)));
        }
        case 'extend': {
          const fpdu = fpduOf(segment, n);
          const tail = new Uint8Array(extra).map(() => Math.floor(random() * 256));
          const out = new Uint8Array(fpdu.length + tail.length);
          out.set(fpdu);
          out.set(tail, fpdu.length);
          return out;
        }
      }
    },
  };
}

const ACCESS = ['LOCAL_WRITE', 'REMOTE_WRITE', 'REMOTE_READ'] as const;

/** Sends `bytes(t, n)` to a fresh siw QP; resolves with what looked wrong, or undefined. */
async function sendOne(
  bytes: (t: SiwTarget, n: MpaNegotiated) => Uint8Array,
): Promise<FuzzOutcome> {
  let sent: Uint8Array = new Uint8Array(0);
  const answer = await probeSiwWith({
    access: ACCESS,
    postReceive: true,
    answerWaitMs: 250,
    stream: (t, n) => {
      sent = bytes(t, n);
      return sent;
    },
  });
  return { wrong: answer.guardsIntact ? undefined : 'guard words outside the MR changed', sent };
}

/**
 * Runs `count` packets of `seed` against siw0 in batches of `batch`; `onProgress` gets
 * a line per batch; `options.minimizeBudget` minimizes a batch that fired a kernel-log oracle.
 */
export function fuzzSiw(
  count: number,
  seed: number,
  batch = 25,
  onProgress: (line: string) => void = () => {},
  options: FuzzLoopOptions = {},
): Promise<FuzzSummary> {
  return runFuzzBatches(
    {
      device: 'siw0',
      sender: 'peer',
      broken: 'siw no longer places a well-formed Write',
      log: new KernelLog(),
      mutation: (index) => fuzzPacket(seed, index).mutation,
      send: (index) => sendOne(fuzzPacket(seed, index).bytes),
      minimize: (sent) =>
        minimizeTail(sent, async (b) => {
          try {
            return (await sendOne(() => b)).wrong !== undefined;
          } catch {
            return true;
          }
        }),
      stillWorks: siwStillWorks,
    },
    count,
    seed,
    batch,
    onProgress,
    options,
  );
}
