/**
 * The lazy capture decoder (views, fields read on demand through the layout tables) against
 * the eager one (typed objects): over generated captures, every item agrees on kind, frame,
 * MPA CRC state and every layout field of its headers. Captures mix an iWARP connection
 * (MPA with CRC, random RDMAP messages, FPDUs split across and packed into TCP segments)
 * and RoCEv2 packets with random fields.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type CaptureItem,
  decodeCaptureMessages,
} from '../../../../src/codec/capture/decode-capture.js';
import { LazyCaptureDecoder } from '../../../../src/codec/capture/lazy-decode.js';
import { makeSend } from '../../../../src/codec/iwarp/build.js';
import type { RdmapMessage } from '../../../../src/codec/iwarp/messages.js';
import { makeMpaFrame } from '../../../../src/codec/iwarp/mpa-frames.js';
import { rdmapOpcodeOf } from '../../../../src/codec/iwarp/opcodes.js';
import type { IwarpProfile } from '../../../../src/codec/iwarp/profiles.js';
import { encodeMpaStream } from '../../../../src/codec/iwarp/stream.js';
import { encodePcap } from '../../../../src/codec/pcap/pcap.js';
import { buildRoceFrame } from '../../../../src/codec/roce/frame.js';
import { BthOpcode } from '../../../../src/codec/roce/opcodes.js';
import { TcpConversation } from '../../../helpers/pcap.js';
import { rdmapMessage } from '../iwarp/arbitraries.js';

interface Seen {
  kind: string;
  frameIndex: number;
  crcState?: string;
  fields: Record<string, unknown>;
}

/** What the lazy decoder reports, each field read through the view. */
function lazyItems(capture: Uint8Array, chunk: number): Seen[] {
  const out: Seen[] = [];
  const d = new LazyCaptureDecoder((item) => {
    const fields: Record<string, unknown> = {};
    if (item.kind === 'fpdu') {
      const v = item.rdmap;
      const layouts = [v.ddpLayout, v.rdmapLayout].filter((l) => l !== undefined);
      for (const l of layouts) for (const f of l.fields) fields[f.name] = v.field(f.name);
    }
    if (item.kind === 'roce') {
      fields.qp = item.roce.destinationQp;
      fields.psn = item.roce.psn;
      fields.rKey = item.roce.rKey;
      fields.va =
        item.roce.field('AtomicETH', 'virtualAddress') ?? item.roce.field('RETH', 'virtualAddress');
      fields.add = item.roce.field('AtomicETH', 'swapOrAddData');
    }
    out.push({
      kind: item.kind,
      frameIndex: item.frameIndex,
      ...(item.kind === 'fpdu' ? { crcState: item.crcState } : {}),
      fields,
    });
  });
  for (let at = 0; at < capture.length; at += chunk) d.push(capture.subarray(at, at + chunk));
  d.finish();
  return out;
}

/** The same from the eager decoder's objects. */
function eagerItems(items: readonly CaptureItem[]): Seen[] {
  return items.map((item) => {
    const fields: Record<string, unknown> = {};
    if (item.kind === 'fpdu' && item.fpdu.message.ok) {
      const m = item.fpdu.message.value as RdmapMessage & Record<string, unknown>;
      const flat: Record<string, unknown> = { ...m, ...m.control, ...m.ddp };
      flat.opcode = rdmapOpcodeOf(m.kind).opcode;
      const info = rdmapOpcodeOf(m.kind);
      const rdmapLayout =
        m.ddp.tagged || (info.family === 'send-immediate' && !m.ddp.last) ? undefined : info.layout;
      const names = [
        'tagged',
        'last',
        'ddpReserved',
        'ddpVersion',
        'rdmaVersion',
        'rdmapReserved',
        'opcode',
        ...(m.ddp.tagged
          ? ['stag', 'taggedOffset']
          : ['invalidateSTag', 'queueNumber', 'messageSequenceNumber', 'messageOffset']),
        ...(rdmapLayout?.fields.map((f) => f.name) ?? []),
      ];
      for (const n of names) fields[n] = flat[n];
    }
    if (item.kind === 'roce' && item.packet.ok) {
      const p = item.packet.value;
      const h = p.headers;
      fields.qp = p.bth.destinationQp;
      fields.psn = p.bth.psn;
      fields.rKey = h.RETH?.rKey ?? h.AtomicETH?.rKey ?? h.IETH?.rKey;
      fields.va = h.AtomicETH?.virtualAddress ?? h.RETH?.virtualAddress;
      fields.add = h.AtomicETH?.swapOrAddData;
    }
    return {
      kind: item.kind,
      frameIndex: item.frameIndex,
      ...(item.kind === 'fpdu' ? { crcState: item.fpdu.crcState } : {}),
      fields,
    };
  });
}

