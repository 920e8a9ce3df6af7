/**
 * The packets the RoCE tester sends as the requester, built field by field with the
 * codec, and the answers it reads back, in one comparable form for the engine's
 * prediction and the device's datagrams.
 */
import { type AethSyndrome, encodeAethSyndrome } from '../codec/roce/aeth.js';
import { BthOpcode, type BthOpcodeName, bthOpcodeInfo } from '../codec/roce/opcodes.js';
import { decodeRocePacket, type RocePacket, type RocePacketFields } from '../codec/roce/packet.js';
import type { RoceAnswer } from '../engine/roce/rc-responder.js';
import type { JsonValue } from './assertion.js';
import { buildTesterDatagram, rawTesterDatagram } from './roce-datagram.js';

/** Where the tester's packets go: the device QP and its memory. */
export interface RoceTarget {
  readonly qpn: number;
  readonly va: bigint;
  readonly rKey: number;
}

/** One packet the tester sends. */
export interface TesterPacket {
  /** What the packet is, for the results. */
  readonly label: string;
  readonly datagram: Uint8Array;
  /** The packet as the engine sees it (undefined: it does not decode). */
  readonly decoded: RocePacket | undefined;
  readonly icrcValid: boolean;
}

/** FETH: selectivity level 0 (bits 5-4, memory range), placement type 1 (bits 3-0, global). */
const FETH_RANGE_GLOBAL = 0x01;

/** The immediate value the tester's packets carry (not a byte palindrome). */
const IMMEDIATE = 0x1234abcd;

function packet(label: string, fields: RocePacketFields, icrcXor = 0): TesterPacket {
  const datagram = buildTesterDatagram(fields, { icrcXor });
  const decoded = decodeRocePacket(datagram);
  return {
    label,
    datagram,
    decoded: decoded.ok ? decoded.value : undefined,
    icrcValid: icrcXor === 0,
  };
}

function bth(
  opcode: BthOpcodeName,
  target: RoceTarget,
  psn: number,
  extra: Partial<RocePacketFields['bth']> = {},
) {
  return { opcode: BthOpcode[opcode], destinationQp: target.qpn, psn, ackRequest: true, ...extra };
}

