/**
 * A scenario's fields as the parts of a ladder: the wire packets of each side (the iWARP
 * `wire` lines of wire.ts, the RoCEv2 `wire.reqN.*` / `wire.respN.*` fields of
 * link/roce-fields.ts), the completions of each side, the memory words, and the rest.
 */

import {
  completionPrefix,
  type Lane,
  type PacketDirection,
  packetPrefix,
  tryParseField,
} from '../../judge/observation.js';

export type { Lane };

/** One token of a packet: `stag=remote`, `L`, `psn=0x12a5c3`. */
export interface PacketPart {
  /** What the token is (`stag`, `L`, `psn`): tokens with the same name are compared. */
  readonly name: string;
  readonly text: string;
}

/** One packet as a side gave it. */
export interface WirePacket {
  /** Which packet of the other side it is compared with (`line3`, `req1`, `resp2`). */
  readonly key: string;
  readonly from: Lane;
  /** The message kind or BTH opcode name. */
  readonly kind: string;
  /** The sequence number shown with the kind (`msn=1`, `psn=0x12a5c3`), if any. */
  readonly sequence: string | undefined;
  readonly parts: readonly PacketPart[];
  /** The field (or fields' prefix) this packet came from, to find its difference. */
  readonly field: string;
}

function tokenName(token: string): string {
  const eq = token.indexOf('=');
  return eq < 0 ? (token === 'notL' ? 'L' : token) : token.slice(0, eq);
}

/** The iWARP `wire` field: one line per message, `requester> kind placement ...`. */
function iwarpPackets(wire: string): WirePacket[] {
  if (wire === '' || wire === '—') return [];
  return wire.split('\n').map((line, i) => {
    const [direction = '', kind = '', ...tokens] = line.split(' ');
    const parts = tokens.map((t) => ({ name: tokenName(t), text: t }));
    const msn = parts.find((p) => p.name === 'msn');
    return {
      key: `line${i + 1}`,
      from: direction.startsWith('responder') ? 'responder' : 'requester',
      kind,
      sequence: msn?.text,
      parts: parts.filter((p) => p !== msn),
      field: 'wire',
    };
  });
}

/**
 * A header field whose value lists several (`reth` = `va=remote+8 rkey=remote len=8`): a
 * token per item (`reth.va`), so each can wrap and be marked on its own.
 */
function headerParts(name: string, value: string): PacketPart[] {
  const items = value.split(' ');
  if (items.length === 1 || !items.every((i) => i.includes('=')))
    return [{ name, text: `${name}=${value}` }];
  return items.map((item, i) => ({
    name: `${name}.${item.slice(0, item.indexOf('='))}`,
    text: i === 0 ? `${name}:${item}` : item,
  }));
}

/** The RoCEv2 `wire.reqN.*` / `wire.respN.*` fields, requests and responses. */
function rocePackets(fields: Readonly<Record<string, string>>): WirePacket[] {
  const packets = new Map<
    string,
    { direction: PacketDirection; n: number; values: Map<string, string> }
  >();
  for (const [field, value] of Object.entries(fields)) {
    const k = tryParseField(field);
    if (k?.kind !== 'packet') continue;
    const key = `${k.direction}${k.n}`;
    let p = packets.get(key);
    if (p === undefined) {
      p = { direction: k.direction, n: k.n, values: new Map() };
      packets.set(key, p);
    }
    p.values.set(k.part, value);
  }
  return [...packets].map(([key, p]) => ({
    key,
    from: p.direction === 'req' ? 'requester' : 'responder',
    kind: p.values.get('opcode') ?? '?',
    sequence: p.values.has('psn') ? `psn=${p.values.get('psn')}` : undefined,
    parts: [...p.values]
      .filter(([name]) => name !== 'opcode' && name !== 'psn')
      .flatMap(([name, value]) => headerParts(name, value)),
    field: packetPrefix(p.direction, p.n),
  }));
}

/** The packets of one side's fields (none when the scenario was not captured). */
export function packetsOf(fields: Readonly<Record<string, string>> | null): WirePacket[] {
  if (fields === null) return [];
  if (fields.wire !== undefined) return iwarpPackets(fields.wire);
  return rocePackets(fields);
}

/** One completion: `requester.wc2.*`. */
export interface CompletionEntry {
  readonly lane: Lane;
  readonly n: number;
  /** Sub-field (`status`, `opcode`, `fetched`) -> value. */
  readonly values: ReadonlyMap<string, string>;
}

/** The completions of one side's fields, requester's first, in order. */
export function completionsOf(fields: Readonly<Record<string, string>> | null): CompletionEntry[] {
  const found = new Map<string, { lane: Lane; n: number; values: Map<string, string> }>();
  for (const [field, value] of Object.entries(fields ?? {})) {
    const k = tryParseField(field);
    if (k?.kind !== 'completion') continue;
    const key = completionPrefix(k.side, k.n);
    let c = found.get(key);
    if (c === undefined) {
      c = { lane: k.side, n: k.n, values: new Map() };
      found.set(key, c);
    }
    c.values.set(k.part, value);
  }
  return [...found.values()].sort((a, b) =>
    a.lane === b.lane ? a.n - b.n : a.lane === 'requester' ? -1 : 1,
  );
}

/** Memory offsets named in the fields (`mem[8]` -> 8), in order. */
export function memoryOffsets(...sides: (Readonly<Record<string, string>> | null)[]): number[] {
  const offsets = new Set<number>();
  for (const fields of sides)
    for (const field of Object.keys(fields ?? {})) {
      const k = tryParseField(field);
      if (k?.kind === 'memory') offsets.add(k.offset);
    }
  return [...offsets].sort((a, b) => a - b);
}

/** A field that is none of packets, completions, memory: `ordering`, `q1.responder.state`. */
export function isOtherField(field: string): boolean {
  const key = tryParseField(field);
  switch (key?.kind) {
    case 'wire':
    case 'packet':
    case 'packet-count':
    case 'completion':
    case 'memory':
      return false;
    default:
      return true;
  }
}
