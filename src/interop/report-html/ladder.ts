/**
 * The ladder of one result as SVG: two panels side by side, the engine's predicted
 * packets and the packets captured on the wire, each with a requester and a responder
 * lane; a row per packet (aligned across the panels, so a difference sits beside what it
 * differs from), then the completions on each lane. A packet or token that differs is
 * drawn in the colour of its explanation, with the reason as its tooltip.
 *
 * The layout is a fixed grid (two lanes, one row per packet): no graph layout is needed,
 * so the SVG is written directly; ghtml's `html` escapes every value put into it.
 */
import { html } from 'ghtml';
import { completionPrefix } from '../../judge/observation.js';
import type { DifferenceEntry } from './model.js';
import type { CompletionEntry, Lane, PacketPart, WirePacket } from './packets.js';

/** How a difference is explained: recorded behaviour, a refused post's consequence, nothing. */
export type DifferenceClass = 'known' | 'consequence' | 'unrecorded';

export function differenceClass(d: DifferenceEntry): DifferenceClass {
  if (d.explainedBy === null) return 'unrecorded';
  return d.explainedBy === 'consequence-of-refused-post' ? 'consequence' : 'known';
}

/** What the ladder needs to know about differences: by field, with the reason as text. */
export interface DifferenceLookup {
  /** The difference of `field`, or of any field starting with it (`wire.req1.`). */
  readonly of: (field: string) => DifferenceEntry | undefined;
  readonly reason: (d: DifferenceEntry) => string;
}

// Two panels of 544 px and a 24 px gap: 1112 px, inside a 1280 px window at 100 %.
const PANEL = 544;
const GAP = 24;
const LANE_L = 84;
const LANE_R = 506;
const HEAD = 46;
const LINE = 13;
/** Characters of 11 px monospace (about 6.6 px each) between the lanes. */
const CHARS = 60;
const BOX = 200;
const BOX_CHARS = 29;
const ROW_GAP = 10;

interface Row {
  readonly engine: WirePacket | undefined;
  readonly device: WirePacket | undefined;
  readonly time: bigint | undefined;
}

/** Token lines of at most `width` characters (a longer token is cut, its text in the tooltip). */
function wrap(parts: readonly PacketPart[], width: number): PacketPart[][] {
  const lines: PacketPart[][] = [];
  let line: PacketPart[] = [];
  let used = 0;
  for (const part of parts) {
    const text = part.text.length > width ? `${part.text.slice(0, width - 1)}…` : part.text;
    if (used > 0 && used + 1 + text.length > width) {
      lines.push(line);
      line = [];
      used = 0;
    }
    line.push({ name: part.name, text });
    used += (used > 0 ? 1 : 0) + text.length;
  }
  if (line.length > 0) lines.push(line);
  return lines;
}

/**
 * iWARP messages have no sequence number across directions: the two sides' lines are
 * aligned on the longest common run of (direction, kind), so a message one side lacks
 * gets a row of its own instead of being drawn beside an unrelated one.
 */
function alignedLines(
  engine: readonly WirePacket[],
  device: readonly WirePacket[],
  times: ReadonlyMap<string, bigint>,
): Row[] {
  const same = (a: WirePacket, b: WirePacket) => a.from === b.from && a.kind === b.kind;
  // lcs[i][j]: the longest common run of engine[i..] and device[j..].
  const lcs = Array.from({ length: engine.length + 1 }, () =>
    new Array<number>(device.length + 1).fill(0),
  );
  for (let i = engine.length - 1; i >= 0; i--)
    for (let j = device.length - 1; j >= 0; j--)
      (lcs[i] as number[])[j] = same(engine[i] as WirePacket, device[j] as WirePacket)
        ? (lcs[i + 1]?.[j + 1] ?? 0) + 1
        : Math.max(lcs[i + 1]?.[j] ?? 0, lcs[i]?.[j + 1] ?? 0);
  const rows: Row[] = [];
  let i = 0;
  let j = 0;
  while (i < engine.length || j < device.length) {
    const e = engine[i];
    const d = device[j];
    if (e !== undefined && d !== undefined && same(e, d)) {
      rows.push({ engine: e, device: d, time: times.get(d.key) });
      i++;
      j++;
    } else if (
      d === undefined ||
      (e !== undefined && (lcs[i + 1]?.[j] ?? 0) >= (lcs[i]?.[j + 1] ?? 0))
    ) {
      rows.push({ engine: e, device: undefined, time: undefined });
      i++;
    } else {
      rows.push({ engine: undefined, device: d, time: times.get(d.key) });
      j++;
    }
  }
  return rows;
}

