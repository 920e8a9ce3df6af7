/**
 * The InfiniBand Base Transport Header opcode table (IBTA Vol. 1 §9.2.1, Table 35), as
 * data. RoCEv2 (IBTA Annex A17) carries the same BTH opcodes over UDP port 4791.
 *
 * Every consumer (BTH decoder, packet decoder, engine, reports) reads this one table:
 * the name, the transport service, the extension headers that follow the BTH (in wire
 * order) and the position of the packet in its message.
 */
import { nameText, requireCode } from '../../arguments.js';
import { UnknownNameError } from '../../errors.js';

/** Transport service encoded in the top three bits of the BTH opcode (IBTA §9.2.1). */
export type TransportService = 'RC' | 'UC' | 'RD' | 'UD' | 'CNP' | 'XRC';

/** Opcode prefix (bits 7-5 of the BTH opcode) of each transport service. */
export const TRANSPORT_PREFIX: Readonly<Record<TransportService, number>> = {
  RC: 0x00,
  UC: 0x20,
  RD: 0x40,
  UD: 0x60,
  CNP: 0x80,
  XRC: 0xa0,
};

/**
 * Extension transport headers that may follow the BTH. Order in this list is the wire
 * order (IBTA §9.2: BTH, RDETH, DETH, XRCETH, RETH, AtomicETH, AETH, AtomicAckETH,
 * ImmDt, IETH; FETH, the FLUSH extension header of IBTA 1.5, goes before the RETH).
 */
export type ExtensionHeader =
  | 'RDETH'
  | 'DETH'
  | 'XRCETH'
  | 'RETH'
  | 'FETH'
  | 'AtomicETH'
  | 'AETH'
  | 'AtomicAckETH'
  | 'ImmDt'
  | 'IETH';

/** Wire order of the extension headers (IBTA §9.2). */
export const EXTENSION_HEADER_ORDER: readonly ExtensionHeader[] = [
  'RDETH',
  'DETH',
  'XRCETH',
  // IBTA 1.5 FLUSH: FETH sits directly after the BTH, before its RETH (rxe_opcode.c).
  'FETH',
  'RETH',
  'AtomicETH',
  'AETH',
  'AtomicAckETH',
  'ImmDt',
  'IETH',
];

/** Length in bytes of each extension header (IBTA §9.3). */
export const EXTENSION_HEADER_LENGTH: Readonly<Record<ExtensionHeader, number>> = {
  RDETH: 4,
  DETH: 8,
  XRCETH: 4,
  RETH: 16,
  FETH: 4,
  AtomicETH: 28,
  AETH: 4,
  AtomicAckETH: 8,
  ImmDt: 4,
  IETH: 4,
};

/** Where a packet sits in a (possibly multi-packet) message. */
export type PacketPosition = 'first' | 'middle' | 'last' | 'only';

/** One row of the BTH opcode table. */
export interface BthOpcodeInfo {
  /** The 8-bit BTH opcode. */
  readonly value: number;
  /** IBTA-style name, transport prefix included, e.g. `RC_FETCH_ADD`. */
  readonly name: string;
  readonly transport: TransportService;
  /** The operation without the transport prefix, e.g. `FETCH_ADD`. */
  readonly operation: string;
  /** Extension headers following the BTH, in wire order. */
  readonly headers: readonly ExtensionHeader[];
  readonly position: PacketPosition;
  /** True when the packet carries a payload (possibly zero bytes long). */
  readonly hasPayload: boolean;
}

/** An operation common to several transports (the low five bits of the opcode). */
interface OperationRow {
  readonly code: number;
  readonly operation: string;
  readonly headers: readonly ExtensionHeader[];
  readonly position: PacketPosition;
  readonly hasPayload: boolean;
}

