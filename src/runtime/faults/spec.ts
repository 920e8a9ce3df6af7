/**
 * What the fault relay (relay.ts) does to the frames between the two guests of a link run:
 * the `--faults` text of `rdma-interop run --link` (`drop=0.02,dup=0.01,reorder=8,
 * delay=1ms,jitter=2ms,corrupt=0.001,seed=7`) and its parsed form. The keys are data
 * (FAULT_KEYS): one row says the key's kind, its range and what it means; the parser, the
 * CLI help and the docs read it.
 */
import { ArgumentError, UnknownNameError } from '../../errors.js';

export interface FaultSpec {
  /** Probability that a frame is dropped. */
  readonly drop: number;
  /** Probability that a frame is sent twice. */
  readonly dup: number;
  /** Window: a held-back frame is released after this many later frames (0: no reordering). */
  readonly reorder: number;
  /** Probability that a frame is held back for reordering (when `reorder` > 0). */
  readonly reorderRate: number;
  /** Fixed delay of every frame, ms. */
  readonly delayMs: number;
  /** Uniform extra delay in [0, jitter), ms; frames keep their order (reordering is `reorder`'s). */
  readonly jitterMs: number;
  /** Probability of one random bit flip in the frame's IP payload (the checksum or ICRC catches it). */
  readonly corrupt: number;
  /**
   * Probability that a TCP segment with payload gets one payload byte changed and its TCP
   * checksum recomputed: only the MPA CRC (RFC 5044 §8) can catch it.
   */
  readonly corruptPayload: number;
  /**
   * 1: the relay sets the C bit of every MPA Request, so that the two iWARP peers negotiate
   * the MPA CRC (RFC 5044 §7.1), which siw does not ask for by itself.
   */
  readonly mpaCrc: number;
  /** PRNG seed (a 32-bit unsigned integer). */
  readonly seed: number;
}

export const NO_FAULTS: FaultSpec = {
  drop: 0,
  dup: 0,
  reorder: 0,
  reorderRate: 0.05,
  delayMs: 0,
  jitterMs: 0,
  corrupt: 0,
  corruptPayload: 0,
  mpaCrc: 0,
  seed: 1,
};

type Kind = 'probability' | 'count' | 'duration' | 'flag' | 'seed';

interface FaultKey {
  readonly key: string;
  readonly field: keyof FaultSpec;
  readonly kind: Kind;
  readonly meaning: string;
}

/** The `--faults` keys, in the order the help lists them. */
export const FAULT_KEYS: readonly FaultKey[] = [
  { key: 'drop', field: 'drop', kind: 'probability', meaning: 'drop a frame' },
  { key: 'dup', field: 'dup', kind: 'probability', meaning: 'send a frame twice' },
  {
    key: 'reorder',
    field: 'reorder',
    kind: 'count',
    meaning: 'hold a frame back until this many later frames have passed',
  },
  {
    key: 'reorder-rate',
    field: 'reorderRate',
    kind: 'probability',
    meaning: 'share of frames held back (default 0.05)',
  },
  { key: 'delay', field: 'delayMs', kind: 'duration', meaning: 'delay every frame' },
  { key: 'jitter', field: 'jitterMs', kind: 'duration', meaning: 'extra uniform delay' },
  {
    key: 'corrupt',
    field: 'corrupt',
    kind: 'probability',
    meaning: 'flip one bit of the IP payload (checksum or ICRC catches it)',
  },
  {
    key: 'corrupt-payload',
    field: 'corruptPayload',
    kind: 'probability',
    meaning: 'change a TCP payload byte, checksum recomputed (only the MPA CRC catches it)',
  },
  {
    key: 'mpa-crc',
    field: 'mpaCrc',
    kind: 'flag',
    meaning: '1: set the C bit of MPA Requests, so the iWARP peers use the MPA CRC',
  },
  { key: 'seed', field: 'seed', kind: 'seed', meaning: 'PRNG seed' },
];