/** Rows: observed order (by capture time when known), then predicted packets not yet placed. */
export function ladderRows(
  engine: readonly WirePacket[],
  device: readonly WirePacket[],
  times: ReadonlyMap<string, bigint>,
): Row[] {
  if ([...engine, ...device].every((p) => p.field === 'wire'))
    return alignedLines(engine, device, times);
  const keys: string[] = [];
  const timed = [...device].sort((a, b) => {
    const ta = times.get(a.key);
    const tb = times.get(b.key);
    return ta === undefined || tb === undefined ? 0 : ta < tb ? -1 : ta > tb ? 1 : 0;
  });
  const interleave = (list: readonly WirePacket[]) => {
    // Without times, RoCE requests and responses (numbered apart) alternate.
    if (times.size > 0 || list.every((p) => p.key.startsWith('line'))) return [...list];
    const req = list.filter((p) => p.key.startsWith('req'));
    const resp = list.filter((p) => p.key.startsWith('resp'));
    const out: WirePacket[] = [];
    for (let i = 0; i < Math.max(req.length, resp.length); i++) {
      if (req[i]) out.push(req[i] as WirePacket);
      if (resp[i]) out.push(resp[i] as WirePacket);
    }
    return out;
  };
  for (const p of [...interleave(timed), ...interleave(engine)])
    if (!keys.includes(p.key)) keys.push(p.key);
  return keys.map((key) => ({
    engine: engine.find((p) => p.key === key),
    device: device.find((p) => p.key === key),
    time: times.get(key),
  }));
}

/** The field a token came from: `wire` (iWARP), `wire.req1.reth` for `reth.va` (RoCEv2). */
function partField(p: WirePacket, part: PacketPart): string {
  return p.field === 'wire' ? 'wire' : `${p.field}${part.name.split('.')[0]}`;
}

/** Time since the scenario's first captured packet. */
function sinceFirst(ns: bigint): string {
  const us = Number(ns) / 1000;
  return us < 1000 ? `+${us.toFixed(1)} µs` : `+${(us / 1000).toFixed(3)} ms`;
}

interface Drawn {
  readonly svg: string;
  readonly height: number;
}

