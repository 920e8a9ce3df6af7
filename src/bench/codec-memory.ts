/**
 * `bench codec`, memory section: the peak RSS of `rdma-interop decode` (a child process,
 * measured by GNU time's %M: Debian's `time` package) on a generated 1 GiB capture of mixed RoCEv2 and iWARP traffic,
 * against the same on a 100 MB capture of the same traffic in the same run (the anchor).
 * Streaming means the 1 GiB figure does not grow with the file: the ratio (100 MB peak over
 * 1 GiB peak) must stay >= 0.8. The captures are written to a temp dir and deleted, never
 * committed; they are built by repeating frame templates (only the TCP sequence number
 * changes per iWARP frame, so every MPA CRC stays valid), which writes 1 GiB in seconds.
 */
import { spawnSync } from 'node:child_process';
import { closeSync, existsSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { makeRdmaWrite } from '../codec/iwarp/build.js';
import { makeMpaFrame } from '../codec/iwarp/mpa-frames.js';
import { encodeMpaStream } from '../codec/iwarp/stream.js';
import { buildTcpFrame } from '../codec/net/build.js';
import { buildRoceFrame } from '../codec/roce/frame.js';
import { BthOpcode } from '../codec/roce/opcodes.js';
import { type Figure, figure } from './report.js';

const MIB = 1024 * 1024;
const TCP_SEQUENCE_AT = 14 + 20 + 4;
const CLIENT = { sourceIp: '198.51.100.1', destinationIp: '198.51.100.2' };
const SERVER = { sourceIp: '198.51.100.2', destinationIp: '198.51.100.1' };

function tcpFrame(client: boolean, seq: number, payload: Uint8Array): Uint8Array {
  return buildTcpFrame(
    client ? CLIENT : SERVER,
    {
      sourcePort: client ? 40000 : 4000,
      destinationPort: client ? 4000 : 40000,
      sequenceNumber: seq,
      acknowledgementNumber: 0,
      flags: 0x18,
    },
    payload,
  );
}

function record(frame: Uint8Array, timestampUs: number): Uint8Array {
  const out = new Uint8Array(16 + frame.length);
  const v = new DataView(out.buffer);
  v.setUint32(0, Math.floor(timestampUs / 1e6), true);
  v.setUint32(4, timestampUs % 1e6, true);
  v.setUint32(8, frame.length, true);
  v.setUint32(12, frame.length, true);
  out.set(frame, 16);
  return out;
}

/**
 * Writes a pcap of at least `bytes` bytes: one iWARP connection (MPA Request/Reply with CRC)
 * and RoCEv2 traffic, in blocks of 8 RoCEv2 RDMA Writes (1 KiB) and 2 iWARP RDMA Writes
 * (4 KiB) per block. Returns the number of packets written.
 */
export function writeMixedCapture(file: string, bytes: number): number {
  const request = makeMpaFrame('mpa-request', { crc: true });
  const reply = makeMpaFrame('mpa-reply', { crc: true });
  const write = makeRdmaWrite({
    stag: 0x1a2b3c4d,
    taggedOffset: 0x0123456789abcdefn,
    payload: new Uint8Array(4096).fill(0x5a),
  });
  const client = encodeMpaStream(request, [write], { peerFrame: reply });
  const server = encodeMpaStream(reply, [], { peerFrame: request });
  const fpdu = client.fpdus[0]!;
  const roce = buildRoceFrame(
    { sourceIp: '192.0.2.1', destinationIp: '192.0.2.2' },
    {
      bth: { opcode: BthOpcode.RC_RDMA_WRITE_ONLY, destinationQp: 0x000123, psn: 1 },
      headers: { RETH: { virtualAddress: 0x7f3a12345000n, rKey: 0x1a2b3c4d, dmaLength: 1024 } },
      payload: new Uint8Array(1024).fill(0xa5),
    },
  );
  let clientSeq = 0x1a2b3c4d;
  const iwarpTemplate = record(tcpFrame(true, 0, fpdu), 0);
  const roceTemplate = record(roce, 0);
  const fd = openSync(file, 'w');
  let packets = 0;
  try {
    const header = new Uint8Array(24);
    const h = new DataView(header.buffer);
    h.setUint32(0, 0xa1b2c3d4, true);
    h.setUint16(4, 2, true);
    h.setUint16(6, 4, true);
    h.setUint32(16, 65535, true);
    h.setUint32(20, 1, true);
    writeSync(fd, header);
    let written = header.length;
    for (const r of [
      record(tcpFrame(true, clientSeq, client.frame), 0),
      record(tcpFrame(false, 0x5e6f7081, server.frame), 1),
    ]) {
      writeSync(fd, r);
      written += r.length;
      packets++;
    }
    clientSeq = (clientSeq + client.frame.length) >>> 0;
    const blockLength = 8 * roceTemplate.length + 2 * iwarpTemplate.length;
    const perBuffer = Math.max(1, Math.floor((8 * MIB) / blockLength));
    const buffer = new Uint8Array(perBuffer * blockLength);
    const view = new DataView(buffer.buffer);
    // Fill once with the templates; only sequence numbers and times change per buffer.
    let at = 0;
    const iwarpAt: number[] = [];
    for (let block = 0; block < perBuffer; block++) {
      for (let i = 0; i < 8; i++) {
        buffer.set(roceTemplate, at);
        at += roceTemplate.length;
      }
      for (let i = 0; i < 2; i++) {
        buffer.set(iwarpTemplate, at);
        iwarpAt.push(at);
        at += iwarpTemplate.length;
      }
    }
    let time = 2;
    while (written < bytes) {
      for (const p of iwarpAt) {
        view.setUint32(p + 16 + TCP_SEQUENCE_AT, clientSeq);
        clientSeq = (clientSeq + fpdu.length) >>> 0;
        view.setUint32(p, Math.floor(time / 1e6), true);
        view.setUint32(p + 4, time % 1e6, true);
        time++;
      }
      writeSync(fd, buffer);
      written += buffer.length;
      packets += perBuffer * 10;
    }
  } finally {
    closeSync(fd);
  }
  return packets;
}

/** Peak RSS in KiB of `node <cli> decode --summary <file>` with stdout discarded. */
export function decodePeakRssKib(file: string): { kib: number; seconds: number } | undefined {
  const cli = fileURLToPath(new URL('../cli/main.js', import.meta.url));
  const start = process.hrtime.bigint();
  if (!existsSync('/usr/bin/time')) return undefined;
  const r = spawnSync(
    '/usr/bin/time',
    ['-f', '%M', process.execPath, cli, 'decode', '--summary', file],
    {
      stdio: ['ignore', 'ignore', 'pipe'],
      encoding: 'utf8',
      maxBuffer: 1 << 24,
    },
  );
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  const lines = r.stderr.trim().split('\n');
  const kib = Number(lines[lines.length - 1]);
  if (r.status !== 0 || !Number.isFinite(kib))
    throw new Error(`decode failed (${r.status}): ${r.stderr.slice(-300)}`);
  return { kib, seconds };
}

/** The memory figure: peak RSS decoding 1 GiB against 100 MB (same traffic, same run). */
export async function runMemory(): Promise<readonly Figure[]> {
  const dir = mkdtempSync(join(tmpdir(), 'rdma-interop-bench-memory-'));
  try {
    const small = join(dir, 'mixed-100mb.pcap');
    const large = join(dir, 'mixed-1gib.pcap');
    const t0 = process.hrtime.bigint();
    const smallPackets = writeMixedCapture(small, 100 * 1000 * 1000);
    const largePackets = writeMixedCapture(large, 1024 * MIB);
    const generated = Number(process.hrtime.bigint() - t0) / 1e9;
    const a = decodePeakRssKib(small);
    const b = a === undefined ? undefined : decodePeakRssKib(large);
    if (a === undefined || b === undefined) {
      process.stdout.write('  (/usr/bin/time not installed: no peak RSS; apt-get install time)\n');
      return [];
    }
    process.stdout.write(
      `  (captures generated in ${generated.toFixed(1)} s: ${smallPackets} and ${largePackets} packets; decode --summary took ${a.seconds.toFixed(1)} s and ${b.seconds.toFixed(1)} s)\n`,
    );
    // At most 1.25 times the peak of 100 MB (0.8 the other way round): memory does not grow
    // with the file.
    return [
      figure({
        suite: 'codec',
        name: `peak RSS of decode --summary on a 1 GiB mixed RoCEv2/iWARP capture: ${(b.kib / 1024).toFixed(1)} MiB`,
        value: b.kib / 1024,
        unit: 'MiB',
        anchorName: 'the same on 100 MB of the same traffic',
        anchor: a.kib / 1024,
        target: { op: '<=', ratio: 1.25 },
      }),
    ];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
