/**
 * tshark as an independent RoCEv2 decoder: frames encoded by our codec are written to a
 * pcap, tshark 4.0 decodes them (UDP 4791), and every `infiniband.*` field tshark prints
 * must equal the value our decoder reads from the same bytes. A field tshark prints that
 * this test cannot map fails the test, so nothing is silently skipped.
 *
 * tshark 4.0 does not verify the ICRC (it only displays `infiniband.invariant.crc`, read
 * big-endian); the ICRC itself is checked against a hardware capture in golden.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { decodeEthernet } from '../../../src/codec/net/ethernet.js';
import { decodeIpv4 } from '../../../src/codec/net/ipv4.js';
import { decodeIpv6 } from '../../../src/codec/net/ipv6.js';
import { buildRoceFrame } from '../../../src/codec/roce/frame.js';
import type { ExtensionHeaders } from '../../../src/codec/roce/headers.js';
import { checkRoceIcrc } from '../../../src/codec/roce/icrc.js';
import { bthOpcodeByName, EXTENSION_HEADER_LENGTH } from '../../../src/codec/roce/opcodes.js';
import { decodeRocePacket, type RocePacket } from '../../../src/codec/roce/packet.js';
import { writeTempPcap } from '../../helpers/pcap.js';
import {
  INFINIBAND_PAYLOAD_PROTOCOLS,
  TSHARK_AVAILABLE,
  type TsharkFrame,
  tsharkFields,
} from '../../helpers/tshark.js';

const VA = 0x0123456789abcdefn;
const RKEY = 0x1a2b3c4d;
const reth = { virtualAddress: VA, rKey: RKEY, dmaLength: 0x2345 };
const imm = { immediateData: 0xdeadbeef };
const payload = (n: number) => Uint8Array.from({ length: n }, (_, i) => (i * 37 + 11) & 0xff);

interface Case {
  readonly name: string;
  readonly headers: ExtensionHeaders;
  readonly payload?: Uint8Array;
  readonly ipv6?: boolean;
}

const CASES: readonly Case[] = [
  { name: 'RC_SEND_FIRST', headers: {}, payload: payload(16) },
  { name: 'RC_SEND_MIDDLE', headers: {}, payload: payload(8) },
  { name: 'RC_SEND_LAST', headers: {}, payload: payload(5) },
  { name: 'RC_SEND_LAST_WITH_IMMEDIATE', headers: { ImmDt: imm }, payload: payload(7) },
  { name: 'RC_SEND_ONLY', headers: {}, payload: payload(3), ipv6: true },
  { name: 'RC_SEND_ONLY_WITH_IMMEDIATE', headers: { ImmDt: imm }, payload: payload(4) },
  {
    name: 'RC_SEND_ONLY_WITH_INVALIDATE',
    headers: { IETH: { rKey: 0x0badf00d } },
    payload: payload(2),
  },
  {
    name: 'RC_SEND_LAST_WITH_INVALIDATE',
    headers: { IETH: { rKey: 0x0badf00d } },
    payload: payload(6),
  },
  { name: 'RC_RDMA_WRITE_FIRST', headers: { RETH: reth }, payload: payload(12) },
  { name: 'RC_RDMA_WRITE_MIDDLE', headers: {}, payload: payload(12) },
  { name: 'RC_RDMA_WRITE_LAST', headers: {}, payload: payload(9) },
  { name: 'RC_RDMA_WRITE_LAST_WITH_IMMEDIATE', headers: { ImmDt: imm }, payload: payload(1) },
  { name: 'RC_RDMA_WRITE_ONLY', headers: { RETH: reth }, payload: payload(10) },
  {
    name: 'RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE',
    headers: { RETH: reth, ImmDt: imm },
    payload: payload(5),
    ipv6: true,
  },
  { name: 'RC_RDMA_READ_REQUEST', headers: { RETH: reth } },
  {
    name: 'RC_RDMA_READ_RESPONSE_FIRST',
    headers: { AETH: { syndrome: 0x0a, msn: 0x010203 } },
    payload: payload(8),
  },
  { name: 'RC_RDMA_READ_RESPONSE_MIDDLE', headers: {}, payload: payload(8) },
  {
    name: 'RC_RDMA_READ_RESPONSE_LAST',
    headers: { AETH: { syndrome: 0x1f, msn: 0x010203 } },
    payload: payload(3),
  },
  {
    name: 'RC_RDMA_READ_RESPONSE_ONLY',
    headers: { AETH: { syndrome: 0x05, msn: 0xfedcba } },
    payload: payload(8),
  },
  { name: 'RC_ACKNOWLEDGE', headers: { AETH: { syndrome: 0x1f, msn: 0x000102 } } },
  { name: 'RC_ACKNOWLEDGE', headers: { AETH: { syndrome: 0x2e, msn: 0x000103 } } }, // RNR NAK
  { name: 'RC_ACKNOWLEDGE', headers: { AETH: { syndrome: 0x62, msn: 0x000104 } } }, // NAK remote access
  { name: 'RC_ACKNOWLEDGE', headers: { AETH: { syndrome: 0x60, msn: 0x000105 } } }, // NAK PSN seq
  {
    name: 'RC_ATOMIC_ACKNOWLEDGE',
    headers: {
      AETH: { syndrome: 0x1f, msn: 0x000106 },
      AtomicAckETH: { originalRemoteData: 0xfedcba9876543210n },
    },
  },
  {
    name: 'RC_COMPARE_SWAP',
    headers: {
      AtomicETH: {
        virtualAddress: VA,
        rKey: RKEY,
        swapOrAddData: 0x0fedcba987654321n,
        compareData: 0x8877665544332211n,
      },
    },
  },
  {
    name: 'RC_FETCH_ADD',
    headers: {
      AtomicETH: {
        virtualAddress: VA,
        rKey: RKEY,
        swapOrAddData: 0x0000000000000102n,
        compareData: 0n,
      },
    },
    ipv6: true,
  },
  { name: 'UC_SEND_ONLY', headers: {}, payload: payload(4) },
  {
    name: 'RD_SEND_ONLY',
    headers: {
      RDETH: { reserved: 0, eeContext: 0x00abcd },
      DETH: { qKey: 0x80010002, reserved: 0, sourceQp: 0x000777 },
    },
    payload: payload(8),
  },
  {
    name: 'RD_RDMA_READ_REQUEST',
    headers: {
      RDETH: { reserved: 0, eeContext: 0x00abce },
      DETH: { qKey: 0x80010003, reserved: 0, sourceQp: 0x000778 },
      RETH: reth,
    },
  },
  {
    name: 'RD_RDMA_READ_RESPONSE_MIDDLE',
    headers: { RDETH: { reserved: 0, eeContext: 0x00abcf } },
    payload: payload(8),
  },
  {
    name: 'RD_ACKNOWLEDGE',
    headers: {
      RDETH: { reserved: 0, eeContext: 0x00abd0 },
      AETH: { syndrome: 0x1f, msn: 0x000009 },
    },
  },
  {
    name: 'UC_RDMA_WRITE_ONLY_WITH_IMMEDIATE',
    headers: { RETH: reth, ImmDt: imm },
    payload: payload(4),
  },
  {
    name: 'UD_SEND_ONLY',
    headers: { DETH: { qKey: 0x11223344, reserved: 0, sourceQp: 0x00c0ffee & 0xffffff } },
    payload: payload(6),
  },
  {
    name: 'UD_SEND_ONLY_WITH_IMMEDIATE',
    headers: { DETH: { qKey: 0x80010002, reserved: 0, sourceQp: 0x000123 }, ImmDt: imm },
    payload: payload(2),
  },
];

const hexBytes = (b: Uint8Array) => Array.from(b, (x) => x.toString(16).padStart(2, '0')).join(':');
const hex = (n: number, digits: number) => `0x${n.toString(16).padStart(digits, '0')}`;
const hex64 = (n: bigint) => `0x${n.toString(16).padStart(16, '0')}`;
const bool = (b: boolean) => (b ? '1' : '0');

/** Our decoder's values under tshark 4.0's field names and formats. */
function ourFields(p: RocePacket, udpPayload: Uint8Array): Map<string, string[]> {
  const m = new Map<string, string[]>();
  const add = (k: string, v: string) => m.set(k, [...(m.get(k) ?? []), v]);
  const b = p.bth;
  add('infiniband.bth', hexBytes(udpPayload.subarray(0, 12)));
  add('infiniband.bth.opcode', String(b.opcode));
  add('infiniband.bth.se', bool(b.solicitedEvent));
  add('infiniband.bth.m', bool(b.migrationRequest));
  add('infiniband.bth.padcnt', String(b.padCount));
  add('infiniband.bth.tver', String(b.transportVersion));
  add('infiniband.bth.p_key', String(b.partitionKey));
  // tshark 4.0 shows BTH byte 4 as one opaque "Reserved" byte (no FECN/BECN fields).
  add(
    'infiniband.reserved',
    hexBytes(Uint8Array.of((b.fecn ? 0x80 : 0) | (b.becn ? 0x40 : 0) | b.reserved6)),
  );
  add('infiniband.bth.destqp', hex(b.destinationQp, 6));
  add('infiniband.bth.a', bool(b.ackRequest));
  add('infiniband.bth.reserved7', String(b.reserved7));
  add('infiniband.bth.psn', String(b.psn));
  let at = 12;
  for (const h of p.opcode.headers) {
    const raw = udpPayload.subarray(at, at + EXTENSION_HEADER_LENGTH[h]);
    at += raw.length;
    const hd = p.headers;
    switch (h) {
      case 'RETH':
        add('infiniband.reth', hexBytes(raw));
        add('infiniband.reth.va', hex64(hd.RETH!.virtualAddress));
        add('infiniband.reth.r_key', hex(hd.RETH!.rKey, 8));
        add('infiniband.reth.dmalen', String(hd.RETH!.dmaLength));
        break;
      case 'AtomicETH':
        // tshark reuses the RETH field names for the AtomicETH's VA and R_Key.
        add('infiniband.atomiceth', hexBytes(raw));
        add('infiniband.reth.va', hex64(hd.AtomicETH!.virtualAddress));
        add('infiniband.reth.r_key', hex(hd.AtomicETH!.rKey, 8));
        add('infiniband.atomiceth.swapdt', String(hd.AtomicETH!.swapOrAddData));
        add('infiniband.atomiceth.cmpdt', String(hd.AtomicETH!.compareData));
        break;
      case 'AETH': {
        const s = hd.AETH!.syndrome;
        add('infiniband.aeth', hexBytes(raw));
        add('infiniband.aeth.syndrome', String(s));
        add('infiniband.aeth.syndrome.reserved', bool((s & 0x80) !== 0));
        add('infiniband.aeth.syndrome.opcode', String((s >> 5) & 3));
        const kind = p.aethSyndrome!.kind;
        if (kind === 'ACK') add('infiniband.aeth.syndrome.credit_count', String(s & 0x1f));
        if (kind === 'RNR_NAK') add('infiniband.aeth.syndrome.timer', String(s & 0x1f));
        if (kind === 'NAK') add('infiniband.aeth.syndrome.error_code', String(s & 0x1f));
        add('infiniband.aeth.msn', String(hd.AETH!.msn));
        break;
      }
      case 'AtomicAckETH':
        add('infiniband.atomicacketh', hexBytes(raw));
        add('infiniband.atomicacketh.origremdt', String(hd.AtomicAckETH!.originalRemoteData));
        break;
      case 'ImmDt':
        // tshark 4.0 emits the ImmDt item twice (a header item and a data item).
        add('infiniband.immdt', hexBytes(raw));
        add('infiniband.immdt', hexBytes(raw));
        break;
      case 'IETH':
        // Like ImmDt: a header item and a data item with the same name.
        add('infiniband.ieth', hexBytes(raw));
        add('infiniband.ieth', hexBytes(raw));
        break;
      case 'RDETH':
        // tshark shows the reserved byte under the generic `infiniband.reserved`.
        add('infiniband.rdeth', hexBytes(raw));
        add('infiniband.reserved', hexBytes(Uint8Array.of(hd.RDETH!.reserved)));
        add('infiniband.rdeth.eecnxt', String(hd.RDETH!.eeContext));
        break;
      case 'DETH':
        add('infiniband.deth', hexBytes(raw));
        // tshark 4.0 declares Q_Key as FT_UINT64 and SrcQP as FT_UINT32 (hex widths), and
        // shows the reserved byte between them under the generic `infiniband.reserved`.
        add('infiniband.deth.q_key', hex(hd.DETH!.qKey, 16));
        add('infiniband.reserved', hexBytes(Uint8Array.of(hd.DETH!.reserved)));
        add('infiniband.deth.srcqp', hex(hd.DETH!.sourceQp, 8));
        break;
      default:
        throw new Error(`no tshark mapping for ${h}`);
    }
  }
  // tshark reads the ICRC big-endian; the wire order is little-endian (see icrc.ts).
  const icrcBytes = new Uint8Array(4);
  new DataView(icrcBytes.buffer).setUint32(0, p.icrc, true);
  add('infiniband.invariant.crc', hex(new DataView(icrcBytes.buffer).getUint32(0, false), 8));
  return m;
}

