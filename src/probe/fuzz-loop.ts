/**
 * What the two wire fuzzers (iwarp-fuzz.ts for siw0, roce-fuzz.ts for rxe) share: the
 * seeded generator, a field's value from a draw, the minimizer that cuts bytes off a
 * finding while it still reproduces, and the batch loop (send each packet, record and
 * minimize what looked wrong, then after each batch the kernel log and whether the device
 * still works). Only the packets and how one is sent differ per device.
 */
import { release } from 'node:os';
import type { FindingSequence } from './finding-file.js';
import { type MinimizeResult, minimizeSequence } from './minimize.js';
import { kernelLogOracles } from './oracles/kernel-log.js';
import type { KernelLog } from './survival.js';

/** A small seeded generator (mulberry32): the same seed gives the same packets. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The draws a mutated packet is made from, in the order the generator gives them. */
export interface MutationDraws<K extends string> {
  /** The generator, for further draws (random bytes). */
  readonly random: () => number;
  /** Which well-formed base packet, which kind of mutation. */
  readonly base: number;
  readonly kind: K;
  /** Which field (or cut point), and its value. */
  readonly choice: number;
  readonly value: number;
  /** Bytes an extension adds (1-64). */
  readonly extra: number;
  /** How the packet was made, for the report. */
  readonly mutation: string;
}

/**
 * The draws of the `index`-th packet of `seed`'s sequence: each packet has its own
 * generator, seeded from the seed, the packet's index and the fuzzer's `mix` constant.
 */
export function mutationDraws<K extends string>(
  seed: number,
  index: number,
  mix: number,
  bases: number,
  kinds: readonly K[],
): MutationDraws<K> {
  const random = seededRandom((seed * mix + index) >>> 0);
  const base = Math.floor(random() * bases);
  const kind = kinds[Math.floor(random() * kinds.length)] as K;
  const choice = random();
  const value = random();
  const extra = Math.floor(random() * 64) + 1;
  const mutation = `base ${base} ${kind} ${choice.toFixed(6)} ${value.toFixed(6)}`;
  return { random, base, kind, choice, value, extra, mutation };
}

/** A field's value from a draw in [0, 1): 0, its limit, or a random value below it. */
export function fieldValue(limit: bigint, draw: number): bigint {
  if (draw < 0.3) return 0n;
  if (draw < 0.6) return limit;
  return BigInt(Math.floor(draw * Number(limit)));
}

/** A packet that hurt the device, kept as data. */
export interface FuzzFinding {
  readonly seed: number;
  readonly index: number;
  readonly mutation: string;
  /** What was wrong: guard words changed, kernel log lines, device broken. */
  readonly why: string;
  /**
   * The oracles that fired (issue 32): `guard-words` (the per-packet region check),
   * `harness` (the sender itself failed), `kernel-log/<name>`, `device-works`.
   */
  readonly oracles?: readonly string[];
  /** The bytes sent (hex; for siw those after the MPA exchange), as sent and minimized. */
  readonly bytes: string;
  readonly minimized: string;
  /**
   * With a minimize budget (probe/minimize.ts): the shortest sequence found that still fired
   * `oracle`, the original's length and the predicate calls made (a finding file's fields).
   */
  readonly minimization?: FindingMinimization;
  /**
   * The recorded kernel defect that explains it (judge/records/kernel-findings.ts), set by
   * the host when it judges the run; an explained finding does not fail it.
   */
  readonly record?: string;
}

export interface FindingMinimization {
  readonly oracle: string;
  readonly originalLength: number;
  readonly sequence: FindingSequence;
  readonly calls: number;
  readonly exhausted: boolean;
}

export interface FuzzSummary {
  readonly kernel: string;
  readonly device: string;
  readonly seed: number;
  readonly packets: number;
  readonly batches: number;
  readonly findings: readonly FuzzFinding[];
}

/** What sending one packet showed: what looked wrong (if anything) and the bytes sent. */
export interface FuzzOutcome {
  readonly wrong: string | undefined;
  readonly sent: Uint8Array;
}

const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');

/**
 * Cuts bytes off the end of `bytes` while `reproduces` still holds (at most `tries`
 * attempts), never below `floor` bytes (nor below one).
 */
export async function minimizeTail(
  bytes: Uint8Array,
  reproduces: (b: Uint8Array) => Promise<boolean>,
  floor = 0,
  tries = 8,
): Promise<Uint8Array> {
  let best = bytes;
  let step = Math.floor((best.length - floor) / 2);
  for (let i = 0; i < tries && step > 0; i++) {
    const shorter = best.subarray(0, best.length - step);
    if (shorter.length >= Math.max(floor, 1) && (await reproduces(shorter))) best = shorter;
    else step = Math.floor(step / 2);
  }
  return best;
}

/** One device's side of the batch loop. */
export interface FuzzDevice {
  /** The device name the summary carries ('siw0', 'rxe_t'). */
  readonly device: string;
  /** Who failed when sending throws ('peer', 'tester'), for the finding's text. */
  readonly sender: string;
  /** What a failed health check means, for the finding's text. */
  readonly broken: string;
  /** The kernel log whose trouble lines are read after each batch. */
  readonly log: KernelLog;
  /** The `index`-th packet's mutation (for the report). */
  mutation(index: number): string;
  /** Sends the `index`-th packet. */
  send(index: number): Promise<FuzzOutcome>;
  /** The finding's bytes minimized (empty bytes stay as they are). */
  minimize(sent: Uint8Array): Promise<Uint8Array>;
  /** Whether the device still does a well-formed operation. */
  stillWorks(): Promise<boolean>;
}

