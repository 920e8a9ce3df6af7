/**
 * The `decode --fields` vs `tshark -T fields` comparison on real runs' captures (kernel
 * tests, in the guest): tshark's start-up costs 12 to 15 s under TCG, so the captures are
 * concatenated (mergecap -a) and read by one tshark run; captures that share a TCP or UDP
 * conversation (the same addresses and ports) go into separate merges, so that no decoder
 * joins two captures' connections into one.
 *
 * Usage:
 * ```ts
 * const r = diffWithTshark(['a.pcap', 'b.pcap'], dir, cli);  // cli: dist/cli/main.js
 * expect(r.ours).toBe(r.theirs);                              // per merge
 * ```
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { TSHARK_FIELDS } from '../../src/codec/capture/tshark-fields.js';
import { decodeFrame } from '../../src/codec/net/frame.js';
import { decodeCapture } from '../../src/codec/pcap/capture.js';
import { INFINIBAND_PAYLOAD_PROTOCOLS, tsharkFieldsText } from './tshark.js';

/** Every field of the table that prints a value (protocols are filter-only). */
export const PRINTED_TSHARK_FIELDS: readonly string[] = [...TSHARK_FIELDS.values()]
  .filter((f) => f.type !== 'FT_PROTOCOL')
  .map((f) => f.name);

/** The conversations (both directions alike) of a capture. */
function conversations(file: string): Set<string> {
  const c = decodeCapture(readFileSync(file));
  if (!c.ok) throw c.error;
  const out = new Set<string>();
  for (const r of c.value.records) {
    const f = decodeFrame(r.linkType, r.data);
    if (!f.ok || f.value.network === undefined || f.value.transport === undefined) continue;
    const n = f.value.network.header;
    const t = f.value.transport.header;
    const a = `${n.source}|${t.sourcePort}`;
    const b = `${n.destination}|${t.destinationPort}`;
    out.add(`${f.value.transport.kind}|${a < b ? `${a}|${b}` : `${b}|${a}`}`);
  }
  return out;
}

/** Groups captures so that no two in a group share a conversation (first fit, in order). */
export function disjointGroups(files: readonly string[]): string[][] {
  const groups: { files: string[]; seen: Set<string> }[] = [];
  for (const file of files) {
    const mine = conversations(file);
    let group = groups.find((g) => ![...mine].some((k) => g.seen.has(k)));
    if (group === undefined) {
      group = { files: [], seen: new Set() };
      groups.push(group);
    }
    group.files.push(file);
    for (const k of mine) group.seen.add(k);
  }
  return groups.map((g) => g.files);
}

/** One merge's two texts and what they cover. */
export interface TsharkDiff {
  readonly merged: string;
  readonly ours: string;
  readonly theirs: string;
  readonly frames: number;
  readonly values: number;
}

/** Merges the captures (disjointGroups) and prints each merge with decode and tshark. */
export function diffWithTshark(
  files: readonly string[],
  dir: string,
  cli: string,
  fields: readonly string[] = PRINTED_TSHARK_FIELDS,
): TsharkDiff[] {
  return disjointGroups(files).map((group, i) => {
    const merged = join(dir, `tshark-diff-${i}.pcap`);
    execFileSync('mergecap', ['-a', '-F', 'pcap', '-w', merged, ...group]);
    // Payload heuristics off, as roce-tshark.test.ts: test payloads stay data.
    const theirs = tsharkFieldsText(merged, fields, {
      disableProtocols: INFINIBAND_PAYLOAD_PROTOCOLS,
    });
    const ours = execFileSync(
      process.execPath,
      [cli, 'decode', '--header', '--fields', fields.join(','), merged],
      { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 },
    );
    const rows = theirs.trimEnd().split('\n').slice(1);
    const values = rows.flatMap((r) => r.split('\t')).filter((c) => c !== '').length;
    return { merged, ours, theirs, frames: rows.length, values };
  });
}