const u24 = fc.integer({ min: 0, max: 0xffffff });
const u32 = fc.integer({ min: 0, max: 0xffffffff });
const u64 = fc.bigInt({ min: 0n, max: 0xffffffffffffffffn });

const rocePacket = fc.oneof(
  fc.record({ qp: u24, psn: u24, rKey: u32, va: u64, add: u64 }).map((r) =>
    buildRoceFrame(
      { sourceIp: '192.0.2.1', destinationIp: '192.0.2.2' },
      {
        bth: { opcode: BthOpcode.RC_FETCH_ADD, destinationQp: r.qp, psn: r.psn },
        headers: {
          AtomicETH: { virtualAddress: r.va, rKey: r.rKey, swapOrAddData: r.add, compareData: 0n },
        },
      },
    ),
  ),
  fc
    .record({ qp: u24, psn: u24, rKey: u32, va: u64, len: fc.integer({ min: 0, max: 64 }) })
    .map((r) =>
      buildRoceFrame(
        { sourceIp: '192.0.2.3', destinationIp: '192.0.2.4' },
        {
          bth: { opcode: BthOpcode.RC_RDMA_WRITE_ONLY, destinationQp: r.qp, psn: r.psn },
          headers: { RETH: { virtualAddress: r.va, rKey: r.rKey, dmaLength: r.len } },
          payload: new Uint8Array(r.len).fill(7),
        },
      ),
    ),
);

function capture(
  profile: IwarpProfile,
  messages: readonly RdmapMessage[],
  cuts: readonly number[],
  roce: readonly Uint8Array[],
): Uint8Array {
  const request = makeMpaFrame('mpa-request', { crc: true });
  const reply = makeMpaFrame('mpa-reply', { crc: true });
  const client = encodeMpaStream(request, messages, { peerFrame: reply, profile });
  const server = encodeMpaStream(reply, [], { peerFrame: request, profile });
  const tcp = new TcpConversation({
    clientIp: '198.51.100.1',
    serverIp: '198.51.100.2',
    clientPort: 40000,
    serverPort: 4000,
  }).handshake();
  tcp.send('client', client.frame).send('server', server.frame);
  // The FPDUs as one byte stream cut at random places: FPDUs split and packed.
  const stream = Buffer.concat(client.fpdus.map((f) => Buffer.from(f)));
  let at = 0;
  for (const cut of cuts) {
    const end = Math.min(stream.length, at + cut);
    if (end > at) tcp.send('client', stream.subarray(at, end));
    at = end;
  }
  if (at < stream.length) tcp.send('client', stream.subarray(at));
  const frames = [...tcp.frames()];
  // RoCEv2 packets interleaved after every other TCP frame.
  for (const [i, r] of roce.entries()) frames.splice(Math.min(frames.length, 2 * i + 1), 0, r);
  return encodePcap(
    { linkType: 1 },
    frames.map((data, i) => ({
      timestampNs: 1_700_000_000_000_000_000n + BigInt(i) * 1000n,
      data,
    })),
  );
}

describe('lazy capture decode agrees with the eager decoder', () => {
  for (const profile of ['rfc7306', 'v2-draft'] as const) {
    it(`every item and every layout field (${profile}), any read chunking`, () => {
      fc.assert(
        fc.property(
          fc.array(rdmapMessage(profile), { minLength: 1, maxLength: 8 }),
          fc.array(fc.integer({ min: 1, max: 200 }), { maxLength: 12 }),
          fc.array(rocePacket, { maxLength: 4 }),
          fc.integer({ min: 7, max: 4096 }),
          (messages, cuts, roce, chunk) => {
            const bytes = capture(profile, messages, cuts, roce);
            const eager = decodeCaptureMessages(bytes, { profile });
            expect(eager.ok).toBe(true);
            if (!eager.ok) return;
            expect(lazyItems(bytes, chunk)).toEqual(eagerItems(eager.value.items));
          },
        ),
        { numRuns: 60 },
      );
    });
  }

  it('a corrupted MPA CRC reads invalid on both paths', () => {
    const send = makeSend({ messageSequenceNumber: 1, payload: Uint8Array.of(1, 2, 3, 4) });
    const bytes = capture('rfc7306', [send], [], []);
    bytes[bytes.length - 1]! ^= 0xff; // the last byte of the last frame: the FPDU's CRC
    const eager = decodeCaptureMessages(bytes);
    expect(eager.ok).toBe(true);
    if (!eager.ok) return;
    const lazy = lazyItems(bytes, 1 << 20);
    expect(lazy.map((i) => i.crcState ?? i.kind)).toEqual(['mpa-frame', 'mpa-frame', 'invalid']);
    expect(lazy).toEqual(eagerItems(eager.value.items));
  });
});
