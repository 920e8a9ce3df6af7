/**
 * The ULP wire judge (src/ulp/wire-judge.ts) on built captures: an NVMe-like exchange that
 * keeps every rule, and one that breaks each rule once (MSN gap, a Read beyond the IRD, an
 * invalidation of an STag never used, an STag used after its invalidation, a Terminate);
 * plus the script-output parser and the report files.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  makeRdmaWrite,
  makeReadRequest,
  makeReadResponse,
  makeSend,
  makeTerminate,
} from '../../../src/codec/iwarp/build.js';
import type { RdmapMessage } from '../../../src/codec/iwarp/messages.js';
import { makeMpaFrame } from '../../../src/codec/iwarp/mpa-frames.js';
import { encodeMpaStream } from '../../../src/codec/iwarp/stream.js';
import { LinkType } from '../../../src/codec/pcap/linktype.js';
import { encodePcap } from '../../../src/codec/pcap/pcap.js';
import { ulpMarkdown, ulpResultsDocument, writeUlpReport } from '../../../src/ulp/report.js';
import { judgeCapture, sizeClass } from '../../../src/ulp/wire-judge.js';
import { parseScriptOutput, throughput, type WorkloadResult } from '../../../src/ulp/workloads.js';
import { makeTempDir, TcpConversation } from '../../helpers/pcap.js';

const IRD = 2;

/** One iWARP connection: the host (client) and the target (server), MPA v2 with IRD/ORD. */
function capture(
  toTarget: RdmapMessage[],
  toHost: RdmapMessage[],
  order: (frames: Uint8Array[]) => Uint8Array[] = (f) => f,
): Uint8Array {
  const enhancedParameters = {
    ird: IRD,
    ord: IRD,
    peerToPeer: true,
    sendRtr: false,
    writeRtr: false,
    readRtr: true,
  };
  const request = makeMpaFrame('mpa-request', { revision: 2, enhancedParameters });
  const reply = makeMpaFrame('mpa-reply', { revision: 2, enhancedParameters });
  const client = encodeMpaStream(request, toTarget, { peerFrame: reply });
  const server = encodeMpaStream(reply, toHost, { peerFrame: request });
  const tcp = new TcpConversation({
    clientIp: '198.51.100.1',
    serverIp: '198.51.100.1',
    clientPort: 53938,
    serverPort: 4420,
  });
  tcp.handshake();
  tcp.send('client', client.frame);
  tcp.send('server', server.frame);
  // The host's messages first, then the target's: enough for per-direction rules, and
  // the target's Read Responses come back after its Read Requests below.
  for (const f of client.fpdus) tcp.send('client', f);
  for (const f of server.fpdus) tcp.send('server', f);
  return encodePcap(
    { linkType: LinkType.ETHERNET, precision: 'nano' },
    order(tcp.frames()).map((data, i) => ({
      timestampNs: 1_764_000_000_000_000_000n + BigInt(i),
      data,
    })),
  );
}

const bytes = (n: number): Uint8Array => new Uint8Array(n).fill(0xa5);
const HOST_STAG = 0x4763e701;

