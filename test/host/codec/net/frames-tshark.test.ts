import { describe, expect, it } from 'vitest';
import { buildUdpFrame } from '../../../../src/codec/net/build.js';
import { TcpConversation, writeTempPcap } from '../../../helpers/pcap.js';
import { firstValue, TSHARK_AVAILABLE, tsharkFields } from '../../../helpers/tshark.js';

// tshark is the independent judge of the frame builders' checksums and sequence numbers.
describe.skipIf(!TSHARK_AVAILABLE)('frame builders, checked by tshark', () => {
  it('writes a TCP conversation tshark accepts, with consistent sequence numbers', () => {
    const conv = new TcpConversation({
      clientIp: '192.0.2.1',
      serverIp: '192.0.2.2',
      clientPort: 40001,
      serverPort: 4000,
    });
    conv.handshake();
    conv.send('client', Uint8Array.of(1, 2, 3, 4, 5));
    conv.send('server', Uint8Array.of(9, 8, 7));
    conv.send('client', Uint8Array.of(6, 7));
    const file = writeTempPcap(conv.frames());
    const frames = tsharkFields(file, {
      prefs: [
        'tcp.check_checksum:TRUE',
        'ip.check_checksum:TRUE',
        'tcp.relative_sequence_numbers:FALSE',
      ],
    });
    expect(frames).toHaveLength(6);
    for (const f of frames) {
      expect(firstValue(f, 'ip.checksum.status')).toBe('1'); // Wireshark: 0 bad, 1 good, 2 unverified
      expect(firstValue(f, 'tcp.checksum.status')).toBe('1');
      expect(f.has('_ws.expert')).toBe(false);
    }
    expect(firstValue(frames[0]!, 'tcp.seq_raw')).toBe(String(0x1a2b3c4d));
    expect(firstValue(frames[3]!, 'tcp.seq_raw')).toBe(String(0x1a2b3c4e));
    expect(firstValue(frames[5]!, 'tcp.seq_raw')).toBe(String(0x1a2b3c4e + 5));
    expect(firstValue(frames[5]!, 'tcp.ack_raw')).toBe(String(0x5e6f7082 + 3));
  });

  it('writes UDP frames over IPv4 and IPv6 with good checksums', () => {
    const payload = Uint8Array.of(0xde, 0xad, 0xbe, 0xef, 0x01);
    const v4 = buildUdpFrame(
      { sourceIp: '198.51.100.7', destinationIp: '198.51.100.9' },
      { sourcePort: 49152, destinationPort: 5000 },
      payload,
    );
    const v6 = buildUdpFrame(
      { sourceIp: '2001:db8::7', destinationIp: '2001:db8::9', ipv6: true },
      { sourcePort: 49153, destinationPort: 5000 },
      payload,
    );
    const frames = tsharkFields(writeTempPcap([v4, v6]), { prefs: ['udp.check_checksum:TRUE'] });
    expect(frames.map((f) => firstValue(f, 'udp.checksum.status'))).toEqual(['1', '1']);
    expect(firstValue(frames[1]!, 'ipv6.src')).toBe('2001:db8::7');
    expect(firstValue(frames[0]!, 'udp.length')).toBe('13');
  });
});
