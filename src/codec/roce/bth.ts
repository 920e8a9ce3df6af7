/**
 * The 12-byte Base Transport Header (IBTA Vol. 1 §9.2, Figure 109), as RoCEv2 carries it
 * right after the UDP header (IBTA Annex A17.4).
 *
 * Byte 4 holds FECN (bit 7) and BECN (bit 6) in IBTA 1.2.1 and later, plus six reserved
 * bits; older text calls the whole byte "resv8a". RoCEv2 does not use FECN/BECN (congestion
 * is signalled with IP ECN and CNPs, Annex A17.9) and the ICRC masks the whole byte to
 * ones, so the decoder keeps the raw bits and reports them without judging them.
 */
import { requireBytes } from '../../arguments.js';
import { DecodeError, type DecodeResult, decoded, EncodeError, failed } from '../errors.js';

/** Length of the BTH on the wire. */
export const BTH_LENGTH = 12;

/** A decoded (or to-be-encoded) BTH. */
export interface Bth {
  /** 8-bit opcode (see `opcodes.ts`). */
  readonly opcode: number;
  /** SE: the responder should raise a solicited event. */
  readonly solicitedEvent: boolean;
  /** M: migration state (APM). */
  readonly migrationRequest: boolean;
  /** PadCnt: 0-3 pad bytes before the ICRC that round the payload to 4 bytes. */
  readonly padCount: number;
  /** TVer: transport header version, 0 in every IBTA release so far. */
  readonly transportVersion: number;
  /** P_Key: partition key (0xffff is the default full-member key). */
  readonly partitionKey: number;
  /** FECN (IBTA 1.2.1+); reserved in RoCEv2. */
  readonly fecn: boolean;
  /** BECN (IBTA 1.2.1+); reserved in RoCEv2. */
  readonly becn: boolean;
  /** The six reserved bits below FECN/BECN (byte 4, bits 5-0). */
  readonly reserved6: number;
  /** DestQP: 24-bit destination queue pair number. */
  readonly destinationQp: number;
  /** A: acknowledge request. */
  readonly ackRequest: boolean;
  /** The seven reserved bits after A (byte 8, bits 6-0). */
  readonly reserved7: number;
  /** PSN: 24-bit packet sequence number. */
  readonly psn: number;
}

/** Fields a caller may omit when encoding; they default to zero/false (P_Key to 0xffff). */
export type BthFields = Pick<Bth, 'opcode' | 'destinationQp' | 'psn'> & Partial<Bth>;

/** Fills defaults: P_Key 0xffff, everything else zero/false. */
export function makeBth(f: BthFields): Bth {
  return {
    solicitedEvent: false,
    migrationRequest: false,
    padCount: 0,
    transportVersion: 0,
    partitionKey: 0xffff,
    fecn: false,
    becn: false,
    reserved6: 0,
    ackRequest: false,
    reserved7: 0,
    ...f,
  };
}

/** Range of every numeric BTH field, as data: the encoder validates against it. */
const BTH_FIELD_MAX: Readonly<Record<string, number>> = {
  opcode: 0xff,
  padCount: 3,
  transportVersion: 0xf,
  partitionKey: 0xffff,
  reserved6: 0x3f,
  destinationQp: 0xffffff,
  reserved7: 0x7f,
  psn: 0xffffff,
};

const BTH_FIELD_RANGES = Object.entries(BTH_FIELD_MAX);

/** Throws `EncodeError` naming the first out-of-range field. */
export function validateBth(b: Bth): void {
  if (typeof b !== 'object' || b === null) throw new EncodeError('bth', 'header', 'not an object');
  for (const [field, max] of BTH_FIELD_RANGES) {
    const value = (b as unknown as Record<string, unknown>)[field];
    if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > max)
      throw new EncodeError('bth', field, `${String(value)} not in 0..${max}`);
  }
}

/** Writes the BTH at `offset` of `out` (which must have 12 bytes there). */
export function writeBth(b: Bth, out: Uint8Array, offset = 0): void {
  validateBth(b);
  const v = new DataView(out.buffer, out.byteOffset + offset, BTH_LENGTH);
  v.setUint8(0, b.opcode);
  v.setUint8(
    1,
    (b.solicitedEvent ? 0x80 : 0) |
      (b.migrationRequest ? 0x40 : 0) |
      (b.padCount << 4) |
      b.transportVersion,
  );
  v.setUint16(2, b.partitionKey);
  v.setUint32(
    4,
    (((b.fecn ? 0x80 : 0) | (b.becn ? 0x40 : 0) | b.reserved6) * 0x1000000 + b.destinationQp) >>> 0,
  );
  v.setUint32(8, (((b.ackRequest ? 0x80 : 0) | b.reserved7) * 0x1000000 + b.psn) >>> 0);
}

/** Encodes a BTH into 12 new bytes; throws `EncodeError` on out-of-range fields. */
export function encodeBth(b: Bth): Uint8Array {
  const out = new Uint8Array(BTH_LENGTH);
  writeBth(b, out);
  return out;
}

/** Decodes the BTH at the start of `bytes`; any opcode value is accepted here. */
export function decodeBth(bytes: Uint8Array): DecodeResult<Bth> {
  requireBytes('codec', 'bytes', bytes);
  if (bytes.length < BTH_LENGTH)
    return failed(new DecodeError('bth', 'header', 0, 'truncated', `${bytes.length} < 12`));
  // Plain byte reads (big-endian, IBTA §9.2): no DataView to allocate per packet.
  const b1 = bytes[1]!;
  const b4 = bytes[4]!;
  const b8 = bytes[8]!;
  return decoded({
    opcode: bytes[0]!,
    solicitedEvent: (b1 & 0x80) !== 0,
    migrationRequest: (b1 & 0x40) !== 0,
    padCount: (b1 >> 4) & 0x3,
    transportVersion: b1 & 0xf,
    partitionKey: (bytes[2]! << 8) | bytes[3]!,
    fecn: (b4 & 0x80) !== 0,
    becn: (b4 & 0x40) !== 0,
    reserved6: b4 & 0x3f,
    destinationQp: (bytes[5]! << 16) | (bytes[6]! << 8) | bytes[7]!,
    ackRequest: (b8 & 0x80) !== 0,
    reserved7: b8 & 0x7f,
    psn: (bytes[9]! << 16) | (bytes[10]! << 8) | bytes[11]!,
  });
}