describe.skipIf(!TSHARK_AVAILABLE)('RoCEv2 codec vs tshark 4.0', () => {
  const frames = CASES.map((c, i) =>
    buildRoceFrame(
      c.ipv6
        ? { sourceIp: '2001:db8::1', destinationIp: '2001:db8::2', ipv6: true }
        : { sourceIp: '192.0.2.1', destinationIp: '192.0.2.2' },
      {
        bth: {
          opcode: bthOpcodeByName(c.name),
          destinationQp: 0x012345 + i,
          psn: 0xabcde0 + i,
          ackRequest: i % 2 === 0,
          solicitedEvent: i % 3 === 0,
          partitionKey: 0xffff - i,
        },
        headers: c.headers,
        ...(c.payload ? { payload: c.payload } : {}),
      },
      49152 + i,
    ),
  );

  it('agrees on every infiniband.* field of every opcode family', () => {
    const file = writeTempPcap(frames);
    const theirs: TsharkFrame[] = tsharkFields(file, {
      disableProtocols: INFINIBAND_PAYLOAD_PROTOCOLS,
    });
    expect(theirs).toHaveLength(CASES.length);
    frames.forEach((frame, i) => {
      const eth = decodeEthernet(frame);
      if (!eth.ok) throw eth.error;
      const ip = CASES[i]!.ipv6 ? decodeIpv6(eth.value.payload) : decodeIpv4(eth.value.payload);
      if (!ip.ok) throw ip.error;
      const udpPayload = ip.value.payload.subarray(8);
      const ours = decodeRocePacket(udpPayload);
      if (!ours.ok) throw ours.error;
      expect(ours.value.opcode.name).toBe(CASES[i]!.name);
      expect(checkRoceIcrc(eth.value.payload, CASES[i]!.ipv6 ? 40 : 20)).toMatchObject({
        ok: true,
        value: { valid: true },
      });
      const mine = ourFields(ours.value, udpPayload);
      const tsharkIb = new Map([...theirs[i]!].filter(([k]) => k.startsWith('infiniband')));
      if (ours.value.opcode.transport === 'RD') {
        // tshark 4.0 reads every RD extension header 8 bytes too late: its BTH item spans
        // 20 bytes and its RDETH is the 4 bytes at offset 20. For RD_ACKNOWLEDGE it shows
        // no RDETH at all (packet-infiniband.c's RDETH_AETH case calls only parse_AETH).
        // IBTA §9.2 and Wireshark's own header-sequence table put RDETH right after the
        // 12-byte BTH. So for RD only the BTH fields are compared, and the shift itself is
        // pinned down, so that a fixed tshark makes this test fail and get revisited.
        for (const [k, v] of mine)
          if (k.startsWith('infiniband.bth.')) expect([k, tsharkIb.get(k)]).toEqual([k, v]);
        expect(tsharkIb.get('infiniband.bth')).toEqual([hexBytes(udpPayload.subarray(0, 20))]);
        if (ours.value.opcode.name !== 'RD_ACKNOWLEDGE')
          expect(tsharkIb.get('infiniband.rdeth')).toEqual([hexBytes(udpPayload.subarray(20, 24))]);
        return;
      }
      expect({ frame: i, name: CASES[i]!.name, fields: Object.fromEntries(tsharkIb) }).toEqual({
        frame: i,
        name: CASES[i]!.name,
        fields: Object.fromEntries(mine),
      });
      // tshark hands payload and pad bytes together to its data dissector.
      const data = theirs[i]!.get('data.data')?.[0];
      const body = new Uint8Array([...ours.value.payload, ...ours.value.pad]);
      if (body.length > 0) expect(data).toBe(hexBytes(body));
      else expect(data).toBeUndefined();
    });
  });
});