/** Packet builders, all with the A bit set (every request is acknowledged). */
export const build = {
  write(
    t: RoceTarget,
    psn: number,
    offset: number,
    data: Uint8Array,
    options: {
      dmaLength?: number;
      padCount?: number;
      icrcXor?: number;
      opcode?: BthOpcodeName;
    } = {},
  ): TesterPacket {
    const opcode = options.opcode ?? 'RC_RDMA_WRITE_ONLY';
    const info = bthOpcodeInfo(BthOpcode[opcode]);
    const hasReth = info?.headers.includes('RETH') ?? false;
    return packet(
      `${opcode} psn ${psn} +${offset} ${data.length} bytes`,
      {
        bth: bth(
          opcode,
          t,
          psn,
          options.padCount === undefined ? {} : { padCount: options.padCount },
        ),
        headers: {
          ...(hasReth
            ? {
                RETH: {
                  virtualAddress: t.va + BigInt(offset),
                  rKey: t.rKey,
                  dmaLength: options.dmaLength ?? data.length,
                },
              }
            : {}),
          ...(info?.headers.includes('ImmDt') ? { ImmDt: { immediateData: IMMEDIATE } } : {}),
        },
        payload: data,
      },
      options.icrcXor,
    );
  },
  read(t: RoceTarget, psn: number, offset: number, length: number): TesterPacket {
    return packet(`RC_RDMA_READ_REQUEST psn ${psn} +${offset} ${length} bytes`, {
      bth: bth('RC_RDMA_READ_REQUEST', t, psn),
      headers: { RETH: { virtualAddress: t.va + BigInt(offset), rKey: t.rKey, dmaLength: length } },
    });
  },
  fetchAdd(t: RoceTarget, psn: number, offset: number, add: bigint): TesterPacket {
    return packet(`RC_FETCH_ADD psn ${psn} +${offset} add 0x${add.toString(16)}`, {
      bth: bth('RC_FETCH_ADD', t, psn),
      headers: {
        AtomicETH: {
          virtualAddress: t.va + BigInt(offset),
          rKey: t.rKey,
          swapOrAddData: add,
          compareData: 0n,
        },
      },
    });
  },
  atomicWrite(
    t: RoceTarget,
    psn: number,
    offset: number,
    data: Uint8Array,
    dmaLength: number,
  ): TesterPacket {
    return packet(
      `RC_ATOMIC_WRITE psn ${psn} +${offset} ${data.length} bytes, RETH length ${dmaLength}`,
      {
        bth: bth('RC_ATOMIC_WRITE', t, psn),
        headers: { RETH: { virtualAddress: t.va + BigInt(offset), rKey: t.rKey, dmaLength } },
        payload: data,
      },
    );
  },
  /**
   * A FLUSH (IBTA 1.5 Annex A19) of `length` bytes at `offset`: FETH selectivity level 0
   * (memory range) and placement type 1 (global visibility), rxe_hdr.h's FETH_SEL / FETH_PLT
   * bits, with the standard ICRC.
   */
  flush(t: RoceTarget, psn: number, offset: number, length: number): TesterPacket {
    return packet(`RC_FLUSH psn ${psn} +${offset} ${length} bytes, range, global`, {
      bth: bth('RC_FLUSH', t, psn),
      headers: {
        FETH: { value: FETH_RANGE_GLOBAL },
        RETH: { virtualAddress: t.va + BigInt(offset), rKey: t.rKey, dmaLength: length },
      },
    });
  },
  send(
    t: RoceTarget,
    psn: number,
    data: Uint8Array,
    opcode: BthOpcodeName = 'RC_SEND_ONLY',
  ): TesterPacket {
    const info = bthOpcodeInfo(BthOpcode[opcode]);
    return packet(`${opcode} psn ${psn} ${data.length} bytes`, {
      bth: bth(opcode, t, psn),
      headers: info?.headers.includes('ImmDt') ? { ImmDt: { immediateData: IMMEDIATE } } : {},
      payload: data,
    });
  },
  /** A response to the device's requester: an ACK or NAK (AETH) at `psn`. */
  ack(t: RoceTarget, psn: number, syndrome: AethSyndrome): TesterPacket {
    return packet(`RC_ACKNOWLEDGE psn ${psn} ${syndromeText(syndrome)}`, {
      bth: bth('RC_ACKNOWLEDGE', t, psn, { ackRequest: false }),
      headers: { AETH: { syndrome: encodeAethSyndrome(syndrome), msn: 0 } },
    });
  },
  /** An Atomic ACK at `psn` carrying `original` as the original remote data. */
  atomicAck(t: RoceTarget, psn: number, original: bigint): TesterPacket {
    return packet(`RC_ATOMIC_ACKNOWLEDGE psn ${psn} original 0x${original.toString(16)}`, {
      bth: bth('RC_ATOMIC_ACKNOWLEDGE', t, psn, { ackRequest: false }),
      headers: {
        AETH: { syndrome: encodeAethSyndrome({ kind: 'ACK', creditCount: 31 }), msn: 0 },
        AtomicAckETH: { originalRemoteData: original },
      },
    });
  },
  /** A Read Response ONLY at `psn` carrying `data`. */
  readResponse(t: RoceTarget, psn: number, data: Uint8Array): TesterPacket {
    return packet(`RC_RDMA_READ_RESPONSE_ONLY psn ${psn} ${data.length} bytes`, {
      bth: bth('RC_RDMA_READ_RESPONSE_ONLY', t, psn, { ackRequest: false }),
      headers: {
        AETH: { syndrome: encodeAethSyndrome({ kind: 'ACK', creditCount: 31 }), msn: 0 },
      },
      payload: data,
    });
  },
  /** Transport bytes the codec would refuse (a reserved opcode), with a valid ICRC. */
  raw(label: string, transport: Uint8Array): TesterPacket {
    const datagram = rawTesterDatagram(transport);
    const decoded = decodeRocePacket(datagram);
    return { label, datagram, decoded: decoded.ok ? decoded.value : undefined, icrcValid: true };
  },
};