/**
 * The batch that fired a kernel-log oracle reduced to the packets that still fire it: the
 * predicate replays packets by index through the device's own send path (the same seed and
 * index give the same packet, on a fresh QP) and reads the kernel log for the same oracle.
 */
export async function minimizeBatch(
  d: FuzzDevice,
  indices: readonly number[],
  oracle: string,
  budget: number,
): Promise<{ indices: readonly number[]; calls: number; exhausted: boolean }> {
  const r = await minimizeLogBatch(d.log, indices, (index) => d.send(index), oracle, budget);
  return { indices: r.minimal, calls: r.calls, exhausted: r.exhausted };
}

/**
 * A batch that fired the kernel-log `oracle` reduced to the items that still fire it: the
 * predicate replays a candidate through `send` (its failures ignored: only the log counts)
 * and reads the kernel log for the same oracle. The one-field fuzz replays packets by
 * index, the guided campaigns (coverage/guided-campaign.ts) their inputs.
 */
export async function minimizeLogBatch<T>(
  log: KernelLog,
  items: readonly T[],
  send: (item: T) => Promise<unknown>,
  oracle: string,
  budget: number,
): Promise<MinimizeResult<T>> {
  return minimizeSequence(
    items,
    async (candidate) => {
      log.mark();
      for (const item of candidate) await send(item).catch(() => undefined);
      return kernelLogOracles(log.troubleSinceLastCheck()).includes(oracle);
    },
    { budget },
  );
}

/** Options of the batch loop. */
export interface FuzzLoopOptions {
  /**
   * Predicate calls per finding for minimizing a batch that fired a kernel-log oracle
   * (undefined: no minimizing; the guest runner passes `minimize`).
   */
  readonly minimizeBudget?: number;
}

/** Runs packets 0..count-1 in batches of `batch`; `onProgress` gets a line per batch. */
export async function runFuzzBatches(
  d: FuzzDevice,
  count: number,
  seed: number,
  batch: number,
  onProgress: (line: string) => void,
  options: FuzzLoopOptions = {},
): Promise<FuzzSummary> {
  const findings: FuzzFinding[] = [];
  let batches = 0;
  for (let start = 0; start < count; start += batch) {
    d.log.mark();
    const end = Math.min(count, start + batch);
    const sentInBatch: { index: number; bytes: Uint8Array }[] = [];
    for (let index = start; index < end; index++) {
      let outcome: FuzzOutcome;
      try {
        outcome = await d.send(index);
      } catch (error) {
        outcome = {
          wrong: `the ${d.sender} failed: ${error instanceof Error ? error.message : String(error)}`,
          sent: new Uint8Array(0),
        };
      }
      sentInBatch.push({ index, bytes: outcome.sent });
      if (outcome.wrong !== undefined)
        findings.push({
          seed,
          index,
          mutation: d.mutation(index),
          why: outcome.wrong,
          oracles: [outcome.sent.length === 0 ? 'harness' : 'guard-words'],
          bytes: hex(outcome.sent),
          minimized: hex(outcome.sent.length === 0 ? outcome.sent : await d.minimize(outcome.sent)),
        });
    }
    batches++;
    const problems = d.log.troubleSinceLastCheck();
    const works = await d.stillWorks().catch(() => false);
    if (problems.length > 0 || !works) {
      // The batch hurt the kernel: its packets are the reproducer (the batch is small).
      const all = sentInBatch.map((p) => hex(p.bytes)).join(',');
      const oracles = [...kernelLogOracles(problems), ...(works ? [] : ['device-works'])];
      const oracle = oracles[0];
      // A broken device cannot replay; a kernel-log oracle can.
      const minimized =
        options.minimizeBudget !== undefined && works && oracle?.startsWith('kernel-log/')
          ? await minimizeBatch(
              d,
              sentInBatch.map((p) => p.index),
              oracle,
              options.minimizeBudget,
            )
          : undefined;
      const kept =
        minimized === undefined
          ? sentInBatch
          : sentInBatch.filter((p) => minimized.indices.includes(p.index));
      findings.push({
        seed,
        index: sentInBatch[sentInBatch.length - 1]?.index ?? start,
        mutation: `batch ${start}-${end - 1}`,
        why: [...problems, ...(works ? [] : [d.broken])].join(' | '),
        oracles,
        bytes: all,
        minimized: kept.map((p) => hex(p.bytes)).join(','),
        ...(minimized === undefined || oracle === undefined
          ? {}
          : {
              minimization: {
                oracle,
                originalLength: sentInBatch.length,
                sequence: {
                  kind: 'packets',
                  packets: kept.filter((p) => p.bytes.length > 0).map((p) => hex(p.bytes)),
                },
                calls: minimized.calls,
                exhausted: minimized.exhausted,
              },
            }),
      });
      if (!works) break;
    }
    onProgress(`fuzz ${d.device}: ${end}/${count} packets, ${findings.length} findings`);
  }
  return { kernel: release(), device: d.device, seed, packets: count, batches, findings };
}
