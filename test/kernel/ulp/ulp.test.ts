/**
 * The kernel's own RDMA users (issue 35) in the kernel stage's guest (no boot of its own):
 * NVMe over Fabrics (nvmet-rdma target on a memory-backed null_blk, `nvme connect -t rdma`)
 * and NFS over RDMA (knfsd's RDMA listener, an NFSv4.1 mount with proto=rdma) on rxe0 and
 * siw0, each with its data verified (SHA-256 of what was written and read back), dmesg
 * free of warnings, hung tasks and I/O errors, and siw0's wire decoded and judged: every
 * frame decoded, MSNs in order, no Read beyond the IRD, every invalidation naming an STag
 * its sender used, none used after its invalidation. rxe's wire never reaches a netdev in
 * one guest (kernel-runtime.md): the result says so. The Debian tools come from
 * scripts/setup/ulp-packages.sh (run by scripts/setup.sh, which scripts/test.sh runs first).
 * `npm run ulp` runs the same on every kernel line with the report.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runWorkloadHere } from '../../../src/ulp/guest-run.js';
import type { UlpDeviceName, UlpWorkloadName } from '../../../src/ulp/workloads.js';
import { diffWithTshark } from '../../helpers/tshark-diff.js';

const SIZES = { mib: 8, files: 64 };
const dir = mkdtempSync(join(tmpdir(), 'ulp-kernel-'));
const captures: string[] = [];

describe("the kernel's RDMA users (NVMe-oF, NFS over RDMA) on this kernel", () => {
  for (const workload of ['nvme', 'nfs'] as const satisfies readonly UlpWorkloadName[])
    for (const device of ['siw0', 'rxe0'] as const satisfies readonly UlpDeviceName[])
      it(`${workload} on ${device}: data verified, dmesg clean, wire judged`, async () => {
        const r = await runWorkloadHere(workload, device, {
          kernel: 'this',
          sizes: SIZES,
          pcapDir: dir,
        });
        if (r.pcap !== undefined) captures.push(join(dir, r.pcap));
        process.stderr.write(
          `ulp ${workload} ${device}: ${r.outcome} in ${r.seconds} s${r.reason ? ` (${r.reason})` : ''}; wire: ${
            'notCaptured' in r.wire
              ? r.wire.notCaptured.split(':')[0]
              : `${r.wire.frames} frames, ${r.wire.messages} messages, ${JSON.stringify(r.wire.opcodes)}`
          }\n`,
        );
        expect(r.reason).toBeUndefined();
        expect(r.outcome).toBe('passed');
        expect(r.facts.verified).toBe('yes');
        expect(r.facts.sha256).toMatch(/^[0-9a-f]{64}$/);
        expect(r.dmesgTrouble).toEqual([]);
        if (device === 'rxe0') {
          expect('notCaptured' in r.wire).toBe(true);
          return;
        }
        if ('notCaptured' in r.wire)
          throw new Error(`siw0's wire was not captured: ${r.wire.notCaptured}`);
        expect(r.wire.undecodable).toEqual([]);
        expect(r.wire.violations).toEqual([]);
        expect(r.wire.terminates).toEqual([]);
        // The data crossed this wire: tagged traffic and Sends with Invalidate both ways.
        expect(r.wire.messages).toBeGreaterThan(100);
        expect(r.wire.opcodes['rdma-write'] ?? 0).toBeGreaterThan(0);
        expect(r.wire.opcodes['send-invalidate'] ?? 0).toBeGreaterThan(0);
        expect(r.wire.mpaCrc.invalid).toBe(0);
      }, 300_000);

  // `decode --fields` prints what `tshark -T fields` prints, frame by frame, for siw0's
  // NVMe and NFS captures (one tshark run over the merged files).
  it('decode agrees with tshark on the ULP captures', () => {
    expect(captures).toHaveLength(2);
    const cli = join(process.env.RDMA_INTEROP_ROOT ?? process.cwd(), 'dist/cli/main.js');
    const diffs = diffWithTshark(captures, dir, cli);
    for (const d of diffs) expect(d.ours, d.merged).toBe(d.theirs);
    process.stderr.write(
      `ulp tshark diff: ${diffs.reduce((n, d) => n + d.frames, 0)} frames, ${diffs.reduce((n, d) => n + d.values, 0)} values agree\n`,
    );
  }, 300_000);
});
