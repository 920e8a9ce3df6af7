/**
 * Runs tshark with the generated Wireshark plugin (src/wireshark/) and compares what it
 * shows with `rdma-interop decode --fields`, frame by frame: every codec layout field the
 * plugin shows (its `codecField`), values compared as numbers.
 *
 * ```ts
 * const plugin = writePlugin(dir);
 * const r = comparePluginWithDecode(pcap, plugin, { wireshark: 'disabled' });
 * expect(r.mismatches).toEqual([]);   // r.frames, r.values: what was compared
 * ```
 */
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runDecode } from '../../src/cli/commands/decode.js';
import { SUMMARY_COLUMNS } from '../../src/codec/capture/summary.js';
import { TSHARK_MPA_ON_ANY_PORT } from '../../src/codec/capture/tshark-fields.js';
import { generateWiresharkPlugin, wiresharkPluginFields } from '../../src/wireshark/generate.js';
import type { PluginTables } from '../../src/wireshark/tables.js';
import { assertTestedTshark, TSHARK_PATH } from './tshark.js';

/** Writes the generated plugin into `dir` and returns its path. */
export function writePlugin(dir: string, tables?: PluginTables): string {
  const path = join(dir, 'rdma-interop.lua');
  writeFileSync(
    path,
    tables === undefined ? generateWiresharkPlugin() : generateWiresharkPlugin(tables),
  );
  return path;
}

/** Options of a tshark run with the plugin. */
export interface PluginRunOptions {
  /** `disabled`: Wireshark's own DDP/RDMAP dissector off, the plugin decodes alone. */
  readonly wireshark?: 'enabled' | 'disabled';
  /** `-o` preferences, e.g. `rdma_interop.profile:draft-01`. */
  readonly prefs?: readonly string[];
  readonly filter?: string;
}

/** tshark -T fields with the plugin: per frame, each field's occurrences. */
export function pluginColumns(
  file: string,
  plugin: string,
  fields: readonly string[],
  o: PluginRunOptions = {},
): Map<number, Map<string, string[]>> {
  const args = ['-n', '-o', TSHARK_MPA_ON_ANY_PORT, '-X', `lua_script:${plugin}`, '-r', file];
  if (o.wireshark === 'disabled') args.push('--disable-protocol', 'iwarp_ddp_rdmap');
  for (const p of o.prefs ?? []) args.push('-o', p);
  if (o.filter !== undefined) args.push('-Y', o.filter);
  args.push('-T', 'fields', '-E', 'separator=\t', '-E', 'occurrence=a', '-E', 'aggregator=|');
  for (const f of ['frame.number', ...fields]) args.push('-e', f);
  assertTestedTshark();
  const out = execFileSync(TSHARK_PATH, args, {
    encoding: 'utf8',
    maxBuffer: 256 * 1024 * 1024,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const frames = new Map<number, Map<string, string[]>>();
  for (const line of out.split('\n')) {
    if (line === '') continue;
    const cells = line.split('\t');
    const row = new Map<string, string[]>();
    fields.forEach((f, i) => {
      const cell = cells[i + 1] ?? '';
      row.set(f, cell === '' ? [] : cell.split('|'));
    });
    frames.set(Number(cells[0]), row);
  }
  return frames;
}

/** A value as a comparable string: numbers (decimal or 0x) in hex, flags as 0/1. */
export function normalize(v: string): string {
  if (v === '') return '';
  if (v === 'true' || v === 'True') return '1';
  if (v === 'false' || v === 'False') return '0';
  try {
    return BigInt(v).toString(16);
  } catch {
    return v;
  }
}

/** What a comparison covered, and where the plugin and the codec disagree. */
export interface PluginComparison {
  /** Frames with at least one compared DDP segment. */
  readonly frames: number;
  /** Field values compared. */
  readonly values: number;
  /** The DDP segments compared, by RDMAP message kind (decode's `opcode` column). */
  readonly messages: Readonly<Record<string, number>>;
  readonly mismatches: string[];
  /**
   * With Wireshark's dissector on: where it showed a field of the same name with another
   * value than the plugin's (its own, before the plugin's: not compared).
   */
  readonly wiresharkDiffers: string[];
}

/**
 * The plugin's fields against `decode --fields`, frame by frame. `codecFields` limits the
 * comparison to those codec layout fields (default: every one the plugin shows). Per
 * frame the values of a codec field over its segments are compared as sorted lists (a
 * frame may carry several FPDUs; tshark lists a field's occurrences per field name).
 */
export function comparePluginWithDecode(
  file: string,
  plugin: string,
  o: PluginRunOptions & { readonly codecFields?: readonly string[] } = {},
): PluginComparison {
  const all = wiresharkPluginFields().filter((f) => f.codecField !== undefined);
  const names = [...new Set(all.map((f) => f.codecField!))].filter(
    (n) => o.codecFields === undefined || o.codecFields.includes(n),
  );
  const abbrevs = new Map<string, string[]>();
  for (const f of all)
    if (names.includes(f.codecField!))
      abbrevs.set(f.codecField!, [...(abbrevs.get(f.codecField!) ?? []), f.abbrev]);
  const columns = [...new Set([...abbrevs.values()].flat())];
  const theirs = pluginColumns(file, plugin, columns, o);
  // decode's generic `opcode` column prints the message kind: the layout field is read by
  // its tshark name there.
  const decodeNames = names.map((n) =>
    n in SUMMARY_COLUMNS ? (all.find((f) => f.codecField === n && f.wireshark)?.abbrev ?? n) : n,
  );
  const decoded = runDecode(file, {
    fields: ['frame', 'proto', 'opcode', ...decodeNames].join(','),
  });
  if (decoded.exitCode !== 0) throw new Error(`decode failed: ${decoded.stderr}`);
  const ours = new Map<number, string[][]>();
  const messages: Record<string, number> = {};
  for (const line of decoded.stdout.split('\n')) {
    const cells = line.split('\t');
    // An iWARP item without an RDMAP header (no segment decoded) has nothing to compare.
    const kind = cells[2] ?? '';
    if (cells[1] !== 'iWARP' || kind === '') continue;
    const frame = Number(cells[0]);
    messages[kind] = (messages[kind] ?? 0) + 1;
    ours.set(frame, [...(ours.get(frame) ?? []), cells.slice(3)]);
  }
  const mismatches: string[] = [];
  const wiresharkDiffers: string[] = [];
  let values = 0;
  for (const [frame, segments] of ours) {
    const row = theirs.get(frame);
    names.forEach((name, i) => {
      const want = segments
        .map((s) => s[i] ?? '')
        .filter((v) => v !== '')
        .map(normalize)
        .sort();
      const lists = (abbrevs.get(name) ?? []).map((a) => (row?.get(a) ?? []).map(normalize));
      let got = lists.flat().sort();
      if (o.wireshark !== 'disabled' && segments.length === 1 && got.length > want.length) {
        // Wireshark's own occurrence came first, the plugin's last.
        wiresharkDiffers.push(`frame ${frame} ${name}: Wireshark ${got.join(',')}`);
        got = lists.filter((l) => l.length > 0).map((l) => l[l.length - 1]!);
      }
      values += want.length;
      if (want.join(',') !== got.join(','))
        mismatches.push(
          `frame ${frame} ${name}: decode ${want.join(',')}, plugin ${got.join(',')}`,
        );
    });
  }
  return { frames: ours.size, values, messages, mismatches, wiresharkDiffers };
}
