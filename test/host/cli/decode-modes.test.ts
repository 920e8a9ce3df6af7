/**
 * `rdma-interop decode` in every output mode on every committed capture: the tree,
 * `--json`, `--jsonl`, `--summary`, `--fields` and `--filter` list the same packets (frame
 * number and kind, in the same order, none left out) and the same counts. The field values
 * of each mode are compared at the library level (test/host/codec/capture/decode-agreement);
 * this is the same agreement through the command's own option handling and printing.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runDecode } from '../../../src/cli/commands/decode.js';
import { RDMAP_OPCODES } from '../../../src/codec/iwarp/opcodes.js';
import { BTH_OPCODES } from '../../../src/codec/roce/opcodes.js';

const FIXTURES = 'test/fixtures';

function captures(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory()
      ? captures(join(dir, e.name))
      : /\.pcap(ng)?$/.test(e.name)
        ? [join(dir, e.name)]
        : [],
  );
}

/** What each mode calls the kinds of item, as the summary's protocol column names them. */
const PROTOCOL: Record<string, string> = {
  roce: 'RoCEv2',
  fpdu: 'iWARP',
  'mpa-frame': 'MPA',
  problem: 'problem',
};

/** Every opcode name a filter knows: a filter that passes every RoCEv2 packet and FPDU. */
const EVERY_OPCODE = [
  ...RDMAP_OPCODES.map((r) => r.kind),
  ...[...BTH_OPCODES.values()].map((r) => r.name),
].join('|');

/** The output's lines (it ends in a newline; nothing else is dropped). */
function lines(stdout: string): string[] {
  expect(stdout.endsWith('\n')).toBe(true);
  return stdout.slice(0, -1).split('\n');
}

/** The counts of a `pcap: N frames, ...` summary line. */
function counts(line: string | undefined): string {
  expect(line).toMatch(/^(pcap|pcapng): \d+ frames, /);
  return line!;
}

describe('every decode mode lists the same packets', () => {
  const files = captures(FIXTURES);

  it('finds the fixtures, among them a stock siw capture (MPA CRC off)', () => {
    expect(files).toContain(join(FIXTURES, 'siw-rping.pcap'));
  });

  for (const file of files)
    it(file, () => {
      const run = (options: Parameters<typeof runDecode>[1]) => {
        const r = runDecode(file, options);
        expect(r.stderr).toBe('');
        expect(r.exitCode).toBe(0);
        return r.stdout;
      };
      // --json: the reference list.
      const doc = JSON.parse(run({ json: true })) as {
        items: { kind: string; frameIndex: number }[];
        frameCount: number;
        summary: { roce: number; connections: number; fpdus: number; problems: number };
      };
      const items = doc.items.map((i) => `${i.frameIndex + 1} ${PROTOCOL[i.kind]}`);
      expect(items.length).toBeGreaterThan(0);
      const packets = doc.items
        .filter((i) => i.kind === 'roce' || i.kind === 'fpdu')
        .map((i) => `${i.frameIndex + 1} ${PROTOCOL[i.kind]}`);
      expect(doc.items.filter((i) => i.kind === 'fpdu')).toHaveLength(doc.summary.fpdus);

      // --jsonl: one object per item, then the summary.
      const jsonl = lines(run({ jsonl: true })).map(
        (l) => JSON.parse(l) as { kind: string; frameIndex: number; fpdus?: number },
      );
      const jsonlSummary = jsonl.pop();
      expect(jsonlSummary).toMatchObject({ kind: 'summary', ...doc.summary });
      expect(jsonl.map((i) => `${i.frameIndex + 1} ${PROTOCOL[i.kind]}`)).toEqual(items);

      // The tree: one "Frame N ..." head per item, then the summary line.
      const tree = lines(run({}));
      const treeSummary = counts(tree.pop());
      const heads = tree
        .filter((l) => l.startsWith('Frame '))
        .map((l) => {
          const frame = /^Frame (\d+) /.exec(l)?.[1];
          const kind = / RoCEv2 /.test(l)
            ? 'RoCEv2'
            : / FPDU /.test(l)
              ? 'iWARP'
              : / MPA (Request|Reply)$/.test(l)
                ? 'MPA'
                : 'problem';
          return `${frame} ${kind}`;
        });
      expect(heads).toEqual(items);
      expect(treeSummary).toContain(`, ${doc.summary.fpdus} FPDUs, `);

      // --summary: one line per item (frame, time, src > dst, protocol, ...), the same summary.
      const summary = lines(run({ summary: true }));
      expect(counts(summary.pop())).toBe(treeSummary);
      expect(
        summary.map((l) =>
          l
            .split(' ')
            .filter((_, i) => i === 0 || i === 5)
            .join(' '),
        ),
      ).toEqual(items);

      // --fields: the columns of every item.
      expect(lines(run({ fields: 'frame,proto' })).map((l) => l.replace('\t', ' '))).toEqual(items);

      // --filter passing every opcode: every RoCEv2 packet and FPDU, nothing else.
      const filtered = lines(run({ filter: `opcode=${EVERY_OPCODE}` }));
      expect(counts(filtered.pop())).toBe(treeSummary);
      expect(
        filtered.map((l) =>
          l
            .split(' ')
            .filter((_, i) => i === 0 || i === 5)
            .join(' '),
        ),
      ).toEqual(packets);
    });
});
