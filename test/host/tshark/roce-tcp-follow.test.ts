/**
 * tshark's "Follow TCP stream" as an independent check of TCP reassembly: a conversation
 * with out-of-order segments, a retransmission, an overlap and 32-bit sequence wraparound
 * must give the same byte streams in both directions.
 * (File name: the tshark test directory of this layer holds roce*.test.ts files.)
 */
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { reassembleTcp } from '../../../src/codec/capture/tcp-reassembly.js';
import { decodeFrame } from '../../../src/codec/net/frame.js';
import { TcpConversation, writeTempPcap } from '../../helpers/pcap.js';
import { TSHARK_AVAILABLE, TSHARK_PATH } from '../../helpers/tshark.js';

const data = (n: number, seed: number) =>
  Uint8Array.from({ length: n }, (_, i) => (i * 131 + seed) & 0xff);

describe.skipIf(!TSHARK_AVAILABLE)('TCP reassembly vs tshark follow,tcp', () => {
  it('agrees on both directions of a disordered conversation', () => {
    const conv = new TcpConversation({
      clientIp: '203.0.113.1',
      serverIp: '203.0.113.2',
      clientPort: 40123,
      serverPort: 4000,
      clientIsn: 0xffffff00,
    });
    conv.handshake();
    const c = data(600, 3);
    const s = data(90, 7);
    const base = conv.next.client;
    const at = (off: number) => (base + off) >>> 0;
    conv.sendRaw('client', { seq: at(0) }, c.subarray(0, 200));
    conv.sendRaw('client', { seq: at(400) }, c.subarray(400, 600)); // out of order
    conv.sendRaw('client', { seq: at(200) }, c.subarray(200, 300)); // crosses 2^32
    conv.sendRaw('client', { seq: at(200) }, c.subarray(200, 300)); // retransmission
    conv.sendRaw('client', { seq: at(250) }, c.subarray(250, 400)); // overlap
    conv.next.client = at(600);
    conv.send('server', s);
    const file = writeTempPcap(conv.frames());

    const out = execFileSync(TSHARK_PATH, ['-r', file, '-q', '-z', 'follow,tcp,raw,0'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    // Raw follow output: client lines flush left, server lines indented by a tab.
    const lines = out.split('\n').filter((l) => /^\t?[0-9a-f]+$/.test(l));
    const client = lines.filter((l) => !l.startsWith('\t')).join('');
    const server = lines
      .filter((l) => l.startsWith('\t'))
      .map((l) => l.slice(1))
      .join('');

    const segments = conv.frames().map((f, frameIndex) => {
      const r = decodeFrame(1, f);
      if (!r.ok || r.value.transport?.kind !== 'tcp' || r.value.network === undefined)
        throw new Error('bad frame');
      const t = r.value.transport.header;
      return {
        frameIndex,
        source: r.value.network.header.source,
        sourcePort: t.sourcePort,
        destination: r.value.network.header.destination,
        destinationPort: t.destinationPort,
        sequenceNumber: t.sequenceNumber,
        flags: t.flags,
        payload: r.value.payload,
      };
    });
    const [conn] = reassembleTcp(segments);
    const hex = (b: Uint8Array | undefined) => Buffer.from(b ?? new Uint8Array(0)).toString('hex');
    expect(conn?.clientToServer.runs).toHaveLength(1);
    expect(hex(conn?.clientToServer.runs[0]?.bytes)).toBe(hex(c));
    expect(hex(conn?.clientToServer.runs[0]?.bytes)).toBe(client);
    expect(hex(conn?.serverToClient.runs[0]?.bytes)).toBe(server);
    expect(conn?.clientToServer.duplicateBytes).toBe(100 + 50);
  });
});
