import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCENARIOS } from '../../../src/interop/scenarios.js';
import { usesRfc7306 } from '../../../src/interop/siw-variant.js';
import { loadedSiwVariant } from '../../../src/runtime/siw-module.js';
import { TSHARK_AVAILABLE } from '../../helpers/tshark.js';
import { diffWithTshark, PRINTED_TSHARK_FIELDS } from '../../helpers/tshark-diff.js';
import { comparePluginWithDecode, writePlugin } from '../../helpers/wireshark-plugin.js';

// The suite's siw0 scenarios that post RFC 7306 operations, run a second time on the
// patched siw (`run --siw rfc7306`: the CLI switches siw0 to the patched module and runs
// the scenarios in a child process that loads the patched libsiw). Each must match the
// engine field by field (verbs side and the codec-decoded capture), or differ only as the
// records for provider `siw+rfc7306` say (src/judge/records/).

interface ScenarioEntry {
  readonly id: string;
  readonly verdict: string;
  readonly differences: readonly { field: string; explainedBy: string | null }[];
  readonly stale: readonly string[];
  readonly error?: string;
  readonly pcap?: string;
}
interface Results {
  readonly environment: { readonly devices: readonly { name: string; provider: string }[] };
  readonly scenarios: readonly ScenarioEntry[];
}

const root = process.env.RDMA_INTEROP_ROOT ?? process.cwd();
/**
 * The two concurrency scenarios (4 x 1000 and 3 x 1000 FetchAdds) take 38 s and 40 s of
 * the pass under TCG at no load, twice that at load 10, and matched in every manual pass
 * (docs/siw-rfc7306.md); CI leaves them out to stay inside its time budget.
 */
const IN_CI = '!(siw-concurrent-*)';
const patched = SCENARIOS.filter(
  (s) => s.device === 'siw0' && usesRfc7306(s) && !s.id.startsWith('siw-concurrent-'),
);
/** The scenarios CI leaves out: each a visible skip, listed in test/expected-skips.json. */
const leftOut = SCENARIOS.filter(
  (s) => s.device === 'siw0' && usesRfc7306(s) && s.id.startsWith('siw-concurrent-'),
);

