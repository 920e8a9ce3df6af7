/**
 * `ulp --link`'s host-side pieces without a guest: cutting a link capture per workload at
 * guest A's marker datagrams, the RoCEv2 rules of the wire judgement (PSN order, Reads
 * within the CM's responder resources, Send with Invalidate STags), and merging the two
 * guests' entries of one workload.
 */
import { describe, expect, it } from 'vitest';
import { buildUdpFrame } from '../../../src/codec/net/build.js';
import { LinkType } from '../../../src/codec/pcap/linktype.js';
import { encodePcap } from '../../../src/codec/pcap/pcap.js';
import { buildRoceFrame } from '../../../src/codec/roce/frame.js';
import type { ExtensionHeaders } from '../../../src/codec/roce/headers.js';
import { bthOpcodeByName } from '../../../src/codec/roce/opcodes.js';
import { mergeSides } from '../../../src/ulp/link-run.js';
import { linkMarker, splitLinkCapture, ULP_PAIR_ADDRESSES } from '../../../src/ulp/link-split.js';
import { cmResources, psnDistance } from '../../../src/ulp/roce-rules.js';
import { judgeCapture } from '../../../src/ulp/wire-judge.js';
import type { WorkloadResult } from '../../../src/ulp/workloads.js';

const A = ULP_PAIR_ADDRESSES.rxe0.A;
const B = ULP_PAIR_ADDRESSES.rxe0.B;

function pcap(frames: readonly Uint8Array[]): Uint8Array {
  return encodePcap(
    { linkType: LinkType.ETHERNET },
    frames.map((data, i) => ({ timestampNs: 1_764_000_000_123_456_789n + BigInt(i), data })),
  );
}

function marker(text: string): Uint8Array {
  return buildUdpFrame(
    { sourceIp: A, destinationIp: B },
    { sourcePort: 40_001, destinationPort: 9 },
    new TextEncoder().encode(text),
  );
}

function roce(
  from: string,
  to: string,
  opcode: string,
  qp: number,
  psn: number,
  headers: ExtensionHeaders = {},
  payload = new Uint8Array(0),
): Uint8Array {
  return buildRoceFrame(
    { sourceIp: from, destinationIp: to },
    { bth: { opcode: bthOpcodeByName(opcode), destinationQp: qp, psn }, headers, payload },
  );
}

/** A CM REP (QP1 MAD) from `from`: its local QPN and responder resources. */
function cmRep(from: string, to: string, qpn: number, responderResources: number): Uint8Array {
  const mad = new Uint8Array(256);
  mad[0] = 1;
  mad[1] = 0x07; // the CM class
  mad[2] = 2;
  mad[3] = 0x03; // Send
  mad[17] = 0x13; // REP
  mad[24 + 12] = (qpn >> 16) & 0xff;
  mad[24 + 13] = (qpn >> 8) & 0xff;
  mad[24 + 14] = qpn & 0xff;
  mad[24 + 24] = responderResources;
  return roce(
    from,
    to,
    'UD_SEND_ONLY',
    1,
    0x0a0b0c,
    { DETH: { qKey: 0x80010000, reserved: 0, sourceQp: 1 } },
    mad,
  );
}

const reth = (rKey: number, dmaLength: number) => ({
  RETH: { virtualAddress: 0x1122_3344_5566_7788n, rKey, dmaLength },
});

describe('splitLinkCapture', () => {
  it("cuts the link's capture per workload at the begin and end markers, leaving the markers out", () => {
    const before = roce(A, B, 'RC_SEND_ONLY', 0x11, 1);
    const frames = [
      before,
      ...[1, 2, 3].map(() => marker(linkMarker('begin', 'nvme', 'rxe0'))),
      roce(A, B, 'RC_SEND_ONLY', 0x11, 2),
      roce(B, A, 'RC_ACKNOWLEDGE', 0x22, 2, { AETH: { syndrome: 0, msn: 1 } }),
      ...[1, 2, 3].map(() => marker(linkMarker('end', 'nvme', 'rxe0'))),
      ...[1, 2, 3].map(() => marker(linkMarker('begin', 'nfs', 'rxe0'))),
      roce(A, B, 'RC_SEND_ONLY', 0x13, 7),
    ];
    const cuts = splitLinkCapture(pcap(frames));
    expect([...cuts.keys()]).toEqual(['nvme-rxe0', 'nfs-rxe0']);
    expect(cuts.get('nvme-rxe0')).toMatchObject({ frames: 2, ended: true });
    // No end marker: the cut runs to the end of the capture.
    expect(cuts.get('nfs-rxe0')).toMatchObject({ frames: 1, ended: false });
    const nvme = judgeCapture(cuts.get('nvme-rxe0')?.pcap ?? new Uint8Array());
    expect(nvme).toMatchObject({ frames: 2, messages: 2, undecodable: [], violations: [] });
    expect(nvme.opcodes).toEqual({ RC_SEND_ONLY: 1, RC_ACKNOWLEDGE: 1 });
    expect(nvme.icrc).toEqual({ valid: 2, invalid: 0, unchecked: 0 });
  });

  it('refuses a file that is no capture', () => {
    expect(() => splitLinkCapture(new Uint8Array([1, 2, 3, 4, 5]))).toThrow(/the link capture/);
  });
});

