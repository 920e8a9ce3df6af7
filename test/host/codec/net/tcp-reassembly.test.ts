import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeCaptureMessages } from '../../../../src/codec/capture/decode-capture.js';
import {
  reassembleTcp,
  type TcpSegmentInput,
} from '../../../../src/codec/capture/tcp-reassembly.js';
import { encodeMpaStream, makeMpaFrame, makeSend } from '../../../../src/codec/iwarp/index.js';
import { buildTcpFrame } from '../../../../src/codec/net/build.js';
import { TcpFlag } from '../../../../src/codec/net/tcp.js';
import { LinkType } from '../../../../src/codec/pcap/linktype.js';
import { encodePcap } from '../../../../src/codec/pcap/pcap.js';

const A = { source: '10.0.0.1', sourcePort: 40000, destination: '10.0.0.2', destinationPort: 4000 };
const B = { source: '10.0.0.2', sourcePort: 4000, destination: '10.0.0.1', destinationPort: 40000 };
const bytes = (...xs: number[]) => Uint8Array.from(xs);
let frame = 0;
const seg = (
  dir: typeof A,
  seq: number,
  payload: Uint8Array,
  flags: number = TcpFlag.ACK | TcpFlag.PSH,
): TcpSegmentInput => ({ ...dir, frameIndex: frame++, sequenceNumber: seq >>> 0, flags, payload });

