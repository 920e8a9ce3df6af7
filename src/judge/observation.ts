/**
 * The names of observation fields, as one type. A program's observation is flattened to
 * `field -> value` (results.json, reports, the records' field globs); every field's name is
 * a {@link FieldKey} formatted by {@link fieldName} and read back by {@link parseField}.
 * No other module builds a name from pieces or takes one apart with a pattern, so the
 * flattened form has one definition: `parseField(fieldName(k))` is `k`, and
 * `fieldName(parseField(s))` is `s` for every name either side produces
 * (test/host/judge/observation.test.ts checks both over every scenario's engine outcome).
 *
 * The fields, by who writes them:
 * - the program interpreter (src/interop/program.ts, observe.ts): `postN`, `postN.bad_wr`,
 *   `requester.wcN.status` (and the completion's other parts), `qN.responder.state`,
 *   `modifyN`, `eventN.responder`, `hammerN.distinct`, `bindN`, `bindN.status`, `invN`,
 *   `invN.status`, `srqLimitN`, `srqEventN`, `srqEventN.limit`, `mem[8]`, `ordering`, `wire`;
 * - the device side (src/interop/kernel/execute.ts): `bringup`, a refused bring-up;
 * - the link (src/interop/link/): `requester.wcN.after` (a lost request's retry time),
 *   the RoCEv2 packets `wire.reqN.psn` / `wire.respN.aeth`, `wire.requests`,
 *   `wire.responses`, and a write stream's `stream.memory` and the like.
 */
import { requireObject } from '../arguments.js';
import { ArgumentError, UnknownNameError } from '../errors.js';

/** The side of a QP pair a field is about. */
export type Lane = 'requester' | 'responder';

/** The parts of a completion (`requester.wc1.<part>`), as the sides report them. */
export const COMPLETION_PARTS = [
  'wr',
  'status',
  'qp',
  'vendor_err',
  'opcode',
  'byte_len',
  'flags',
  'imm',
  'imm_raw',
  'inv_rkey',
  /** A UD receive's sender (ibv_wc.src_qp), named `requester` for the program's own. */
  'src_qp',
  'fetched',
  /** A timed wait's class (rnr-timing.ts). */
  'timer',
  /** A lost request's retry timers, counted on the wire (link/observed.ts). */
  'after',
] as const;
export type CompletionPart = (typeof COMPLETION_PARTS)[number];

/** The parts of a concurrency step (`hammer1.<part>`, observe.ts hammerFields). */
export const HAMMER_PARTS = ['post', 'succeeded', 'distinct', 'sequence'] as const;
export type HammerPart = (typeof HAMMER_PARTS)[number];

/** The parts of a write stream (link/stream-outcome.ts). */
export const STREAM_PARTS = [
  'post',
  'requester',
  'responder',
  'immediates',
  'memory',
  'terminate',
] as const;
export type StreamPart = (typeof STREAM_PARTS)[number];

/** The headers and properties of a RoCEv2 packet (`wire.req1.<part>`, link/roce-fields.ts). */
export const PACKET_PARTS = [
  'opcode',
  'psn',
  'dqp',
  'se',
  'icrc',
  'reth',
  'atomiceth',
  'immdt',
  'aeth',
  'atomicacketh',
  'payload',
] as const;
export type PacketPart = (typeof PACKET_PARTS)[number];

/** A RoCEv2 packet's direction: a request (`req`) or a response (`resp`). */
export type PacketDirection = 'req' | 'resp';

/** The multicast steps: `attach-mcast` (`attachN`) and `detach-mcast` (`detachN`). */
export type McastStep = 'attach' | 'detach';

/** The memory-window steps: `bind-mw` (`bindN`) and `local-invalidate` (`invN`). */
export type WindowStep = 'bind' | 'inv';

/**
 * One observation field's name, structured. Counters (`n`) are 1-based, in program order
 * per kind (the N-th post step, the N-th completion of a side, the N-th query ...).
 */
