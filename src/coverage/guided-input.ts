/**
 * The inputs of the coverage-guided wire fuzz of rxe (issue 32): a packet SEQUENCE sent to
 * one fresh QP, kept as plain data (JSON) so a finding or a corpus entry replays as it was.
 * A step is one of the RoCE tester's well-formed requests (the requests its assertions send:
 * roce-fuzz.ts's bases) at a PSN offset from the sequence's start PSN, then byte edits over
 * its transport headers (a field of the BTH or of an extension header, by the codec's
 * layouts), an optional cut and extension, and an ICRC XOR mask (0: the ICRC recomputed and
 * right; else deliberately wrong). The mutator draws everything from one seeded generator,
 * so a campaign is the same given its seed and the same feedback.
 */
import { BTH_LENGTH } from '../codec/roce/bth.js';
import { EXTENSION_HEADER_LAYOUT } from '../codec/roce/headers.js';
import { BthOpcode, bthOpcodeInfo, type ExtensionHeader } from '../codec/roce/opcodes.js';

/** The base requests, by index (the order guided-roce.ts builds them in). */
export const GUIDED_BASES = [
  'RC_RDMA_WRITE_ONLY',
  'RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE',
  'RC_RDMA_READ_REQUEST',
  'RC_FETCH_ADD',
  'RC_SEND_ONLY',
  'RC_RDMA_WRITE_FIRST',
  'RC_RDMA_WRITE_MIDDLE',
  'RC_RDMA_WRITE_LAST',
  'RC_COMPARE_SWAP',
] as const satisfies readonly (keyof typeof BthOpcode)[];

/** Bytes written over the transport at an offset (before the ICRC is computed). */
export interface ByteEdit {
  readonly at: number;
  readonly bytes: readonly number[];
}

export interface GuidedStep {
  /** Index into GUIDED_BASES. */
  readonly base: number;
  /** The step's PSN: the sequence's start PSN plus this, modulo 2^24. */
  readonly psnOffset: number;
  readonly edits: readonly ByteEdit[];
  /** Transport bytes kept (undefined: all). */
  readonly cut?: number;
  /** Bytes appended to the transport. */
  readonly extra?: readonly number[];
  /** XOR over the right ICRC: 0 keeps it right. */
  readonly icrcXor: number;
}

export interface GuidedInput {
  /** The tester's start PSN the QP is connected with (near 2^24: the sequence wraps). */
  readonly startPsn: number;
  readonly steps: readonly GuidedStep[];
}

/** The seeds: each base alone, and the multi-packet sequences the assertions send. */
export function guidedSeeds(startPsn: number): GuidedInput[] {
  const step = (base: number, psnOffset: number): GuidedStep => ({
    base,
    psnOffset,
    edits: [],
    icrcXor: 0,
  });
  const single = GUIDED_BASES.map((_, i) => ({ startPsn, steps: [step(i, 0)] }));
  return [
    ...single,
    // A duplicate Write, a Write then a Read, two FetchAdds, First-Middle-Last.
    { startPsn, steps: [step(0, 0), step(0, 0)] },
    { startPsn, steps: [step(0, 0), step(2, 1)] },
    { startPsn, steps: [step(3, 0), step(3, 1)] },
    { startPsn, steps: [step(5, 0), step(6, 1), step(7, 2)] },
  ];
}

/** A field's place in the transport bytes of a step's base opcode. */
export interface FieldSlot {
  readonly name: string;
  readonly at: number;
  readonly width: number;
}

/** BTH fields as whole bytes (IBTA Vol. 1 §9.2): opcode, flags, P_Key, ..., PSN. */
const BTH_SLOTS: readonly FieldSlot[] = [
  { name: 'BTH.opcode', at: 0, width: 1 },
  { name: 'BTH.flags', at: 1, width: 1 },
  { name: 'BTH.pkey', at: 2, width: 2 },
  { name: 'BTH.fecnBecnReserved', at: 4, width: 1 },
  { name: 'BTH.ackReserved', at: 8, width: 1 },
  { name: 'BTH.psn', at: 9, width: 3 },
];

/** The slots of a base opcode: the BTH's, then its extension headers' fields. */
export function fieldSlots(base: number): FieldSlot[] {
  const name = GUIDED_BASES[base] ?? GUIDED_BASES[0];
  const headers = (bthOpcodeInfo(BthOpcode[name])?.headers ?? []) as ExtensionHeader[];
  const slots = [...BTH_SLOTS];
  let at = BTH_LENGTH;
  for (const h of headers) {
    for (const f of EXTENSION_HEADER_LAYOUT[h])
      slots.push({ name: `${h}.${f.name}`, at: at + f.offset, width: f.width });
    at += EXTENSION_HEADER_LAYOUT[h].reduce((n, f) => Math.max(n, f.offset + f.width), 0);
  }
  return slots;
}

/** A value's big-endian bytes in `width` bytes. */
export function beBytes(value: bigint, width: number): number[] {
  const out: number[] = [];
  for (let i = width - 1; i >= 0; i--) out.push(Number((value >> BigInt(8 * i)) & 0xffn));
  return out;
}

/** Opcode values no RC/UC/RD/UD/CNP/XRC opcode has (IBTA Vol. 1 Table 38: reserved). */
export const RESERVED_OPCODES: readonly number[] = Array.from({ length: 256 }, (_, i) => i).filter(
  (op) => bthOpcodeInfo(op) === undefined,
);

/** The mutations, by name (the report counts which ones found new coverage). */
export const MUTATIONS = [
  'field',
  'boundary',
  'va-near-2^64',
  'length-near-2^32',
  'psn-near-wrap',
  'reserved-opcode',
  'any-opcode',
  'icrc',
  'duplicate',
  'swap',
  'drop',
  'truncate',
  'extend',
  'insert',
  'psn-offset',
] as const;
export type MutationName = (typeof MUTATIONS)[number];

