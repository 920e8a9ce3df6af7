/**
 * `bench codec`, last section: the same capture decoded by our capture decoder (what
 * `rdma-interop decode` runs) and by Debian's tshark, in messages per second, measured in
 * the same run. Three captures: 10,000 RoCEv2 FetchAdd requests, and one iWARP connection
 * (MPA Request/Reply, then 10,000 Atomic Requests and Sends), once with MPA CRC and once
 * without (as stock siw runs: its FPDUs carry a zero CRC field that is not checked), so both
 * decoders walk Ethernet, IP, UDP/TCP and the RDMA layers of every frame. Each capture's
 * decodes must find exactly its messages (a decoder that split or merged FPDUs fails the
 * run, as the lazy one did on CRC-off captures before it counted their CRC field).
 *
 * Per capture: the RDMA layers alone (BTH and its extension headers from the UDP payload,
 * DDP/RDMAP from the ULPDU; target 100x, the codec issue; once for iWARP, whose two
 * captures carry the same ULPDUs); the whole capture as `decode --fields opcode` runs it (the lazy streaming
 * decoder fed 1 MiB chunks, MPA CRC checked, TCP reassembled, one text line per packet;
 * target 50x tshark's whole run, issue 13), the same against tshark without its start-up,
 * and the eager whole-capture decoder (decodeCaptureMessages: every field an object, as the
 * tree and JSON outputs need), without a target.
 *
 * Our decoders are measured in steady state (after JIT warm-up), tshark over whole runs.
 * tshark's whole run includes its start-up (about a second: dissector registration), so a
 * second ratio subtracts the start-up measured on a one-frame capture of the same kind.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodeCaptureMessages } from '../codec/capture/decode-capture.js';
import { LazyCaptureDecoder } from '../codec/capture/lazy-decode.js';
import { fieldsLine } from '../codec/capture/summary.js';
import {
  makeAtomicRequest,
  makeMpaFrame,
  makeSend,
  type RdmapMessage,
} from '../codec/iwarp/index.js';
import { decodeRdmapMessage, encodeRdmapMessage } from '../codec/iwarp/rdmap.js';
import { encodeMpaStream } from '../codec/iwarp/stream.js';
import { buildTcpFrame } from '../codec/net/build.js';
import { encodePcap } from '../codec/pcap/pcap.js';
import { buildRoceFrame } from '../codec/roce/frame.js';
import { decodeRocePacket } from '../codec/roce/packet.js';
import { type Figure, figure } from './report.js';

const TSHARK = '/usr/bin/tshark';
const ROCE_FRAMES = 10_000;
const IWARP_MESSAGES = 10_000;

/** `count` RoCEv2 FetchAdd request frames (PSN and address advance per frame). */
export function roceFetchAddFrames(count: number, addend: bigint): Uint8Array[] {
  return Array.from({ length: count }, (_, i) =>
    buildRoceFrame(
      { sourceIp: '192.0.2.1', destinationIp: '192.0.2.2' },
      {
        bth: { opcode: 0x14, destinationQp: 0x000123, psn: i, ackRequest: true },
        headers: {
          AtomicETH: {
            virtualAddress: 0x7f3a12345000n + BigInt(i * 8),
            rKey: 0x1a2b3c4d,
            swapOrAddData: addend,
            compareData: 0n,
          },
        },
      },
    ),
  );
}

/** Alternating FetchAdd Atomic Requests and 8-byte Sends. */
function iwarpMessages(count: number): RdmapMessage[] {
  return Array.from({ length: count }, (_, i) =>
    i % 2 === 0
      ? makeAtomicRequest({
          operation: 'fetch-add',
          messageSequenceNumber: i / 2 + 1,
          requestIdentifier: i,
          remoteSTag: 0x1a2b3c4d,
          remoteTaggedOffset: 0x0123456789abcde8n,
          addOrSwapData: 0x1111111122222222n,
        })
      : makeSend({
          messageSequenceNumber: (i + 1) / 2,
          payload: Uint8Array.of(1, 2, 3, 4, 5, 6, 7, 8),
        }),
  );
}

/**
 * One iWARP connection: Request, Reply, then `count` FPDUs from the client, one per segment.
 * `crc` is what both frames ask for: off is what stock siw negotiates, and its FPDUs still
 * carry the (zero) CRC field (RFC 5044 §4.1).
 */