export type FieldKey =
  /** `postN`: ibv_post_send's result; `postN.bad_wr`: the request it refused. */
  | { readonly kind: 'post'; readonly n: number; readonly badWr?: true }
  /** `side.wcN.part`. */
  | {
      readonly kind: 'completion';
      readonly side: Lane;
      readonly n: number;
      readonly part: CompletionPart;
    }
  /** `qN.side.state`: a query step's QP state. */
  | { readonly kind: 'state'; readonly n: number; readonly side: Lane }
  /** `modifyN`. */
  | { readonly kind: 'modify'; readonly n: number }
  /** `eventN.side`: whether an armed CQ's event came. */
  | { readonly kind: 'event'; readonly n: number; readonly side: Lane }
  /** `hammerN.part`. */
  | { readonly kind: 'hammer'; readonly n: number; readonly part: HammerPart }
  /** `bindN` / `invN`: the post's result; `.status`: its completion's. */
  | {
      readonly kind: 'window';
      readonly step: WindowStep;
      readonly n: number;
      readonly status?: true;
    }
  /** `reregN`: ibv_rereg_mr of the responder's MR. */
  | { readonly kind: 'rereg'; readonly n: number }
  /** `attachN` / `detachN`: ibv_attach_mcast / ibv_detach_mcast's result. */
  | { readonly kind: 'mcast'; readonly step: McastStep; readonly n: number }
  /** `srqLimitN`: arming the SRQ limit. */
  | { readonly kind: 'srq-limit'; readonly n: number }
  /** `srqEventN`: whether the limit event came; `.limit`: srq_limit read after it. */
  | { readonly kind: 'srq-event'; readonly n: number; readonly limit?: true }
  /** `mem[offset]`: the responder's 8-byte word at `offset` (negative: a guard). */
  | { readonly kind: 'memory'; readonly offset: number }
  /** `ordering`: the ordering checker's verdict. */
  | { readonly kind: 'ordering' }
  /** `bringup`: the errno and call of a bring-up the device refused (kernel/execute.ts). */
  | { readonly kind: 'bringup' }
  /** `wire`: the iWARP message lines. */
  | { readonly kind: 'wire' }
  /** `wire.requests` / `wire.responses`: how many RoCEv2 packets each way. */
  | { readonly kind: 'packet-count'; readonly direction: PacketDirection }
  /** `wire.reqN.part` / `wire.respN.part`: one RoCEv2 packet's header. */
  | {
      readonly kind: 'packet';
      readonly direction: PacketDirection;
      readonly n: number;
      readonly part: PacketPart;
    }
  /** `stream.part`: a write stream's property. */
  | { readonly kind: 'stream'; readonly part: StreamPart };

export type FieldKind = FieldKey['kind'];

/** A name that is no observation field: `reason` says which part is wrong. */
export class FieldNameError extends ArgumentError {
  override readonly name: string = 'FieldNameError';
  constructor(
    /** The name given. */
    readonly fieldName: string,
    readonly reason: string,
  ) {
    super('interop', 'field', `'${fieldName}' is no observation field: ${reason}`);
  }
}

const PACKET_COUNT = { req: 'requests', resp: 'responses' } as const;

/**
 * The flattened name of `key`: what results.json, reports and record globs say. A key
 * with a member no field has (a side, a part, a counter below 1) throws an ArgumentError.
 */
export function fieldName(key: FieldKey): string {
  requireObject('interop', 'key', key);
  switch (key.kind) {
    case 'post':
      return `post${counter(key.n)}${flag(key.badWr, 'badWr') ? '.bad_wr' : ''}`;
    case 'completion':
      return `${completionPrefix(key.side, key.n)}.${member(COMPLETION_PARTS, key.part, 'key.part')}`;
    case 'state':
      return `q${counter(key.n)}.${lane(key.side)}.state`;
    case 'modify':
      return `modify${counter(key.n)}`;
    case 'event':
      return `event${counter(key.n)}.${lane(key.side)}`;
    case 'hammer':
      return `hammer${counter(key.n)}.${member(HAMMER_PARTS, key.part, 'key.part')}`;
    case 'window':
      return `${member(WINDOW_STEPS, key.step, 'key.step')}${counter(key.n)}${flag(key.status, 'status') ? '.status' : ''}`;
    case 'rereg':
      return `rereg${counter(key.n)}`;
    case 'mcast':
      return `${member(MCAST_STEPS, key.step, 'key.step')}${counter(key.n)}`;
    case 'srq-limit':
      return `srqLimit${counter(key.n)}`;
    case 'srq-event':
      return `srqEvent${counter(key.n)}${flag(key.limit, 'limit') ? '.limit' : ''}`;
    case 'memory':
      if (!Number.isSafeInteger(key.offset) || Object.is(key.offset, -0))
        throw new ArgumentError('interop', 'key.offset', `not an integer: ${String(key.offset)}`);
      return `mem[${key.offset}]`;
    case 'ordering':
      return 'ordering';
    case 'bringup':
      return 'bringup';
    case 'wire':
      return 'wire';
    case 'packet-count':
      return `wire.${PACKET_COUNT[member(DIRECTIONS, key.direction, 'key.direction')]}`;
    case 'packet':
      return `${packetPrefix(key.direction, key.n)}${member(PACKET_PARTS, key.part, 'key.part')}`;
    case 'stream':
      return `stream.${member(STREAM_PARTS, key.part, 'key.part')}`;
    default:
      return unknownKind(key);
  }
}