/** One packet in one panel at `y`. `other` is the same row's packet of the other side. */
function drawPacket(
  x0: number,
  y: number,
  p: WirePacket | undefined,
  other: WirePacket | undefined,
  diffs: DifferenceLookup,
  deviceSide: boolean,
): Drawn {
  const mid = x0 + (LANE_L + LANE_R) / 2;
  if (p === undefined) {
    const d = other === undefined ? undefined : diffs.of(other.field);
    const cls = d === undefined ? 'none' : `d-${differenceClass(d)}`;
    // Where the other side's packet would be: a dashed arrow in its direction.
    const [fromX, toX] =
      other?.from === 'responder' ? [x0 + LANE_R, x0 + LANE_L] : [x0 + LANE_L, x0 + LANE_R];
    return {
      svg: html`<g class="ghost ${cls}"><line x1="${fromX}" y1="${y + 20}" x2="${toX}" y2="${y + 26}"/><text class="absent ${cls}" x="${mid}" y="${y + 14}" text-anchor="middle">${deviceSide ? 'not on the wire' : 'not predicted'}<title>${d === undefined ? '' : diffs.reason(d)}</title></text></g>`,
      height: 40,
    };
  }
  const whole = diffs.of(p.field);
  const differs = (part: PacketPart | 'kind' | 'sequence'): DifferenceEntry | undefined => {
    if (other === undefined) return whole;
    if (part === 'kind')
      return other.kind !== p.kind || other.from !== p.from
        ? (diffs.of(`${p.field}opcode`) ?? whole)
        : undefined;
    if (part === 'sequence')
      return other.sequence !== p.sequence ? (diffs.of(`${p.field}psn`) ?? whole) : undefined;
    const same = other.parts.find((o) => o.name === part.name);
    return same?.text === part.text ? undefined : (diffs.of(partField(p, part)) ?? whole);
  };
  const kindDiff = differs('kind');
  const sequenceDiff = differs('sequence');
  const tokenDiffs = p.parts.map((part) => differs(part));
  const packetDiff = kindDiff ?? sequenceDiff ?? tokenDiffs.find((d) => d !== undefined);
  const cls = (d: DifferenceEntry | undefined) =>
    d === undefined ? '' : `d-${differenceClass(d)}`;
  const [fromX, toX] =
    p.from === 'requester' ? [x0 + LANE_L, x0 + LANE_R] : [x0 + LANE_R, x0 + LANE_L];
  const ay = y + 20;
  const dir = toX > fromX ? -1 : 1;
  const head = `${toX},${ay + 6} ${toX + dir * 9},${ay + 2} ${toX + dir * 7},${ay + 9}`;
  const diffOf = new Map(p.parts.map((part, i) => [part.name, tokenDiffs[i]]));
  const lines = wrap(p.parts, CHARS);
  const tspans = (line: PacketPart[]) =>
    line.map((part, i) => {
      const d = diffOf.get(part.name);
      return html`<tspan class="${cls(d)}">${i > 0 ? ' ' : ''}${part.text}!${d === undefined ? '' : html`<title>${diffs.reason(d)}</title>`}</tspan>`;
    });
  const full = [
    p.kind,
    ...(p.sequence === undefined ? [] : [p.sequence]),
    ...p.parts.map((x) => x.text),
  ].join(' ');
  return {
    svg: html`<g class="pk ${cls(packetDiff)}"><title>${full}${packetDiff === undefined ? '' : `\n${diffs.reason(packetDiff)}`}</title>
<text class="op" x="${mid}" y="${y + 13}" text-anchor="middle"><tspan class="${cls(kindDiff)}">${p.kind}</tspan>!${p.sequence === undefined ? '' : html` <tspan class="seq ${cls(sequenceDiff)}">${p.sequence}</tspan>`}</text>
<line x1="${fromX}" y1="${ay}" x2="${toX}" y2="${ay + 6}"/><polygon points="${head}"/>
!${lines.map((line, i) => html`<text class="tk" x="${mid}" y="${ay + 20 + i * LINE}" text-anchor="middle">!${tspans(line)}</text>`)}</g>`,
    height: 34 + lines.length * LINE + ROW_GAP,
  };
}

function completionLines(c: CompletionEntry): PacketPart[][] {
  const parts = [...c.values]
    .filter(([name]) => name !== 'status')
    .map(([name, value]) => ({ name, text: `${name}=${value}` }));
  return [
    [{ name: 'status', text: `wc${c.n} ${c.values.get('status') ?? '?'}` }],
    ...wrap(parts, BOX_CHARS),
  ];
}

/** One completion as a box on its lane; tokens that differ from `other` are marked. */
function drawCompletion(
  x0: number,
  y: number,
  c: CompletionEntry,
  other: CompletionEntry | undefined,
  diffs: DifferenceLookup,
): Drawn {
  const lines = completionLines(c);
  const bx = c.lane === 'requester' ? x0 + LANE_L - 6 : x0 + LANE_R - BOX + 6;
  const height = 8 + lines.length * LINE;
  const fieldOf = (name: string) => `${completionPrefix(c.lane, c.n)}.${name}`;
  const diffOf = (name: string) =>
    other?.values.get(name) === c.values.get(name) ? undefined : diffs.of(fieldOf(name));
  const boxDiff = [...c.values.keys()].map(diffOf).find((d) => d !== undefined);
  const cls = (d: DifferenceEntry | undefined) =>
    d === undefined ? '' : `d-${differenceClass(d)}`;
  return {
    svg: html`<g class="wc ${cls(boxDiff)}"><rect x="${bx}" y="${y}" width="${BOX}" height="${height}" rx="4"/>
!${lines.map(
      (line, i) =>
        html`<text x="${bx + 7}" y="${y + 14 + i * LINE}">!${line.map((part, j) => {
          const d = diffOf(part.name);
          return html`<tspan class="${cls(d)}">${j > 0 ? ' ' : ''}${part.text}!${d === undefined ? '' : html`<title>${diffs.reason(d)}</title>`}</tspan>`;
        })}</text>`,
    )}</g>`,
    height,
  };
}