describe('patched siw0 (siw+rfc7306): the suite RFC 7306 scenarios against the engine', () => {
  const dir = mkdtempSync(join(tmpdir(), 'siw-rfc7306-suite-'));
  let results: Results;
  let status = 0;
  beforeAll(() => {
    try {
      execFileSync(
        process.execPath,
        [
          join(root, 'dist/cli/main.js'),
          'run',
          '--runtime',
          'host',
          '--siw',
          'rfc7306',
          '--scenario',
          IN_CI,
          '--report',
          join(dir, 'report'),
        ],
        { stdio: ['ignore', 'ignore', 'inherit'], timeout: 600_000 },
      );
    } catch (error) {
      status = (error as { status?: number }).status ?? -1;
    }
    results = JSON.parse(readFileSync(join(dir, 'report', 'results.json'), 'utf8')) as Results;
  }, 620_000);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('ran on the patched provider, exited 0, and siw0 is back on the stock module', () => {
    expect(results.environment.devices.find((d) => d.name === 'siw0')?.provider).toBe(
      'siw+rfc7306',
    );
    expect(status).toBe(0);
    expect(loadedSiwVariant()).toBe('stock');
    expect(results.scenarios.map((s) => s.id)).toEqual(patched.map((s) => s.id));
  });

  // tshark's own decoding of the patched siw's RFC 7306 messages (Wireshark's iwarp_rdma
  // dissector knows the Atomic Request/Response fields, RFC 7306 §5.2) against the codec's,
  // on the pass's own captures: `decode --header --fields <every tshark field of the table>`
  // must print the text `tshark -T fields -E header=y -e ...` prints, frame for frame (no
  // row left out, tshark's formats). Four captures: FetchAdd, CmpSwap hit and miss (its
  // add_* / swap_* naming follows the AOpCode), and the misaligned Atomic's Terminate
  // exchange, concatenated and read by one tshark run (test/helpers/tshark-diff.ts).
  const TSHARK_CHECKED = [
    'siw-fetch-add',
    'siw-cmp-swap-match',
    'siw-cmp-swap-mismatch',
    'siw-misaligned',
  ];
  it.skipIf(!TSHARK_AVAILABLE)(
    `decode --fields prints what tshark -T fields prints for the patched siw's captures (${TSHARK_CHECKED.join(', ')})`,
    () => {
      const pcaps = TSHARK_CHECKED.map((id) =>
        join(dir, 'report', results.scenarios.find((s) => s.id === id)?.pcap ?? '-'),
      );
      const diffs = diffWithTshark(pcaps, dir, join(root, 'dist/cli/main.js'));
      for (const d of diffs) expect(d.ours).toBe(d.theirs);
      // Each capture's RDMAP frames: at least a request and its answer (tshark's opcodes).
      const opcodeColumn = PRINTED_TSHARK_FIELDS.indexOf('iwarp_rdma.opcode');
      const rdmapFrames = diffs
        .flatMap((d) => d.theirs.trimEnd().split('\n').slice(1))
        .filter((row) => (row.split('\t')[opcodeColumn] ?? '') !== '').length;
      expect(rdmapFrames).toBeGreaterThanOrEqual(2 * TSHARK_CHECKED.length);
      console.log(
        `tshark diff, patched siw: ${diffs.reduce((n, d) => n + d.frames, 0)} frames, ${PRINTED_TSHARK_FIELDS.length} fields, ${diffs.reduce((n, d) => n + d.values, 0)} values`,
      );
    },
    120_000,
  );

  // The Wireshark plugin generated from the codec's tables (src/wireshark/, docs/wireshark.md)
  // on every capture of the pass: with Wireshark's own DDP/RDMAP dissector off, every field
  // the plugin shows (DDP, RDMAP, the RFC 7306 headers, the Terminate) equals what
  // `decode --fields` prints, frame by frame. One tshark run over the merged captures (its
  // start-up is most of the 15 s this takes under TCG).
  it.skipIf(!TSHARK_AVAILABLE)(
    "the Wireshark plugin shows the pass's captures as decode --fields does",
    () => {
      const pcaps = results.scenarios
        .filter((s) => s.pcap !== undefined)
        .map((s) => join(dir, 'report', s.pcap!));
      const merged = join(dir, 'plugin-checked.pcap');
      execFileSync('mergecap', ['-a', '-F', 'pcap', '-w', merged, ...pcaps]);
      const r = comparePluginWithDecode(merged, writePlugin(dir), { wireshark: 'disabled' });
      process.stderr.write(
        `wireshark plugin: ${r.values} values in ${r.frames} frames of ${pcaps.length} captures\n`,
      );
      expect(r.mismatches).toEqual([]);
      expect(r.frames).toBeGreaterThanOrEqual(pcaps.length);
    },
    120_000,
  );

  for (const scenario of leftOut)
    it.skip(`${scenario.id} (${scenario.title}) on siw+rfc7306 [skipped: not in npm test: its time budget; run --siw rfc7306 --scenario '${scenario.id}' runs it]`, () => {});

  for (const scenario of patched) {
    it(`${scenario.id} (${scenario.title}) on siw+rfc7306`, () => {
      const entry = results.scenarios.find((s) => s.id === scenario.id);
      expect(entry?.error).toBeUndefined();
      expect({
        verdict: entry?.verdict,
        unexplained: entry?.differences.filter((d) => d.explainedBy === null),
        stale: entry?.stale,
      }).toEqual({ verdict: expect.stringMatching(/^(match|known)$/), unexplained: [], stale: [] });
      if (scenario.captureWire)
        expect(existsSync(join(dir, 'report', entry?.pcap ?? '-'))).toBe(true);
    });
  }
});