describe('TCP reassembly', () => {
  it('uses the SYN to fix the ISN and reassembles both directions', () => {
    const [c] = reassembleTcp([
      seg(A, 0x1000, bytes(), TcpFlag.SYN),
      seg(B, 0x9000, bytes(), TcpFlag.SYN | TcpFlag.ACK),
      seg(A, 0x1001, bytes(1, 2, 3)),
      seg(B, 0x9001, bytes(9)),
      seg(A, 0x1004, bytes(4, 5)),
    ]);
    expect(c?.client).toEqual({ address: '10.0.0.1', port: 40000 });
    expect(c?.clientToServer.initialSequenceNumber).toBe(0x1000);
    expect(c?.clientToServer.runs).toHaveLength(1);
    expect(c?.clientToServer.runs[0]?.startSequence).toBe(0x1001);
    expect(c?.clientToServer.runs[0]?.bytes).toEqual(bytes(1, 2, 3, 4, 5));
    expect(c?.serverToClient.runs[0]?.bytes).toEqual(bytes(9));
    expect(c?.clientToServer.runs[0]?.pieces.map((p) => p.length)).toEqual([3, 2]);
  });

  it('orders out-of-order segments', () => {
    const [c] = reassembleTcp([
      seg(A, 100, bytes(1, 2)),
      seg(A, 104, bytes(5, 6)),
      seg(A, 102, bytes(3, 4)),
    ]);
    expect(c?.clientToServer.runs[0]?.bytes).toEqual(bytes(1, 2, 3, 4, 5, 6));
    expect(c?.clientToServer.gaps).toEqual([]);
  });

  it('drops retransmissions and counts them', () => {
    const [c] = reassembleTcp([
      seg(A, 100, bytes(1, 2, 3)),
      seg(A, 100, bytes(1, 2, 3)),
      seg(A, 103, bytes(4)),
    ]);
    expect(c?.clientToServer.runs[0]?.bytes).toEqual(bytes(1, 2, 3, 4));
    expect(c?.clientToServer.duplicateBytes).toBe(3);
    expect(c?.clientToServer.conflictingBytes).toBe(0);
  });

  it('keeps the first bytes of an overlap and counts conflicting ones', () => {
    const [c] = reassembleTcp([seg(A, 100, bytes(1, 2, 3, 4)), seg(A, 102, bytes(0x33, 4, 5, 6))]);
    expect(c?.clientToServer.runs[0]?.bytes).toEqual(bytes(1, 2, 3, 4, 5, 6));
    expect(c?.clientToServer.duplicateBytes).toBe(2);
    expect(c?.clientToServer.conflictingBytes).toBe(1);
  });

  it('reports gaps and splits the stream into runs', () => {
    const [c] = reassembleTcp([seg(A, 100, bytes(1, 2)), seg(A, 110, bytes(7, 8))]);
    expect(c?.clientToServer.runs.map((r) => [r.startSequence, [...r.bytes]])).toEqual([
      [100, [1, 2]],
      [110, [7, 8]],
    ]);
    expect(c?.clientToServer.gaps).toEqual([{ startSequence: 102, length: 8 }]);
  });

  it('follows 32-bit sequence wraparound', () => {
    const [c] = reassembleTcp([
      seg(A, 0xfffffffe, bytes(), TcpFlag.SYN),
      seg(A, 0x00000002, bytes(3, 4)),
      seg(A, 0xffffffff, bytes(0, 1, 2)),
    ]);
    expect(c?.clientToServer.runs).toHaveLength(1);
    expect(c?.clientToServer.runs[0]?.startSequence).toBe(0xffffffff);
    expect(c?.clientToServer.runs[0]?.bytes).toEqual(bytes(0, 1, 2, 3, 4));
  });

  it('without a SYN starts at the lowest sequence number seen', () => {
    const [c] = reassembleTcp([seg(A, 0x00000001, bytes(2)), seg(A, 0xffffffff, bytes(0, 1))]);
    expect(c?.clientToServer.runs[0]?.startSequence).toBe(0xffffffff);
    expect(c?.clientToServer.runs[0]?.bytes).toEqual(bytes(0, 1, 2));
  });

  // The stream core (tcp-stream.ts) of every capture decoder: overlapping bytes come from
  // the segment that delivered them first, in capture order, as the streaming decoders
  // see them (before the core, the whole-capture reassembly took them from the segment
  // with the lowest start, a frame attribution the streaming decoders could not make).
  it('takes overlapping bytes from the segment that brought them first', () => {
    const [c] = reassembleTcp([
      seg(A, 96, bytes(1, 2, 3, 4)),
      seg(A, 100, bytes(5, 6, 7, 8)),
      seg(A, 98, bytes(0x33, 4, 0x55, 6, 7, 8, 9, 10)),
    ]);
    const d = c!.clientToServer;
    expect(d.runs[0]?.bytes).toEqual(bytes(1, 2, 3, 4, 5, 6, 7, 8, 9, 10));
    expect(d.runs[0]?.pieces.map((p) => [p.offset, p.length, p.frameIndex - frame])).toEqual([
      [0, 4, -3],
      [4, 4, -2],
      [8, 2, -1],
    ]);
    expect(d.duplicateBytes).toBe(6);
    expect(d.conflictingBytes).toBe(2);
  });

  it('delivers segments held behind a hole in stream order, whatever their arrival', () => {
    const [c] = reassembleTcp([
      seg(A, 110, bytes(10, 11, 12, 13)),
      seg(A, 105, bytes(5, 6, 7, 8, 9, 10, 11)),
      seg(A, 100, bytes(0, 1, 2, 3, 4)),
      seg(A, 130, bytes(30)),
    ]);
    const d = c!.clientToServer;
    expect(d.runs.map((r) => [r.startSequence, [...r.bytes]])).toEqual([
      [100, [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13]],
      [130, [30]],
    ]);
    expect(d.runs[0]?.pieces.map((p) => [p.offset, p.length, p.frameIndex - frame])).toEqual([
      [0, 5, -2],
      [5, 7, -3],
      [12, 2, -4],
    ]);
    expect(d.gaps).toEqual([{ startSequence: 114, length: 16 }]);
    expect(d.duplicateBytes).toBe(2);
  });

  it("counts bytes before the SYN's sequence space apart from repeated ones", () => {
    const [c] = reassembleTcp([
      seg(A, 200, bytes(9, 9, 1), TcpFlag.ACK),
      seg(A, 201, bytes(), TcpFlag.SYN),
      seg(A, 202, bytes(1, 2)),
    ]);
    const d = c!.clientToServer;
    expect(d.initialSequenceNumber).toBe(201);
    expect(d.runs[0]?.bytes).toEqual(bytes(1, 2));
    expect(d.bytesBeforeStart).toBe(2);
    expect(d.duplicateBytes).toBe(1);
  });

  it('property: any shuffle, duplication and re-segmentation rebuilds the stream', () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ minLength: 1, maxLength: 300 }),
        fc.integer({ min: 0, max: 0xffffffff }),
        fc.array(fc.integer({ min: 1, max: 40 }), { minLength: 1, maxLength: 30 }),
        fc.array(fc.nat(), { maxLength: 20 }),
        fc.boolean(),
        (stream, isn, cuts, dups, withSyn) => {
          const segments: TcpSegmentInput[] = [];
          let at = 0;
          let i = 0;
          while (at < stream.length) {
            const n = Math.min(cuts[i++ % cuts.length]!, stream.length - at);
            segments.push(seg(A, isn + 1 + at, stream.subarray(at, at + n)));
            at += n;
          }
          for (const d of dups) {
            const s = segments[d % segments.length]!;
            segments.push({ ...s, frameIndex: frame++ });
          }
          // Deterministic shuffle from the duplicate list.
          for (let k = segments.length - 1; k > 0; k--) {
            const j = (dups[k % Math.max(1, dups.length)] ?? k) % (k + 1);
            [segments[k], segments[j]] = [segments[j]!, segments[k]!];
          }
          if (withSyn) segments.unshift(seg(A, isn, bytes(), TcpFlag.SYN));
          const [c] = reassembleTcp(segments);
          const dir = c!.clientToServer;
          expect(dir.gaps).toEqual([]);
          expect(dir.runs).toHaveLength(1);
          expect(dir.runs[0]!.startSequence).toBe((isn + 1) >>> 0);
          expect(dir.runs[0]!.bytes).toEqual(stream);
          expect(dir.conflictingBytes).toBe(0);
        },
      ),
    );
  });
});