describe('the ULP wire judge', () => {
  it('an NVMe-like exchange: every frame decoded, counted per opcode and size, no violation', () => {
    // Host: a command capsule, then the Read Response the target's Read asks for.
    const toTarget = [
      makeSend({ messageSequenceNumber: 1, payload: bytes(64) }),
      makeReadResponse({ stag: 0x0000a1b2, taggedOffset: 0x1000n, payload: bytes(4096) }),
    ];
    // Target: reads the host's buffer, then answers with Send with Invalidate of that STag.
    const toHost = [
      makeReadRequest({
        messageSequenceNumber: 1,
        sinkSTag: 0x0000a1b2,
        sinkTaggedOffset: 0x1000n,
        readSize: 4096,
        sourceSTag: HOST_STAG,
        sourceTaggedOffset: 0xffff888008c51000n,
      }),
      makeRdmaWrite({ stag: 0x11d2c3b4, taggedOffset: 0x2000n, payload: bytes(600) }),
      makeSend({
        kind: 'send-invalidate',
        messageSequenceNumber: 1,
        payload: bytes(16),
        invalidateSTag: HOST_STAG,
      }),
    ];
    const j = judgeCapture(capture(toTarget, toHost));
    expect(j.undecodable).toEqual([]);
    expect(j.violations).toEqual([]);
    expect(j.connections).toBe(1);
    expect(j.mpaFrames).toBe(2);
    expect(j.messages).toBe(5);
    expect(j.opcodes).toEqual({
      send: 1,
      'rdma-read-response': 1,
      'rdma-read-request': 1,
      'rdma-write': 1,
      'send-invalidate': 1,
    });
    expect(j.sizes['rdma-read-response']).toEqual({ '513-4096': 1 });
    expect(j.sizes['rdma-write']).toEqual({ '513-4096': 1 });
    expect(j.mpaCrc).toEqual({ valid: 0, invalid: 0, notInUse: 5 });
    expect(j.terminates).toEqual([]);
  });

  it('FPDUs are judged in TCP sequence order: a segment that arrives late breaks no MSN', () => {
    const sends = [1, 2, 3].map((msn) =>
      makeSend({ messageSequenceNumber: msn, payload: bytes(32) }),
    );
    // The last two segments swapped, as a segment lost before the capture point and
    // retransmitted after the next one shows up.
    const late = capture([], sends, (f) => [...f.slice(0, -2), f.at(-1), f.at(-2)] as Uint8Array[]);
    const j = judgeCapture(late);
    expect(j.undecodable).toEqual([]);
    expect(j.messages).toBe(3);
    expect(j.violations).toEqual([]);
    // The same MSNs in stream order but sent 1, 3, 2: a real gap, still found.
    const wrong = [1, 3, 2].map((msn) =>
      makeSend({ messageSequenceNumber: msn, payload: bytes(32) }),
    );
    expect(judgeCapture(capture([], wrong)).violations.map((v) => v.detail)).toEqual([
      'queue 0: MSN 3, expected 2',
      'queue 0: MSN 2, expected 4',
    ]);
  });

  it('each broken rule is reported once, at its frame', () => {
    const read = (msn: number) =>
      makeReadRequest({
        messageSequenceNumber: msn,
        sinkSTag: 0x0000a1b2,
        sinkTaggedOffset: 0n,
        readSize: 512,
        sourceSTag: HOST_STAG,
        sourceTaggedOffset: 0x10n,
      });
    const toHost = [
      read(1),
      read(2),
      read(3), // a third outstanding Read: beyond the host's IRD of 2
      makeSend({
        kind: 'send-invalidate',
        messageSequenceNumber: 1,
        payload: bytes(8),
        invalidateSTag: HOST_STAG,
      }),
      makeRdmaWrite({ stag: HOST_STAG, taggedOffset: 0n, payload: bytes(8) }), // after invalidation
      makeSend({
        kind: 'send-invalidate',
        messageSequenceNumber: 2,
        payload: bytes(8),
        invalidateSTag: 0x0bad5eed,
      }),
      makeSend({ messageSequenceNumber: 4, payload: bytes(8) }), // MSN 3 missing
      makeTerminate({ messageSequenceNumber: 1, layer: 1, errorType: 2, errorCode: 3 }),
    ];
    const j = judgeCapture(capture([], toHost));
    expect(j.undecodable).toEqual([]);
    expect(j.violations.map((v) => v.rule).sort()).toEqual([
      'invalidate-unused-stag',
      'msn-order',
      'read-beyond-ird',
      'stag-after-invalidate',
    ]);
    expect(j.violations.find((v) => v.rule === 'msn-order')?.detail).toBe(
      'queue 0: MSN 4, expected 3',
    );
    expect(j.terminates).toHaveLength(1);
    expect(j.terminates[0]).toMatchObject({ layer: 1, errorType: 2, errorCode: 3 });
  });

  it('an invalidated STag back after its MR was re-registered with other keys is no violation', () => {
    const write = (stag: number) => makeRdmaWrite({ stag, taggedOffset: 0n, payload: bytes(8) });
    const invalidate = (msn: number, stag: number) =>
      makeSend({
        kind: 'send-invalidate',
        messageSequenceNumber: msn,
        payload: bytes(8),
        invalidateSTag: stag,
      });
    // Index 0x497b9d, keys 0x01 then 0x02 then 0x01 again (the 8-bit key wrapped).
    const toHost = [
      write(0x497b9d01),
      invalidate(1, 0x497b9d01),
      write(0x497b9d02),
      invalidate(2, 0x497b9d02),
      write(0x497b9d01),
      invalidate(3, 0x497b9d01),
    ];
    expect(judgeCapture(capture([], toHost)).violations).toEqual([]);
  });

  it('a file that is no capture is one undecodable entry with the reason', () => {
    const j = judgeCapture(Uint8Array.of(1, 2, 3, 4));
    expect(j.undecodable).toHaveLength(1);
    expect(j.undecodable[0]?.why).toMatch(/^the capture file: /);
  });

  it('size classes', () => {
    expect([0, 1, 64, 65, 4096, 4097, 65536, 65537].map(sizeClass)).toEqual([
      '0',
      '1-64',
      '1-64',
      '65-512',
      '513-4096',
      '4097-65536',
      '4097-65536',
      '>65536',
    ]);
  });
});