export interface LadderInput {
  readonly engine: readonly WirePacket[];
  readonly device: readonly WirePacket[];
  readonly times: ReadonlyMap<string, bigint>;
  readonly engineCompletions: readonly CompletionEntry[];
  readonly deviceCompletions: readonly CompletionEntry[];
  readonly deviceName: string;
  readonly diffs: DifferenceLookup;
}

function panelHead(x0: number, title: string): string {
  return html`<text class="panel" x="${x0 + 4}" y="14">${title}</text>
<text class="lane" x="${x0 + LANE_L}" y="36" text-anchor="middle">requester</text>
<text class="lane" x="${x0 + LANE_R}" y="36" text-anchor="middle">responder</text>`;
}

/** The whole ladder as one `<svg>` element. */
export function ladderSvg(input: LadderInput): string {
  const rows = ladderRows(input.engine, input.device, input.times);
  const first = [...input.times.values()].reduce<bigint | undefined>(
    (a, b) => (a === undefined || b < a ? b : a),
    undefined,
  );
  const parts: string[] = [];
  let y = HEAD;
  const right = PANEL + GAP;
  if (rows.length === 0) {
    parts.push(
      html`<text class="absent" x="${(PANEL * 2 + GAP) / 2}" y="${y + 16}" text-anchor="middle">no packets: this scenario is not captured</text>`,
    );
    y += 28;
  }
  for (const row of rows) {
    const a = drawPacket(0, y, row.engine, row.device, input.diffs, false);
    const b = drawPacket(right, y, row.device, row.engine, input.diffs, true);
    parts.push(a.svg, b.svg);
    if (row.time !== undefined && first !== undefined)
      parts.push(
        html`<text class="time" x="${right + 4}" y="${y + 24}">${sinceFirst(row.time - first)}</text>`,
      );
    y += Math.max(a.height, b.height);
  }
  const byKey = (list: readonly CompletionEntry[], lane: Lane) =>
    list.filter((c) => c.lane === lane);
  const depth = Math.max(
    ...(['requester', 'responder'] as const).map((lane) =>
      Math.max(
        byKey(input.engineCompletions, lane).length,
        byKey(input.deviceCompletions, lane).length,
      ),
    ),
    0,
  );
  if (depth > 0) {
    parts.push(
      html`<text class="section" x="4" y="${y + 14}">completions</text><line class="rule" x1="0" y1="${y + 4}" x2="${PANEL * 2 + GAP}" y2="${y + 4}"/>`,
    );
    y += 22;
  }
  for (let i = 0; i < depth; i++) {
    let height = 0;
    for (const lane of ['requester', 'responder'] as const) {
      const e = byKey(input.engineCompletions, lane)[i];
      const d = byKey(input.deviceCompletions, lane)[i];
      if (e !== undefined) {
        const drawn = drawCompletion(0, y, e, d, input.diffs);
        parts.push(drawn.svg);
        height = Math.max(height, drawn.height);
      }
      if (d !== undefined) {
        const drawn = drawCompletion(right, y, d, e, input.diffs);
        parts.push(drawn.svg);
        height = Math.max(height, drawn.height);
      }
    }
    y += height + 8;
  }
  const width = PANEL * 2 + GAP;
  const laneLines = [0, right]
    .flatMap((x0) => [x0 + LANE_L, x0 + LANE_R])
    .map((x) => html`<line class="lifeline" x1="${x}" y1="42" x2="${x}" y2="${y}"/>`);
  return html`<svg class="ladder" xmlns="http://www.w3.org/2000/svg" width="${width}" height="${y + 6}" viewBox="0 0 ${width} ${y + 6}" role="img">
!${panelHead(0, 'engine: predicted')}!${panelHead(right, `${input.deviceName}: ${input.device.length > 0 ? 'captured on the wire' : 'observed'}`)}
!${laneLines}!${parts}</svg>`;
}
