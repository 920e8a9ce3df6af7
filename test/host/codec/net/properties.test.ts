import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DecodeError } from '../../../../src/codec/errors.js';
import { formatIpv6, parseIpv6 } from '../../../../src/codec/net/address.js';
import { buildTcpFrame, buildUdpFrame } from '../../../../src/codec/net/build.js';
import { decodeEthernet, EtherType, encodeEthernet } from '../../../../src/codec/net/ethernet.js';
import { decodeFrame } from '../../../../src/codec/net/frame.js';
import { decodeIpv4, encodeIpv4 } from '../../../../src/codec/net/ipv4.js';
import { decodeIpv6 } from '../../../../src/codec/net/ipv6.js';
import { encodeSll, encodeSll2 } from '../../../../src/codec/net/sll.js';
import { decodeTcp, encodeTcp, TcpFlag } from '../../../../src/codec/net/tcp.js';
import { decodeUdp, encodeUdp } from '../../../../src/codec/net/udp.js';

const ipv4Arb = fc
  .tuple(fc.nat(255), fc.nat(255), fc.nat(255), fc.nat(255))
  .map((t) => t.join('.'));
const ipv6Arb = fc.uint8Array({ minLength: 16, maxLength: 16 }).map(formatIpv6);
const portArb = fc.integer({ min: 0, max: 0xffff });