// IBTA Vol. 1 Table 35: the low five bits, shared by RC, UC, RD and XRC.
const OPERATIONS: readonly OperationRow[] = [
  { code: 0x00, operation: 'SEND_FIRST', headers: [], position: 'first', hasPayload: true },
  { code: 0x01, operation: 'SEND_MIDDLE', headers: [], position: 'middle', hasPayload: true },
  { code: 0x02, operation: 'SEND_LAST', headers: [], position: 'last', hasPayload: true },
  {
    code: 0x03,
    operation: 'SEND_LAST_WITH_IMMEDIATE',
    headers: ['ImmDt'],
    position: 'last',
    hasPayload: true,
  },
  { code: 0x04, operation: 'SEND_ONLY', headers: [], position: 'only', hasPayload: true },
  {
    code: 0x05,
    operation: 'SEND_ONLY_WITH_IMMEDIATE',
    headers: ['ImmDt'],
    position: 'only',
    hasPayload: true,
  },
  {
    code: 0x06,
    operation: 'RDMA_WRITE_FIRST',
    headers: ['RETH'],
    position: 'first',
    hasPayload: true,
  },
  { code: 0x07, operation: 'RDMA_WRITE_MIDDLE', headers: [], position: 'middle', hasPayload: true },
  { code: 0x08, operation: 'RDMA_WRITE_LAST', headers: [], position: 'last', hasPayload: true },
  {
    code: 0x09,
    operation: 'RDMA_WRITE_LAST_WITH_IMMEDIATE',
    headers: ['ImmDt'],
    position: 'last',
    hasPayload: true,
  },
  {
    code: 0x0a,
    operation: 'RDMA_WRITE_ONLY',
    headers: ['RETH'],
    position: 'only',
    hasPayload: true,
  },
  {
    code: 0x0b,
    operation: 'RDMA_WRITE_ONLY_WITH_IMMEDIATE',
    headers: ['RETH', 'ImmDt'],
    position: 'only',
    hasPayload: true,
  },
  {
    code: 0x0c,
    operation: 'RDMA_READ_REQUEST',
    headers: ['RETH'],
    position: 'only',
    hasPayload: false,
  },
  {
    code: 0x0d,
    operation: 'RDMA_READ_RESPONSE_FIRST',
    headers: ['AETH'],
    position: 'first',
    hasPayload: true,
  },
  {
    code: 0x0e,
    operation: 'RDMA_READ_RESPONSE_MIDDLE',
    headers: [],
    position: 'middle',
    hasPayload: true,
  },
  {
    code: 0x0f,
    operation: 'RDMA_READ_RESPONSE_LAST',
    headers: ['AETH'],
    position: 'last',
    hasPayload: true,
  },
  {
    code: 0x10,
    operation: 'RDMA_READ_RESPONSE_ONLY',
    headers: ['AETH'],
    position: 'only',
    hasPayload: true,
  },
  { code: 0x11, operation: 'ACKNOWLEDGE', headers: ['AETH'], position: 'only', hasPayload: false },
  {
    code: 0x12,
    operation: 'ATOMIC_ACKNOWLEDGE',
    headers: ['AETH', 'AtomicAckETH'],
    position: 'only',
    hasPayload: false,
  },
  {
    code: 0x13,
    operation: 'COMPARE_SWAP',
    headers: ['AtomicETH'],
    position: 'only',
    hasPayload: false,
  },
  {
    code: 0x14,
    operation: 'FETCH_ADD',
    headers: ['AtomicETH'],
    position: 'only',
    hasPayload: false,
  },
  { code: 0x15, operation: 'RESYNC', headers: [], position: 'only', hasPayload: false },
  {
    code: 0x16,
    operation: 'SEND_LAST_WITH_INVALIDATE',
    headers: ['IETH'],
    position: 'last',
    hasPayload: true,
  },
  {
    code: 0x17,
    operation: 'SEND_ONLY_WITH_INVALIDATE',
    headers: ['IETH'],
    position: 'only',
    hasPayload: true,
  },
  // IBTA 1.5 (Memory Placement Extensions); Linux include/rdma/ib_pack.h uses the same
  // values. tshark 4.0 does not know them. FLUSH carries FETH directly after the BTH, then the
  // RETH (rxe_opcode.c's offsets for IB_OPCODE_RC_FLUSH: FETH at BTH_BYTES, RETH after FETH).
  {
    code: 0x1c,
    operation: 'FLUSH',
    headers: ['FETH', 'RETH'],
    position: 'only',
    hasPayload: false,
  },
  {
    code: 0x1d,
    operation: 'ATOMIC_WRITE',
    headers: ['RETH'],
    position: 'only',
    hasPayload: true,
  },
];

/** Which low-five-bit operations each transport service defines (IBTA Table 35). */
const SERVICE_OPERATIONS: Readonly<Record<'RC' | 'UC' | 'RD' | 'XRC', readonly number[]>> = {
  RC: [
    0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f,
    0x10, 0x11, 0x12, 0x13, 0x14, 0x16, 0x17, 0x1c, 0x1d,
  ],
  UC: [0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b],
  RD: [
    0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f,
    0x10, 0x11, 0x12, 0x13, 0x14, 0x15,
  ],
  XRC: [
    0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f,
    0x10, 0x11, 0x12, 0x13, 0x14, 0x16, 0x17,
  ],
};

/** Adds the service-specific headers in wire order (RD: RDETH+DETH, XRC: XRCETH). */
function serviceHeaders(
  service: 'RC' | 'UC' | 'RD' | 'XRC',
  row: OperationRow,
): readonly ExtensionHeader[] {
  const set = new Set<ExtensionHeader>(row.headers);
  // Responses (read responses and acknowledgements) flow responder -> requester.
  const isResponse = /^(RDMA_READ_RESPONSE|ACKNOWLEDGE|ATOMIC_ACKNOWLEDGE)/.test(row.operation);
  // RD packets all carry RDETH; RD requests also carry DETH (IBTA §9.3.1, §9.3.2).
  if (service === 'RD') {
    set.add('RDETH');
    if (!isResponse) set.add('DETH');
  }
  // XRC requests carry XRCETH; responses do not (IBTA Annex A14).
  if (service === 'XRC' && !isResponse) set.add('XRCETH');
  return EXTENSION_HEADER_ORDER.filter((h) => set.has(h));
}

