/**
 * tshark 4.0's field names for `decode --fields` and `--filter`: one table, tshark name ->
 * where our decoder holds the value and how tshark prints it. The type, base and bitmask
 * of each row are tshark's own (`tshark -G fields`, checked by test/host/tshark/
 * decode-fields.test.ts); the printing rules of `tshark -T fields` follow from them
 * (formatTsharkValue). Rows name a source, never code: a frame-level value (FrameInfo), a
 * byte range of a RoCE header, of the ULPDU, of the RDMAP header or of an MPA frame, an
 * iWARP layout field (layouts.ts), or the presence of a header.
 *
 * Where tshark shows a field only for some messages (rsvdulp on untagged segments, the
 * Atomic Request's add_* or swap_* pair by AOpCode, the Terminate names per layer), the row
 * says so with `when`; where it adds a field twice (IMMDT, IETH: the header item and its
 * subtree item share the field), `occurrences` says how often.
 */
import { EXTENSION_HEADER_LENGTH, type ExtensionHeader } from '../roce/opcodes.js';

/**
 * The `-o` preference under which tshark finds MPA where the codec does. The codec knows an
 * MPA stream by its content on any port (the Request/Reply key, RFC 5044 7.1), while tshark
 * by default gives a TCP conversation to whatever protocol registered one of its ports and
 * tries its heuristics (MPA's among them) only after. An iWARP connection's ports are
 * ephemeral (Linux: 32768-60999), and tshark 4.0 registers seven in that range
 * (`tshark -G decodes`: 34980 ecatf, 44321 pcp, 44322 pmproxy, 44818 enip, 48049 cbsp,
 * 48898 ams, 57000 irc): a CI run's siw connection from port 44818 went to EtherNet/IP,
 * its MPA Request, Reply and every FPDU after them no iWARP at all. Heuristics first
 * changes nothing on the other ports, where no port dissector answers before them.
 */
export const TSHARK_MPA_ON_ANY_PORT = 'tcp.try_heuristic_first:TRUE';

/** The tshark field types the table uses (`tshark -G fields`, column 4). */
export type TsharkType =
  | 'FT_UINT8'
  | 'FT_UINT16'
  | 'FT_UINT24'
  | 'FT_UINT32'
  | 'FT_UINT64'
  | 'FT_BOOLEAN'
  | 'FT_BYTES'
  | 'FT_IPv4'
  | 'FT_IPv6'
  | 'FT_ETHER'
  | 'FT_NONE'
  | 'FT_PROTOCOL';

/** The frame-level values (FrameInfo). */
export type FrameKey =
  | 'number'
  | 'len'
  | 'ethSrc'
  | 'ethDst'
  | 'ethType'
  | 'ipSrc'
  | 'ipDst'
  | 'ipProto'
  | 'ipLen'
  | 'ipId'
  | 'ipTtl'
  | 'ipv6Src'
  | 'ipv6Dst'
  | 'tcpSrcPort'
  | 'tcpDstPort'
  | 'tcpStream'
  | 'tcpSeqRaw'
  | 'tcpAckRaw'
  | 'tcpLen'
  | 'tcpFlags'
  | 'udpSrcPort'
  | 'udpDstPort'
  | 'udpLength'
  | 'udpStream'
  | 'eth'
  | 'ip'
  | 'ipv6'
  | 'tcp'
  | 'udp';

/** When an iWARP row applies (every condition given must hold). */
export interface IwarpCondition {
  readonly tagged?: boolean;
  /** RDMAP opcodes (RFC 5040 §4.3, RFC 7306 §4). */
  readonly opcodes?: readonly number[];
  /** The Atomic Request's AOpCode is (true) or is not (false) FetchAdd (0). */
  readonly fetchAdd?: boolean;
  /** Terminate: the Layer nibble (0 RDMA, 1 DDP, 2 LLP). */
  readonly termLayer?: number;
  /** Terminate: the EType nibble. */
  readonly termErrorType?: number;
  /** Terminate: the Hdrct bits that must be set (0x80 M, 0x40 D, 0x20 R). */
  readonly termHeaders?: number;
  /** The FPDU's CRC is in use (crc) or not (crc_check is tshark's name for a checked one). */
  readonly crcInUse?: boolean;
}

