import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  type CaptureDecode,
  decodeCaptureMessages,
  type FpduItem,
  type MpaFrameItem,
} from '../../../src/codec/capture/index.js';
import { type TsharkFrame, tsharkFields } from '../../helpers/tshark.js';

// A real Soft-iWARP conversation: rping over siw0 in the guest, captured on lo from before
// the connection (scripts/capture-siw.sh; the command is in its header). Every byte of
// both TCP directions must decode: the MPA Request/Reply, then FPDUs for Send, RDMA Read
// Request/Response and RDMA Write. tshark decodes the same file independently.

const FIXTURE = join(import.meta.dirname, '..', '..', 'fixtures', 'siw-rping.pcap');

function decoded(): CaptureDecode {
  const result = decodeCaptureMessages(readFileSync(FIXTURE));
  if (!result.ok) throw result.error;
  return result.value;
}

// RFC 5044 §7.1: 16-byte key, flags/revision/PD length (4), then private data, which in
// enhanced mode (RFC 6581 §5) begins with the 4-byte IRD/ORD word.
const mpaFrameLength = (m: MpaFrameItem) =>
  20 + (m.frame.enhanced ? 4 : 0) + m.frame.privateData.length;

const hex = (n: number | bigint) =>
  `0x${n.toString(16).padStart(typeof n === 'bigint' ? 16 : 8, '0')}`;

describe('real siw capture (rping over siw0)', () => {
  const capture = decoded();
  const mpaFrames = capture.items.filter((i): i is MpaFrameItem => i.kind === 'mpa-frame');
  const fpdus = capture.items.filter((i): i is FpduItem => i.kind === 'fpdu');

  it('decodes with no problem and one iWARP connection', () => {
    expect(capture.items.filter((i) => i.kind === 'problem')).toEqual([]);
    expect(capture.connections).toHaveLength(1);
  });

  it('starts with an MPA rev 2 Request and Reply: enhanced (RFC 6581), CRC and markers off', () => {
    expect(mpaFrames.map((m) => [m.direction, m.frame.kind])).toEqual([
      ['client-to-server', 'mpa-request'],
      ['server-to-client', 'mpa-reply'],
    ]);
    for (const m of mpaFrames) {
      // siw never offers markers and runs without CRC unless the peer asks (prior-art.md §4).
      expect(m.frame).toMatchObject({ revision: 2, markers: false, crc: false, reject: false });
    }
  });

  it('carries Send, Read Request, Read Response, Send, Send, Write, Send, in that order', () => {
    expect(fpdus.map((f) => (f.fpdu.message.ok ? f.fpdu.message.value.kind : 'undecoded'))).toEqual(
      ['send', 'rdma-read-request', 'rdma-read-response', 'send', 'send', 'rdma-write', 'send'],
    );
    // Without negotiated CRC the trailer is sent as zero and reported as not in use.
    expect(new Set(fpdus.map((f) => f.fpdu.crcState))).toEqual(new Set(['not-in-use']));
  });

  it('accounts for every byte of both TCP directions', () => {
    const connection = capture.connections[0];
    expect(connection).toBeDefined();
    for (const direction of ['client-to-server', 'server-to-client'] as const) {
      const dir =
        direction === 'client-to-server' ? connection!.clientToServer : connection!.serverToClient;
      const streamBytes = dir.runs.reduce((n, run) => n + run.bytes.length, 0);
      const frameBytes = mpaFrames
        .filter((m) => m.direction === direction)
        .reduce((n, m) => n + mpaFrameLength(m), 0);
      const fpduBytes = fpdus
        .filter((f) => f.direction === direction)
        .reduce((n, f) => n + f.fpdu.length, 0);
      expect(frameBytes + fpduBytes).toBe(streamBytes);
    }
  });

  it('agrees with tshark on every DDP/RDMAP field tshark shows', () => {
    const frames = tsharkFields(FIXTURE);
    const field = (frame: TsharkFrame | undefined, name: string) => frame?.get(name)?.[0];
    for (const item of fpdus) {
      const frame = frames[item.frameIndex];
      expect(item.fpdu.message.ok).toBe(true);
      if (!item.fpdu.message.ok) continue;
      const message = item.fpdu.message.value;
      expect(Number(field(frame, 'iwarp_mpa.ulpdulength'))).toBe(item.fpdu.fpdu.ulpduLength);
      const ddp = message.ddp;
      if (ddp.tagged) {
        expect(field(frame, 'iwarp_ddp.stag')).toBe(hex(ddp.stag));
        expect(field(frame, 'iwarp_ddp.tagged_offset')).toBe(hex(ddp.taggedOffset));
      } else {
        expect(Number(field(frame, 'iwarp_ddp.qn'))).toBe(ddp.queueNumber);
        expect(Number(field(frame, 'iwarp_ddp.msn'))).toBe(ddp.messageSequenceNumber);
        expect(Number(field(frame, 'iwarp_ddp.mo'))).toBe(ddp.messageOffset);
      }
      if (message.kind === 'rdma-read-request') {
        expect(field(frame, 'iwarp_rdma.sinkstag')).toBe(hex(message.sinkSTag));
        expect(Number(field(frame, 'iwarp_rdma.rdmardsz'))).toBe(message.readSize);
        expect(field(frame, 'iwarp_rdma.srcstag')).toBe(hex(message.sourceSTag));
      }
    }
  });
});
