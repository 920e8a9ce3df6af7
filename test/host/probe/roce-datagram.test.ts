import { describe, expect, it } from 'vitest';
import { buildRoceFrame } from '../../../src/codec/roce/frame.js';
import { checkRoceIcrc } from '../../../src/codec/roce/icrc.js';
import { BthOpcode } from '../../../src/codec/roce/opcodes.js';
import { decodeRocePacket } from '../../../src/codec/roce/packet.js';
import {
  buildTesterDatagram,
  DEVICE_ADDRESS,
  FRAME_HEADER_LENGTH,
  rawTesterDatagram,
  TESTER_ADDRESS,
  TESTER_IP_IDENTIFICATION,
  testerIpPacket,
} from '../../../src/probe/roce-datagram.js';
import { build, rawBth } from '../../../src/probe/roce-packets.js';

const ADDRESSING = {
  sourceIp: TESTER_ADDRESS,
  destinationIp: DEVICE_ADDRESS,
  ipv4: { identification: TESTER_IP_IDENTIFICATION },
};

const write = {
  bth: {
    opcode: BthOpcode.RC_RDMA_WRITE_ONLY,
    destinationQp: 0x000123,
    psn: 0x00a5c3,
    ackRequest: true,
  },
  headers: { RETH: { virtualAddress: 0x0000_7f12_3456_7800n, rKey: 0x1a2b3c, dmaLength: 5 } },
  payload: Uint8Array.from([1, 2, 3, 4, 5]),
};

describe('the RoCE tester datagram', () => {
  it('is the UDP payload of the codec frame with the same addresses and port 4791 both ways', () => {
    const frame = buildRoceFrame(ADDRESSING, write, 4791);
    expect(buildTesterDatagram(write)).toEqual(frame.subarray(FRAME_HEADER_LENGTH));
  });

  it('carries an ICRC that checks over the tester IP identification, and not over another one', () => {
    const datagram = buildTesterDatagram(write);
    const frame = buildRoceFrame(ADDRESSING, write, 4791);
    const ip = frame.slice(14);
    ip.set(datagram, FRAME_HEADER_LENGTH - 14);
    expect(checkRoceIcrc(ip, 20)).toMatchObject({ ok: true, value: { valid: true } });
    ip[5] = 1; // another identification (a UDP socket's kernel picks one): another ICRC
    expect(checkRoceIcrc(ip, 20)).toMatchObject({ ok: true, value: { valid: false } });
  });

  it('sends the IPv4 packet the ICRC was computed over (raw socket, IP_HDRINCL)', () => {
    const datagram = buildTesterDatagram(write);
    const ip = testerIpPacket(datagram);
    expect(ip.length).toBe(20 + 8 + datagram.length);
    expect([ip[4], ip[5], ip[6]]).toEqual([0x52, 0x54, 0x40]);
    expect(checkRoceIcrc(ip, 20)).toMatchObject({ ok: true, value: { valid: true } });
  });

  it('corrupts the ICRC on request and nothing else', () => {
    const good = buildTesterDatagram(write);
    const bad = buildTesterDatagram(write, { icrcXor: 0x0000_0100 });
    expect(bad.subarray(0, -4)).toEqual(good.subarray(0, -4));
    expect(bad[bad.length - 3]).toBe(good[good.length - 3]! ^ 0x01);
  });

  it('wraps a reserved opcode the codec refuses to encode, with a valid ICRC', () => {
    const transport = new Uint8Array(36);
    transport.set(rawBth(0xff, 0xffffff, 0x00a5c3), 0);
    const datagram = rawTesterDatagram(transport);
    expect(datagram.length).toBe(40);
    expect(decodeRocePacket(datagram).ok).toBe(false);
    expect(datagram.subarray(0, 12)).toEqual(
      Uint8Array.from([0xff, 0, 0xff, 0xff, 0, 0xff, 0xff, 0xff, 0x80, 0, 0xa5, 0xc3]),
    );
  });

  it('builds an ATOMIC WRITE of length 0 (CVE-2026-46114) that decodes with an empty payload', () => {
    const p = build.atomicWrite({ qpn: 0x12, va: 0x1000n, rKey: 7 }, 5, 8, new Uint8Array(0), 0);
    expect(p.decoded?.opcode.name).toBe('RC_ATOMIC_WRITE');
    expect(p.decoded?.payload.length).toBe(0);
    expect(p.decoded?.headers.RETH).toEqual({ virtualAddress: 0x1008n, rKey: 7, dmaLength: 0 });
  });
});
