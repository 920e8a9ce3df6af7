import { describe, expect, it } from 'vitest';
import { buildUdpFrame } from '../../../../src/codec/net/build.js';
import { decodeEthernet } from '../../../../src/codec/net/ethernet.js';
import { decodeIpv4 } from '../../../../src/codec/net/ipv4.js';
import { decodeAethSyndrome, encodeAethSyndrome } from '../../../../src/codec/roce/aeth.js';
import { checkRoceIcrc, computeRoceIcrc } from '../../../../src/codec/roce/icrc.js';
import { BthOpcode, bthOpcodeInfo } from '../../../../src/codec/roce/opcodes.js';
import { decodeRocePacket, encodeRocePacket } from '../../../../src/codec/roce/packet.js';

function hex(s: string): Uint8Array {
  const clean = s.replace(/\s+/g, '');
  return Uint8Array.from(clean.match(/../g) ?? [], (b) => Number.parseInt(b, 16));
}

describe('RoCEv2 golden vectors (written out by hand from IBTA §9.2-9.3 layouts)', () => {
  // BTH: opcode 0x14 RC_FETCH_ADD, SE/M/PadCnt/TVer 0, P_Key 0xffff, byte 4 zero,
  // DestQP 0x123456, A=1, PSN 0xabcdef; AtomicETH: VA, R_Key, add data, compare data;
  // then the 4-byte ICRC (0x9abcdef0 stored little-endian).
  const fetchAdd = hex(`
    14 00 ff ff 00 12 34 56 80 ab cd ef
    01 23 45 67 89 ab cd ef  1a 2b 3c 4d
    0f ed cb a9 87 65 43 21  88 77 66 55 44 33 22 11
    f0 de bc 9a`);

  it('decodes BTH + AtomicETH (RC_FETCH_ADD)', () => {
    const r = decodeRocePacket(fetchAdd);
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    const p = r.value;
    expect(p.opcode.name).toBe('RC_FETCH_ADD');
    expect(p.bth.destinationQp).toBe(0x123456);
    expect(p.bth.psn).toBe(0xabcdef);
    expect(p.bth.ackRequest).toBe(true);
    expect(p.bth.partitionKey).toBe(0xffff);
    expect(p.headers.AtomicETH).toEqual({
      virtualAddress: 0x0123456789abcdefn,
      rKey: 0x1a2b3c4d,
      swapOrAddData: 0x0fedcba987654321n,
      compareData: 0x8877665544332211n,
    });
    expect(p.payload.length).toBe(0);
    expect(p.icrc).toBe(0x9abcdef0);
  });

  it('encodes RC_FETCH_ADD to exactly the hand-written bytes', () => {
    const bytes = encodeRocePacket({
      bth: {
        opcode: BthOpcode.RC_FETCH_ADD,
        destinationQp: 0x123456,
        psn: 0xabcdef,
        ackRequest: true,
      },
      headers: {
        AtomicETH: {
          virtualAddress: 0x0123456789abcdefn,
          rKey: 0x1a2b3c4d,
          swapOrAddData: 0x0fedcba987654321n,
          compareData: 0x8877665544332211n,
        },
      },
      icrc: 0x9abcdef0,
    });
    expect(bytes).toEqual(fetchAdd);
  });

  // BTH opcode 0x12 RC_ATOMIC_ACKNOWLEDGE, DestQP 0x00abcd, PSN 0x0b0c0d; AETH syndrome
  // 0x1f (ACK, credit count 31 = invalid), MSN 0x010203; AtomicAckETH original data.
  const atomicAck = hex(`
    12 00 ff ff 00 00 ab cd 00 0b 0c 0d
    1f 01 02 03
    fe dc ba 98 76 54 32 10
    00 00 00 00`);

  it('decodes and encodes BTH + AETH + AtomicAckETH', () => {
    const r = decodeRocePacket(atomicAck);
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.value.opcode.name).toBe('RC_ATOMIC_ACKNOWLEDGE');
    expect(r.value.headers.AETH).toEqual({ syndrome: 0x1f, msn: 0x010203 });
    expect(r.value.aethSyndrome).toEqual({ kind: 'ACK', creditCount: 31 });
    expect(r.value.headers.AtomicAckETH).toEqual({ originalRemoteData: 0xfedcba9876543210n });
    const again = encodeRocePacket({
      bth: { opcode: 0x12, destinationQp: 0xabcd, psn: 0x0b0c0d },
      headers: {
        AETH: { syndrome: 0x1f, msn: 0x010203 },
        AtomicAckETH: { originalRemoteData: 0xfedcba9876543210n },
      },
    });
    expect(again).toEqual(atomicAck);
  });

  it('names AETH syndromes (IBTA Tables 42-44)', () => {
    expect(decodeAethSyndrome(0x00)).toEqual({ ok: true, value: { kind: 'ACK', creditCount: 0 } });
    expect(decodeAethSyndrome(0x2e)).toEqual({ ok: true, value: { kind: 'RNR_NAK', timer: 14 } });
    expect(decodeAethSyndrome(0x60)).toEqual({
      ok: true,
      value: { kind: 'NAK', code: 'PSN_SEQUENCE_ERROR' },
    });
    expect(decodeAethSyndrome(0x62)).toEqual({
      ok: true,
      value: { kind: 'NAK', code: 'REMOTE_ACCESS_ERROR' },
    });
    expect(decodeAethSyndrome(0x64)).toEqual({
      ok: true,
      value: { kind: 'NAK', code: 'INVALID_RD_REQUEST' },
    });
    expect(encodeAethSyndrome({ kind: 'NAK', code: 'REMOTE_OPERATIONAL_ERROR' })).toBe(0x63);
    expect(encodeAethSyndrome({ kind: 'NAK', code: 'INVALID_REQUEST' })).toBe(0x61);
    const reservedKind = decodeAethSyndrome(0x40);
    expect(reservedKind.ok).toBe(false);
    const reservedCode = decodeAethSyndrome(0x65);
    expect(!reservedCode.ok && reservedCode.error.field).toBe('aeth.syndrome.code');
    const bit7 = decodeAethSyndrome(0x80, 12);
    expect(!bit7.ok && bit7.error.offset).toBe(12);
  });

  it('opcode table rows carry the right extension headers', () => {
    expect(bthOpcodeInfo(0x0b)?.headers).toEqual(['RETH', 'ImmDt']);
    expect(bthOpcodeInfo(0x12)?.headers).toEqual(['AETH', 'AtomicAckETH']);
    expect(bthOpcodeInfo(0x65)?.headers).toEqual(['DETH', 'ImmDt']);
    expect(bthOpcodeInfo(0x4c)?.headers).toEqual(['RDETH', 'DETH', 'RETH']);
    expect(bthOpcodeInfo(0x4e)?.headers).toEqual(['RDETH']);
    expect(bthOpcodeInfo(0xb4)?.headers).toEqual(['XRCETH', 'AtomicETH']);
    expect(bthOpcodeInfo(0x17)?.name).toBe('RC_SEND_ONLY_WITH_INVALIDATE');
    expect(bthOpcodeInfo(0x15)).toBeUndefined(); // reserved for RC
    expect(bthOpcodeInfo(0x2c)).toBeUndefined(); // UC has no RDMA READ
  });
});