/** Where a row's value is. */
export type FieldSource =
  | { readonly from: 'frame'; readonly key: FrameKey }
  /** Bytes of the BTH or an extension header of a RoCE packet (absent: no such header). */
  | {
      readonly from: 'roce';
      readonly header: 'BTH' | ExtensionHeader;
      readonly at: number;
      readonly width: number;
      /** A second header holding the same field (tshark shows AtomicETH's VA and R_Key as RETH's). */
      readonly orIn?: ExtensionHeader;
    }
  /** The last 4 bytes of the UDP payload: the ICRC, as tshark reads it (big-endian). */
  | { readonly from: 'icrc' }
  /** An iWARP layout field (RdmapView.field). */
  | { readonly from: 'iwarp'; readonly field: string; readonly when?: IwarpCondition }
  /** Bytes of the ULPDU from its first byte (the DDP control byte). */
  | {
      readonly from: 'ulpdu';
      readonly at: number;
      readonly width: number;
      readonly when?: IwarpCondition;
    }
  /** Bytes of the RDMAP header (after the 18-byte untagged DDP header). */
  | {
      readonly from: 'rdmap-header';
      readonly at: number;
      readonly width: number;
      readonly when?: IwarpCondition;
    }
  /**
   * A Terminate's copied headers (RFC 5040 §4.8) where Wireshark 4.0 reads them: after the
   * 4 fixed bytes, with D the 2-byte segment length and the DDP header (14 bytes when the
   * EType nibble is 1, "tagged", else 18, whatever the layer), then with R the 28-byte RDMA
   * header.
   */
  | { readonly from: 'terminated'; readonly part: 'ddp' | 'rdma' }
  /** The FPDU's MPA fields: ULPDU length, pad, the CRC field. */
  | {
      readonly from: 'fpdu';
      readonly key: 'ulpduLength' | 'pad' | 'crc';
      readonly when?: IwarpCondition;
    }
  /** Bytes of an MPA Request or Reply as on the wire. */
  | {
      readonly from: 'mpa-frame';
      readonly kind?: 'mpa-request' | 'mpa-reply';
      readonly at: number;
      /** Bytes; -1: to the end (the private data, shown when there is any). */
      readonly width: number;
    }
  /** Present (tshark prints 1) when the frame carries such a thing. */
  | {
      readonly from: 'present';
      readonly what: 'roce' | 'fpdu' | 'ddp' | 'rdmap' | 'mpa' | 'mpa-request' | 'mpa-reply';
    };

/** One tshark field. */
export interface TsharkField {
  readonly name: string;
  readonly type: TsharkType;
  /** tshark's display base (BASE_DEC, BASE_HEX, BASE_HEX_DEC, ...; '' for none; a boolean's bit width). */
  readonly base: string;
  /** tshark's bitmask (0: none): the value is the masked bits shifted down. */
  readonly mask: number;
  readonly source: FieldSource;
  /** How often tshark adds the field per header (2 for IMMDT and IETH). */
  readonly occurrences?: number;
}

type Row = readonly [
  name: string,
  type: TsharkType,
  base: string,
  mask: number,
  source: FieldSource,
  occurrences?: number,
];

const frame = (key: FrameKey): FieldSource => ({ from: 'frame', key });
const roce = (
  header: 'BTH' | ExtensionHeader,
  at: number,
  width: number,
  orIn?: ExtensionHeader,
): FieldSource =>
  orIn === undefined
    ? { from: 'roce', header, at, width }
    : { from: 'roce', header, at, width, orIn };
const iwarp = (field: string, when?: IwarpCondition): FieldSource =>
  when === undefined ? { from: 'iwarp', field } : { from: 'iwarp', field, when };
const rdmapHeader = (at: number, width: number, when: IwarpCondition): FieldSource => ({
  from: 'rdmap-header',
  at,
  width,
  when,
});
const mpaFrame = (at: number, width: number, kind?: 'mpa-request' | 'mpa-reply'): FieldSource =>
  kind === undefined ? { from: 'mpa-frame', at, width } : { from: 'mpa-frame', at, width, kind };

const UNTAGGED = { tagged: false } as const;
/** RFC 5040 untagged opcodes whose Invalidate STag octets tshark shows as "reserved". */
const RESERVED_STAG_OPCODES = [1, 3, 5, 7];
/** Send with Invalidate and Send with SE and Invalidate (RFC 5040 §4.3). */
const INVALIDATE_OPCODES = [4, 6];
const READ_REQUEST = { tagged: false, opcodes: [1] } as const;
const ATOMIC_REQUEST = { tagged: false, opcodes: [10] } as const;
const ATOMIC_RESPONSE = { tagged: false, opcodes: [11] } as const;
const TERMINATE = { tagged: false, opcodes: [7] } as const;