describe('the RoCEv2 rules of a ULP capture', () => {
  it('reads the QPN and responder resources of a CM REQ and REP (ibta_vol1_c12.h offsets)', () => {
    const rep = cmRep(B, A, 0x0012_3456, 3).subarray(14 + 20 + 8 + 12 + 8, -4);
    expect(cmResources(rep)).toEqual({ kind: 'REP', qpn: 0x12_3456, responderResources: 3 });
    const req = new Uint8Array(256);
    req[1] = 0x07;
    req[17] = 0x10;
    req.set([0x00, 0xab, 0xcd, 7], 24 + 32);
    expect(cmResources(req)).toEqual({ kind: 'REQ', qpn: 0xabcd, responderResources: 7 });
    expect(cmResources(new Uint8Array(256))).toBeUndefined();
  });

  it('measures PSN distance in the 24-bit space, across the wrap', () => {
    expect(psnDistance(2, 0xff_fffe)).toBe(4);
    expect(psnDistance(0xff_fffe, 2)).toBe(-4);
  });

  it('a PSN gap is a violation; a repeat is counted; after the relay a gap is its drop', () => {
    const frames = [
      roce(A, B, 'RC_SEND_ONLY', 0x11, 100),
      roce(A, B, 'RC_SEND_ONLY', 0x11, 101),
      roce(A, B, 'RC_SEND_ONLY', 0x11, 101),
      roce(A, B, 'RC_SEND_ONLY', 0x11, 103),
    ];
    const clean = judgeCapture(pcap(frames));
    expect(clean.violations).toEqual([
      {
        rule: 'psn-order',
        frame: 4,
        detail: `${A}>${B}/17: PSN 103, expected 102 (a gap never filled)`,
      },
    ]);
    expect(clean.roce).toMatchObject({ repeats: 1, gapsAfterRelay: 0 });
    // The sender goes back to the skipped PSN: lost before the capture, not skipped.
    const filled = judgeCapture(pcap([...frames, roce(A, B, 'RC_SEND_ONLY', 0x11, 102)]));
    expect(filled.violations).toEqual([]);
    expect(filled.roce).toMatchObject({ repeats: 2, gapsFilled: 1 });
    const relayed = judgeCapture(pcap(frames), { afterRelay: new Set([A]) });
    expect(relayed.violations).toEqual([]);
    expect(relayed.roce).toMatchObject({ repeats: 1, gapsAfterRelay: 1 });
  });

  it('a Read Request reserves a PSN per response: the next request may follow its responses', () => {
    const frames = [
      roce(A, B, 'RC_RDMA_READ_REQUEST', 0x11, 10, reth(0x1234_5601, 4096)),
      roce(A, B, 'RC_SEND_ONLY', 0x11, 14),
      roce(A, B, 'RC_SEND_ONLY', 0x11, 15),
    ];
    expect(judgeCapture(pcap(frames)).violations).toEqual([]);
  });

  it("Reads beyond the responder resources of the peer's CM REP are a violation", () => {
    const read = (psn: number) => roce(A, B, 'RC_RDMA_READ_REQUEST', 0x22, psn, reth(0x5501, 512));
    const frames = [
      cmRep(B, A, 0x22, 1),
      read(20),
      roce(
        B,
        A,
        'RC_RDMA_READ_RESPONSE_ONLY',
        0x11,
        20,
        { AETH: { syndrome: 0, msn: 1 } },
        new Uint8Array(512),
      ),
      read(22),
      read(24),
    ];
    const w = judgeCapture(pcap(frames));
    expect(w.violations).toEqual([
      {
        rule: 'read-beyond-ird',
        frame: 5,
        detail: `${A}>${B}/34: 2 Reads outstanding, the responder's resources in its CM message are 1`,
      },
    ]);
    expect(w.roce).toMatchObject({ cmMessages: 1, maxOutstandingReads: 2 });
  });

  it('Send with Invalidate must name an R_Key its sender used; a repeat is not judged twice', () => {
    const write = roce(
      B,
      A,
      'RC_RDMA_WRITE_ONLY',
      0x11,
      50,
      reth(0x0abc_de01, 4),
      new Uint8Array(4),
    );
    const sendInv = (psn: number, rKey: number) =>
      roce(B, A, 'RC_SEND_ONLY_WITH_INVALIDATE', 0x11, psn, { IETH: { rKey } }, new Uint8Array(4));
    const ok = judgeCapture(pcap([write, sendInv(51, 0x0abc_de01), sendInv(51, 0x0abc_de01)]));
    expect(ok.violations).toEqual([]);
    const bad = judgeCapture(pcap([write, sendInv(51, 0x0abc_df01)]));
    // Packets that crossed the fault relay before the capture: their STags are not judged.
    const relayed = judgeCapture(pcap([write, sendInv(51, 0x0abc_df01)]), {
      afterRelay: new Set([B]),
    });
    expect(relayed.violations).toEqual([]);
    expect(bad.violations).toEqual([
      {
        rule: 'invalidate-unused-stag',
        frame: 2,
        detail:
          'Send with Invalidate names STag 0x0abcdf01, never used by its sender on this connection',
      },
    ]);
    const reuse = judgeCapture(
      pcap([
        write,
        sendInv(51, 0x0abc_de01),
        roce(B, A, 'RC_RDMA_WRITE_ONLY', 0x11, 52, reth(0x0abc_de01, 4), new Uint8Array(4)),
      ]),
    );
    expect(reuse.violations.map((v) => v.rule)).toEqual(['stag-after-invalidate']);
  });
});