// Issue 8: a connection whose two ends are identical reported every MPA frame twice (both
// directions were the same reassembled stream).
describe('TCP reassembly: a connection whose two ends are the same address and port', () => {
  const SELF = {
    source: '10.0.0.1',
    sourcePort: 4000,
    destination: '10.0.0.1',
    destinationPort: 4000,
  };

  it('is one direction: every byte once in client-to-server, server-to-client empty', () => {
    const [c, other] = reassembleTcp([
      seg(SELF, 0x7000, bytes(), TcpFlag.SYN),
      seg(SELF, 0x7001, bytes(1, 2, 3)),
      seg(SELF, 0x7004, bytes(4, 5)),
    ]);
    expect(other).toBeUndefined();
    expect(c?.client).toEqual(c?.server);
    expect(c?.clientToServer.runs.map((r) => [...r.bytes])).toEqual([[1, 2, 3, 4, 5]]);
    expect(c?.serverToClient.runs).toEqual([]);
    expect(c?.serverToClient.gaps).toEqual([]);
  });

  it('decodes each MPA frame and FPDU of the capture once', () => {
    const messages = [1, 2, 3].map((n) =>
      makeSend({ messageSequenceNumber: n, payload: Uint8Array.of(n, n + 1, n + 2) }),
    );
    const stream = encodeMpaStream(makeMpaFrame('mpa-request', { crc: true }), messages);
    let seq = 0x7001;
    const frames = [stream.frame, ...stream.fpdus].map((payload) => {
      const f = buildTcpFrame(
        { sourceIp: '10.0.0.1', destinationIp: '10.0.0.1' },
        {
          sourcePort: 4000,
          destinationPort: 4000,
          sequenceNumber: seq,
          acknowledgementNumber: seq,
          flags: TcpFlag.PSH | TcpFlag.ACK,
          options: [],
        },
        payload,
      );
      seq += payload.length;
      return f;
    });
    const capture = encodePcap(
      { linkType: LinkType.ETHERNET },
      frames.map((data, i) => ({ timestampNs: BigInt(i + 1) * 1000n, data })),
    );
    const r = decodeCaptureMessages(capture);
    if (!r.ok) throw r.error;
    expect(r.value.items.map((i) => [i.kind, i.frameIndex])).toEqual([
      ['mpa-frame', 0],
      ['fpdu', 1],
      ['fpdu', 2],
      ['fpdu', 3],
    ]);
    expect(
      r.value.items.map((i) =>
        i.kind === 'fpdu' && i.fpdu.message.ok ? i.fpdu.message.value.kind : i.kind,
      ),
    ).toEqual(['mpa-frame', 'send', 'send', 'send']);
  });
});