const ROWS: readonly Row[] = [
  // Frame, Ethernet, IP, TCP, UDP.
  ['frame.number', 'FT_UINT32', 'BASE_DEC', 0, frame('number')],
  ['frame.len', 'FT_UINT32', 'BASE_DEC', 0, frame('len')],
  ['eth', 'FT_PROTOCOL', '', 0, frame('eth')],
  ['eth.src', 'FT_ETHER', '', 0, frame('ethSrc')],
  ['eth.dst', 'FT_ETHER', '', 0, frame('ethDst')],
  ['eth.type', 'FT_UINT16', 'BASE_HEX', 0, frame('ethType')],
  ['ip', 'FT_PROTOCOL', '', 0, frame('ip')],
  ['ip.src', 'FT_IPv4', '', 0, frame('ipSrc')],
  ['ip.dst', 'FT_IPv4', '', 0, frame('ipDst')],
  ['ip.proto', 'FT_UINT8', 'BASE_DEC', 0, frame('ipProto')],
  ['ip.len', 'FT_UINT16', 'BASE_DEC', 0, frame('ipLen')],
  ['ip.id', 'FT_UINT16', 'BASE_HEX_DEC', 0, frame('ipId')],
  ['ip.ttl', 'FT_UINT8', 'BASE_DEC', 0, frame('ipTtl')],
  ['ipv6', 'FT_PROTOCOL', '', 0, frame('ipv6')],
  ['ipv6.src', 'FT_IPv6', '', 0, frame('ipv6Src')],
  ['ipv6.dst', 'FT_IPv6', '', 0, frame('ipv6Dst')],
  ['tcp', 'FT_PROTOCOL', '', 0, frame('tcp')],
  ['tcp.srcport', 'FT_UINT16', 'BASE_PT_TCP', 0, frame('tcpSrcPort')],
  ['tcp.dstport', 'FT_UINT16', 'BASE_PT_TCP', 0, frame('tcpDstPort')],
  ['tcp.stream', 'FT_UINT32', 'BASE_DEC', 0, frame('tcpStream')],
  ['tcp.seq_raw', 'FT_UINT32', 'BASE_DEC', 0, frame('tcpSeqRaw')],
  ['tcp.ack_raw', 'FT_UINT32', 'BASE_DEC', 0, frame('tcpAckRaw')],
  ['tcp.len', 'FT_UINT32', 'BASE_DEC', 0, frame('tcpLen')],
  ['tcp.flags', 'FT_UINT16', 'BASE_HEX', 0xfff, frame('tcpFlags')],
  ['udp', 'FT_PROTOCOL', '', 0, frame('udp')],
  ['udp.srcport', 'FT_UINT16', 'BASE_PT_UDP', 0, frame('udpSrcPort')],
  ['udp.dstport', 'FT_UINT16', 'BASE_PT_UDP', 0, frame('udpDstPort')],
  ['udp.length', 'FT_UINT16', 'BASE_DEC', 0, frame('udpLength')],
  ['udp.stream', 'FT_UINT32', 'BASE_DEC', 0, frame('udpStream')],

  // RoCEv2 (IBTA Vol. 1 §9.2 BTH, §9.3 extension headers; Wireshark's packet-infiniband.c).
  ['infiniband', 'FT_PROTOCOL', '', 0, { from: 'present', what: 'roce' }],
  ['infiniband.bth', 'FT_BYTES', '', 0, roce('BTH', 0, 12)],
  ['infiniband.bth.opcode', 'FT_UINT8', 'BASE_DEC', 0, roce('BTH', 0, 1)],
  ['infiniband.bth.se', 'FT_BOOLEAN', '8', 0x80, roce('BTH', 1, 1)],
  ['infiniband.bth.m', 'FT_BOOLEAN', '8', 0x40, roce('BTH', 1, 1)],
  ['infiniband.bth.padcnt', 'FT_UINT8', 'BASE_DEC', 0x30, roce('BTH', 1, 1)],
  ['infiniband.bth.tver', 'FT_UINT8', 'BASE_DEC', 0x0f, roce('BTH', 1, 1)],
  ['infiniband.bth.p_key', 'FT_UINT16', 'BASE_DEC', 0, roce('BTH', 2, 2)],
  ['infiniband.bth.destqp', 'FT_UINT24', 'BASE_HEX', 0, roce('BTH', 5, 3)],
  ['infiniband.bth.a', 'FT_BOOLEAN', '8', 0x80, roce('BTH', 8, 1)],
  ['infiniband.bth.reserved7', 'FT_UINT8', 'BASE_DEC', 0x7f, roce('BTH', 8, 1)],
  ['infiniband.bth.psn', 'FT_UINT24', 'BASE_DEC', 0, roce('BTH', 9, 3)],
  ['infiniband.deth', 'FT_BYTES', '', 0, roce('DETH', 0, 8)],
  ['infiniband.reth', 'FT_BYTES', '', 0, roce('RETH', 0, 16)],
  ['infiniband.reth.va', 'FT_UINT64', 'BASE_HEX', 0, roce('RETH', 0, 8, 'AtomicETH')],
  ['infiniband.reth.r_key', 'FT_UINT32', 'BASE_HEX', 0, roce('RETH', 8, 4, 'AtomicETH')],
  ['infiniband.reth.dmalen', 'FT_UINT32', 'BASE_DEC_HEX', 0, roce('RETH', 12, 4)],
  ['infiniband.atomiceth', 'FT_BYTES', '', 0, roce('AtomicETH', 0, 28)],
  ['infiniband.atomiceth.swapdt', 'FT_UINT64', 'BASE_DEC', 0, roce('AtomicETH', 12, 8)],
  ['infiniband.atomiceth.cmpdt', 'FT_UINT64', 'BASE_DEC', 0, roce('AtomicETH', 20, 8)],
  ['infiniband.aeth', 'FT_BYTES', '', 0, roce('AETH', 0, 4)],
  ['infiniband.aeth.syndrome', 'FT_UINT8', 'BASE_DEC', 0, roce('AETH', 0, 1)],
  ['infiniband.aeth.msn', 'FT_UINT24', 'BASE_DEC', 0, roce('AETH', 1, 3)],
  ['infiniband.atomicacketh', 'FT_BYTES', '', 0, roce('AtomicAckETH', 0, 8)],
  ['infiniband.atomicacketh.origremdt', 'FT_UINT64', 'BASE_DEC', 0, roce('AtomicAckETH', 0, 8)],
  ['infiniband.immdt', 'FT_BYTES', '', 0, roce('ImmDt', 0, 4), 2],
  ['infiniband.ieth', 'FT_BYTES', '', 0, roce('IETH', 0, 4), 2],
  ['infiniband.invariant.crc', 'FT_UINT32', 'BASE_HEX', 0, { from: 'icrc' }],

  // MPA (RFC 5044 §7.1 frames, §6 FPDUs; Wireshark's packet-iwarp-mpa.c).
  ['iwarp_mpa', 'FT_PROTOCOL', '', 0, { from: 'present', what: 'mpa' }],
  ['iwarp_mpa.req', 'FT_NONE', '', 0, { from: 'present', what: 'mpa-request' }],
  ['iwarp_mpa.rep', 'FT_NONE', '', 0, { from: 'present', what: 'mpa-reply' }],
  ['iwarp_mpa.key.req', 'FT_BYTES', '', 0, mpaFrame(0, 16, 'mpa-request')],
  ['iwarp_mpa.key.rep', 'FT_BYTES', '', 0, mpaFrame(0, 16, 'mpa-reply')],
  ['iwarp_mpa.marker_flag', 'FT_BOOLEAN', '8', 0x80, mpaFrame(16, 1)],
  ['iwarp_mpa.crc_flag', 'FT_BOOLEAN', '8', 0x40, mpaFrame(16, 1)],
  ['iwarp_mpa.rej_flag', 'FT_BOOLEAN', '8', 0x20, mpaFrame(16, 1)],
  ['iwarp_mpa.res', 'FT_UINT8', 'BASE_HEX', 0x1f, mpaFrame(16, 1)],
  ['iwarp_mpa.rev', 'FT_UINT8', 'BASE_DEC', 0, mpaFrame(17, 1)],
  ['iwarp_mpa.pdlength', 'FT_UINT16', 'BASE_DEC', 0, mpaFrame(18, 2)],
  ['iwarp_mpa.privatedata', 'FT_BYTES', '', 0, mpaFrame(20, -1)],
  ['iwarp_mpa.fpdu', 'FT_NONE', '', 0, { from: 'present', what: 'fpdu' }],
  ['iwarp_mpa.ulpdulength', 'FT_UINT16', 'BASE_DEC', 0, { from: 'fpdu', key: 'ulpduLength' }],
  ['iwarp_mpa.pad', 'FT_BYTES', '', 0, { from: 'fpdu', key: 'pad' }],
  [
    'iwarp_mpa.crc',
    'FT_UINT32',
    'BASE_HEX',
    0,
    { from: 'fpdu', key: 'crc', when: { crcInUse: false } },
  ],
  [
    'iwarp_mpa.crc_check',
    'FT_UINT32',
    'BASE_HEX',
    0,
    { from: 'fpdu', key: 'crc', when: { crcInUse: true } },
  ],

  // DDP (RFC 5041 §4) and RDMAP (RFC 5040 §4, RFC 7306 §5; packet-iwarp-ddp-rdmap.c).
  ['iwarp_ddp_rdmap', 'FT_PROTOCOL', '', 0, { from: 'present', what: 'ddp' }],
  ['iwarp_ddp', 'FT_NONE', '', 0, { from: 'present', what: 'ddp' }],
  ['iwarp_ddp.tagged_flag', 'FT_BOOLEAN', '8', 0x80, iwarp('tagged')],
  ['iwarp_ddp.last_flag', 'FT_BOOLEAN', '8', 0x40, iwarp('last')],
  ['iwarp_ddp.rsvd', 'FT_UINT8', 'BASE_HEX', 0x3c, iwarp('ddpReserved')],
  ['iwarp_ddp.dv', 'FT_UINT8', 'BASE_DEC', 0x03, iwarp('ddpVersion')],
  ['iwarp_ddp.rsvdulp', 'FT_BYTES', '', 0, { from: 'ulpdu', at: 1, width: 5, when: UNTAGGED }],
  ['iwarp_ddp.stag', 'FT_UINT32', 'BASE_HEX', 0, iwarp('stag', { tagged: true })],
  ['iwarp_ddp.tagged_offset', 'FT_UINT64', 'BASE_HEX', 0, iwarp('taggedOffset', { tagged: true })],
  ['iwarp_ddp.qn', 'FT_UINT32', 'BASE_DEC', 0, iwarp('queueNumber', UNTAGGED)],
  ['iwarp_ddp.msn', 'FT_UINT32', 'BASE_DEC', 0, iwarp('messageSequenceNumber', UNTAGGED)],
  ['iwarp_ddp.mo', 'FT_UINT32', 'BASE_DEC', 0, iwarp('messageOffset', UNTAGGED)],
  ['iwarp_rdma', 'FT_NONE', '', 0, { from: 'present', what: 'rdmap' }],
  ['iwarp_rdma.version', 'FT_UINT8', 'BASE_DEC', 0xc0, iwarp('rdmaVersion')],
  ['iwarp_rdma.rsv', 'FT_UINT8', 'BASE_HEX', 0x30, iwarp('rdmapReserved')],
  ['iwarp_rdma.opcode', 'FT_UINT8', 'BASE_HEX', 0x0f, iwarp('opcode')],
  [
    'iwarp_rdma.reserved',
    'FT_BYTES',
    '',
    0,
    { from: 'ulpdu', at: 2, width: 4, when: { tagged: false, opcodes: RESERVED_STAG_OPCODES } },
  ],
  [
    'iwarp_rdma.inval_stag',
    'FT_UINT32',
    'BASE_DEC',
    0,
    iwarp('invalidateSTag', { tagged: false, opcodes: INVALIDATE_OPCODES }),
  ],
  ['iwarp_rdma.sinkstag', 'FT_UINT32', 'BASE_HEX', 0, iwarp('sinkSTag', READ_REQUEST)],
  ['iwarp_rdma.sinkto', 'FT_UINT64', 'BASE_HEX', 0, iwarp('sinkTaggedOffset', READ_REQUEST)],
  ['iwarp_rdma.rdmardsz', 'FT_UINT32', 'BASE_DEC', 0, iwarp('readSize', READ_REQUEST)],
  ['iwarp_rdma.srcstag', 'FT_UINT32', 'BASE_HEX', 0, iwarp('sourceSTag', READ_REQUEST)],
  ['iwarp_rdma.srcto', 'FT_UINT64', 'BASE_HEX', 0, iwarp('sourceTaggedOffset', READ_REQUEST)],
  ['iwarp_rdma.term_layer', 'FT_UINT8', 'BASE_HEX', 0xf0, rdmapHeader(0, 1, TERMINATE)],
  [
    'iwarp_rdma.term_etype_rdma',
    'FT_UINT8',
    'BASE_HEX',
    0x0f,
    rdmapHeader(0, 1, { ...TERMINATE, termLayer: 0 }),
  ],
  [
    'iwarp_rdma.term_etype_ddp',
    'FT_UINT8',
    'BASE_HEX',
    0x0f,
    rdmapHeader(0, 1, { ...TERMINATE, termLayer: 1 }),
  ],
  [
    'iwarp_rdma.term_etype_llp',
    'FT_UINT8',
    'BASE_HEX',
    0x0f,
    rdmapHeader(0, 1, { ...TERMINATE, termLayer: 2 }),
  ],
  [
    'iwarp_rdma.term_errcode_rdma',
    'FT_UINT8',
    'BASE_HEX',
    0,
    rdmapHeader(1, 1, { ...TERMINATE, termLayer: 0 }),
  ],
  [
    'iwarp_rdma.term_errcode_ddp_tagged',
    'FT_UINT8',
    'BASE_HEX',
    0,
    rdmapHeader(1, 1, { ...TERMINATE, termLayer: 1, termErrorType: 1 }),
  ],
  [
    'iwarp_rdma.term_errcode_ddp_untagged',
    'FT_UINT8',
    'BASE_HEX',
    0,
    rdmapHeader(1, 1, { ...TERMINATE, termLayer: 1, termErrorType: 2 }),
  ],
  // Wireshark names the LLP error code (its MPA error codes, RFC 5044 §8) only for Error
  // Type 0 (MPA); another LLP Error Type gets the generic code field, which is not printed
  // under this name (seen on a stock siw Terminate: layer 2, type 1, code 2).
  [
    'iwarp_rdma.term_errcode_llp',
    'FT_UINT8',
    'BASE_HEX',
    0,
    rdmapHeader(1, 1, { ...TERMINATE, termLayer: 2, termErrorType: 0 }),
  ],
  ['iwarp_rdma.term_hdrct_m', 'FT_BOOLEAN', '8', 0x80, rdmapHeader(2, 1, TERMINATE)],
  ['iwarp_rdma.hdrct_d', 'FT_BOOLEAN', '8', 0x40, rdmapHeader(2, 1, TERMINATE)],
  ['iwarp_rdma.hdrct_r', 'FT_BOOLEAN', '8', 0x20, rdmapHeader(2, 1, TERMINATE)],
  ['iwarp_rdma.term_rsvd', 'FT_UINT16', 'BASE_HEX', 0x1fff, rdmapHeader(2, 2, TERMINATE)],
  [
    'iwarp_rdma.term_ddp_seg_len',
    'FT_BYTES',
    '',
    0,
    rdmapHeader(4, 2, { ...TERMINATE, termHeaders: 0x40 }),
  ],
  ['iwarp_rdma.term_ddp_h', 'FT_BYTES', '', 0, { from: 'terminated', part: 'ddp' }],
  ['iwarp_rdma.term_rdma_h', 'FT_BYTES', '', 0, { from: 'terminated', part: 'rdma' }],
  [
    'iwarp_rdma.atomic.reserved',
    'FT_UINT32',
    'BASE_DEC',
    0xfffffff0,
    iwarp('atomicReserved', ATOMIC_REQUEST),
  ],
  ['iwarp_rdma.atomic.opcode', 'FT_UINT32', 'BASE_DEC', 0x0f, iwarp('aOpCode', ATOMIC_REQUEST)],
  [
    'iwarp_rdma.atomic.request_identifier',
    'FT_UINT32',
    'BASE_DEC',
    0,
    iwarp('requestIdentifier', ATOMIC_REQUEST),
  ],
  [
    'iwarp_rdma.atomic.remote_stag',
    'FT_UINT32',
    'BASE_DEC',
    0,
    iwarp('remoteSTag', ATOMIC_REQUEST),
  ],
  [
    'iwarp_rdma.atomic.remote_tagged_offset',
    'FT_UINT64',
    'BASE_DEC',
    0,
    iwarp('remoteTaggedOffset', ATOMIC_REQUEST),
  ],
  [
    'iwarp_rdma.atomic.add_data',
    'FT_UINT64',
    'BASE_DEC',
    0,
    iwarp('addOrSwapData', { ...ATOMIC_REQUEST, fetchAdd: true }),
  ],
  [
    'iwarp_rdma.atomic.add_mask',
    'FT_UINT64',
    'BASE_HEX',
    0,
    iwarp('addOrSwapMask', { ...ATOMIC_REQUEST, fetchAdd: true }),
  ],
  [
    'iwarp_rdma.atomic.swap_data',
    'FT_UINT64',
    'BASE_DEC',
    0,
    iwarp('addOrSwapData', { ...ATOMIC_REQUEST, fetchAdd: false }),
  ],
  [
    'iwarp_rdma.atomic.swap_mask',
    'FT_UINT64',
    'BASE_HEX',
    0,
    iwarp('addOrSwapMask', { ...ATOMIC_REQUEST, fetchAdd: false }),
  ],
  [
    'iwarp_rdma.atomic.compare_data',
    'FT_UINT64',
    'BASE_DEC',
    0,
    iwarp('compareData', ATOMIC_REQUEST),
  ],
  [
    'iwarp_rdma.atomic.compare_mask',
    'FT_UINT64',
    'BASE_HEX',
    0,
    iwarp('compareMask', ATOMIC_REQUEST),
  ],
  [
    'iwarp_rdma.atomic.original_request_identifier',
    'FT_UINT32',
    'BASE_DEC',
    0,
    iwarp('originalRequestIdentifier', ATOMIC_RESPONSE),
  ],
  [
    'iwarp_rdma.atomic.original_remote_data_value',
    'FT_UINT64',
    'BASE_DEC',
    0,
    iwarp('originalRemoteDataValue', ATOMIC_RESPONSE),
  ],
];