/**
 * The common prefix of completion `n`'s fields of `side` (`requester.wc2`): what a report
 * groups a completion's parts by.
 */
export function completionPrefix(side: Lane, n: number): string {
  return `${lane(side)}.wc${counter(n)}`;
}

/**
 * The common prefix of RoCEv2 packet `n`'s fields, dot included (`wire.req1.`): a
 * difference in any of the packet's headers starts with it.
 */
export function packetPrefix(direction: PacketDirection, n: number): string {
  return `wire.${member(DIRECTIONS, direction, 'direction')}${counter(n)}.`;
}

/** The key of the field `name`; a name no side writes throws a {@link FieldNameError}. */
export function parseField(name: string): FieldKey {
  if (typeof name !== 'string') throw new FieldNameError(String(name), 'not a string');
  const key = parseKnown(name);
  if (typeof key === 'string') throw new FieldNameError(name, key);
  return key;
}

/** The key of `name`, or undefined for a name that is no observation field. */
export function tryParseField(name: string): FieldKey | undefined {
  const key = typeof name === 'string' ? parseKnown(name) : 'not a string';
  return typeof key === 'string' ? undefined : key;
}

// A counter is 1-based without leading zeros, so that every name formats back to itself.
const N = '([1-9]\\d*)';
const LANE = '(requester|responder)';
const COMPLETION = new RegExp(`^${LANE}\\.wc${N}\\.(\\w+)$`);
const STATE = new RegExp(`^q${N}\\.${LANE}\\.state$`);
const EVENT = new RegExp(`^event${N}\\.${LANE}$`);
const COUNTED = new RegExp(
  `^(post|modify|rereg|attach|detach|hammer|bind|inv|srqLimit|srqEvent)${N}(?:\\.(\\w+))?$`,
);
const MEMORY = /^mem\[(0|-?[1-9]\d*)\]$/;
const PACKET = new RegExp(`^wire\\.(req|resp)${N}\\.(\\w+)$`);
const STREAM = /^stream\.(\w+)$/;

/** The key of `name`, or why it is none. */
function parseKnown(name: string): FieldKey | string {
  if (name === 'ordering') return { kind: 'ordering' };
  if (name === 'bringup') return { kind: 'bringup' };
  if (name === 'wire') return { kind: 'wire' };
  if (name === 'wire.requests') return { kind: 'packet-count', direction: 'req' };
  if (name === 'wire.responses') return { kind: 'packet-count', direction: 'resp' };
  let m = COMPLETION.exec(name);
  if (m !== null) {
    const part = oneOf(COMPLETION_PARTS, m[3]);
    if (part === undefined) return `no completion part '${m[3]}'`;
    return { kind: 'completion', side: m[1] as Lane, n: Number(m[2]), part };
  }
  m = STATE.exec(name);
  if (m !== null) return { kind: 'state', n: Number(m[1]), side: m[2] as Lane };
  m = EVENT.exec(name);
  if (m !== null) return { kind: 'event', n: Number(m[1]), side: m[2] as Lane };
  m = MEMORY.exec(name);
  if (m !== null) return { kind: 'memory', offset: Number(m[1]) };
  m = PACKET.exec(name);
  if (m !== null) {
    const part = oneOf(PACKET_PARTS, m[3]);
    if (part === undefined) return `no packet part '${m[3]}'`;
    return { kind: 'packet', direction: m[1] as PacketDirection, n: Number(m[2]), part };
  }
  m = STREAM.exec(name);
  if (m !== null) {
    const part = oneOf(STREAM_PARTS, m[1]);
    return part === undefined ? `no stream part '${m[1]}'` : { kind: 'stream', part };
  }
  m = COUNTED.exec(name);
  if (m !== null) return countedKey(m[1] ?? '', Number(m[2]), m[3]);
  return 'no field has this form';
}