/** The largest window and duration accepted (a frame held longer stalls the link). */
const MAX_WINDOW = 1024;
const MAX_DURATION_MS = 10_000;

function parseValue(key: FaultKey, text: string): number {
  const bad = (what: string) =>
    new ArgumentError('runtime', `faults.${key.key}`, `'${text}' ${what}`);
  switch (key.kind) {
    case 'probability': {
      const p = Number(text);
      if (text.trim() === '' || !Number.isFinite(p) || p < 0 || p > 1)
        throw bad('is not a probability in [0, 1]');
      return p;
    }
    case 'count': {
      const n = Number(text);
      if (!/^\d+$/.test(text) || n > MAX_WINDOW)
        throw bad(`is not a whole number in [0, ${MAX_WINDOW}]`);
      return n;
    }
    case 'duration': {
      const match = /^(\d+(?:\.\d+)?)(us|ms|s)$/.exec(text);
      const ms =
        match === null
          ? Number.NaN
          : Number(match[1]) * (match[2] === 's' ? 1000 : match[2] === 'us' ? 0.001 : 1);
      if (!Number.isFinite(ms) || ms > MAX_DURATION_MS)
        throw bad(`is not a duration such as 1ms, 500us or 0.2s (at most ${MAX_DURATION_MS} ms)`);
      return ms;
    }
    case 'flag': {
      if (text !== '0' && text !== '1') throw bad('is not 0 or 1');
      return Number(text);
    }
    case 'seed': {
      const n = Number(text);
      if (!/^\d+$/.test(text) || n > 0xffff_ffff)
        throw bad('is not a whole number in [0, 4294967295]');
      return n;
    }
    default:
      return unknownKind(key.kind);
  }
}

function unknownKind(kind: never): never {
  throw new Error(`unknown fault key kind ${String(kind)}`);
}

/**
 * Parses `key=value,...`. An unknown key, a repeated key or a bad value throws
 * (UnknownNameError / ArgumentError) before anything runs.
 */
export function parseFaults(text: string): FaultSpec {
  if (typeof text !== 'string' || text.trim() === '')
    throw new ArgumentError('runtime', 'faults', 'expected key=value pairs, e.g. drop=0.02,seed=7');
  const spec: Record<string, number> = { ...NO_FAULTS };
  const seen = new Set<string>();
  for (const pair of text.split(',')) {
    const at = pair.indexOf('=');
    const name = at < 0 ? pair : pair.slice(0, at);
    const key = FAULT_KEYS.find((k) => k.key === name);
    if (key === undefined)
      throw new UnknownNameError(
        'runtime',
        'fault key',
        name,
        FAULT_KEYS.map((k) => k.key),
        'faults',
      );
    if (at < 0) throw new ArgumentError('runtime', `faults.${name}`, 'has no value (key=value)');
    if (seen.has(name)) throw new ArgumentError('runtime', `faults.${name}`, 'is given twice');
    seen.add(name);
    spec[key.field] = parseValue(key, pair.slice(at + 1));
  }
  return spec as unknown as FaultSpec;
}

/** The spec as `--faults` text (only keys that differ from NO_FAULTS, seed always). */
export function formatFaults(spec: FaultSpec): string {
  return FAULT_KEYS.filter((k) => k.key === 'seed' || spec[k.field] !== NO_FAULTS[k.field])
    .map((k) => `${k.key}=${k.kind === 'duration' ? `${spec[k.field]}ms` : spec[k.field]}`)
    .join(',');
}

/** True when the spec changes nothing (the relay then only forwards). */
export function isFaultless(spec: FaultSpec): boolean {
  return (
    spec.drop === 0 &&
    spec.dup === 0 &&
    spec.reorder === 0 &&
    spec.delayMs === 0 &&
    spec.jitterMs === 0 &&
    spec.corrupt === 0 &&
    spec.corruptPayload === 0 &&
    spec.mpaCrc === 0
  );
}