const pick = <T>(random: () => number, list: readonly T[]): T =>
  list[Math.floor(random() * list.length)] as T;

/** A value for a field of `width` bytes: 0, its limit, near its limit, a half, or random. */
function valueFor(random: () => number, width: number, boundary: boolean): bigint {
  const limit = (1n << BigInt(width * 8)) - 1n;
  const r = random();
  if (boundary || r < 0.5) {
    const near = BigInt(Math.floor(random() * 4));
    return pick(random, [0n, limit, limit - near, (limit >> 1n) + 1n, near + 1n]);
  }
  let v = 0n;
  for (let i = 0; i < width; i++) v = (v << 8n) | BigInt(Math.floor(random() * 256));
  return v;
}

/** One mutation of `input` (steps are copied, never changed in place). */
export function mutateOnce(
  input: GuidedInput,
  random: () => number,
  kind: MutationName,
): GuidedInput {
  const steps = [...input.steps];
  const i = Math.floor(random() * steps.length);
  const step = steps[i] as GuidedStep;
  const withStep = (s: GuidedStep): GuidedInput => ({
    ...input,
    steps: steps.map((x, j) => (j === i ? s : x)),
  });
  const setField = (slotName: string | undefined, value: (w: number) => bigint): GuidedInput => {
    const slots = fieldSlots(step.base);
    const named = slotName === undefined ? [] : slots.filter((s) => s.name.endsWith(slotName));
    const slot = named.length > 0 ? pick(random, named) : pick(random, slots);
    return withStep({
      ...step,
      edits: [...step.edits, { at: slot.at, bytes: beBytes(value(slot.width), slot.width) }],
    });
  };
  switch (kind) {
    case 'field':
      return setField(undefined, (w) => valueFor(random, w, false));
    case 'boundary':
      return setField(undefined, (w) => valueFor(random, w, true));
    case 'va-near-2^64':
      // rxe's mr_check_range() overflow (2026): an address plus a length that wraps.
      return setField('virtualAddress', () => (1n << 64n) - BigInt(1 + Math.floor(random() * 64)));
    case 'length-near-2^32':
      return setField('dmaLength', () => (1n << 32n) - BigInt(1 + Math.floor(random() * 64)));
    case 'psn-near-wrap':
      return { ...input, startPsn: 0xffffff - Math.floor(random() * 3) };
    case 'reserved-opcode':
      return withStep({
        ...step,
        edits: [...step.edits, { at: 0, bytes: [pick(random, RESERVED_OPCODES)] }],
      });
    case 'any-opcode':
      // Another transport's opcode (UC, UD, RD, CNP, XRC) on an RC QP, or any other.
      return withStep({
        ...step,
        edits: [...step.edits, { at: 0, bytes: [Math.floor(random() * 256)] }],
      });
    case 'icrc':
      return withStep({
        ...step,
        icrcXor: step.icrcXor === 0 ? (Math.floor(random() * 0xffffffff) | 1) >>> 0 : 0,
      });
    case 'duplicate':
      return {
        ...input,
        steps: [...steps.slice(0, i + 1), step, ...steps.slice(i + 1)].slice(0, 8),
      };
    case 'swap': {
      const j = Math.floor(random() * steps.length);
      const out = [...steps];
      out[i] = steps[j] as GuidedStep;
      out[j] = step;
      return { ...input, steps: out };
    }
    case 'drop':
      return steps.length < 2 ? input : { ...input, steps: steps.filter((_, j) => j !== i) };
    case 'truncate':
      return withStep({ ...step, cut: 1 + Math.floor(random() * 40) });
    case 'extend':
      return withStep({
        ...step,
        extra: Array.from({ length: 1 + Math.floor(random() * 32) }, () =>
          Math.floor(random() * 256),
        ),
      });
    case 'insert': {
      const fresh: GuidedStep = {
        base: Math.floor(random() * GUIDED_BASES.length),
        psnOffset: steps.length,
        edits: [],
        icrcXor: 0,
      };
      return { ...input, steps: [...steps, fresh].slice(0, 8) };
    }
    case 'psn-offset':
      return withStep({
        ...step,
        psnOffset: pick(random, [step.psnOffset + 1, step.psnOffset - 1, 0x800000, 0xffffff]),
      });
  }
}

/** Several mutations (1-4) of a corpus entry; the names of those applied. */
export function mutate(
  input: GuidedInput,
  random: () => number,
): { input: GuidedInput; applied: MutationName[] } {
  const n = 1 + Math.floor(random() * 4);
  let out = input;
  const applied: MutationName[] = [];
  for (let k = 0; k < n; k++) {
    const kind = pick(random, MUTATIONS);
    out = mutateOnce(out, random, kind);
    applied.push(kind);
  }
  return { input: out, applied };
}

/** A step's transport bytes from its base's (`base`: the well-formed transport, no ICRC). */
export function applyStep(base: Uint8Array, step: GuidedStep): Uint8Array {
  const out = Uint8Array.from(base);
  for (const e of step.edits)
    e.bytes.forEach((b, k) => {
      if (e.at + k < out.length) out[e.at + k] = b;
    });
  const kept =
    step.cut === undefined ? out : out.subarray(0, Math.max(1, Math.min(step.cut, out.length)));
  if (step.extra === undefined || step.extra.length === 0) return kept;
  const grown = new Uint8Array(kept.length + step.extra.length);
  grown.set(kept);
  grown.set(step.extra, kept.length);
  return grown;
}