/** A 12-byte BTH with any opcode (reserved ones included) and P_Key 0xffff. */
export function rawBth(opcode: number, destinationQp: number, psn: number): Uint8Array {
  const out = new Uint8Array(12);
  const view = new DataView(out.buffer);
  out[0] = opcode;
  view.setUint16(2, 0xffff);
  view.setUint32(4, destinationQp & 0xffffff);
  view.setUint32(8, (0x80000000 | (psn & 0xffffff)) >>> 0);
  return out;
}

function syndromeText(s: AethSyndrome | undefined): string | null {
  if (s === undefined) return null;
  switch (s.kind) {
    case 'ACK':
      // The credit count is compared too (issue 32): an ACK's every field.
      return `ACK credits ${s.creditCount}`;
    case 'RNR_NAK':
      return `RNR_NAK timer ${s.timer}`;
    case 'NAK':
      return `NAK ${s.code}`;
  }
}

/**
 * The BTH fields of a response besides opcode, PSN and DestQP, as one line (issue 32: every
 * header field compared): SE, M, TVer, P_Key, FECN/BECN, the reserved bits, A and PadCnt.
 */
function responseBthLine(b: {
  solicitedEvent: boolean;
  migrationRequest: boolean;
  padCount: number;
  transportVersion: number;
  partitionKey: number;
  fecn: boolean;
  becn: boolean;
  reserved6: number;
  ackRequest: boolean;
  reserved7: number;
}): string {
  const bit = (v: boolean): number => (v ? 1 : 0);
  return [
    `se ${bit(b.solicitedEvent)}`,
    `m ${bit(b.migrationRequest)}`,
    `pad ${b.padCount}`,
    `tver ${b.transportVersion}`,
    `pkey ${b.partitionKey.toString(16)}`,
    `fecn ${bit(b.fecn)} becn ${bit(b.becn)} resv6 ${b.reserved6}`,
    `a ${bit(b.ackRequest)} resv7 ${b.reserved7}`,
  ].join(' ');
}

/** The tester's P_Key (rawBth, makeBth's default), which a response carries back. */
const TESTER_PKEY = 0xffff;

/** An answer in the form results compare. */
export function answerJson(a: RoceAnswer, destinationQp: number): JsonValue {
  const payloadBytes = a.payloadHex === undefined ? 0 : a.payloadHex.length / 2;
  return {
    opcode: a.opcode,
    psn: a.psn,
    destinationQp,
    // IBTA Vol. 1 §9.2: a response has SE, M and A clear, TVer 0, the request's P_Key, the
    // reserved bits 0 and the PadCnt that rounds its payload to 4 bytes.
    bth: responseBthLine({
      solicitedEvent: false,
      migrationRequest: false,
      padCount: (4 - (payloadBytes % 4)) % 4,
      transportVersion: 0,
      partitionKey: TESTER_PKEY,
      fecn: false,
      becn: false,
      reserved6: 0,
      ackRequest: false,
      reserved7: 0,
    }),
    syndrome: syndromeText(a.syndrome),
    ...(a.payloadHex === undefined ? {} : { payload: a.payloadHex }),
    ...(a.originalRemoteData === undefined
      ? {}
      : { original: `0x${a.originalRemoteData.toString(16)}` }),
  };
}

/**
 * A datagram the device sent, in the same form (or why it did not decode). Its ICRC is not
 * checked: it covers the IP identification, which rxe draws per packet
 * (__ip_select_ident in rxe_net.c) and a UDP socket does not show.
 */
export function datagramJson(datagram: Uint8Array): JsonValue {
  const decoded = decodeRocePacket(datagram);
  if (!decoded.ok)
    return { undecodable: decoded.error.message, bytes: Buffer.from(datagram).toString('hex') };
  const p = decoded.value;
  const out: Record<string, JsonValue> = {
    opcode: p.opcode.name,
    psn: p.bth.psn,
    destinationQp: p.bth.destinationQp,
    bth: responseBthLine(p.bth),
    syndrome: syndromeText(p.aethSyndrome),
  };
  if (p.opcode.hasPayload) out.payload = Buffer.from(p.payload).toString('hex');
  const ack = p.headers.AtomicAckETH;
  if (ack !== undefined) out.original = `0x${ack.originalRemoteData.toString(16)}`;
  return out;
}