describe('RoCEv2 ICRC', () => {
  // A RoCEv2 CNP captured on a Mellanox ConnectX-4 Lx (hardware-generated ICRC), published
  // as a hex dump in Scapy's test/contrib/roce.uts ("RoCE CNP captured on ConnectX-4 Lx").
  // Note the IPv4 ToS 0xc2, TTL 0x40, zero UDP checksum and BECN set in BTH byte 4: all
  // masked by the ICRC.
  const cnpFrame = hex(`
    e41d 2dab 2bc2 7cfe 9064 3b32 0800 45c2
    003c 718c 4000 4011 9161 0a00 1101 0a00
    1201 0000 12b7 0028 0000 8100 ffff 4000
    0118 0000 0000 0000 0000 0000 0000 0000
    0000 0000 0000 82fd 002a`);

  it('matches the ICRC a ConnectX-4 Lx put on the wire', () => {
    const eth = decodeEthernet(cnpFrame);
    expect(eth.ok).toBe(true);
    if (!eth.ok) return;
    const checked = checkRoceIcrc(eth.value.payload, 20);
    if (!checked.ok) throw checked.error;
    const check = checked.value;
    expect(check.stored).toBe(0x2a00fd82); // bytes 82 fd 00 2a read little-endian
    expect(check.computed).toBe(check.stored);
    expect(check.valid).toBe(true);
    const ip = decodeIpv4(eth.value.payload);
    expect(ip.ok).toBe(true);
    if (!ip.ok) return;
    const roce = decodeRocePacket(ip.value.payload.subarray(8));
    expect(roce.ok && roce.value.opcode.name).toBe('CNP');
    expect(roce.ok && roce.value.bth.becn).toBe(true);
  });

  // Found by the fuzzer (issue 8): a short packet or a wrong header length threw RangeError.
  it('a packet too short for its headers and ICRC, or a bad IP header length, is a DecodeError', () => {
    const eth = decodeEthernet(cnpFrame);
    if (!eth.ok) throw eth.error;
    const ip = eth.value.payload;
    const short = checkRoceIcrc(ip.subarray(0, 20 + 8 + 12 + 3), 20);
    expect(
      short.ok ? 'ok' : `${short.error.field} ${short.error.reason} @${short.error.offset}`,
    ).toBe('icrc truncated @43');
    for (const length of [-1, 0, 19, 61, 1.5]) {
      const r = checkRoceIcrc(ip, length);
      expect(r.ok ? 'ok' : `${r.error.field} ${r.error.reason}`).toBe('ipHeaderLength bad-value');
    }
    expect(checkRoceIcrc(new Uint8Array(0), 40).ok).toBe(false);
  });

  it("matches Scapy's independent ICRC for its UC_SEND_ONLY example", () => {
    // Scapy test/contrib/roce.uts "RoCE layer": IPv4 ToS 0x01, id 1144, DF, TTL 64,
    // 192.168.0.7 -> 192.168.0.7, UDP 49152 -> 4791, BTH UC_SEND_ONLY (0x24), MigReq,
    // PadCnt 2, P_Key 0xffff, DestQP 211, PSN 13571856, 18 payload bytes + 2 pad bytes.
    // Scapy asserts IP checksum 0xb4d5 and ICRC 0x78f353f3 (its XIntField reads the wire
    // bytes big-endian, so the wire bytes are 78 f3 53 f3).
    const raw = hex('46 30 81 8b e2 89 35 d9 0e 9a 95 50 54 01 be 88 5e 50 00 00');
    const transport = encodeRocePacket({
      bth: { opcode: 0x24, migrationRequest: true, padCount: 2, destinationQp: 211, psn: 13571856 },
      headers: {},
      payload: raw.subarray(0, 18),
      pad: raw.subarray(18),
    });
    const frame = buildUdpFrame(
      {
        sourceIp: '192.168.0.7',
        destinationIp: '192.168.0.7',
        ipv4: { ecn: 1, identification: 1144, ttl: 64 },
      },
      { sourcePort: 49152, destinationPort: 4791 },
      transport,
    );
    const ip = frame.subarray(14);
    expect([ip[10], ip[11]]).toEqual([0xb4, 0xd5]);
    const icrc = computeRoceIcrc(ip.subarray(0, ip.length - 4), 20);
    const wire = new Uint8Array(4);
    new DataView(wire.buffer).setUint32(0, icrc, true);
    expect(wire).toEqual(hex('78 f3 53 f3'));
  });

  it('ignores the masked fields and sees every unmasked bit', () => {
    const eth = decodeEthernet(cnpFrame);
    if (!eth.ok) throw new Error('setup');
    const ip = eth.value.payload.slice(0, eth.value.payload.length - 4);
    const base = computeRoceIcrc(ip, 20);
    const mutate = (at: number, value: number) => {
      const copy = ip.slice();
      copy[at] = value;
      return computeRoceIcrc(copy, 20);
    };
    expect(mutate(1, 0x00)).toBe(base); // ToS
    expect(mutate(8, 0x01)).toBe(base); // TTL
    expect(mutate(10, 0x00)).toBe(base); // IP checksum
    expect(mutate(26, 0x12)).toBe(base); // UDP checksum
    expect(mutate(32, 0x80)).toBe(base); // BTH byte 4 (FECN/BECN/resv6)
    expect(mutate(12, 0x0b)).not.toBe(base); // source address
    expect(mutate(28, 0x82)).not.toBe(base); // BTH opcode
    expect(mutate(36, 0x01)).not.toBe(base); // BTH A bit
    expect(mutate(ip.length - 1, 0x01)).not.toBe(base); // payload
  });
});
