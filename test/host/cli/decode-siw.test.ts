/**
 * `rdma-interop decode` on a real Soft-iWARP capture (test/fixtures/siw-rping.pcap, rping
 * over siw0, recorded by scripts/capture-siw.sh): every FPDU is found in the frame tshark
 * finds it in, with the same RDMAP opcode and ULPDU length, and nothing is left undecoded.
 */
import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { runDecode } from '../../../src/cli/commands/decode.js';
import { rdmapOpcodeOf } from '../../../src/codec/iwarp/opcodes.js';
import { TSHARK_AVAILABLE, tsharkColumns } from '../../helpers/tshark.js';

const FIXTURE = 'test/fixtures/siw-rping.pcap';

interface FpduJson {
  kind: string;
  frameIndex: number;
  fpdu?: { fpdu: { ulpduLength: number }; crcState: string; message: { kind: string } };
}

describe.skipIf(!existsSync(FIXTURE))('decode a real siw capture', () => {
  const r = runDecode(FIXTURE, { json: true });
  const doc = JSON.parse(r.stdout) as { items: FpduJson[] };
  const fpdus = doc.items.filter((i) => i.kind === 'fpdu');

  it('decodes the MPA exchange and every FPDU without problems', () => {
    expect(r.exitCode).toBe(0);
    expect(doc.items.filter((i) => i.kind === 'problem')).toEqual([]);
    expect(doc.items.filter((i) => i.kind === 'mpa-frame')).toHaveLength(2);
    expect(fpdus.map((f) => f.fpdu?.message.kind)).toEqual([
      'send',
      'rdma-read-request',
      'rdma-read-response',
      'send',
      'send',
      'rdma-write',
      'send',
    ]);
    // Upstream siw runs with MPA CRC off unless the peer asks (notes/kernel-runtime.md).
    expect(new Set(fpdus.map((f) => f.fpdu?.crcState))).toEqual(new Set(['not-in-use']));
  });

  it.skipIf(!TSHARK_AVAILABLE)('agrees with tshark on frames, opcodes and ULPDU lengths', () => {
    const rows = tsharkColumns(FIXTURE, [
      'frame.number',
      'iwarp_rdma.opcode',
      'iwarp_mpa.ulpdulength',
    ])
      .filter((row) => (row['iwarp_rdma.opcode'] ?? []).length > 0)
      .map((row) => [
        Number(row['frame.number']?.[0]),
        Number(row['iwarp_rdma.opcode']?.[0]),
        Number(row['iwarp_mpa.ulpdulength']?.[0]),
      ]);
    const ours = fpdus.map((f) => [
      f.frameIndex + 1,
      rdmapOpcodeOf(f.fpdu!.message.kind as Parameters<typeof rdmapOpcodeOf>[0]).opcode,
      f.fpdu!.fpdu.ulpduLength,
    ]);
    expect(ours).toEqual(rows);
    expect(rows).toHaveLength(7);
  });
});
