/**
 * A fuzz finding saved as data (issue 32): the kernel line, the device, the oracle that
 * fired, the minimized sequence and the original's length, the seed and the tool's version,
 * one JSON file per finding in a `findings/` folder beside the probe report. Read back, it is
 * a replayable input: guided steps (coverage/guided-input.ts) or raw packets (hex).
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type { GuidedInput, GuidedStep } from '../coverage/guided-input.js';
import { SIW_HANDSHAKES, type SiwGuidedInput } from '../coverage/guided-siw-input.js';

export const FINDING_FORMAT = 'rdma-interop-finding/1';

/**
 * The minimized sequence: guided inputs (one per sequence sent: rxe's, or siw's FPDU
 * sequences, coverage/guided-siw-input.ts) or the packets' bytes.
 */
export type FindingSequence =
  | { readonly kind: 'guided'; readonly inputs: readonly GuidedInput[] }
  | { readonly kind: 'guided-siw'; readonly inputs: readonly SiwGuidedInput[] }
  | { readonly kind: 'packets'; readonly packets: readonly string[] };

export interface FindingFile {
  readonly format: typeof FINDING_FORMAT;
  /** The kernel line ('6.1') and the full release. */
  readonly kernelLine: string;
  readonly kernel: string;
  readonly device: string;
  /** The oracle that fired (`guard-words`, `kernel-log/<name>`, `device-works`, `harness`). */
  readonly oracle: string;
  readonly why: string;
  readonly seed: number;
  /** The sequence's length as found (inputs or packets). */
  readonly originalLength: number;
  readonly sequence: FindingSequence;
  /** Predicate calls the minimizer made, and whether its budget ran out. */
  readonly minimize: { readonly calls: number; readonly exhausted: boolean };
  readonly toolVersion: string;
}

/** A finding file that cannot be read back: where, and what is wrong. */
export class FindingFileError extends Error {
  override readonly name = 'FindingFileError';
  constructor(
    readonly source: string,
    readonly problem: string,
  ) {
    super(`${source}: ${problem}`);
  }
}

export function toolVersion(): string {
  const { version } = createRequire(import.meta.url)('../../package.json') as { version: string };
  return version;
}

/** The kernel line of a release ('6.12.74+deb13-amd64' -> '6.12'). */
export function kernelLineOf(release: string): string {
  return /^(\d+\.\d+)/.exec(release)?.[1] ?? release;
}

type Json = unknown;
const isObject = (v: Json): v is Record<string, Json> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);
const isInt = (v: Json, max = Number.MAX_SAFE_INTEGER): v is number =>
  typeof v === 'number' && Number.isSafeInteger(v) && v >= 0 && v <= max;
const isByte = (v: Json): boolean => isInt(v, 0xff);

function checkStep(s: Json): string | undefined {
  if (!isObject(s)) return 'a step is not an object';
  if (!isInt(s.base) || !isInt(s.psnOffset, 0xffffff)) return 'a step needs base and psnOffset';
  if (!isInt(s.icrcXor, 0xffffffff)) return 'a step needs icrcXor (0 to 2^32-1)';
  if (!Array.isArray(s.edits)) return 'a step needs edits';
  for (const e of s.edits)
    if (!isObject(e) || !isInt(e.at) || !Array.isArray(e.bytes) || !e.bytes.every(isByte))
      return 'an edit needs at and bytes (0-255)';
  if (s.cut !== undefined && !isInt(s.cut)) return 'cut is not a non-negative integer';
  if (s.extra !== undefined && (!Array.isArray(s.extra) || !s.extra.every(isByte)))
    return 'extra is not a list of bytes';
  return undefined;
}

const isSmallInt = (v: Json): boolean => typeof v === 'number' && Number.isSafeInteger(v);

function checkSiwStep(s: Json): string | undefined {
  if (!isObject(s)) return 'a step is not an object';
  if (!isInt(s.base) || !isSmallInt(s.ulpduDelta) || !isInt(s.crcXor, 0xffffffff))
    return 'a siw step needs base, ulpduDelta and crcXor (0 to 2^32-1)';
  if (!Array.isArray(s.edits)) return 'a step needs edits';
  for (const e of s.edits)
    if (
      !isObject(e) ||
      (e.header !== 'ddp' && e.header !== 'rdma') ||
      typeof e.field !== 'string' ||
      typeof e.value !== 'string' ||
      !/^\d{1,20}$/.test(e.value)
    )
      return 'a siw edit needs header (ddp or rdma), field and a decimal value';
  if (s.cut !== undefined && !isInt(s.cut)) return 'cut is not a non-negative integer';
  if (s.extra !== undefined && (!Array.isArray(s.extra) || !s.extra.every(isByte)))
    return 'extra is not a list of bytes';
  if (s.splits !== undefined && (!Array.isArray(s.splits) || !s.splits.every((x) => isInt(x))))
    return 'splits is not a list of offsets';
  return undefined;
}