/** Every tshark field `decode` knows, by name. */
export const TSHARK_FIELDS: ReadonlyMap<string, TsharkField> = new Map(
  ROWS.map(([name, type, base, mask, source, occurrences]) => [
    name,
    {
      name,
      type,
      base,
      mask,
      source,
      ...(occurrences === undefined ? {} : { occurrences }),
    },
  ]),
);

/** True for a protocol or FT_NONE row: tshark prints no value for it; a filter tests presence. */
export function isPresenceOnly(f: TsharkField): boolean {
  return f.type === 'FT_PROTOCOL';
}

/** The bytes of a RoCE header a row reads, checked against the header's length. */
export function roceHeaderLength(header: 'BTH' | ExtensionHeader): number {
  return header === 'BTH' ? 12 : EXTENSION_HEADER_LENGTH[header];
}

/** Hex digits tshark pads a BASE_HEX value of each type to. */
const HEX_DIGITS: Partial<Record<TsharkType, number>> = {
  FT_UINT8: 2,
  FT_UINT16: 4,
  FT_UINT24: 6,
  FT_UINT32: 8,
  FT_UINT64: 16,
};

/** A value as the table's sources give it (before tshark's formatting). */
export type RawValue = number | bigint | boolean | string | Uint8Array;

function hexBytes(b: Uint8Array): string {
  let s = '';
  for (const x of b) s += x.toString(16).padStart(2, '0');
  return s;
}

/** How `tshark -T fields` prints a value of field `f` (4.0: booleans 1/0, bytes as plain hex). */
export function formatTsharkValue(f: TsharkField, v: RawValue): string {
  if (v instanceof Uint8Array) return hexBytes(v);
  if (typeof v === 'string') return v;
  if (f.type === 'FT_BOOLEAN' || typeof v === 'boolean')
    return (typeof v === 'boolean' ? v : v !== 0 && v !== 0n) ? '1' : '0';
  if (f.type === 'FT_NONE') return '1';
  const digits = HEX_DIGITS[f.type];
  // BASE_HEX and BASE_HEX_DEC print hex only; BASE_DEC_HEX and the port bases decimal.
  if (f.base.startsWith('BASE_HEX') && digits !== undefined)
    return `0x${v.toString(16).padStart(digits, '0')}`;
  return v.toString();
}

/** The masked, shifted value of a row with a bitmask (tshark's bitfield rule). */
export function applyMask(mask: number, value: number): number {
  if (mask === 0) return value;
  let shift = 0;
  while (((mask >>> shift) & 1) === 0 && shift < 32) shift++;
  return ((value & mask) >>> 0) >>> shift;
}
