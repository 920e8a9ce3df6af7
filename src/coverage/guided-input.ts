/**
 * The inputs of the coverage-guided wire fuzz of rxe (issue 32): a packet SEQUENCE sent to
 * one fresh QP, kept as plain data (JSON) so a finding or a corpus entry replays as it was.
 * A step is one of the RoCE tester's well-formed requests (the requests its assertions send:
 * roce-fuzz.ts's bases) at a PSN offset from the sequence's start PSN, then byte edits over
 * its transport headers (a field of the BTH or of an extension header, by the codec's
 * layouts), an optional cut and extension, and an ICRC XOR mask (0: the ICRC recomputed and
 * right; else deliberately wrong). The QP a sequence goes to is described by its set-up
 * (`GuidedSetup`: RC, UC or UD, the state it is left in, receives posted or not, an SRQ, its
 * IRD, a multicast group, packets from another address): what rxe's receive checks
 * (rxe_recv.c) and responder (rxe_resp.c) branch on beside the packet itself. The mutator
 * draws everything from one seeded generator, so a campaign is the same given its seed and
 * the same feedback.
 */
import { BTH_LENGTH } from '../codec/roce/bth.js';
import { EXTENSION_HEADER_LAYOUT } from '../codec/roce/headers.js';
import {
  type BthOpcode,
  bthOpcodeByName,
  bthOpcodeInfo,
  type ExtensionHeader,
} from '../codec/roce/opcodes.js';

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
  // Added for the receive paths of rxe_resp.c / rxe_recv.c the nine above never reach.
  'RC_SEND_ONLY_WITH_INVALIDATE',
  'RC_SEND_FIRST',
  'RC_SEND_LAST_WITH_IMMEDIATE',
  'RC_ACKNOWLEDGE',
  'RC_ATOMIC_WRITE',
  'RC_FLUSH',
  'UC_SEND_ONLY',
  'UC_RDMA_WRITE_ONLY',
  'UD_SEND_ONLY',
  'UD_SEND_ONLY_WITH_IMMEDIATE',
] as const satisfies readonly (keyof typeof BthOpcode | `UC_${'SEND_ONLY' | 'RDMA_WRITE_ONLY'}`)[];

/** A base's opcode value (the codec's table knows the UC names BthOpcode leaves out). */
export function baseOpcode(base: number): number {
  return bthOpcodeByName(GUIDED_BASES[base] ?? GUIDED_BASES[0]);
}

/** The index of a base by name. */
export function baseIndex(name: (typeof GUIDED_BASES)[number]): number {
  return GUIDED_BASES.indexOf(name);
}

/** QP types a sequence may be sent to. */
export const SETUP_TYPES = ['RC', 'UC', 'UD'] as const;
/**
 * The state the QP is left in before the sequence (RTS: connected; the others are what
 * check_type_state() and the responder turn away, IBTA Vol. 1 §10.3.1).
 */
export const SETUP_STATES = ['RESET', 'INIT', 'RTR', 'RTS', 'SQD', 'ERR'] as const;

