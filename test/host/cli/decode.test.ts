/**
 * `rdma-interop decode` on a small capture this test writes: RoCEv2 frames (an RC Fetch
 * Add and its Atomic Acknowledge, one with a corrupted ICRC) and an iWARP TCP connection
 * (MPA Request/Reply with CRC, then an RFC 7306 Atomic Request and Response), segmented
 * so that one FPDU spans two TCP segments delivered out of order.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runDecode } from '../../../src/cli/commands/decode.js';
import {
  makeAtomicRequest,
  makeAtomicResponse,
  makeTerminate,
} from '../../../src/codec/iwarp/build.js';
import { makeMpaFrame } from '../../../src/codec/iwarp/mpa-frames.js';
import type { IwarpProfile } from '../../../src/codec/iwarp/profiles.js';
import { encodeMpaStream } from '../../../src/codec/iwarp/stream.js';
import { terminateCodeById } from '../../../src/codec/iwarp/terminate-codes.js';
import { TcpFlag } from '../../../src/codec/net/tcp.js';
import { encodePcapng } from '../../../src/codec/pcap/pcapng.js';
import { buildRoceFrame } from '../../../src/codec/roce/frame.js';
import { BthOpcode } from '../../../src/codec/roce/opcodes.js';
import { makeTempDir, TcpConversation, writeTempPcap } from '../../helpers/pcap.js';

const ADDR = { sourceIp: '192.0.2.1', destinationIp: '192.0.2.2' };
const BACK = { sourceIp: '192.0.2.2', destinationIp: '192.0.2.1' };

function roceFrames(): Uint8Array[] {
  const fetchAdd = buildRoceFrame(ADDR, {
    bth: {
      opcode: BthOpcode.RC_FETCH_ADD,
      destinationQp: 0x000123,
      psn: 0x00abcd,
      ackRequest: true,
    },
    headers: {
      AtomicETH: {
        virtualAddress: 0x0123456789abcdefn,
        rKey: 0x1a2b3c4d,
        swapOrAddData: 0x0000000000000102n,
        compareData: 0n,
      },
    },
  });
  const ack = buildRoceFrame(BACK, {
    bth: { opcode: BthOpcode.RC_ATOMIC_ACKNOWLEDGE, destinationQp: 0x000456, psn: 0x00abcd },
    headers: {
      AETH: { syndrome: 0x62, msn: 0x000007 },
      AtomicAckETH: { originalRemoteData: 0xfedcba9876543210n },
    },
  });
  const corrupt = ack.slice();
  corrupt[corrupt.length - 1]! ^= 0x01;
  return [fetchAdd, ack, corrupt];
}

function iwarpFrames(): Uint8Array[] {
  const conv = new TcpConversation({
    clientIp: '198.51.100.1',
    serverIp: '198.51.100.2',
    clientPort: 40001,
    serverPort: 4000,
    clientIsn: 0xfffffff0, // the client's stream wraps around 2^32
  });
  const request = makeMpaFrame('mpa-request', { crc: true, revision: 1 });
  const reply = makeMpaFrame('mpa-reply', { crc: true, revision: 1 });
  const client = encodeMpaStream(
    request,
    [
      makeAtomicRequest({
        operation: 'fetch-add',
        messageSequenceNumber: 1,
        requestIdentifier: 0x11223344,
        remoteSTag: 0x1a2b3c4d,
        remoteTaggedOffset: 0x0123456789abcdefn,
        addOrSwapData: 0x0000000000000102n,
      }),
    ],
    { peerFrame: reply },
  );
  const unexpected = terminateCodeById('rdmap.operation.unexpected-opcode')!;
  const server = encodeMpaStream(
    reply,
    [
      makeAtomicResponse({
        messageSequenceNumber: 1,
        originalRequestIdentifier: 0x11223344,
        originalRemoteDataValue: 0xfedcba9876543210n,
      }),
      makeTerminate({
        messageSequenceNumber: 1,
        layer: unexpected.layer,
        errorType: unexpected.errorType,
        errorCode: unexpected.errorCode,
      }),
    ],
    { peerFrame: request },
  );
  conv.handshake();
  conv.send('client', client.frame);
  conv.send('server', server.frame);
  // Split the Atomic Request FPDU in two and send the second half first.
  const fpdu = client.fpdus[0]!;
  const cut = 10;
  const start = conv.next.client;
  conv.sendRaw('client', { seq: (start + cut) >>> 0 }, fpdu.subarray(cut));
  conv.sendRaw('client', { seq: start }, fpdu.subarray(0, cut));
  conv.next.client = (start + fpdu.length) >>> 0;
  conv.send('server', server.fpdus[0]!);
  conv.send('server', server.fpdus[1]!);
  conv.sendRaw('client', { flags: TcpFlag.FIN | TcpFlag.ACK }, new Uint8Array(0));
  return conv.frames();
}

describe('rdma-interop decode', () => {
  const file = writeTempPcap([...roceFrames(), ...iwarpFrames()]);

  it('prints a tree with opcode and syndrome names, ICRC verdicts and RDMAP messages', () => {
    const r = runDecode(file);
    expect(r.stderr).toBe('');
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toContain('BTH RC_FETCH_ADD (0x14)');
    expect(r.stdout).toMatch(/IPv4 ttl 64, dscp 0, ecn 0, id 0, checksum 0x[0-9a-f]{4} \[valid\]/);
    expect(r.stdout).toMatch(/UDP length 52, checksum 0x[0-9a-f]{4} \[valid\]/);
    expect(r.stdout).toContain('virtualAddress: 0x0123456789abcdef');
    expect(r.stdout).toContain('BTH RC_ATOMIC_ACKNOWLEDGE (0x12)');
    expect(r.stdout).toContain('meaning: NAK REMOTE_ACCESS_ERROR');
    expect(r.stdout).toContain('originalRemoteData: 0xfedcba9876543210');
    expect(r.stdout.match(/ICRC: 0x[0-9a-f]{8} \[valid\]/g)).toHaveLength(2);
    expect(r.stdout.match(/crc: 0x[0-9a-f]{8} \[valid\]/g)).toHaveLength(3); // MPA CRC32c
    expect(r.stdout).toMatch(/ICRC: 0x[0-9a-f]{8} \[INVALID, computed 0x[0-9a-f]{8}\]/);
    expect(r.stdout).toContain('MPA Request');
    expect(r.stdout).toContain('MPA Reply');
    expect(r.stdout).toContain('FPDU atomic-request');
    expect(r.stdout).toContain('opcode: Atomic Request');
    expect(r.stdout).toContain('aOpCode: FetchAdd');
    expect(r.stdout).toContain('FPDU terminate');
    expect(r.stdout).toContain('errorType: Remote Operation Error');
    expect(r.stdout).toContain('(rdmap.operation.unexpected-opcode)');
    expect(r.stdout).toContain('FPDU atomic-response');
    expect(r.stdout).toContain('crc: ');
    expect(r.stdout).not.toContain('DecodeError');
    expect(r.stdout).toMatch(/3 RoCEv2 packets, 1 iWARP connections, 3 FPDUs, 0 problems/);
  });

  it('prints JSON with bigint as 0x hex strings', () => {
    const r = runDecode(file, { json: true });
    expect(r.exitCode).toBe(0);
    const doc = JSON.parse(r.stdout) as {
      items: Array<{
        kind: string;
        frameIndex: number;
        packet?: { headers?: Record<string, Record<string, unknown>> };
        fpdu?: { message: Record<string, unknown> };
        icrc?: { valid: boolean };
      }>;
    };
    const roce = doc.items.filter((i) => i.kind === 'roce');
    expect(roce).toHaveLength(3);
    expect(roce[0]?.packet?.headers?.AtomicETH?.virtualAddress).toBe('0x0123456789abcdef');
    expect(roce[0]?.packet?.headers?.AtomicETH?.rKey).toBe(0x1a2b3c4d);
    expect(roce.map((i) => i.icrc?.valid)).toEqual([true, true, false]);
    const fpdus = doc.items.filter((i) => i.kind === 'fpdu');
    expect(fpdus.map((f) => f.fpdu?.message.kind)).toEqual([
      'atomic-request',
      'atomic-response',
      'terminate',
    ]);
    expect(fpdus[0]?.fpdu?.message.remoteTaggedOffset).toBe('0x0123456789abcdef');
    expect(fpdus[1]?.fpdu?.message.originalRemoteDataValue).toBe('0xfedcba9876543210');
    expect((roce[1] as unknown as { time: string }).time).toBe('1700000000.001000000');
  });

  it('reads pcapng too and reports a truncated file as a typed error', () => {
    const dir = makeTempDir();
    const ng = join(dir, 'x.pcapng');
    writeFileSync(
      ng,
      encodePcapng(
        { interfaces: [{ linkType: 1 }] },
        roceFrames().map((data, i) => ({ data, timestampNs: BigInt(i) })),
      ),
    );
    const ok = runDecode(ng);
    expect(ok.exitCode).toBe(0);
    expect(ok.stdout).toMatch(/^pcapng: 3 frames, 3 RoCEv2 packets/m);
    const bad = join(dir, 'bad.pcap');
    const bytes = new Uint8Array(30);
    bytes.set([0xd4, 0xc3, 0xb2, 0xa1, 2, 0, 4, 0]);
    writeFileSync(bad, bytes);
    const r = runDecode(bad, { json: true });
    expect(r.exitCode).toBe(1);
    expect(JSON.parse(r.stdout)).toMatchObject({
      error: { layer: 'pcap', field: 'record', offset: 24, reason: 'truncated' },
    });
    expect(runDecode(ng, { profile: 'nope' as IwarpProfile }).exitCode).toBe(2);
  });
});

describe('RoCE message grouping in the capture decode', () => {
  it('groups FIRST/MIDDLE/LAST packets of a flow into one message', async () => {
    const { decodeCaptureMessages } = await import('../../../src/codec/capture/decode-capture.js');
    const { encodePcap } = await import('../../../src/codec/pcap/pcap.js');
    const send = (opcode: number, psn: number, qp = 0x000321) =>
      buildRoceFrame(ADDR, {
        bth: { opcode, destinationQp: qp, psn },
        headers: {},
        payload: new Uint8Array(8).fill(psn),
      });
    const frames = [
      send(BthOpcode.RC_SEND_MIDDLE, 1), // its FIRST was before the capture
      send(BthOpcode.RC_SEND_LAST, 2),
      send(BthOpcode.RC_SEND_FIRST, 3),
      send(BthOpcode.RC_SEND_ONLY, 1, 0x000999), // another flow, interleaved
      send(BthOpcode.RC_SEND_MIDDLE, 4),
      send(BthOpcode.RC_SEND_LAST, 5),
      send(BthOpcode.RC_SEND_ONLY, 6),
    ];
    const r = decodeCaptureMessages(
      encodePcap(
        { linkType: 1 },
        frames.map((data, i) => ({ timestampNs: BigInt(i), data })),
      ),
    );
    if (!r.ok) throw r.error;
    const positions = r.value.items.map((i) => (i.kind === 'roce' ? i.message : undefined));
    expect(positions).toEqual([
      { index: 0, packet: 0, complete: false },
      { index: 0, packet: 1, complete: false },
      { index: 1, packet: 0, complete: true },
      { index: 0, packet: 0, complete: true },
      { index: 1, packet: 1, complete: true },
      { index: 1, packet: 2, complete: true },
      { index: 2, packet: 0, complete: true },
    ]);
  });
});