describe('mergeSides', () => {
  const base: WorkloadResult = {
    workload: 'nfs',
    device: 'siw0',
    kernel: '6.1.0-44-amd64',
    outcome: 'passed',
    facts: { verified: 'yes', sha256: 'ab12' },
    dmesgTrouble: [],
    seconds: 9.5,
    wire: { notCaptured: 'captured on the link by the host' },
  };
  const sides = {
    initiator: { kernel: '6.1.0-44-amd64', siw: 'stock' },
    target: { kernel: '7.3.4-amd64', siw: 'rfc7306' },
  };

  it("passes when both sides pass; the target's facts are prefixed, both kernels named", () => {
    const b = { ...base, kernel: '7.3.4-amd64', facts: { 'server-verified': 'yes' } };
    const m = mergeSides(base, b, { notCaptured: 'x' }, sides);
    expect(m).toMatchObject({ outcome: 'passed', kernel: '6.1.0-44-amd64 / 7.3.4-amd64' });
    expect(m.facts).toEqual({ verified: 'yes', sha256: 'ab12', 'target-server-verified': 'yes' });
    expect(
      mergeSides(base, { ...b, facts: { 'target-served': 'yes' } }, { notCaptured: 'x' }, sides)
        .facts['target-served'],
    ).toBe('yes');
    expect(m.reason).toBeUndefined();
    expect(m.link).toEqual(sides);
  });

  it("fails with the target's reason and its dmesg when the target fails", () => {
    const b: WorkloadResult = {
      ...base,
      outcome: 'failed',
      reason: "the server's copy differs from what the client wrote",
      dmesgTrouble: ['BUG: kernel NULL pointer dereference'],
    };
    const m = mergeSides(base, b, { notCaptured: 'x' }, sides);
    expect(m.outcome).toBe('failed');
    expect(m.reason).toBe("target (B): the server's copy differs from what the client wrote");
    expect(m.dmesgTrouble).toEqual(['[B] BUG: kernel NULL pointer dereference']);
    const skipped = { ...base, outcome: 'not-run' as const, reason: 'not across the link yet' };
    expect(mergeSides(skipped, skipped, { notCaptured: 'x' }, sides).reason).toBe(
      'not across the link yet',
    );
    expect(mergeSides(base, undefined, { notCaptured: 'x' }, sides)).toMatchObject({
      outcome: 'failed',
      reason: 'target (B): no entry',
    });
  });
});