/** The QP a sequence is sent to; each field left out is the RC default. */
export interface GuidedSetup {
  /** Default RC. */
  readonly type?: (typeof SETUP_TYPES)[number];
  /** Default RTS. */
  readonly state?: (typeof SETUP_STATES)[number];
  /** Receives posted before the sequence (default 4; 0: an RNR NAK for a Send). */
  readonly recvs?: number;
  /** Bytes of each receive (default 2048: a Send First and its Last fit; 256 is short). */
  readonly recvBytes?: number;
  /**
   * The state the QP is moved to once the sequence is sent, before it is destroyed: ERR
   * flushes what is posted and in progress, RESET drains the responder (rxe_resp.c's
   * flush and drain paths).
   */
  readonly after?: 'RESET' | 'ERR';
  /** The receives come from a shared receive queue. */
  readonly srq?: boolean;
  /** The QP's max_dest_rd_atomic (IRD; default 16): 1 runs the responder out of resources. */
  readonly maxDestRdAtomic?: number;
  /** Packets come from another IPv4 address than the one the QP is connected to. */
  readonly otherSource?: boolean;
  /** (UD) the QP is attached to a multicast group and the steps go to it (QPN 0xffffff). */
  readonly multicast?: boolean;
  /** The QP grants no remote access (only LOCAL_WRITE): RDMA and atomics are refused. */
  readonly noRemoteAccess?: boolean;
  /**
   * (RC in RTS) the steps name a type 1 memory window bound over the memory, not the MR's
   * own R_Key (rxe_resp.c's rxe_lookup_mw() paths; IBTA §10.6.7).
   */
  readonly window?: boolean;
  /** (UD) the steps go to QP1, the kernel's GSI QP, with the GSI Q_Key (IBTA §13.5.1). */
  readonly gsi?: boolean;
  /** (SRQ) the SRQ's limit is armed at 2 (IBV_EVENT_SRQ_LIMIT_REACHED when it falls below). */
  readonly srqLimit?: boolean;
  /**
   * The QP grants FLUSH (global and persistent) and the memory global visibility (IBTA 1.5
   * FLUSH; rxe 6.2 and later; older lines refuse the set-up).
   */
  readonly flush?: boolean;
  /**
   * The memory is registered on demand (ON_DEMAND: rxe_odp.c's atomic and copy paths;
   * lines whose rxe has no ODP refuse the set-up).
   */
  readonly odp?: boolean;
}

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
  /**
   * Where in the QP's memory the request points (bytes from its start; default: the
   * base's own, 0 or 8): unaligned for atomics, or past the end of the memory.
   */
  readonly offset?: number;
  /**
   * Payload bytes of a base that carries one (default: the base's own, 8 or one MTU); for
   * a Read Request, the DMA length it asks for (default 64).
   */
  readonly payload?: number;
  /**
   * The ICRC computed the way rxe checks a FLUSH: rxe_opcode.c's IB_OPCODE_RC_FLUSH entry
   * has no [RXE_PAYLOAD] offset, so payload_addr()/payload_size() make rxe_icrc_check()
   * hash the BTH, FETH and RETH a second time after the headers (6.12, 7.3): a FLUSH with
   * the ICRC of IBTA §7.8 is dropped unanswered. Default false: the standard ICRC.
   */
  readonly rxeFlushIcrc?: boolean;
}

export interface GuidedInput {
  /** The tester's start PSN the QP is connected with (near 2^24: the sequence wraps). */
  readonly startPsn: number;
  readonly steps: readonly GuidedStep[];
  /** The QP the sequence goes to (left out: RC, connected, 4 receives). */
  readonly setup?: GuidedSetup;
}

/** An edit setting a RETH's R_Key (bytes 20-23 of the transport) to 0: no such key. */
const RKEY_ZERO: ByteEdit = { at: 20, bytes: [0, 0, 0, 0] };

/** The bases of the first campaigns (RC requests on a connected RC QP). */
const CORE_BASES = 9;
/**
 * The seeds a campaign of `count` inputs starts with: every seed when the budget is at
 * least twice their number, else the core ones (guidedSeeds' first CORE_SEED_COUNT), so a
 * short campaign (CI's) still spends most of its budget on mutations.
 */
export const CORE_SEED_COUNT = CORE_BASES + 4;
export function seedsFor(count: number, startPsn: number): GuidedInput[] {
  const all = guidedSeeds(startPsn);
  return count >= 2 * all.length ? all : all.slice(0, CORE_SEED_COUNT);
}

/** The QP type a base's opcode belongs to (IBTA Vol. 1 Table 38: the opcode's top 3 bits). */
export function baseType(base: number): (typeof SETUP_TYPES)[number] {
  const name = GUIDED_BASES[base] ?? GUIDED_BASES[0];
  return name.startsWith('UC_') ? 'UC' : name.startsWith('UD_') ? 'UD' : 'RC';
}

/**
 * The seeds: each base alone (on a QP of its type), the multi-packet sequences the
 * assertions send, then set-ups aimed at the responder's and the receive checks' other
 * branches: QPs in every state, no receive posted (RNR), an SRQ, IRD 1 with more Reads
 * outstanding, duplicate Reads and atomics (the replay paths), unaligned atomics, access
 * past the memory, packets from another address, and UD multicast.
 */