function checkSiwInputs(inputs: Json): string | undefined {
  if (!Array.isArray(inputs) || inputs.length === 0) return 'inputs is empty';
  for (const i of inputs) {
    if (!isObject(i) || !Array.isArray(i.steps)) return 'a siw input needs steps';
    for (const k of ['mpaCrc', 'postReceive', 'postRead', 'srq'] as const)
      if (typeof i[k] !== 'boolean') return `a siw input needs ${k} (true or false)`;
    if (!(SIW_HANDSHAKES as readonly Json[]).includes(i.handshake))
      return `a siw input needs handshake (${SIW_HANDSHAKES.join(', ')})`;
    for (const s of i.steps) {
      const wrong = checkSiwStep(s);
      if (wrong !== undefined) return wrong;
    }
  }
  return undefined;
}

function checkSequence(v: Json): string | undefined {
  if (!isObject(v)) return 'sequence is not an object';
  if (v.kind === 'packets') {
    if (!Array.isArray(v.packets) || v.packets.length === 0) return 'packets is empty';
    for (const p of v.packets)
      if (typeof p !== 'string' || !/^(?:[0-9a-f]{2})+$/.test(p))
        return 'a packet is not lowercase hex bytes';
    return undefined;
  }
  if (v.kind === 'guided') {
    if (!Array.isArray(v.inputs) || v.inputs.length === 0) return 'inputs is empty';
    for (const i of v.inputs) {
      if (!isObject(i) || !isInt(i.startPsn, 0xffffff) || !Array.isArray(i.steps))
        return 'an input needs startPsn (below 2^24) and steps';
      for (const s of i.steps) {
        const wrong = checkStep(s);
        if (wrong !== undefined) return wrong;
      }
    }
    return undefined;
  }
  if (v.kind === 'guided-siw') return checkSiwInputs(v.inputs);
  return `unknown sequence kind ${JSON.stringify(v.kind)} (guided, guided-siw or packets)`;
}

/** Parses and checks a finding file's text; `source` names it in errors. */
export function parseFindingFile(text: string, source = 'finding'): FindingFile {
  let v: Json;
  try {
    v = JSON.parse(text);
  } catch (e) {
    throw new FindingFileError(source, `not JSON (${e instanceof Error ? e.message : String(e)})`);
  }
  if (!isObject(v)) throw new FindingFileError(source, 'not a JSON object');
  if (v.format !== FINDING_FORMAT)
    throw new FindingFileError(
      source,
      `format is ${JSON.stringify(v.format)}, not ${FINDING_FORMAT}`,
    );
  for (const k of ['kernelLine', 'kernel', 'device', 'oracle', 'why', 'toolVersion'] as const)
    if (typeof v[k] !== 'string' || (k !== 'why' && v[k] === ''))
      throw new FindingFileError(source, `${k} is missing or not a string`);
  if (!isInt(v.seed, 0xffffffff))
    throw new FindingFileError(source, 'seed is not a 32-bit integer');
  if (!isInt(v.originalLength) || v.originalLength < 1)
    throw new FindingFileError(source, 'originalLength is not a positive integer');
  const m = v.minimize;
  if (!isObject(m) || !isInt(m.calls) || typeof m.exhausted !== 'boolean')
    throw new FindingFileError(source, 'minimize needs calls and exhausted');
  const wrong = checkSequence(v.sequence);
  if (wrong !== undefined) throw new FindingFileError(source, wrong);
  return v as unknown as FindingFile;
}

/** The file's JSON text (stable key order: the object's own). */
export function findingFileText(f: FindingFile): string {
  return `${JSON.stringify(f, null, 2)}\n`;
}

/** Writes `f` as `<dir>/findings/<line>-<device>-<seed>-<n>.json`; returns the path. */
export function writeFindingFile(dir: string, f: FindingFile, n: number): string {
  const folder = join(dir, 'findings');
  mkdirSync(folder, { recursive: true });
  const path = join(folder, `${f.kernelLine}-${f.device}-${f.seed}-${n}.json`);
  writeFileSync(path, findingFileText(f));
  return path;
}

/** Reads a finding file back (FindingFileError when unreadable or malformed). */
export function readFindingFile(path: string): FindingFile {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new FindingFileError(path, e instanceof Error ? e.message : String(e));
  }
  return parseFindingFile(text, path);
}

/** The replayable input of a finding: guided inputs (rxe's or siw's), or the packets as bytes. */
export function replayableInput(
  f: FindingFile,
):
  | { kind: 'guided'; inputs: GuidedInput[] }
  | { kind: 'guided-siw'; inputs: SiwGuidedInput[] }
  | { kind: 'packets'; packets: Uint8Array[] } {
  const s = f.sequence;
  switch (s.kind) {
    case 'guided':
      return {
        kind: 'guided',
        inputs: s.inputs.map((i) => ({
          ...(i.setup === undefined ? {} : { setup: { ...i.setup } }),
          startPsn: i.startPsn,
          steps: i.steps.map(
            (st): GuidedStep => ({ ...st, edits: st.edits.map((e) => ({ ...e })) }),
          ),
        })),
      };
    case 'guided-siw':
      return {
        kind: 'guided-siw',
        inputs: s.inputs.map((i) => ({
          ...i,
          steps: i.steps.map((st) => ({ ...st, edits: st.edits.map((e) => ({ ...e })) })),
        })),
      };
    case 'packets':
      return {
        kind: 'packets',
        packets: s.packets.map((p) => Uint8Array.from(Buffer.from(p, 'hex'))),
      };
  }
}