function iwarpFrames(count: number, crc: boolean): Uint8Array[] {
  const request = makeMpaFrame('mpa-request', { crc });
  const reply = makeMpaFrame('mpa-reply', { crc });
  const messages = iwarpMessages(count);
  const client = encodeMpaStream(request, messages, { peerFrame: reply });
  const server = encodeMpaStream(reply, [], { peerFrame: request });
  const a = { sourceIp: '198.51.100.1', destinationIp: '198.51.100.2' };
  const b = { sourceIp: '198.51.100.2', destinationIp: '198.51.100.1' };
  let clientSeq = 0x1a2b3c4d;
  let serverSeq = 0x5e6f7081;
  const tcp = (from: 'client' | 'server', payload: Uint8Array): Uint8Array => {
    const client = from === 'client';
    const frame = buildTcpFrame(
      client ? a : b,
      {
        sourcePort: client ? 40000 : 4000,
        destinationPort: client ? 4000 : 40000,
        sequenceNumber: client ? clientSeq : serverSeq,
        acknowledgementNumber: client ? serverSeq : clientSeq,
        flags: 0x18,
      },
      payload,
    );
    if (client) clientSeq = (clientSeq + payload.length) >>> 0;
    else serverSeq = (serverSeq + payload.length) >>> 0;
    return frame;
  };
  return [
    tcp('client', client.frame),
    tcp('server', server.frame),
    ...client.fpdus.map((f) => tcp('client', f)),
  ];
}

function roceFrames(count: number): Uint8Array[] {
  return roceFetchAddFrames(count, 0x1111111122222222n);
}

function pcapOf(frames: readonly Uint8Array[]): Uint8Array {
  return encodePcap(
    { linkType: 1 },
    frames.map((data, i) => ({ timestampNs: BigInt(i) * 1000n, data })),
  );
}

function seconds(fn: () => void): number {
  const start = process.hrtime.bigint();
  fn();
  return Number(process.hrtime.bigint() - start) / 1e9;
}

/**
 * Seconds per call of `fn` in steady state: a few warm-up calls (JIT compilation), then as
 * many calls as fit in `ms`. tshark is compiled ahead of time, so its runs need none.
 */
function steadySeconds(fn: () => void, ms = 300): number {
  for (let i = 0; i < 5; i++) fn();
  let calls = 0;
  const start = process.hrtime.bigint();
  let elapsed = 0;
  while (elapsed < ms / 1000) {
    fn();
    calls++;
    elapsed = Number(process.hrtime.bigint() - start) / 1e9;
  }
  return elapsed / calls;
}

function tsharkSeconds(file: string): number {
  // -T fields with the RDMA fields: tshark dissects every layer to fill them.
  return seconds(() =>
    execFileSync(
      TSHARK,
      ['-r', file, '-T', 'fields', '-e', 'infiniband.bth.opcode', '-e', 'iwarp_rdma.opcode'],
      { stdio: ['ignore', 'ignore', 'ignore'], maxBuffer: 1 << 28 },
    ),
  );
}

/** One benchmark capture: its bytes, its messages, and the RDMA layer decode alone. */
interface BenchCapture {
  readonly name: string;
  readonly capture: Uint8Array;
  /** A one-frame-per-kind capture of the same kind, to measure tshark's start-up. */
  readonly small: Uint8Array;
  readonly messages: number;
  /**
   * Decodes the RDMA layers of every message (no Ethernet/IP/TCP/UDP, no reassembly); absent
   * when another capture has the same messages (the CRC-off iWARP one).
   */
  readonly decodeLayer?: () => void;
  /** Items `decodeCaptureMessages` must produce (messages plus MPA frames). */
  readonly items: number;
}

/** The captures: RoCEv2 FetchAdd requests, and one iWARP connection with and without MPA CRC. */
export function buildBenchCaptures(): readonly BenchCapture[] {
  const rocePackets = roceFrames(ROCE_FRAMES).map((f) => f.subarray(14 + 20 + 8));
  const ulpdus = iwarpMessages(IWARP_MESSAGES).map((m) => encodeRdmapMessage(m));
  return [
    {
      name: 'RoCEv2 (BTH + AtomicETH)',
      capture: pcapOf(roceFrames(ROCE_FRAMES)),
      small: pcapOf(roceFrames(1)),
      messages: ROCE_FRAMES,
      items: ROCE_FRAMES,
      decodeLayer: () => {
        for (const p of rocePackets) if (!decodeRocePacket(p).ok) throw new Error('roce');
      },
    },
    {
      name: 'iWARP (MPA with CRC, DDP/RDMAP)',
      capture: pcapOf(iwarpFrames(IWARP_MESSAGES, true)),
      small: pcapOf(iwarpFrames(1, true)),
      messages: IWARP_MESSAGES,
      items: IWARP_MESSAGES + 2,
      decodeLayer: () => {
        for (const u of ulpdus) if (!decodeRdmapMessage(u).ok) throw new Error('rdmap');
      },
    },
    {
      name: 'iWARP (MPA without CRC, as stock siw; DDP/RDMAP)',
      capture: pcapOf(iwarpFrames(IWARP_MESSAGES, false)),
      small: pcapOf(iwarpFrames(1, false)),
      messages: IWARP_MESSAGES,
      items: IWARP_MESSAGES + 2,
    },
  ];
}