export function guidedSeeds(startPsn: number): GuidedInput[] {
  const step = (base: number, psnOffset: number, offset?: number): GuidedStep => ({
    base,
    psnOffset,
    edits: [],
    icrcXor: 0,
    ...(offset === undefined ? {} : { offset }),
  });
  const b = baseIndex;
  const single = GUIDED_BASES.map((_, i) => {
    const type = baseType(i);
    return { startPsn, steps: [step(i, 0)], ...(type === 'RC' ? {} : { setup: { type } }) };
  });
  const on = (setup: GuidedSetup, ...steps: GuidedStep[]): GuidedInput => ({
    startPsn,
    steps,
    setup,
  });
  const write = step(b('RC_RDMA_WRITE_ONLY'), 0);
  const send = step(b('RC_SEND_ONLY'), 0);
  const read = (psn: number) => step(b('RC_RDMA_READ_REQUEST'), psn);
  const fetchAdd = (psn: number, offset?: number) => step(b('RC_FETCH_ADD'), psn, offset);
  return [
    // The core seeds: the first nine bases alone, then a duplicate Write, a Write then a
    // Read, two FetchAdds, First-Middle-Last.
    ...single.slice(0, CORE_BASES),
    { startPsn, steps: [step(0, 0), step(0, 0)] },
    { startPsn, steps: [step(0, 0), step(2, 1)] },
    { startPsn, steps: [step(3, 0), step(3, 1)] },
    { startPsn, steps: [step(5, 0), step(6, 1), step(7, 2)] },
    // The set-up seeds: the other bases alone, then the sequences aimed at branches.
    ...single.slice(CORE_BASES),
    // Send First-Last, and a Send Last with no First before it.
    {
      startPsn,
      steps: [step(b('RC_SEND_FIRST'), 0), step(b('RC_SEND_LAST_WITH_IMMEDIATE'), 1)],
    },
    // Duplicates: a Read and an atomic replayed (rxe_resp.c's duplicate_request()).
    { startPsn, steps: [read(0), read(0)] },
    { startPsn, steps: [read(0), step(0, 1), read(0)] },
    { startPsn, steps: [fetchAdd(0), fetchAdd(0)] },
    { startPsn, steps: [fetchAdd(0), step(0, 1), fetchAdd(0)] },
    // Unaligned atomics, and requests past the end of the memory.
    { startPsn, steps: [fetchAdd(0, 4)] },
    { startPsn, steps: [step(b('RC_COMPARE_SWAP'), 0, 1)] },
    { startPsn, steps: [step(0, 0, 4 * 4096 - 4)] },
    { startPsn, steps: [step(b('RC_RDMA_READ_REQUEST'), 0, 4 * 4096)] },
    // Payloads the lengths checks refuse: an Only over the MTU, a First short of it, an
    // empty Last, a Send bigger than the receive buffer.
    { startPsn, steps: [{ ...send, payload: 1025 }] },
    on({ recvBytes: 256 }, { ...send, payload: 300 }),
    { startPsn, steps: [{ ...step(b('RC_SEND_FIRST'), 0), payload: 100 }] },
    {
      startPsn,
      steps: [
        step(b('RC_SEND_FIRST'), 0),
        { ...step(b('RC_SEND_LAST_WITH_IMMEDIATE'), 1), payload: 0 },
      ],
    },
    on({ type: 'UD', recvBytes: 256 }, { ...step(b('UD_SEND_ONLY'), 0), payload: 217 }),
    // A QP that grants no remote access: Write, Read, atomic, FLUSH refused.
    on(
      { noRemoteAccess: true },
      write,
      read(1),
      fetchAdd(2),
      step(b('RC_FLUSH'), 3),
      step(b('RC_ATOMIC_WRITE'), 4),
    ),
    // A QP in each state but RTS receiving a Write, a Read and an ACK.
    ...(['RESET', 'INIT', 'RTR', 'SQD', 'ERR'] as const).map((state) =>
      on({ state }, write, read(1), step(b('RC_ACKNOWLEDGE'), 2)),
    ),
    // No receive posted (RNR NAK), an SRQ with and without receives.
    on({ recvs: 0 }, send),
    on({ srq: true }, send, step(b('RC_SEND_FIRST'), 1), step(b('RC_SEND_LAST_WITH_IMMEDIATE'), 2)),
    on({ srq: true, recvs: 0 }, send),
    // IRD 1: more Reads and atomics outstanding than the responder keeps.
    on({ maxDestRdAtomic: 1 }, read(0), read(1), fetchAdd(2), read(3)),
    // A valid Write and Send from an address the QP is not connected to.
    on({ otherSource: true }, write, step(b('RC_SEND_ONLY'), 1)),
    // UC and UD on QPs of the other types, and in the wrong state.
    on({ type: 'UC', state: 'INIT' }, step(b('UC_SEND_ONLY'), 0)),
    on({ type: 'UD', recvs: 0 }, step(b('UD_SEND_ONLY'), 0)),
    on({ type: 'UD', multicast: true }, step(b('UD_SEND_ONLY'), 0)),
    on({ type: 'UD', multicast: true }, step(b('UD_SEND_ONLY_WITH_IMMEDIATE'), 0)),
    on({ type: 'UD', gsi: true }, step(b('UD_SEND_ONLY'), 0)),
    on({ type: 'UD', gsi: true }, step(b('UD_SEND_ONLY_WITH_IMMEDIATE'), 0)),
    // UC multi-packet messages (check_op_seq()'s UC states) and their errors: a First
    // without its Last, a Last alone, on a QP with and without an SRQ (class D1/E).
    on({ type: 'UC' }, ...[step(5, 0), step(6, 1), step(7, 2)].map(asUc)),
    on(
      { type: 'UC' },
      ...[step(b('RC_SEND_FIRST'), 0), step(b('RC_SEND_LAST_WITH_IMMEDIATE'), 1)].map(asUc),
    ),
    on({ type: 'UC' }, ...[step(b('RC_SEND_FIRST'), 0), step(b('RC_SEND_ONLY'), 1)].map(asUc)),
    on({ type: 'UC' }, ...[step(5, 0), step(0, 1)].map(asUc)),
    on(
      { type: 'UC', srq: true },
      ...[step(b('RC_SEND_FIRST'), 0), step(b('RC_SEND_ONLY'), 1)].map(asUc),
    ),
    on({ type: 'UC', srq: true, recvBytes: 256 }, asUc({ ...send, payload: 300 })),
    on({ type: 'UC', srq: true }, asUc({ ...send, payload: 1025 })),
    // A UC Write naming an R_Key that does not exist (class D with an SRQ, E without).
    on({ type: 'UC' }, { ...asUc(write), edits: [...asUc(write).edits, RKEY_ZERO] }),
    on({ type: 'UC', srq: true }, { ...asUc(write), edits: [...asUc(write).edits, RKEY_ZERO] }),
    on({ type: 'UC', noRemoteAccess: true }, asUc(write)),
    on({ type: 'UC' }, asUc(write), asUc({ ...step(0, 3) })),
    // A Read of 3 packets answered, then asked again from its second packet (the replay
    // of a Read in progress) and from its first.
    {
      startPsn,
      steps: [
        { ...read(0), payload: 3000 },
        { ...read(1), offset: 1024, payload: 1976 },
        { ...read(0), payload: 3000 },
      ],
    },
    // A memory window's R_Key: Write, Read, atomic, and a Send invalidating it.
    on(
      { window: true },
      write,
      read(1),
      fetchAdd(2),
      step(b('RC_SEND_ONLY_WITH_INVALIDATE'), 3),
      step(0, 4),
    ),
    // FLUSH granted: the whole region, a range (FETH selectivity 0), persistence the
    // memory does not grant, and the same FLUSH again (its replay).
    on(
      { flush: true },
      step(b('RC_FLUSH'), 0),
      { ...step(b('RC_FLUSH'), 1), edits: [{ at: 15, bytes: [0x01] }] },
      { ...step(b('RC_FLUSH'), 2), edits: [{ at: 15, bytes: [0x12] }] },
      step(b('RC_FLUSH'), 0),
    ),
    // The same with the ICRC rxe accepts for a FLUSH, and a FLUSH to a QP that does not
    // grant it.
    on(
      { flush: true },
      ...[
        step(b('RC_FLUSH'), 0),
        { ...step(b('RC_FLUSH'), 1), edits: [{ at: 15, bytes: [0x01] }] },
        { ...step(b('RC_FLUSH'), 2), edits: [{ at: 15, bytes: [0x12] }] },
        step(b('RC_FLUSH'), 0),
      ].map((x) => ({ ...x, rxeFlushIcrc: true })),
    ),
    { startPsn, steps: [{ ...step(b('RC_FLUSH'), 0), rxeFlushIcrc: true }] },
    // A 3-packet Read through the window, asked again from its second packet (the replay
    // rechecks the window: rxe_recheck_mr()).
    on(
      { window: true },
      { ...read(0), payload: 3000 },
      { ...read(1), offset: 1024, payload: 1976 },
    ),
    // Memory registered on demand: Write, Read, atomics, ATOMIC WRITE.
    on(
      { odp: true },
      write,
      read(1),
      fetchAdd(2),
      step(b('RC_COMPARE_SWAP'), 3),
      step(b('RC_ATOMIC_WRITE'), 4),
    ),
    // An SRQ with its limit armed, a Send too long for its receive.
    on({ srq: true, srqLimit: true, recvs: 2 }, send, step(b('RC_SEND_ONLY'), 1)),
    on({ srq: true, recvBytes: 256 }, { ...send, payload: 300 }),
    // The QP moved to ERR or RESET with a message in progress and packets behind it.
    on({ after: 'ERR' }, step(b('RC_SEND_FIRST'), 0), write, read(2)),
    on({ after: 'RESET' }, step(b('RC_SEND_FIRST'), 0), write, read(2)),
    on({ type: 'UC', after: 'ERR' }, asUc(step(b('RC_SEND_FIRST'), 0))),
    on({ srq: true, after: 'ERR' }, step(b('RC_SEND_FIRST'), 0)),
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
  const headers = (bthOpcodeInfo(baseOpcode(base))?.headers ?? []) as ExtensionHeader[];
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
  'offset',
  'qp-type',
  'qp-state',
  'qp-recvs',
  'qp-srq',
  'qp-ird',
  'other-source',
  'multicast',
  'qp-access',
  'payload-length',
  'window',
  'gsi',
  'uc-opcodes',
  'flush',
  'recv-bytes',
  'qp-after',
  'odp',
  'rxe-flush-icrc',
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
    case 'offset':
      // Unaligned (atomics need 8-byte alignment), at the memory's end, or past it.
      return withStep({ ...step, offset: pick(random, [1, 4, 12, 4093, 4 * 4096 - 4, 4 * 4096]) });
    case 'qp-type':
      return withSetup(input, { type: pick(random, SETUP_TYPES) });
    case 'qp-state':
      return withSetup(input, { state: pick(random, SETUP_STATES) });
    case 'qp-recvs':
      return withSetup(input, { recvs: pick(random, [0, 1, 4]) });
    case 'qp-srq':
      return withSetup(input, { srq: !(input.setup?.srq ?? false) });
    case 'qp-ird':
      return withSetup(input, { maxDestRdAtomic: pick(random, [1, 2, 16]) });
    case 'other-source':
      return withSetup(input, { otherSource: !(input.setup?.otherSource ?? false) });
    case 'qp-access':
      return withSetup(input, { noRemoteAccess: !(input.setup?.noRemoteAccess ?? false) });
    case 'payload-length':
      // Around the path MTU (1024) and the receive buffers (256 bytes; a UD one holds the
      // 40-byte GRH first): rxe_resp.c's check_length() and the receive copy.
      return withStep({
        ...step,
        payload: pick(random, [0, 1, 216, 217, 256, 1023, 1024, 1025, 1400]),
      });
    case 'window':
      return withSetup(input, { window: !(input.setup?.window ?? false) });
    case 'gsi':
      return withSetup(input, { type: 'UD', gsi: !(input.setup?.gsi ?? false) });
    case 'rxe-flush-icrc':
      return withStep({ ...step, rxeFlushIcrc: !(step.rxeFlushIcrc ?? false) });
    case 'odp':
      return withSetup(input, { odp: !(input.setup?.odp ?? false) });
    case 'recv-bytes':
      return withSetup(input, { recvBytes: pick(random, [64, 256, 2048]) });
    case 'qp-after':
      return withSetup(input, { after: pick(random, ['RESET', 'ERR'] as const) });
    case 'flush':
      return withSetup(input, { flush: !(input.setup?.flush ?? false) });
    case 'uc-opcodes':
      return { ...input, setup: { ...input.setup, type: 'UC' }, steps: steps.map(asUc) };
    case 'multicast':
      return withSetup(input, { type: 'UD', multicast: !(input.setup?.multicast ?? false) });
  }
}

/**
 * A step with its opcode moved to the UC transport (IBTA Table 38: 0x20 | the RC operation,
 * the same headers) as a byte edit, for the RC operations UC has (Sends and Writes); others
 * are left as they are.
 */
export function asUc(step: GuidedStep): GuidedStep {
  const op = baseOpcode(step.base);
  if (op > 0x0b) return step;
  return { ...step, edits: [...step.edits, { at: 0, bytes: [0x20 | op] }] };
}

/** `input` with some set-up fields replaced. */
function withSetup(input: GuidedInput, change: GuidedSetup): GuidedInput {
  return { ...input, setup: { ...input.setup, ...change } };
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