describe('network layer codecs', () => {
  it('UDP frames round-trip over IPv4 and IPv6 with verified checksums', () => {
    fc.assert(
      fc.property(
        fc.boolean(),
        ipv4Arb,
        ipv4Arb,
        ipv6Arb,
        ipv6Arb,
        portArb,
        portArb,
        fc.uint8Array({ maxLength: 64 }),
        (v6, a4, b4, a6, b6, sp, dp, payload) => {
          const a = v6
            ? { sourceIp: a6, destinationIp: b6, ipv6: true }
            : { sourceIp: a4, destinationIp: b4 };
          const frame = buildUdpFrame(a, { sourcePort: sp, destinationPort: dp }, payload);
          const r = decodeFrame(1, frame);
          if (!r.ok) throw r.error;
          expect(r.value.network?.header.source).toBe(a.sourceIp);
          expect(r.value.transport?.kind).toBe('udp');
          const udp = r.value.transport?.header as {
            sourcePort: number;
            destinationPort: number;
            checksumValid: boolean;
          };
          expect([udp.sourcePort, udp.destinationPort, udp.checksumValid]).toEqual([sp, dp, true]);
          expect(r.value.payload).toEqual(payload);
          if (r.value.network?.kind === 'ipv4')
            expect(r.value.network.header.checksumValid).toBe(true);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('TCP segments round-trip with options, flags and checksum', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 0xffffffff }),
        fc.integer({ min: 0, max: 0xffffffff }),
        fc.integer({ min: 0, max: 0xff }),
        fc.array(
          fc.record({
            kind: fc.integer({ min: 2, max: 255 }),
            data: fc.uint8Array({ maxLength: 6 }),
          }),
          { maxLength: 4 },
        ),
        fc.uint8Array({ maxLength: 40 }),
        (seq, ack, flags, options, payload) => {
          const frame = buildTcpFrame(
            { sourceIp: '10.1.2.3', destinationIp: '10.3.2.1' },
            {
              sourcePort: 4000,
              destinationPort: 50000,
              sequenceNumber: seq,
              acknowledgementNumber: ack,
              flags,
              options,
            },
            payload,
          );
          const r = decodeFrame(1, frame);
          if (!r.ok) throw r.error;
          const t = r.value.transport;
          if (t?.kind !== 'tcp') throw new Error('not tcp');
          expect(t.header.sequenceNumber).toBe(seq);
          expect(t.header.acknowledgementNumber).toBe(ack);
          expect(t.header.flags).toBe(flags);
          expect(t.header.options).toEqual(options);
          expect(t.header.checksumValid).toBe(true);
          expect(r.value.payload).toEqual(payload);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('encode(decode(b)) == b for Ethernet, IPv4, UDP and TCP headers', () => {
    fc.assert(
      fc.property(
        fc.record({
          ttl: fc.nat(255),
          dscp: fc.nat(63),
          ecn: fc.nat(3),
          identification: fc.nat(0xffff),
          dontFragment: fc.boolean(),
          checksum: fc.nat(0xffff),
          options: fc
            .uint8Array({ maxLength: 3 })
            .map((o) => Uint8Array.from([...o, 0, 0, 0, 0].slice(0, 4 * Math.ceil(o.length / 4)))),
        }),
        fc.integer({ min: 0, max: 0xffffffff }),
        fc.nat(0xff),
        fc.uint8Array({ maxLength: 24 }),
        fc.nat(0xfff),
        (ip, seq, flags, payload, vlanId) => {
          const tcp = encodeTcp(
            {
              sourcePort: 4000,
              destinationPort: 40000,
              sequenceNumber: seq,
              flags,
              checksum: 0x1234,
              options: [{ kind: 8, data: new Uint8Array(8).fill(3) }],
            },
            payload,
          );
          const t = decodeTcp(tcp);
          if (!t.ok) throw t.error;
          const h = t.value.header;
          expect(
            encodeTcp({ ...h, acknowledgementNumber: h.acknowledgementNumber }, t.value.payload),
          ).toEqual(tcp);
          const udp = encodeUdp(
            { sourcePort: seq & 0xffff, destinationPort: 4791, checksum: ip.checksum },
            payload,
          );
          const u = decodeUdp(udp);
          if (!u.ok) throw u.error;
          expect(encodeUdp(u.value.header, u.value.payload)).toEqual(udp);
          const v4 = encodeIpv4(
            { source: '198.51.100.3', destination: '203.0.113.4', protocol: 6, ...ip },
            tcp,
          );
          const d = decodeIpv4(v4);
          if (!d.ok) throw d.error;
          const x = d.value.header;
          const again = encodeIpv4(
            {
              ...x,
              moreFragments: x.moreFragments,
              fragmentOffset: x.fragmentOffset,
              options: x.options,
            },
            d.value.payload,
          );
          expect(again).toEqual(v4);
          const eth = encodeEthernet(
            {
              source: '02:00:00:00:00:0a',
              destination: '02:00:00:00:00:0b',
              etherType: EtherType.IPv4,
              vlans: [{ tpid: 0x8100, priority: 3, dropEligible: true, vlanId }],
            },
            v4,
          );
          const e = decodeEthernet(eth);
          if (!e.ok) throw e.error;
          expect(encodeEthernet(e.value.header, e.value.payload)).toEqual(eth);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('reports (does not enforce) bad checksums', () => {
    const frame = buildUdpFrame(
      { sourceIp: '192.0.2.1', destinationIp: '192.0.2.2' },
      { sourcePort: 1, destinationPort: 2 },
      Uint8Array.of(1, 2, 3),
    );
    frame[frame.length - 1]! ^= 0xff;
    frame[14 + 8]! ^= 0x01; // TTL
    const r = decodeFrame(1, frame);
    if (!r.ok) throw r.error;
    expect(r.value.network?.kind === 'ipv4' && r.value.network.header.checksumValid).toBe(false);
    expect(r.value.transport?.header.checksumValid).toBe(false);
    // Offloaded checksums: TCP over IPv4 with checksum 0 decodes, flagged invalid.
    const tcp = encodeTcp(
      { sourcePort: 1, destinationPort: 2, sequenceNumber: 3, flags: TcpFlag.ACK },
      Uint8Array.of(7),
    );
    expect(decodeTcp(tcp, new Uint8Array(12)).ok).toBe(true);
  });

  it('decodes Linux cooked (SLL, SLL2), raw IP and VLAN-tagged frames', () => {
    const eth = buildUdpFrame(
      { sourceIp: '192.0.2.9', destinationIp: '192.0.2.8' },
      { sourcePort: 49152, destinationPort: 4791 },
      Uint8Array.of(1, 2, 3, 4),
    );
    const ip = eth.subarray(14);
    const sll = encodeSll(
      { packetType: 4, protocol: EtherType.IPv4, address: Uint8Array.of(2, 0, 0, 0, 0, 1) },
      ip,
    );
    const sll2 = encodeSll2({ packetType: 0, protocol: EtherType.IPv4, interfaceIndex: 3 }, ip);
    const vlan = encodeEthernet(
      {
        source: '02:00:00:00:00:01',
        destination: '02:00:00:00:00:02',
        etherType: EtherType.IPv4,
        vlans: [{ tpid: 0x8100, priority: 5, dropEligible: false, vlanId: 0x123 }],
      },
      ip,
    );
    for (const [linkType, bytes] of [
      [113, sll],
      [276, sll2],
      [101, ip],
      [1, vlan],
    ] as const) {
      const r = decodeFrame(linkType, bytes);
      if (!r.ok) throw r.error;
      expect(r.value.network?.header.source).toBe('192.0.2.9');
      expect(r.value.transport?.kind === 'udp' && r.value.transport.header.destinationPort).toBe(
        4791,
      );
      expect(r.value.payload).toEqual(Uint8Array.of(1, 2, 3, 4));
    }
    const s = decodeFrame(113, sll);
    expect(s.ok && s.value.link.kind === 'sll' && s.value.link.header).toMatchObject({
      version: 1,
      packetType: 4,
      address: '02:00:00:00:00:01',
    });
    const v = decodeEthernet(vlan);
    expect(v.ok && v.value.header.vlans).toEqual([
      { tpid: 0x8100, priority: 5, dropEligible: false, vlanId: 0x123 },
    ]);
  });

  it('refuses IPv4 fragments with a typed error', () => {
    const ip = encodeIpv4(
      { source: '192.0.2.1', destination: '192.0.2.2', protocol: 17, moreFragments: true },
      new Uint8Array(16),
    );
    const frame = encodeEthernet(
      { source: '02:00:00:00:00:01', destination: '02:00:00:00:00:02', etherType: EtherType.IPv4 },
      ip,
    );
    const r = decodeFrame(1, frame);
    expect(!r.ok && [r.error.layer, r.error.field, r.error.offset]).toEqual([
      'ipv4',
      'fragmentOffset',
      20,
    ]);
  });

  it('keeps IPv4 options and skips IPv6 extension headers', () => {
    // Router Alert (RFC 2113): type 0x94, length 4, value 0.
    const options = Uint8Array.of(0x94, 0x04, 0x00, 0x00);
    const udp = Uint8Array.of(0x12, 0x34, 0x12, 0xb7, 0x00, 0x08, 0x00, 0x00);
    const v4 = decodeIpv4(
      encodeIpv4({ source: '192.0.2.1', destination: '192.0.2.2', protocol: 17, options }, udp),
    );
    expect(
      v4.ok && [
        v4.value.header.headerLength,
        [...v4.value.header.options],
        v4.value.header.checksumValid,
      ],
    ).toEqual([24, [...options], true]);
    expect(v4.ok && v4.value.payload).toEqual(udp);
    // IPv6 + Hop-by-Hop (8 bytes: next header 60) + Destination Options (16 bytes: next 17) + UDP.
    const hbh = Uint8Array.of(60, 0, 1, 4, 0, 0, 0, 0);
    const dst = Uint8Array.of(17, 1, 1, 12, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);
    const body = new Uint8Array([...hbh, ...dst, ...udp]);
    const fixed = new Uint8Array(40);
    fixed.set([0x60, 0, 0, 0, 0, body.length, 0, 64]);
    fixed.set(parseIpv6('2001:db8::1'), 8);
    fixed.set(parseIpv6('2001:db8::2'), 24);
    const v6 = decodeIpv6(new Uint8Array([...fixed, ...body]));
    if (!v6.ok) throw v6.error;
    expect(v6.value.header.extensionHeaders).toEqual([0, 60]);
    expect(v6.value.header.upperProtocol).toBe(17);
    expect(v6.value.payloadOffset).toBe(64);
    expect(v6.value.payload).toEqual(udp);
    const cut = decodeIpv6(
      new Uint8Array([...fixed.slice(0, 5), 20, ...fixed.slice(6), ...body.slice(0, 20)]),
    );
    expect(!cut.ok && [cut.error.field, cut.error.reason]).toEqual(['extension', 'truncated']);
  });

  it('parses and prints IPv6 addresses in RFC 5952 form', () => {
    expect(formatIpv6(parseIpv6('2001:db8:0:0:1:0:0:1'))).toBe('2001:db8::1:0:0:1');
    expect(formatIpv6(parseIpv6('::1'))).toBe('::1');
    expect(formatIpv6(parseIpv6('fe80::'))).toBe('fe80::');
    expect(formatIpv6(parseIpv6('1:2:3:4:5:6:7:8'))).toBe('1:2:3:4:5:6:7:8');
    expect(() => parseIpv6('1::2::3')).toThrow();
  });

  it('random and mutated frames give values or DecodeErrors only, with in-range offsets', () => {
    const seed = buildTcpFrame(
      { sourceIp: '2001:db8::1', destinationIp: '2001:db8::2', ipv6: true },
      {
        sourcePort: 1,
        destinationPort: 2,
        sequenceNumber: 3,
        options: [{ kind: 2, data: Uint8Array.of(5, 0xb4) }],
      },
      Uint8Array.of(1, 2, 3),
    );
    const check = (linkType: number, b: Uint8Array) => {
      const r = decodeFrame(linkType, b);
      if (!r.ok) {
        expect(r.error).toBeInstanceOf(DecodeError);
        expect(r.error.offset).toBeLessThanOrEqual(b.length);
      } else expect(r.value.payload.length).toBeLessThanOrEqual(b.length);
    };
    fc.assert(
      fc.property(fc.constantFrom(1, 101, 113, 276), fc.uint8Array({ maxLength: 90 }), (lt, b) =>
        check(lt, b),
      ),
      { numRuns: 500 },
    );
    fc.assert(
      fc.property(fc.nat(), fc.integer({ min: 0, max: 255 }), fc.nat(), (at, v, cut) => {
        const b = seed.slice();
        b[at % b.length] = v;
        check(1, b);
        check(1, b.subarray(0, cut % (b.length + 1)));
      }),
      { numRuns: 500 },
    );
    for (const f of [decodeIpv4, decodeIpv6, decodeUdp, decodeTcp, decodeEthernet])
      fc.assert(
        fc.property(fc.uint8Array({ maxLength: 70 }), (b) => {
          const r = f(b);
          if (!r.ok) expect(r.error).toBeInstanceOf(DecodeError);
        }),
        { numRuns: 200 },
      );
  });
});