function buildTable(): ReadonlyMap<number, BthOpcodeInfo> {
  const table = new Map<number, BthOpcodeInfo>();
  for (const service of ['RC', 'UC', 'RD', 'XRC'] as const) {
    for (const code of SERVICE_OPERATIONS[service]) {
      const row = OPERATIONS.find((r) => r.code === code);
      if (row === undefined) continue;
      const value = TRANSPORT_PREFIX[service] | code;
      table.set(value, {
        value,
        name: `${service}_${row.operation}`,
        transport: service,
        operation: row.operation,
        headers: serviceHeaders(service, row),
        position: row.position,
        hasPayload: row.hasPayload,
      });
    }
  }
  // UD: only SEND_ONLY and SEND_ONLY_WITH_IMMEDIATE, with DETH (IBTA Table 35).
  table.set(0x64, {
    value: 0x64,
    name: 'UD_SEND_ONLY',
    transport: 'UD',
    operation: 'SEND_ONLY',
    headers: ['DETH'],
    position: 'only',
    hasPayload: true,
  });
  table.set(0x65, {
    value: 0x65,
    name: 'UD_SEND_ONLY_WITH_IMMEDIATE',
    transport: 'UD',
    operation: 'SEND_ONLY_WITH_IMMEDIATE',
    headers: ['DETH', 'ImmDt'],
    position: 'only',
    hasPayload: true,
  });
  // RoCEv2 Congestion Notification Packet (IBTA Annex A17.9.3): BTH + 16 reserved bytes.
  table.set(0x81, {
    value: 0x81,
    name: 'CNP',
    transport: 'CNP',
    operation: 'CNP',
    headers: [],
    position: 'only',
    hasPayload: true,
  });
  return table;
}

/** All defined BTH opcodes, keyed by their 8-bit value. */
export const BTH_OPCODES: ReadonlyMap<number, BthOpcodeInfo> = buildTable();

/** The table row for an opcode, or `undefined` for a reserved value. */
export function bthOpcodeInfo(opcode: number): BthOpcodeInfo | undefined {
  requireCode('codec', 'opcode', opcode);
  return BTH_OPCODES.get(opcode);
}

/** The opcode value for an IBTA name such as `RC_FETCH_ADD`; throws on unknown names. */
export function bthOpcodeByName(name: string): number {
  for (const info of BTH_OPCODES.values()) if (info.name === name) return info.value;
  throw new UnknownNameError(
    'codec',
    'BTH opcode name',
    nameText(name),
    [...BTH_OPCODES.values()].map((i) => i.name),
  );
}

/** Named constants for the opcodes used most (RC service). */
export const BthOpcode = {
  RC_SEND_FIRST: 0x00,
  RC_SEND_MIDDLE: 0x01,
  RC_SEND_LAST: 0x02,
  RC_SEND_LAST_WITH_IMMEDIATE: 0x03,
  RC_SEND_ONLY: 0x04,
  RC_SEND_ONLY_WITH_IMMEDIATE: 0x05,
  RC_RDMA_WRITE_FIRST: 0x06,
  RC_RDMA_WRITE_MIDDLE: 0x07,
  RC_RDMA_WRITE_LAST: 0x08,
  RC_RDMA_WRITE_LAST_WITH_IMMEDIATE: 0x09,
  RC_RDMA_WRITE_ONLY: 0x0a,
  RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE: 0x0b,
  RC_RDMA_READ_REQUEST: 0x0c,
  RC_RDMA_READ_RESPONSE_FIRST: 0x0d,
  RC_RDMA_READ_RESPONSE_MIDDLE: 0x0e,
  RC_RDMA_READ_RESPONSE_LAST: 0x0f,
  RC_RDMA_READ_RESPONSE_ONLY: 0x10,
  RC_ACKNOWLEDGE: 0x11,
  RC_ATOMIC_ACKNOWLEDGE: 0x12,
  RC_COMPARE_SWAP: 0x13,
  RC_FETCH_ADD: 0x14,
  RC_SEND_LAST_WITH_INVALIDATE: 0x16,
  RC_SEND_ONLY_WITH_INVALIDATE: 0x17,
  RC_FLUSH: 0x1c,
  RC_ATOMIC_WRITE: 0x1d,
  UD_SEND_ONLY: 0x64,
  UD_SEND_ONLY_WITH_IMMEDIATE: 0x65,
  CNP: 0x81,
} as const;

/** The name of one of the {@link BthOpcode} constants. */
export type BthOpcodeName = keyof typeof BthOpcode;
