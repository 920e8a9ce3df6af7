import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { collectEnvironment, environmentFor } from '../../../src/interop/environment.js';
import { writeReport } from '../../../src/interop/report-files.js';
import { runScenario, type ScenarioResult } from '../../../src/interop/runner.js';
import { SCENARIOS } from '../../../src/interop/scenarios.js';
import { TSHARK_AVAILABLE } from '../../helpers/tshark.js';
import { diffWithTshark } from '../../helpers/tshark-diff.js';
import { comparePluginWithDecode, writePlugin } from '../../helpers/wireshark-plugin.js';

// The interop suite as tests: each scenario's program on its real device must match the
// engine field by field, or differ only in ways recorded (with their source) in
// src/judge/records/ for this provider and kernel.
const env = collectEnvironment([]);

// The run's report (results.json, report.md, report.html, pcaps) goes into the directory
// the guest shares with the host, where scripts/test.sh's browser test opens report.html.
const share = process.env.RDMA_INTEROP_SHARE;
const results: ScenarioResult[] = [];
afterAll(() => {
  if (share === undefined || results.length === 0) return;
  const devices = [...new Set(results.map((r) => r.scenario.device))];
  writeReport(join(share, 'interop-report'), results, collectEnvironment(devices), false);
});

/** The stock siw0's captures of this run, for the Wireshark plugin check below. */
const siwCaptures: Uint8Array[] = [];

describe('interop: engine vs kernel', () => {
  // The captures of the scenarios that capture the wire (siw0), for the tshark diff below.
  const dir = mkdtempSync(join(tmpdir(), 'interop-suite-'));
  const captures: string[] = [];
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  for (const scenario of SCENARIOS) {
    it(`${scenario.id} (${scenario.device}, ${scenario.title})`, async () => {
      const result = await runScenario(scenario, environmentFor(env, scenario.device));
      results.push(result);
      if (result.kernel?.pcap !== undefined) {
        const file = join(dir, `${scenario.id}.pcap`);
        writeFileSync(file, result.kernel.pcap);
        captures.push(file);
      }
      if (scenario.device === 'siw0' && result.kernel?.pcap !== undefined)
        siwCaptures.push(result.kernel.pcap);
      expect(result.error).toBeUndefined();
      expect({
        verdict: result.verdict,
        unexplained: result.differences.filter((d) => d.explainedBy === undefined),
        stale: result.stale.map((s) => s.id),
      }).toEqual({ verdict: expect.stringMatching(/^(match|known)$/), unexplained: [], stale: [] });
    });
  }

  // `decode --fields` with tshark's names prints what `tshark -T fields` prints for every
  // capture of the suite (the stock siw's MPA without CRC), every field of the table.
  it.skipIf(!TSHARK_AVAILABLE)(
    "decode --fields prints what tshark -T fields prints for every scenario's capture",
    () => {
      expect(captures.length).toBeGreaterThan(0);
      const cli = join(process.env.RDMA_INTEROP_ROOT ?? process.cwd(), 'dist/cli/main.js');
      const diffs = diffWithTshark(captures, dir, cli);
      for (const d of diffs) expect(d.ours, d.merged).toBe(d.theirs);
      console.log(
        `tshark diff, suite: ${captures.length} captures in ${diffs.length} merges, ${diffs.reduce((n, d) => n + d.frames, 0)} frames, ${diffs.reduce((n, d) => n + d.values, 0)} values`,
      );
    },
    300_000,
  );

  // The Wireshark plugin (src/wireshark/, docs/wireshark.md) on the stock siw's captures,
  // Terminates included (stock siw answers RFC 7306 messages with Terminate): with
  // Wireshark's own DDP/RDMAP dissector off, every field it shows equals what
  // `decode --fields` prints, frame by frame. One tshark run over the merged captures.
  it.skipIf(!TSHARK_AVAILABLE)(
    "the Wireshark plugin shows the stock siw's captures as decode --fields does",
    () => {
      const dir = mkdtempSync(join(tmpdir(), 'suite-wireshark-'));
      try {
        const files = siwCaptures.map((bytes, i) => {
          const file = join(dir, `siw-${i}.pcap`);
          writeFileSync(file, bytes);
          return file;
        });
        const merged = join(dir, 'merged.pcap');
        execFileSync('mergecap', ['-a', '-F', 'pcap', '-w', merged, ...files]);
        const r = comparePluginWithDecode(merged, writePlugin(dir), { wireshark: 'disabled' });
        process.stderr.write(
          `wireshark plugin: ${r.values} values in ${r.frames} frames of ${files.length} stock siw captures (${JSON.stringify(r.messages)})\n`,
        );
        expect(r.mismatches).toEqual([]);
        expect(r.messages.terminate ?? 0).toBeGreaterThan(0);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
    120_000,
  );
});