/** `postN`, `hammerN.part`, `bindN.status`, ...: a counted step's field. */
function countedKey(step: string, n: number, sub: string | undefined): FieldKey | string {
  const only = (key: FieldKey, suffix: string | undefined): FieldKey | string =>
    sub === undefined || sub === suffix ? key : `no part '${sub}' of ${step}`;
  switch (step) {
    case 'post':
      return only(
        sub === 'bad_wr' ? { kind: 'post', n, badWr: true } : { kind: 'post', n },
        'bad_wr',
      );
    case 'modify':
      return only({ kind: 'modify', n }, undefined);
    case 'rereg':
      return only({ kind: 'rereg', n }, undefined);
    case 'attach':
    case 'detach':
      return only({ kind: 'mcast', step, n }, undefined);
    case 'srqLimit':
      return only({ kind: 'srq-limit', n }, undefined);
    case 'srqEvent':
      return only(
        sub === 'limit' ? { kind: 'srq-event', n, limit: true } : { kind: 'srq-event', n },
        'limit',
      );
    case 'bind':
    case 'inv':
      return only(
        sub === 'status' ? { kind: 'window', step, n, status: true } : { kind: 'window', step, n },
        'status',
      );
    case 'hammer': {
      const part = oneOf(HAMMER_PARTS, sub);
      return part === undefined ? `no hammer part '${sub ?? ''}'` : { kind: 'hammer', n, part };
    }
    default:
      return `no step '${step}'`;
  }
}

function oneOf<T extends string>(list: readonly T[], value: string | undefined): T | undefined {
  return list.find((item) => item === value);
}

const LANES: readonly Lane[] = ['requester', 'responder'];
const DIRECTIONS: readonly PacketDirection[] = ['req', 'resp'];
const WINDOW_STEPS: readonly WindowStep[] = ['bind', 'inv'];
const MCAST_STEPS: readonly McastStep[] = ['attach', 'detach'];

function counter(n: number): number {
  if (!Number.isSafeInteger(n) || n < 1)
    throw new ArgumentError('interop', 'key.n', `not a counter (1, 2, ...): ${String(n)}`);
  return n;
}

function lane(side: Lane): Lane {
  return member(LANES, side, 'key.side');
}

/** `value` if `list` holds it, else an UnknownNameError naming the list. */
function member<T extends string>(list: readonly T[], value: T, field: string): T {
  if (oneOf(list, value) === undefined)
    throw new UnknownNameError('interop', field, String(value), list, field);
  return value;
}

/** An optional `true` flag: absent or true, nothing else. */
function flag(value: true | undefined, name: string): boolean {
  if (value !== undefined && value !== true)
    throw new ArgumentError('interop', `key.${name}`, `${String(value)} is not true or absent`);
  return value === true;
}

/** The exhaustiveness check: a kind without a case above does not compile. */
function unknownKind(key: never): never {
  const kind = (key as { kind?: unknown }).kind;
  throw new UnknownNameError('interop', 'field kind', String(kind), FIELD_KINDS, 'key.kind');
}

/** Every kind, for the error of an unknown one (a Record: a kind left out does not compile). */
const FIELD_KINDS = Object.keys({
  post: true,
  completion: true,
  state: true,
  modify: true,
  rereg: true,
  mcast: true,
  event: true,
  hammer: true,
  window: true,
  'srq-limit': true,
  'srq-event': true,
  memory: true,
  ordering: true,
  bringup: true,
  wire: true,
  'packet-count': true,
  packet: true,
  stream: true,
} satisfies Record<FieldKind, true>);