describe('workload results and the report', () => {
  const stdout =
    'ulp target nqn.x on rdma 198.51.100.1:4420\nulp large-bytes 8388608\nulp large-write-seconds 0.258\nnoise\nulp verified yes\n';
  const result: WorkloadResult = {
    workload: 'nvme',
    device: 'siw0',
    kernel: '6.1.0-57-amd64',
    outcome: 'passed',
    facts: parseScriptOutput(stdout),
    dmesgTrouble: [],
    seconds: 3.7,
    wire: judgeCapture(capture([makeSend({ messageSequenceNumber: 1, payload: bytes(64) })], [])),
    pcap: '6.1-nvme-siw0.pcap',
  };
  const notRun: WorkloadResult = {
    workload: 'iser',
    device: 'rxe0',
    kernel: '6.1.0-57-amd64',
    outcome: 'not-run',
    reason: 'not implemented yet',
    facts: {},
    dmesgTrouble: [],
    seconds: 0,
    wire: { notCaptured: 'not run' },
  };

  it('parses the scripts’ lines and the throughput', () => {
    expect(result.facts).toEqual({
      target: 'nqn.x on rdma 198.51.100.1:4420',
      'large-bytes': '8388608',
      'large-write-seconds': '0.258',
      verified: 'yes',
    });
    expect(throughput(result.facts, 'large-write')).toBe(32.5);
    expect(throughput(result.facts, 'large-read')).toBeUndefined();
  });

  it('writes results.json with a workloads array, junit.xml, report.md and report.html', () => {
    const runs = [{ line: '6.1', results: [result, notRun], guestSeconds: 40.2 }];
    const doc = ulpResultsDocument(runs) as {
      workloads: unknown[];
      totals: Record<string, number>;
    };
    expect(doc.workloads).toHaveLength(2);
    expect(doc.totals).toMatchObject({ workloads: 2, passed: 1, failed: 0, notRun: 1 });
    const dir = makeTempDir();
    writeUlpReport(dir, runs);
    const junit = readFileSync(join(dir, 'junit.xml'), 'utf8');
    expect(junit).toContain('name="nvme"');
    expect(junit).toMatch(/<skipped/);
    expect(readFileSync(join(dir, 'report.html'), 'utf8')).toContain('6.1-nvme-siw0.pcap');
    const md = ulpMarkdown(runs);
    expect(md).toContain('| 6.1 | 6.1.0-57-amd64 | nvme | siw0 | passed | 3.7 | write 32.5 MB/s |');
    expect(md).toContain('| iser | rxe0 | not-run |');
  });
});