/** Chunks the CLI reads a capture in. */
const CHUNK = 1024 * 1024;

/**
 * The whole capture through the lazy streaming decoder, as `decode --fields opcode` runs
 * it: fed in 1 MiB chunks, one text line per packet. Returns the number of packet lines.
 */
export function lazyDecodeLines(capture: Uint8Array): number {
  let lines = 0;
  let chars = 0;
  const columns = ['opcode'];
  const decoder = new LazyCaptureDecoder((item) => {
    if (item.kind !== 'roce' && item.kind !== 'fpdu') return;
    chars += fieldsLine(item, columns).length;
    lines++;
  });
  for (let at = 0; at < capture.length; at += CHUNK)
    decoder.push(capture.subarray(at, Math.min(capture.length, at + CHUNK)));
  decoder.finish();
  if (chars < lines) throw new Error('empty lines');
  return lines;
}

/** Four figures per capture; none when tshark is not installed (said in the output). */
export async function runVersusTshark(): Promise<readonly Figure[]> {
  if (!existsSync(TSHARK)) {
    process.stdout.write('  (tshark not installed: no comparison; run npm run setup)\n');
    return [];
  }
  const dir = mkdtempSync(join(tmpdir(), 'rdma-interop-bench-'));
  const figures: Figure[] = [];
  try {
    for (const bench of buildBenchCaptures()) {
      const file = join(dir, 'capture.pcap');
      const smallFile = join(dir, 'small.pcap');
      writeFileSync(file, bench.capture);
      writeFileSync(smallFile, bench.small);
      let layer = Number.POSITIVE_INFINITY;
      let ours = Number.POSITIVE_INFINITY;
      let lazy = Number.POSITIVE_INFINITY;
      let theirs = Number.POSITIVE_INFINITY;
      let startup = Number.POSITIVE_INFINITY;
      for (let round = 0; round < 3; round++) {
        ours = Math.min(
          ours,
          steadySeconds(() => {
            const result = decodeCaptureMessages(bench.capture);
            if (!result.ok || result.value.items.length !== bench.items) {
              throw new Error(`${bench.name}: the capture did not decode to the expected items`);
            }
          }),
        );
        if (bench.decodeLayer !== undefined)
          layer = Math.min(layer, steadySeconds(bench.decodeLayer));
        lazy = Math.min(
          lazy,
          steadySeconds(() => {
            if (lazyDecodeLines(bench.capture) !== bench.messages)
              throw new Error(`${bench.name}: the lazy decode did not see every message`);
          }),
        );
        theirs = Math.min(theirs, tsharkSeconds(file));
        startup = Math.min(startup, tsharkSeconds(smallFile));
      }
      const rate = (s: number) => bench.messages / Math.max(s, 1e-6);
      const tsharkRate = rate(theirs);
      const tsharkSteady = rate(theirs - startup);
      const whole = `tshark -T fields, whole run (${theirs.toFixed(2)} s)`;
      if (bench.decodeLayer !== undefined)
        figures.push(
          figure({
            suite: 'codec',
            name: `${bench.name}: RDMA-layer decode of ${bench.messages} messages`,
            value: rate(layer),
            unit: 'messages/s',
            anchorName: whole,
            anchor: tsharkRate,
            target: { op: '>=', ratio: 100 },
          }),
        );
      figures.push(
        figure({
          suite: 'codec',
          name: `${bench.name}: whole capture, lazy streaming decode (decode --fields opcode)`,
          value: rate(lazy),
          unit: 'messages/s',
          anchorName: whole,
          anchor: tsharkRate,
          target: { op: '>=', ratio: 50 },
        }),
        // Under heavy load the start-up run can take as long as the whole run: no figure then.
        ...(theirs - startup > 0.1 * theirs
          ? [
              figure({
                suite: 'codec',
                name: `${bench.name}: whole capture, lazy streaming decode`,
                value: rate(lazy),
                unit: 'messages/s',
                anchorName: `tshark minus its ${startup.toFixed(2)} s start-up`,
                anchor: tsharkSteady,
              }),
            ]
          : []),
        figure({
          suite: 'codec',
          name: `${bench.name}: whole capture, eager decode (every field an object: the tree and JSON outputs)`,
          value: rate(ours),
          unit: 'messages/s',
          anchorName: whole,
          anchor: tsharkRate,
        }),
      );
    }
    return figures;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
